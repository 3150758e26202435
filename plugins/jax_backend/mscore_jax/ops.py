"""The JAX backend's primitive ops and overflow check over ``jax.numpy`` / ``jax.lax``.

Float32 matmul and convolution run at ``Precision.HIGHEST`` (no TF32 on GPUs) so that results
match the numpy reference at float32 tolerance; set ``backend.precision = None`` for XLA's
fastest default. Multi-op primitives are each one ``jax.jit`` function, so PYNATIVE mode
compiles one XLA program per op and shape instead of one per ``jnp`` call.
"""
from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from mscore.common import dtype as mdt
from mscore.plugin.rules import (
    check_window_fits,
    divide_toward_zero,
    is_half_precision,
    sign_of_nan_and_zeros_positive,
)

from .core import _Tracer


@jax.jit
def _int_pow(a, b):
    """``a ** b`` of integers, wrapping, by squaring over every bit of the exponent: XLA's
    integer power of an exponent array drops the high bits of large exponents (int8
    ``(-128) ** 64`` gave 1, not 0). Negative exponents keep ``jnp.power``'s answer."""
    a, b = jnp.broadcast_arrays(a, b)
    result, base, e = jnp.ones_like(a), a, b
    for _ in range(jnp.iinfo(a.dtype).bits):
        result = jnp.where((e & 1) == 1, result * base, result)
        base = base * base
        e = e >> 1
    return jnp.where(b < 0, jnp.power(a, b), result) if jnp.issubdtype(
        a.dtype, jnp.signedinteger) else result


@jax.jit
def _float_divide(a, b):
    """``a / b`` of floats. XLA rewrites ``a / broadcast(b)`` as ``a * broadcast(1 / b)``,
    whose reciprocal leaves the range: past 65504 in float16 for a subnormal ``b`` (-6e-8 /
    6e-8 gave -inf), subnormal and flushed to zero for ``|b|`` past ``1 / smallest normal``
    (MAX / MAX gave 0, -inf / MAX NaN). Half precision divides in float32 (its reciprocals
    hold there) and rounds once; where ``|b|`` is that large both operands are scaled by
    2**-64 first (exact: a power of two; a scaled ``a`` that underflows has a quotient far
    below the smallest subnormal anyway)."""
    dt = jnp.result_type(a, b)
    if is_half_precision(dt.itemsize):
        f32 = jnp.float32
        return jnp.true_divide(a.astype(f32), b.astype(f32)).astype(dt)
    huge = jnp.abs(b) > 1.0 / float(jnp.finfo(dt).smallest_normal)
    scale = 2.0 ** -64
    return jnp.true_divide(jnp.where(huge, a * scale, a), jnp.where(huge, b * scale, b))

class JaxOps:
    """The primitive op set over ``jax.Array`` (and tracers)."""

    # -- elementwise -------------------------------------------------------------------------
    def neg(self, a): return jnp.negative(a)
    def abs(self, a): return jnp.abs(a)
    def exp(self, a): return jnp.exp(a)
    def log(self, a): return jnp.log(a)
    def sqrt(self, a): return jnp.sqrt(a)
    def sin(self, a): return jnp.sin(a)
    def cos(self, a): return jnp.cos(a)
    def tanh(self, a): return jnp.tanh(a)

    def sign(self, a):
        """-1, 0 or 1; a float NaN or either zero gives +0 (MindSpore's sign; jnp.sign gives
        NaN and keeps -0)."""
        out = jnp.sign(a)
        if not jnp.issubdtype(out.dtype, jnp.floating):
            return out
        return sign_of_nan_and_zeros_positive(jnp, out)

    def floor(self, a): return jnp.floor(a)
    def ceil(self, a): return jnp.ceil(a)
    def logical_not(self, a): return jnp.logical_not(a)
    def isfinite(self, a): return jnp.isfinite(a)

    def erf(self, a):
        if is_half_precision(a.dtype.itemsize):  # computed in float32, rounded once
            return lax.erf(a.astype(jnp.float32)).astype(a.dtype)
        return lax.erf(a)

    def add(self, a, b): return jnp.add(a, b)
    def sub(self, a, b): return jnp.subtract(a, b)
    def mul(self, a, b): return jnp.multiply(a, b)
    def pow(self, a, b):
        if jnp.issubdtype(a.dtype, jnp.integer):
            return _int_pow(a, b)
        return jnp.power(a, b)
    def maximum(self, a, b): return jnp.maximum(a, b)
    def minimum(self, a, b): return jnp.minimum(a, b)
    def equal(self, a, b): return jnp.equal(a, b)
    def not_equal(self, a, b): return jnp.not_equal(a, b)
    def less(self, a, b): return jnp.less(a, b)
    def less_equal(self, a, b): return jnp.less_equal(a, b)
    def greater(self, a, b): return jnp.greater(a, b)
    def greater_equal(self, a, b): return jnp.greater_equal(a, b)
    def logical_and(self, a, b): return jnp.logical_and(a, b)
    def logical_or(self, a, b): return jnp.logical_or(a, b)

    def div(self, a, b):
        if jnp.issubdtype(a.dtype, jnp.integer) or a.dtype == jnp.bool_:
            return _int_div(a, b)
        return _float_divide(a, b)

    def where(self, cond, x, y):
        return jnp.where(cond, x, y)

    # -- reductions ----------------------------------------------------------------------------
    def sum(self, a, axis, keepdims):
        return jnp.sum(a, axis=axis, keepdims=keepdims, dtype=a.dtype)

    def max(self, a, axis, keepdims):
        return jnp.max(a, axis=axis, keepdims=keepdims)

    def min(self, a, axis, keepdims):
        return jnp.min(a, axis=axis, keepdims=keepdims)

    def all(self, a, axis, keepdims):
        return jnp.all(a, axis=axis, keepdims=keepdims)

    def any(self, a, axis, keepdims):
        return jnp.any(a, axis=axis, keepdims=keepdims)

    def argmax(self, a, axis):
        return jnp.argmax(a, axis=axis).astype(self.native_dtype(mdt.int64))

    def argmin(self, a, axis):
        return jnp.argmin(a, axis=axis).astype(self.native_dtype(mdt.int64))

    # -- shape ---------------------------------------------------------------------------------
    def reshape(self, a, shape): return jnp.reshape(a, shape)
    def transpose(self, a, perm): return jnp.transpose(a, perm)
    def broadcast_to(self, a, shape): return jnp.broadcast_to(a, shape)

    def concat(self, arrays, axis):
        return jnp.concatenate(list(arrays), axis=axis)

    def pad(self, a, pad_width, value):
        if not any(lo or hi for lo, hi in pad_width):
            return a
        config = [(int(lo), int(hi), 0) for lo, hi in pad_width]
        return lax.pad(a, jnp.asarray(value, dtype=a.dtype), config)

    # -- indexing ------------------------------------------------------------------------------
    def getitem(self, a, index):
        _check_int_bounds(a.shape, index)
        return a[index]

    def scatter_add(self, a, index, updates):
        _check_int_bounds(a.shape, index)
        return a.at[index].add(updates)

    # -- linear algebra, convolution, pooling --------------------------------------------------
    def matmul(self, a, b):
        return jnp.matmul(a, b, precision=self.precision)

    def conv(self, x, w, stride, padding, dilation, groups):
        nd = w.ndim - 2
        spec = tuple(range(nd + 2))
        return lax.conv_general_dilated(
            x, w, window_strides=tuple(stride), padding=[tuple(p) for p in padding],
            rhs_dilation=tuple(dilation),
            dimension_numbers=lax.ConvDimensionNumbers(spec, spec, spec),
            feature_group_count=groups, precision=self.precision)

    def conv_transpose(self, x, w, stride, padding, output_padding, dilation, groups):
        return _conv_transpose(x, w, tuple(stride), _pairs(padding), tuple(output_padding),
                               tuple(dilation), int(groups), self.precision)

    def max_pool(self, x, kernel, stride, padding):
        if jnp.issubdtype(x.dtype, jnp.floating):
            low = -np.inf
        else:
            low = np.iinfo(x.dtype).min
        check_window_fits(_padded(x.shape[2:], padding), kernel)
        # A concrete (numpy) init value makes lax use its differentiable max monoid.
        return lax.reduce_window(x, np.array(low, dtype=x.dtype), lax.max,
                                 (1, 1) + tuple(kernel), (1, 1) + tuple(stride),
                                 ((0, 0), (0, 0)) + tuple(tuple(p) for p in padding))

    def avg_pool(self, x, kernel, stride, padding, count_include_pad):
        check_window_fits(_padded(x.shape[2:], padding), kernel)
        return _avg_pool(x, tuple(kernel), tuple(stride), _pairs(padding),
                         bool(count_include_pad))

    # -- overflow check ------------------------------------------------------------------------
    def all_finite(self, arrays):
        """True when no array holds inf/nan: one fused reduction and one host sync. Inside a
        trace (jit, value_and_grad) it returns a 0-d bool array instead of a Python bool."""
        arrays = list(arrays)
        if not arrays:
            return True
        if any(isinstance(a, _Tracer) for a in arrays):
            return _all_finite_traced(arrays)
        return bool(self._all_finite_jit(arrays))


def _pairs(padding):
    return tuple((int(lo), int(hi)) for lo, hi in padding)


# Multi-op primitives and the fused ops are each one jitted function: one XLA program per
# shape instead of one per jnp call, which matters in PYNATIVE mode (inside a trace they
# inline into the enclosing program).
@partial(jax.jit, static_argnums=(2, 3, 4, 5, 6, 7))
def _conv_transpose(x, w, stride, padding, output_padding, dilation, groups, precision):
    # The input-gradient of conv: spread x by the stride (lhs dilation), pad by the full
    # kernel extent minus the forward padding, and correlate with the flipped kernel whose
    # in/out channel roles are swapped per group.
    nd = w.ndim - 2
    cin, og = w.shape[0], w.shape[1]
    kernel = w.shape[2:]
    cg = cin // groups
    wt = jnp.reshape(w, (groups, cg, og) + kernel)
    wt = jnp.transpose(wt, (0, 2, 1) + tuple(range(3, 3 + nd)))
    wt = jnp.reshape(wt, (groups * og, cg) + kernel)
    wt = jnp.flip(wt, axis=tuple(range(2, 2 + nd)))
    pads = [(d * (k - 1) - lo, d * (k - 1) - hi + op)
            for k, d, (lo, hi), op in zip(kernel, dilation, padding, output_padding)]
    spec = tuple(range(nd + 2))
    return lax.conv_general_dilated(
        x, wt, window_strides=(1,) * nd, padding=pads, lhs_dilation=stride,
        rhs_dilation=dilation, dimension_numbers=lax.ConvDimensionNumbers(spec, spec, spec),
        feature_group_count=groups, precision=precision)


@partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _avg_pool(x, kernel, stride, padding, count_include_pad):
    acc = jnp.float32 if x.dtype.itemsize < 4 else x.dtype
    window = (1, 1) + kernel
    strides = (1, 1) + stride
    pads = ((0, 0), (0, 0)) + padding
    zero = np.array(0, dtype=acc)  # a concrete init value: lax picks the sum monoid
    total = lax.reduce_window(x.astype(acc), zero, lax.add, window, strides, pads)
    if count_include_pad:
        res = total / math.prod(kernel)
    else:
        ones = jnp.ones((1, 1) + tuple(x.shape[2:]), acc)
        res = total / lax.reduce_window(ones, zero, lax.add, window, strides, pads)
    return res.astype(x.dtype)

def _all_finite_traced(arrays):
    flags = [jnp.all(jnp.isfinite(a)) for a in arrays
             if jnp.issubdtype(a.dtype, jnp.inexact)]
    if not flags:
        return jnp.asarray(True)
    return jnp.all(jnp.stack(flags))


@jax.jit
def _int_div(a, b):
    """Integer division truncating toward zero (``rules.divide_toward_zero`` over
    ``lax.div``, which truncates)."""
    dtype = a.dtype
    if dtype == jnp.bool_:
        a, b = a.astype(jnp.int32), b.astype(jnp.int32)
    a, b = jnp.broadcast_arrays(a, b)
    return divide_toward_zero(a, b, trunc_divide=lax.div, where=jnp.where,
                              negative=jnp.negative).astype(dtype)


def _check_int_bounds(shape, index):
    """numpy raises IndexError for an out-of-range int index or index array; JAX would clamp.
    Index arrays are checked when concrete (one host sync), not while jit traces them."""
    cut = next((i for i, item in enumerate(index) if item is Ellipsis), None)
    if cut is not None:
        _check_int_bounds(shape, index[:cut])
        tail = index[cut + 1:]
        used = sum(1 for i in tail if i is not None)
        _check_int_bounds(shape[len(shape) - used:], tail)
        return
    axis = 0
    for item in index:
        if item is None:
            continue
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool) \
                and axis < len(shape) and not -shape[axis] <= item < shape[axis]:
            raise IndexError(f"index {item} is out of bounds for axis {axis} with size "
                             f"{shape[axis]}")
        if isinstance(item, jax.Array) and not isinstance(item, _Tracer) and item.size \
                and axis < len(shape) and jnp.issubdtype(item.dtype, jnp.integer):
            low, high = (int(v) for v in np.asarray(_min_max(item)))
            bad = high if high >= shape[axis] else low if low < -shape[axis] else None
            if bad is not None:
                raise IndexError(f"index {bad} is out of bounds for axis {axis} with size "
                                 f"{shape[axis]}")
        axis += 1


@jax.jit
def _min_max(a):
    return jnp.stack([jnp.min(a), jnp.max(a)])


def _padded(spatial, padding):
    return tuple(s + lo + hi for s, (lo, hi) in zip(spatial, padding))
