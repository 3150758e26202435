"""MindSpore's ops API (``ops.*``, ``P.*``, ``F.*``, ``C.*``) against the real MindSpore
2.10's results, on every installed backend.

The cases are ``tests/data/ops_cases.py``; the expected values were recorded from MindSpore
by ``tests/data/make_ops_oracle.py`` into ``tests/data/mindspore_ops_oracle.json``. Every
case runs on the numpy and torch backends; jax (which compiles each op the first time it meets
it, about 0.4 s a case here) runs every 25th by default and all of them with
``MSCORE_SLOW_TESTS=1``.
"""
import builtins
import json
import os
import sys

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore import nn, ops
from mscore.ops import composite as C
from mscore.ops import functional as F
from mscore.ops import operations as P

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
import ops_cases  # noqa: E402

with open(os.path.join(DATA, "mindspore_ops_oracle.json")) as _f:
    ORACLE = json.load(_f)

SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
# Cases that compute an approximation (erf, tanh-GeLU, float16) get a looser tolerance.
LOOSE = {"P.Erf", "P.GeLU", "P.FastGeLU", "ops.gelu", "ops.gelu.tanh", "ops.cast",
         "ops.softmax.dtype", "P.Mish", "ops.mish", "ops.logsigmoid"}
# Where MindSpore accepts an argument mscore refuses (each in docs/differences.md).
STRICTER = {
    "C.MultitypeFuncGraph.register": TypeError,   # a non-type at register(), not later
    "C.MultitypeFuncGraph.no_match": TypeError,   # no implementation for the arguments
    "ops.gather_d.dim": ValueError,               # dim out of range
    "ops.glu.odd": ValueError,                    # an odd size cannot be halved
    "ops.transpose.dims": ValueError,             # not a permutation
    # MindSpore 2.10 accepts min_val > max_val in a fresh process and raises (ValueError or
    # RuntimeError) after other ops ran: mscore always refuses it.
    "ops.hardtanh.range": ValueError,
}


def namespace():
    """The names the case code sees, bound to mscore."""
    ns = {"ms": ms, "ops": ops, "P": P, "F": F, "C": C, "nn": nn, "np": np, "T": ms.Tensor,
          "Param": ms.Parameter}
    ns.update(ops_cases.arrays())
    return ns


def run(code, ns):
    """Evaluate a case as the fixture maker does: an expression, or statements that set
    ``out``."""
    try:
        return eval(compile(code, "<case>", "eval"), ns)
    except SyntaxError:
        scope = dict(ns, __name__="ops_case")
        exec(compile(code, "<case>", "exec"), scope)
        return scope["out"]


def _int64_name():
    """The dtype the active backend stores int64 as (jax without x64: int32; see
    docs/differences.md)."""
    return ops.zeros((1,), ms.int64).dtype.name


def assert_matches(expected, actual, tol, where="out", int64_as="int64"):
    """``actual`` (mscore's result) equals ``expected`` (MindSpore's, encoded)."""
    if "tensor" in expected:
        assert isinstance(actual, ms.Tensor), f"{where}: expected a Tensor, got {actual!r}"
        want_dtype = int64_as if expected["tensor"] == "int64" else expected["tensor"]
        assert actual.dtype.name == want_dtype, \
            f"{where}: dtype {actual.dtype.name}, MindSpore {expected['tensor']}"
        got = actual.asnumpy()
        assert list(got.shape) == expected["shape"], \
            f"{where}: shape {got.shape}, MindSpore {tuple(expected['shape'])}"
        want = np.array([np.nan if v is None else v for v in expected["values"]],
                        dtype=np.float64)
        for i, text in expected.get("specials", {}).items():
            want[int(i)] = float(text)
        got = got.reshape(-1).astype(np.float64)
        if got.dtype.kind == "f" and expected["tensor"].startswith(("float", "bfloat")):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=where)
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)
    elif "tuple" in expected or "list" in expected:
        items = expected.get("tuple", expected.get("list"))
        assert isinstance(actual, (tuple, list)), f"{where}: expected a sequence, got " \
                                                  f"{type(actual).__name__}"
        assert len(actual) == len(items), f"{where}: {len(actual)} items, MindSpore " \
                                          f"{len(items)}"
        for k, (e, a) in enumerate(zip(items, actual)):
            assert_matches(e, a, tol, f"{where}[{k}]", int64_as)
    elif "dtype" in expected:
        assert actual.name == expected["dtype"], f"{where}: {actual}, MindSpore " \
                                                 f"{expected['dtype']}"
    elif "py" in expected:
        assert actual == expected["py"] and type(actual) is type(expected["py"]), \
            f"{where}: {actual!r}, MindSpore {expected['py']!r}"
    else:
        raise AssertionError(f"{where}: unexpected oracle record {expected}")


def _cases(stride):
    return [pytest.param(cid, code, id=cid) for k, (cid, code) in enumerate(ops_cases.CASES)
            if k % stride == 0]


# Every how many cases a backend runs by default (the rest with MSCORE_SLOW_TESTS=1).
_STRIDE = {"numpy": 1, "torch": 1, "jax": 25}


def _backend_params():
    out = []
    for name in available_backends():
        stride = 1 if SLOW else _STRIDE.get(name, 4)
        out += [pytest.param(name, cid, code, id=f"{name}-{cid}") for cid, code in
                [p.values for p in _cases(stride)]]
    return out


@pytest.mark.parametrize("backend,case_id,code", _backend_params())
def test_matches_mindspore(backend, case_id, code):
    use_backend(backend)
    expected = ORACLE["results"][case_id]
    tol = 2e-3 if case_id in LOOSE else 2e-5
    assert_matches(expected, run(code, namespace()), tol, int64_as=_int64_name())


@pytest.mark.parametrize("case_id,code", [pytest.param(c, k, id=c)
                                          for c, k in ops_cases.ERROR_CASES])
def test_argument_errors_match_mindspore(case_id, code):
    use_backend("numpy")
    seen = ORACLE["errors"][case_id]  # the types MindSpore raised (None: it accepted it)
    if case_id in STRICTER:
        with pytest.raises(STRICTER[case_id]):
            run(code, namespace())
    elif seen == [None]:
        run(code, namespace())  # MindSpore accepts it: so does mscore
    else:
        with pytest.raises(tuple(getattr(builtins, t) for t in seen if t is not None)):
            run(code, namespace())


def test_every_case_has_an_oracle_record():
    assert set(ORACLE["results"]) == {c for c, _ in ops_cases.CASES}
    assert set(ORACLE["errors"]) == {c for c, _ in ops_cases.ERROR_CASES}
    assert set(STRICTER) <= {c for c, _ in ops_cases.ERROR_CASES}
