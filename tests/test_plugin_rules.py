"""The contract's edge rules (``mscore.plugin.rules``) on every array type a backend hands
them: numpy, torch and jax arrays, each with its own library's callables, give the contract's
exact answers (MindSpore's, pinned in docs/backend-authors.md), and a helper under ``jax.jit``
takes no array's truth value."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mscore.plugin import rules

I32 = np.iinfo(np.int32)


class _Lib:
    """One array library as the helpers see it: its arrays and its callables."""

    def __init__(self, name):
        self.name = name
        if name == "numpy":
            self.xp = np
            self.array = lambda v, dt: np.array(v, dtype=dt)
            self.numpy = np.asarray
            self.to = lambda a, dt: a.astype(dt)
            self.trunc_divide = lambda a, b: (np.sign(a) * np.sign(b) *
                                              (np.abs(a) // np.abs(b))).astype(a.dtype)
            self.floor_divide = np.floor_divide
            self.negative, self.where, self.isnan = np.negative, np.where, np.isnan
            self.any_true = lambda m: bool(m.any())
        elif name == "torch":
            torch = pytest.importorskip("torch")
            self.xp = torch
            dtypes = {"int32": torch.int32, "uint8": torch.uint8, "float32": torch.float32}
            self.array = lambda v, dt: torch.tensor(v, dtype=dtypes[dt])
            self.numpy = lambda a: a.numpy()
            self.to = lambda a, dt: a.to(dtypes[dt])
            self.trunc_divide = lambda a, b: torch.div(a, b, rounding_mode="trunc")
            self.floor_divide = lambda a, b: torch.div(a, b, rounding_mode="floor")
            self.negative, self.where, self.isnan = torch.neg, torch.where, torch.isnan
            self.any_true = lambda m: bool(m.any())
        else:
            jax = pytest.importorskip("jax")
            jnp, lax = jax.numpy, jax.lax
            self.xp = jnp
            self.array = lambda v, dt: jnp.asarray(np.array(v, dtype=dt))
            self.numpy = np.asarray
            self.to = lambda a, dt: a.astype(dt)
            self.trunc_divide = lax.div
            self.floor_divide = jnp.floor_divide
            self.negative, self.where, self.isnan = jnp.negative, jnp.where, jnp.isnan
            self.any_true = lambda m: bool(m.any())

    def scalar(self, value, dtype):
        """A 0-d value of ``dtype``."""
        return self.array(value, dtype)


LIBS = ("numpy", "torch", "jax")


@pytest.fixture(params=LIBS)
def lib(request):
    return _Lib(request.param)


def test_saturate_to_int(lib):
    t = lib.array([1e10, -1e10, math.nan, 3.0, -2.0, 2147483520.0], "float32")
    out = rules.saturate_to_int(t, int(I32.min), int(I32.max), where=lib.where,
                                isnan=lib.isnan, convert=lambda a: lib.to(a, "int32"))
    got = lib.numpy(out)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [I32.max, I32.min, 0, 3, -2, 2147483520])


def test_divide_toward_zero(lib):
    a = lib.array([7, -7, I32.min, 5, 0, -9, I32.min], "int32")
    b = lib.array([2, 2, -1, 0, -3, 4, 1], "int32")
    out = rules.divide_toward_zero(a, b, trunc_divide=lib.trunc_divide, where=lib.where,
                                   negative=lib.negative)
    got = lib.numpy(out)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [3, -3, I32.min, 0, 0, -2, I32.min])


def _safe_floor_quotient(lib, a, b):
    """The library's floor division with divisors 0 and -1 replaced by 1 (where libraries
    raise or trap): what a backend hands :func:`rules.floor_divide_edges`."""
    one = lib.scalar(1, "int32")
    safe = lib.where((b == 0) | (b == -1), one, b)
    return lib.floor_divide(a, safe)


def test_floor_divide_edges_signed(lib):
    a = lib.array([7, -7, I32.min, 5, -5, 0, 9, I32.max], "int32")
    b = lib.array([2, 2, -1, 0, 0, 0, -1, -1], "int32")
    q = _safe_floor_quotient(lib, a, b)
    out = rules.floor_divide_edges(a, b, q, int_min=lib.scalar(I32.min, "int32"),
                                   int_max=lib.scalar(I32.max, "int32"), where=lib.where,
                                   negative=lib.negative, any_true=lib.any_true)
    got = lib.numpy(out)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [3, -4, I32.min, I32.max, I32.min, 0, -9, -I32.max])


def test_floor_divide_edges_without_edges_returns_the_quotient(lib):
    a, b = lib.array([7, -7], "int32"), lib.array([2, 2], "int32")
    q = lib.floor_divide(a, b)
    out = rules.floor_divide_edges(a, b, q, int_min=lib.scalar(I32.min, "int32"),
                                   int_max=lib.scalar(I32.max, "int32"), where=lib.where,
                                   negative=lib.negative, any_true=lib.any_true)
    assert out is q
    np.testing.assert_array_equal(lib.numpy(out), [3, -4])


def test_floor_divide_edges_unsigned(lib):
    a = lib.array([200, 7, 0, 255], "uint8")
    b = lib.array([0, 2, 0, 255], "uint8")
    one = lib.scalar(1, "uint8")
    q = lib.floor_divide(a, lib.where(b == 0, one, b))
    out = rules.floor_divide_edges(a, b, q, int_min=lib.scalar(0, "uint8"),
                                   int_max=lib.scalar(255, "uint8"), where=lib.where,
                                   negative=lib.negative, any_true=lib.any_true)
    got = lib.numpy(out)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, [255, 3, 0, 1])


def test_floor_divide_by_zero(lib):
    a = lib.array([5, -5, 0], "int32")
    out = rules.floor_divide_by_zero(a, lib.scalar(0, "int32"), lib.scalar(I32.min, "int32"),
                                     lib.scalar(I32.max, "int32"), where=lib.where)
    got = lib.numpy(out)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [I32.max, I32.min, 0])


def test_sign_of_nan_and_zeros_positive(lib):
    values = [np.nan, -np.nan, -0.0, 0.0, 1.5, -2.0, np.inf, -np.inf]
    signs = lib.xp.sign(lib.array(values, "float32"))
    out = lib.numpy(rules.sign_of_nan_and_zeros_positive(lib.xp, signs))
    assert out.dtype == np.float32
    assert out.view(np.uint32).tolist() == np.array(
        [0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 1.0, -1.0], np.float32).view(np.uint32).tolist()


def test_erf_polynomial(lib):
    values = [-3.0, -1.0, -0.25, 0.0, 0.5, 2.0]
    out = rules.erf_polynomial(lib.xp, lib.array(values, "float32"))
    got = lib.numpy(out)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [math.erf(v) for v in values], rtol=0, atol=3e-7)


def test_the_helpers_trace_under_jax_jit():
    """No helper reads an array's truth value: each runs inside ``jax.jit`` (divisors
    traced; the edge check's ``any_true`` and the signedness stay concrete)."""
    jax = pytest.importorskip("jax")
    jnp, lax = jax.numpy, jax.lax

    @jax.jit
    def div(a, b):
        return rules.divide_toward_zero(a, b, trunc_divide=lax.div, where=jnp.where,
                                        negative=jnp.negative)

    @jax.jit
    def sat(t):
        return rules.saturate_to_int(t, int(I32.min), int(I32.max), where=jnp.where,
                                     isnan=jnp.isnan, convert=lambda a: a.astype(jnp.int32))

    a = jnp.asarray(np.array([7, I32.min, 3], np.int32))
    b = jnp.asarray(np.array([-2, -1, 0], np.int32))
    np.testing.assert_array_equal(np.asarray(div(a, b)), [-3, I32.min, 0])
    t = jnp.asarray(np.array([1e10, np.nan, -4.0], np.float32))
    np.testing.assert_array_equal(np.asarray(sat(t)), [I32.max, 0, -4])


def test_python_side_rules():
    assert rules.check_seed(3) == 3
    for bad in (-1, True, 2.0):
        with pytest.raises(ValueError, match="seed: expected a non-negative int"):
            rules.check_seed(bad)
    with pytest.raises(ValueError, match=r"kernel \(3,\) with dilation \(2,\) does not fit"):
        rules.check_window_fits((4,), (3,), (2,))
    rules.check_window_fits((5,), (3,), (2,))
    assert rules.is_half_precision(2) and not rules.is_half_precision(4)
