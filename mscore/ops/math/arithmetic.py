"""Elementwise arithmetic of ``mindspore.ops`` beyond the backend's primitives: logarithms and
powers of other bases, rounding, truncating division, float classification, ``lerp``,
``nan_to_num``, ``copysign`` ..., built from the ops in :mod:`mscore.ops` (so every backend
runs them and gradients follow from those ops' rules)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops._args import _check_broadcast, _host, _operands
from mscore.ops.math.elementwise import int_fmod, int_truncate_divide, toward_zero
from mscore.ops.primitive_base import _elementwise
from mscore.plugin.rules import is_half_precision

__all__ = [
    "log2", "log10", "exp2", "trunc", "frac", "round", "logit", "xlogy", "xdivy", "lerp",
    "fmod", "float_power", "logaddexp2", "signbit", "isneginf", "isposinf", "nan_to_num",
    "addcdiv", "positive", "sgn", "copysign", "heaviside", "fmax", "fmin", "is_floating_point",
    "inv", "truncate_div", "truncate_mod", "TruncateDiv", "TruncateMod", "nextafter", "ldexp",
]

def _float(x, name="input"):
    """``x`` as a floating Tensor (integers and bools become float32, as MindSpore's float
    ops do)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    return x if x.dtype.is_floating else ops.cast(x, mdt.float32)


def log2(input):
    """Base-2 logarithm, elementwise."""
    return ops.div(ops.log(_float(input)), math.log(2.0))


def log10(input):
    """Base-10 logarithm, elementwise."""
    return ops.div(ops.log(_float(input)), math.log(10.0))


def exp2(input):
    """``2 ** input``, elementwise."""
    return ops.exp(ops.mul(_float(input), math.log(2.0)))


def trunc(input):
    """Rounded toward zero, elementwise (integers unchanged)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"input: expected a Tensor, got {type(input).__name__}")
    if not input.dtype.is_floating:
        return input
    return toward_zero(input)


def fix(input):
    """MindSpore's alias of :func:`trunc`."""
    return trunc(input)


def frac(x):
    """The fractional part, elementwise: ``x - trunc(x)``."""
    return ops.sub(x, trunc(x))


def round(input, decimals=0):
    """Rounded to ``decimals`` places, half to even (as MindSpore and NumPy)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"input: expected a Tensor, got {type(input).__name__}")
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        raise TypeError(f"decimals: expected an int, got {type(decimals).__name__}")
    if not input.dtype.is_floating:
        return input
    scale = 10.0 ** decimals
    x = ops.mul(input, scale) if decimals else input
    low = ops.floor(x)
    diff = ops.sub(x, low)
    half_even = ops.equal(ops.remainder(low, 2.0), 0.0)
    up = ops.logical_or(ops.greater(diff, 0.5),
                        ops.logical_and(ops.equal(diff, 0.5), ops.logical_not(half_even)))
    out = ops.where(up, ops.add(low, 1.0), low)
    return ops.div(out, scale) if decimals else out


def logit(input, eps=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is
    given."""
    p = _float(input)
    if eps is not None:
        p = ops.clamp(p, float(eps), 1.0 - float(eps))
    return ops.log(ops.div(p, ops.sub(1.0, p)))


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0."""
    x, y = _float(input), _float(other, "other") if isinstance(other, Tensor) else other
    out = ops.mul(x, ops.log(y if isinstance(y, Tensor) else ops.full_like(x, y)))
    return ops.where(ops.equal(x, 0.0), ops.zeros_like(out), out)


def xdivy(x, y):
    """``x / y``, 0 where ``x`` is 0."""
    out = ops.div(x, y)
    return ops.where(ops.equal(x, 0), ops.zeros_like(out), out)


def lerp(input, end, weight):
    """``input + weight * (end - input)``."""
    return ops.add(input, ops.mul(weight, ops.sub(end, input)))


def fmod(input, other):
    """Remainder of the division truncated toward zero (its sign is the dividend's); integers
    stay exact in their dtype, ``input`` where ``other`` is 0."""
    exact = int_fmod(input, other)
    if exact is not None:
        return exact
    return ops.sub(input, ops.mul(trunc(ops.div(input, other)), other))


def _truncating_operands(x, y, name):
    """``x`` and ``y`` as Tensors of their promoted dtype, checked as MindSpore's ``name``
    (``TruncateDiv``/``TruncateMod``) checks them: one of them a Tensor, shapes that
    broadcast, no bool."""
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        raise TypeError(f"For primitive[{name}], the input[0] should be a Tensor, but got "
                        f"{type(x).__name__}.")
    ra, rb = _operands(x, y)
    _check_broadcast(name, ra, rb)
    a, b = Tensor._wrap(ra), Tensor._wrap(rb)
    if a.dtype.is_bool:
        raise TypeError(f"For primitive[{name}], the input must be integer or floating "
                        f"Tensors, but got Tensor[Bool].")
    return a, b


def truncate_div(x, y):
    """``x / y`` rounded toward zero (MindSpore's ``TruncateDiv``): integers exact in their
    dtype, ``x / 0`` saturated to MAX/MIN (0 for ``0 / 0``) and ``MIN / -1`` wrapping to MIN;
    floats ``trunc(x / y)``. Bool operands are a TypeError."""
    a, b = _truncating_operands(x, y, "TruncateDiv")
    if a.dtype.is_floating:
        return ops.div(a, b, rounding_mode="trunc")
    return int_truncate_divide(a, b)


def truncate_mod(x, y):
    """The remainder of :func:`truncate_div` (the dividend's sign; MindSpore's
    ``TruncateMod``): integers exact in their dtype and 0 where ``y`` is 0; floats as C's
    ``fmod`` (``x`` for a finite ``x`` and an infinite ``y``; half precision computed in
    float32 and rounded once). Bool operands are a TypeError."""
    a, b = _truncating_operands(x, y, "TruncateMod")
    if not a.dtype.is_floating:
        return int_fmod(a, b, zero_by_zero=True)
    wide = mdt.float32 if is_half_precision(a.dtype.itemsize) else a.dtype
    a_wide, b_wide = ops.cast(a, wide), ops.cast(b, wide)
    rem = ops.where(ops.logical_and(ops.isinf(b_wide), ops.isfinite(a_wide)), a_wide,
                    fmod(a_wide, b_wide))
    return ops.cast(rem, a.dtype)


TruncateDiv = _elementwise("TruncateDiv", truncate_div, "``x / y`` rounded toward zero.")
TruncateMod = _elementwise("TruncateMod", truncate_mod, "The remainder of ``TruncateDiv``.")


def float_power(input, exponent):
    """``input ** exponent`` computed in float64 where the backend has it (float32
    otherwise)."""
    return ops.pow(_float(input), exponent)


def logaddexp2(input, other):
    """``log2(2 ** input + 2 ** other)``, computed stably."""
    a, b = _float(input), _float(other, "other")
    hi = ops.maximum(a, b)
    lo = ops.minimum(a, b)
    return ops.add(hi, log2(ops.add(1.0, exp2(ops.sub(lo, hi)))))


def signbit(input):
    """True where the value is negative."""
    return ops.less(input, 0)


def isneginf(input):
    """True where the value is -inf."""
    return ops.logical_and(ops.isinf(input), ops.less(input, 0))


def isposinf(input):
    """True where the value is +inf."""
    return ops.logical_and(ops.isinf(input), ops.greater(input, 0))


def nan_to_num(input, nan=None, posinf=None, neginf=None):
    """NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (the dtype's
    largest and lowest finite values by default)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"input: expected a Tensor, got {type(input).__name__}")
    if not input.dtype.is_floating:
        return input
    big = float(np.finfo(input.dtype.np_dtype).max)
    out = ops.where(ops.isnan(input), ops.full_like(input, 0.0 if nan is None else nan), input)
    out = ops.where(isposinf(out), ops.full_like(out, big if posinf is None else posinf), out)
    return ops.where(isneginf(out), ops.full_like(out, -big if neginf is None else neginf),
                     out)


def addcdiv(input, tensor1, tensor2, value=1):
    """``input + value * tensor1 / tensor2``."""
    return ops.add(input, ops.mul(value, ops.div(tensor1, tensor2)))


def positive(input):
    """``input`` itself (the unary plus)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"input: expected a Tensor, got {type(input).__name__}")
    if input.dtype.is_bool:
        raise TypeError("positive: the input must not be a bool Tensor")
    return input


def sgn(input):
    """The sign (for real dtypes, :func:`mscore.ops.sign`)."""
    return ops.sign(input)


def copysign(x, other):
    """``|x|`` with the sign of ``other``."""
    x = _float(x, "x")
    neg = ops.less(other, 0) if isinstance(other, Tensor) else (other < 0 or (
        isinstance(other, numbers.Real) and math.copysign(1.0, other) < 0))
    return ops.where(neg, ops.neg(ops.abs(x)), ops.abs(x))


def heaviside(input, values):
    """0 where ``input < 0``, ``values`` where it is 0, 1 where it is positive."""
    one = ops.ones_like(input)
    out = ops.where(ops.greater(input, 0), one, ops.zeros_like(input))
    return ops.where(ops.equal(input, 0), ops.broadcast_to(ops.cast(values, input.dtype),
                                                          input.shape), out)


def fmax(input, other):
    """Elementwise maximum that prefers the number where one side is NaN."""
    out = ops.maximum(input, other)
    out = ops.where(ops.isnan(input), other, out)
    return ops.where(ops.isnan(other), input, out)


def fmin(input, other):
    """Elementwise minimum that prefers the number where one side is NaN."""
    out = ops.minimum(input, other)
    out = ops.where(ops.isnan(input), other, out)
    return ops.where(ops.isnan(other), input, out)


def square_difference(input, other):
    """``(input - other) ** 2``."""
    d = ops.sub(input, other)
    return ops.mul(d, d)


def is_floating_point(input):
    """True when ``input`` has a floating dtype."""
    return bool(input.dtype.is_floating)


# -- reciprocal of MindSpore's ``ops.inv``; the complex-number functions on real tensors ----
def inv(x):
    """``1 / x`` elementwise in ``x``'s dtype (integers divide as C does: 1 / 2 is 0)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For 'inv', 'x' must be a Tensor, but got {type(x).__name__}")
    if x.dtype.is_bool:
        raise TypeError("For 'inv', 'x' must be a numeric Tensor, but got bool")
    if x.dtype.is_floating:
        return ops.reciprocal(x)
    one = ops.ones_like(x)
    return ops.where(ops.equal(ops.abs(x), one), x, ops.zeros_like(x))


def nextafter(input, other):
    """The next representable float after ``input`` toward ``other`` (on the host)."""
    a = _host(input)
    return Tensor(np.nextafter(a, _host(other).astype(a.dtype)).astype(a.dtype))


def ldexp(x, other):
    """``x * 2 ** other``."""
    x = x if x.dtype.is_floating else ops.cast(x, mdt.float32)
    return ops.mul(x, ops.exp(ops.mul(ops.cast(other, x.dtype) if isinstance(other, Tensor)
                                      else float(other), math.log(2.0))))
