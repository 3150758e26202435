"""The comparison of a backend's results with the numpy reference's, shared by the backend
tests (``tests/`` and ``plugins/*/tests``): per-dtype tolerances relative to the largest
expected magnitude; integers and bools exactly."""
from __future__ import annotations

import numpy as np

# (rtol, atol relative to the largest expected magnitude) per dtype, as the conformance kit's.
TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-6), "float16": (3e-3, 2e-3),
       "bfloat16": (2e-2, 1e-2)}


def assert_close(actual, expected, dtype="float32", factor=1.0, *, tol=None, what="",
                 min_scale=0.0, same_dtype=False):
    """``|a - e| <= atol * scale + rtol * |e|`` (each of ``tol[dtype]`` times ``factor``),
    ``scale`` the largest finite ``|e|``, at least ``min_scale`` (1.0 where it is 0); tuples
    and lists element by element; ``same_dtype``: the dtypes must match too."""
    tol = TOL if tol is None else tol
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), what
        for a, e in zip(actual, expected):
            assert_close(a, e, dtype, factor, tol=tol, what=what, min_scale=min_scale,
                         same_dtype=same_dtype)
        return
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    if same_dtype:
        assert a.dtype == e.dtype, f"{what}: dtype {a.dtype} != {e.dtype}"
    if e.dtype.kind in "biu":
        np.testing.assert_array_equal(a.astype(np.int64), e.astype(np.int64), err_msg=what)
        return
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    rtol, atol = tol[dtype]
    finite = np.abs(e64[np.isfinite(e64)])
    scale = max(float(finite.max()) if finite.size else 1.0, min_scale) or 1.0
    np.testing.assert_allclose(a64, e64, rtol=rtol * factor, atol=atol * factor * scale,
                               equal_nan=True, err_msg=what)
