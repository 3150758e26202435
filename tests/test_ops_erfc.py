"""``ops.erfc`` (also ``Tensor.erfc``, ``mint.erfc``, ``mint.special.erfc``): values against
Python's ``math.erfc`` in ulps of each float dtype, MindSpore 2.10's recorded outputs, the
gradient against ``-2/sqrt(pi) exp(-x^2)`` and finite differences, on every backend."""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from _helpers import each_backend

from mscore import Tensor, mint, ops

backend = each_backend(scope="module")
DATA = json.loads((Path(__file__).parent / "data" / "erfc_mindspore.json").read_text())
# worst error measured on numpy/torch/jax: 3.6 ulp (float64), 4.8 ulp (float32), 0 (float16)
ULPS = {"float64": 8, "float32": 8, "float16": 1}


def _reference(x):
    return np.array([math.erfc(float(v)) if not math.isnan(v) else math.nan for v in x])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_erfc_is_within_a_few_ulps_over_the_whole_range(backend, dtype):
    x = np.concatenate([np.linspace(-6.0, 12.0, 4001), [0.46875, -0.46875, 4.0, -0.0]])
    x = x.astype(dtype)
    got = ops.erfc(Tensor(x)).asnumpy()
    assert got.dtype == np.dtype(dtype)
    want = _reference(x)
    info = np.finfo(dtype)
    normal = np.abs(want) >= info.tiny
    err = np.abs(got[normal].astype(np.float64) - want[normal]) / (np.abs(want[normal]) * info.eps)
    assert err.max() <= ULPS[dtype], (x[normal][err.argmax()], err.max())
    assert _close_or_flushed(got[~normal], want[~normal], dtype)


def _close_or_flushed(got, want, dtype):
    """Below the normal range: within two subnormal steps (the last products round there),
    or 0 on a backend that flushes subnormals (XLA on the CPU does)."""
    step = float(np.nextafter(np.array(0, dtype), np.array(1, dtype)))
    got = got.astype(np.float64)
    return bool(np.all((np.abs(got - want) <= 2 * step) | (got == 0)))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_erfc_matches_mindspore(backend, dtype):
    case = DATA["cases"][dtype]
    x = np.array([float(v) for v in case["x"]], dtype)
    want = np.array([float(v) for v in case["erfc"]], dtype)
    got = ops.erfc(Tensor(x)).asnumpy()
    normal = ~(np.abs(want) < np.finfo(dtype).tiny)   # nan included
    np.testing.assert_allclose(got[normal], want[normal], rtol=4 * np.finfo(dtype).eps,
                               equal_nan=True)
    assert _close_or_flushed(got[~normal], want[~normal].astype(np.float64), dtype)


def test_erfc_names_and_the_tail_the_old_formula_lost(backend):
    x = Tensor(np.array([5.0, 9.0], np.float32))
    want = np.array([1.5374597e-12, 4.1370318e-37], np.float32)   # 1 - erf gave 0, 0
    for f in (ops.erfc, mint.erfc, mint.special.erfc, lambda t: t.erfc()):
        np.testing.assert_allclose(f(x).asnumpy(), want, rtol=1e-6)


def test_erfc_gradient(backend):
    x = np.array([-5.0, -2.0, -0.3, 0.0, 0.2, 0.46875, 0.7, 2.3, 4.0, 4.5, 9.0])
    grad = ops.grad(lambda t: ops.erfc(t).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(grad, -2 / math.sqrt(math.pi) * np.exp(-x * x), rtol=1e-12)
    h = 1e-6
    fd = (_reference(x + h) - _reference(x - h)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-9)


def test_erfc_of_integers_is_a_type_error_as_in_mindspore(backend):
    with pytest.raises(TypeError, match="float16, float32 or float64"):
        ops.erfc(Tensor(np.array([1, 2], np.int32)))
