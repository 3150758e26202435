"""MindSpore 2.10's ``nn`` layers (recurrent, attention/transformer, pooling,
padding, normalisation, activations and the rest) against the real MindSpore's results.

The cases are ``tests/data/nn_layer_cases.py``; the expected values were recorded by
``tests/data/make_nn_layer_oracle.py`` (run with ``/tmp/ms/bin/python``) into
``tests/data/mindspore_nn_layer_oracle.json``: parameter names and shapes, outputs with parameters
set from their names, and the exception types of argument errors. Every value case runs on numpy and
torch; jax (which compiles every op on first use, 1-5 s a case here) runs three representative cases
by default and all of them with ``MSCORE_SLOW_TESTS=1``. Error cases are argument checks in Python,
the same code on every backend: they run on numpy.
"""
import json
import os
import sys

import numpy as np
import pytest
from _helpers import available_backends, use_backend
from test_ops_api import assert_matches, run

import mscore as ms
from mscore import nn, ops

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
import nn_layer_cases  # noqa: E402

with open(os.path.join(DATA, "mindspore_nn_layer_oracle.json")) as _f:
    ORACLE = json.load(_f)

SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
_JAX_DEFAULT = ("LSTM.batch_first", "MHA.kvdim", "AdaptiveAvgPool2d.up")
# Sums over many products (recurrences, attention, special-function series, power pooling)
# round differently from MindSpore's kernels in float32.
_LOOSE_PREFIXES = ("LSTM", "GRU", "RNN", "MHA", "Encoder", "Decoder", "Transformer", "LPPool",
                   "LGamma", "DiGamma", "IGamma", "LBeta", "Mish", "FastGelu", "LogSigmoid",
                   "Upsample.bicubic", "GroupNorm", "LRN", "Moments", "SeLU", "CELU")
# MindSpore accepts these where mscore refuses (each in docs/differences.md); the mscore type.
STRICTER = {}


def _tol(case_id):
    return 2e-4 if case_id.startswith(_LOOSE_PREFIXES) else 2e-5


def namespace():
    """The names the case code sees, bound to mscore."""
    ns = {"ms": ms, "ops": ops, "nn": nn, "np": np, "T": ms.Tensor}
    ns.update(nn_layer_cases.arrays())
    ns.update(nn_layer_cases.helpers(ms.Tensor))
    return ns


def _params():
    out = []
    for name in available_backends():
        out += [pytest.param(name, cid, code, id=f"{name}-{cid}")
                for cid, code in nn_layer_cases.CASES
                if SLOW or name in ("numpy", "torch") or cid in _JAX_DEFAULT]
    return out


@pytest.mark.parametrize("backend,case_id,code", _params())
def test_matches_mindspore(backend, case_id, code):
    use_backend(backend)
    ms.set_seed(0)
    expected = ORACLE["results"][case_id]
    int64 = ops.zeros((1,), ms.int64).dtype.name
    assert_matches(expected, run(code, namespace()), _tol(case_id), int64_as=int64)


@pytest.mark.parametrize("case_id,code", [pytest.param(c, k, id=c)
                                          for c, k in nn_layer_cases.ERROR_CASES])
def test_errors_match_mindspore(case_id, code):
    use_backend("numpy")
    want = ORACLE["errors"][case_id]
    want = [STRICTER[case_id]] if case_id in STRICTER else [w for w in want if w]
    assert want, f"{case_id}: MindSpore raised nothing (remove the case or list it in STRICTER)"
    with pytest.raises(Exception) as info:
        out = run(code, namespace())
        _ = [t.asnumpy() for t in (out if isinstance(out, tuple) else (out,))]
    assert type(info.value).__name__ in want, \
        f"{case_id}: MindSpore raised {want}; mscore raised {type(info.value).__name__}: " \
        f"{info.value}"
    assert str(info.value), f"{case_id}: empty message"


def test_every_case_recorded():
    """The fixture and the cases file agree (re-run the maker after editing the cases)."""
    assert set(ORACLE["results"]) == {c for c, _ in nn_layer_cases.CASES}
    assert set(ORACLE["errors"]) == {c for c, _ in nn_layer_cases.ERROR_CASES}
