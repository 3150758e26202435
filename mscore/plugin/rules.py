"""The contract's edge-case rules, written once for every backend to use.

A backend's kernels differ (numpy, torch, XLA, CUDA), but what they must return at the edges is
part of the contract: float to integer casts saturate, integer division truncates toward zero
with ``x / 0 == 0`` (floor division gives MAX, MIN or 0 for ``x // 0``), a pooling window that
does not fit is an error, a seed is a non-negative int, half precision special functions are
computed in float32 and rounded once. Each rule is written here over a few library callables
(``where``, ``isnan``, ...) so that every plugin applies the same one with its own array
library; nothing here imports an array library.

Array types: the helpers work on any library's arrays. They compute only through the
callables they are given (the library's ``where``, ``isnan``, ...) and, for comparisons and
combining masks, through ``equal``, ``less``, ``greater``, ``greater_equal``, ``logical_and``
and ``logical_or``, which default to Python's operators (``==``, ``<``, ``>``, ``>=``, ``&``,
``|``): numpy, CuPy, torch and jax arrays implement them elementwise (the project's tests run
every helper on numpy, torch and jax arrays); pass your library's functions where its
operators differ. No helper takes an array's truth value, so they trace under a compiler.
Bounds (``int_min``, ``int_max``) are Python ints or 0-d values of the operands' dtype, as
each helper says.
"""
from __future__ import annotations

import numbers
import operator

# Arrays whose items are narrower than this many bytes (float16, bfloat16) are computed in
# float32 and rounded once to their dtype, for erf and for accumulations.
FLOAT32_ITEMSIZE = 4


def is_half_precision(itemsize) -> bool:
    """True for a floating dtype of ``itemsize`` bytes that computes in float32."""
    return itemsize < FLOAT32_ITEMSIZE


def check_seed(seed) -> int:
    """``seed`` as an int; ValueError unless it is a non-negative int (bool refused)."""
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed: expected a non-negative int, got {seed!r}")
    return int(seed)


def check_window_fits(padded_spatial, kernel, dilation=None):
    """ValueError when a (dilated) ``kernel`` is larger than the padded input on some axis:
    a convolution or pooling window must fit at least once."""
    dilation = tuple(dilation) if dilation is not None else (1,) * len(kernel)
    for size, k, d in zip(padded_spatial, kernel, dilation):
        if d * (k - 1) + 1 > size:
            raise ValueError(f"conv/pool: kernel {tuple(kernel)} with dilation {dilation} "
                             f"does not fit the padded input {tuple(padded_spatial)}")


def saturate_to_int(truncated, int_min, int_max, *, where, isnan, convert,
                    greater_equal=operator.ge, less=operator.lt, logical_or=operator.or_):
    """Float to integer after truncation toward zero: values beyond ``[int_min, int_max]``
    saturate and NaN gives 0 (a plain C cast is undefined there and differs by device).

    ``truncated``: float array already truncated (computed in float32 at least);
    ``int_min``/``int_max``: Python ints; ``where(cond, x, y)`` (with Python scalars for
    ``x``/``y``), ``isnan(a)`` and ``convert(a)`` (to the integer dtype) come from the
    backend's library, the comparisons as the module says.
    """
    # int_max + 1 is a power of two, exact in every float dtype.
    high = greater_equal(truncated, float(int_max) + 1)
    low = less(truncated, float(int_min))
    out = convert(where(logical_or(logical_or(high, low), isnan(truncated)), 0, truncated))
    return convert(where(high, int_max, where(low, int_min, out)))


def divide_toward_zero(a, b, *, trunc_divide, where, negative, equal=operator.eq,
                       less=operator.lt, logical_and=operator.and_, logical_or=operator.or_):
    """Integer division truncating toward zero (MindSpore's Div): ``x / 0`` is 0 and
    ``MIN / -1`` wraps to MIN, where a CPU would trap and libraries raise or differ.

    ``trunc_divide(a, b)`` divides truncating toward zero for divisors other than 0 and -1;
    ``where`` and ``negative`` (wrapping) come from the backend's library, the comparisons
    (with Python ints 0 and -1) as the module says.
    """
    # ``b < 0`` first: an unsigned ``b == -1`` compares with MAX in libraries that wrap the
    # -1 into the dtype (JAX), and MAX is no -1.
    zero, minus_one = equal(b, 0), logical_and(less(b, 0), equal(b, -1))
    safe = where(logical_or(zero, minus_one), 1, b)
    quotient = where(minus_one, negative(a), trunc_divide(a, safe))
    return where(zero, 0, quotient)


def floor_divide_by_zero(a, zero, int_min, int_max, *, where, greater=operator.gt,
                         less=operator.lt):
    """What integer floor division gives where the divisor is 0 (MindSpore's FloorDiv: the
    float quotient's +-inf, or NaN for ``0 // 0``, cast saturating): ``int_max`` where
    ``a > 0``, ``int_min`` where ``a < 0``, 0 where ``a`` is 0.

    ``zero``, ``int_min`` and ``int_max`` are 0-d values of ``a``'s dtype; ``where`` comes
    from the backend's library (or the core's dispatch), ``greater`` and ``less`` as the
    module says.
    """
    return where(greater(a, zero), int_max, where(less(a, zero), int_min, zero))


def floor_divide_edges(a, b, quotient, *, int_min, int_max, where, negative, any_true,
                       signed=None, equal=operator.eq, logical_or=operator.or_,
                       greater=operator.gt, less=operator.lt):
    """Integer floor division by the contract from ``quotient``, a library's floor division
    of ``a`` by ``b`` (broadcasting) that is exact wherever the divisor is neither 0 nor -1
    (there CPUs trap and libraries raise, return 0 or differ): ``x // -1`` is ``-x``,
    wrapping (``MIN // -1 == MIN``), and ``x // 0`` is :func:`floor_divide_by_zero`'s.

    ``int_min``/``int_max``: 0-d values of the dtype (``int_min`` 0 for an unsigned one);
    ``signed``: whether the dtype is signed (None: read from ``int_min``, which must then be
    concrete); ``where``, ``negative`` (wrapping) and ``any_true(mask) -> bool`` come from the
    backend's library, the comparisons (with Python ints 0 and -1) as the module says. When
    no divisor is 0 or -1, ``quotient`` is returned as it is (the library's one call is the
    whole division).
    """
    if signed is None:
        signed = int(int_min) < 0
    zero = equal(b, 0)
    minus_one = equal(b, -1) if signed else None   # an unsigned divisor is never -1
    edges = zero if minus_one is None else logical_or(zero, minus_one)
    if not any_true(edges):
        return quotient
    if minus_one is not None:
        quotient = where(minus_one, negative(a), quotient)
    nil = int_min - int_min   # 0 in the dtype
    by_zero = floor_divide_by_zero(a, nil, int_min, int_max, where=where, greater=greater,
                                   less=less)
    return where(zero, by_zero, quotient)


def sign_of_nan_and_zeros_positive(xp, signs):
    """The float array ``signs`` (``xp.sign``'s -1, 0, 1 or NaN) with NaN (either sign bit)
    and -0 made +0: MindSpore's ``Sign`` of NaN and of either zero is +0, where numpy,
    ``jnp.sign`` and the array API give NaN and keep -0. ``xp`` needs ``where`` and
    ``zeros(shape, dtype=...)``: numpy, CuPy, ``jax.numpy``, ``torch`` and the array-API
    namespaces have them."""
    return xp.where((signs > 0) | (signs < 0), signs, xp.zeros((), dtype=signs.dtype))


# The complementary error function's Chebyshev fit (relative error below 1.2e-7, enough for
# float32 and narrower), for array libraries without a special-function module.
ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
               -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def erf_polynomial(xp, x):
    """erf of float array ``x`` with array module ``xp``, in ``x``'s dtype. ``xp`` needs
    ``abs``, ``exp``, ``zeros_like``, ``where`` and ``asarray(a, dtype=...)``: numpy, CuPy,
    ``jax.numpy``, ``torch`` and the array-API namespaces have them."""
    z = xp.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = xp.zeros_like(z) + ERFC_COEFFS[-1]
    for c in reversed(ERFC_COEFFS[:-1]):
        poly = poly * t + c
    erfc = t * xp.exp(-z * z + poly)
    return xp.asarray(xp.where(x >= 0, 1.0 - erfc, erfc - 1.0), dtype=x.dtype)
