"""Elementwise and small linear-algebra functions of ``mindspore.ops`` that training code and
Tensor methods use, built from the ops in :mod:`mscore.ops` (so every backend runs them and
gradients follow from those ops' rules)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore import ops
from mscore.ops._args import _check_broadcast, _operands
from mscore.ops.math.elementwise import int_fmod, int_truncate_divide
from mscore.ops.primitive_base import _elementwise
from mscore.plugin.rules import is_half_precision

__all__ = [
    "tan", "sinh", "cosh", "log2", "log10", "exp2", "trunc", "frac", "round",
    "deg2rad", "rad2deg", "erfc", "logit", "hypot", "xlogy", "xdivy", "lerp", "fmod",
    "float_power", "logaddexp2", "sinc", "signbit", "isneginf", "isposinf", "isreal",
    "nan_to_num", "addcdiv", "addmm", "addbmm", "baddbmm", "addmv", "addr", "inner", "dot",
    "mv", "positive", "sgn", "copysign", "heaviside", "fmax", "fmin",
    "is_floating_point", "is_complex", "atan", "arctan", "atan2", "arctan2", "asin",
    "arcsin", "acos", "arccos", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh",
    "inv", "angle", "conj", "real", "imag", "truncate_div", "truncate_mod", "TruncateDiv",
    "TruncateMod",
]


def _float(x, name="input"):
    """``x`` as a floating Tensor (integers and bools become float32, as MindSpore's float
    ops do)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    return x if x.dtype.is_floating else ops.cast(x, mdt.float32)


def tan(input):
    """Tangent, elementwise: ``sin(x) / cos(x)``."""
    x = _float(input)
    return ops.div(ops.sin(x), ops.cos(x))


def sinh(input):
    """Hyperbolic sine, elementwise: ``(exp(x) - exp(-x)) / 2``."""
    x = _float(input)
    return ops.mul(ops.sub(ops.exp(x), ops.exp(ops.neg(x))), 0.5)


def cosh(input):
    """Hyperbolic cosine, elementwise: ``(exp(x) + exp(-x)) / 2``."""
    x = _float(input)
    return ops.mul(ops.add(ops.exp(x), ops.exp(ops.neg(x))), 0.5)


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
    return ops.where(ops.less(input, 0), ops.ceil(input), ops.floor(input))


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


def deg2rad(x):
    """Degrees to radians, elementwise."""
    return ops.mul(_float(x, "x"), math.pi / 180.0)


def rad2deg(x):
    """Radians to degrees, elementwise."""
    return ops.mul(_float(x, "x"), 180.0 / math.pi)


def erfc(input):
    """Complementary error function ``1 - erf(x)``, elementwise."""
    return ops.sub(1.0, ops.erf(_float(input)))


def logit(input, eps=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is
    given."""
    p = _float(input)
    if eps is not None:
        p = ops.clamp(p, float(eps), 1.0 - float(eps))
    return ops.log(ops.div(p, ops.sub(1.0, p)))


def hypot(input, other):
    """``sqrt(input ** 2 + other ** 2)``, elementwise."""
    a, b = _float(input), _float(other, "other")
    return ops.sqrt(ops.add(ops.mul(a, a), ops.mul(b, b)))


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


def sinc(input):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x = _float(input)
    zero = ops.equal(x, 0.0)
    px = ops.mul(ops.where(zero, ops.ones_like(x), x), math.pi)
    return ops.where(zero, ops.ones_like(x), ops.div(ops.sin(px), px))


def signbit(input):
    """True where the value is negative."""
    return ops.less(input, 0)


def isneginf(input):
    """True where the value is -inf."""
    return ops.logical_and(ops.isinf(input), ops.less(input, 0))


def isposinf(input):
    """True where the value is +inf."""
    return ops.logical_and(ops.isinf(input), ops.greater(input, 0))


def isreal(input):
    """True everywhere: mscore's dtypes are real."""
    return ops.ones_like(input, dtype=mdt.bool_)


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


def _beta_alpha(base, product, beta, alpha):
    """``beta * base + alpha * product`` (``base`` ignored when ``beta`` is 0, so its NaNs do
    not leak, as in MindSpore)."""
    out = product if alpha == 1 else ops.mul(product, alpha)
    if beta == 0:
        return out
    return ops.add(base if beta == 1 else ops.mul(base, beta), out)


def addmm(input, mat1, mat2, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return _beta_alpha(input, ops.matmul(mat1, mat2), beta, alpha)


def addbmm(input, batch1, batch2, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    return _beta_alpha(input, ops.sum(ops.bmm(batch1, batch2), 0), beta, alpha)


def baddbmm(input, batch1, batch2, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` per batch."""
    return _beta_alpha(input, ops.bmm(batch1, batch2), beta, alpha)


def addmv(input, mat, vec, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``."""
    return _beta_alpha(input, ops.matmul(mat, vec), beta, alpha)


def addr(x, vec1, vec2, beta=1, alpha=1):
    """``beta * x + alpha * outer(vec1, vec2)``."""
    return _beta_alpha(x, ops.outer(vec1, vec2), beta, alpha)


def inner(input, other):
    """Sum of products over the last axes (a scalar times a tensor when one is 0-d)."""
    if input.ndim == 0 or other.ndim == 0:
        return ops.mul(input, other)
    k = input.shape[-1]
    if other.shape[-1] != k:
        raise ValueError(f"inner: the last dimensions differ: {input.shape} and "
                         f"{other.shape}")
    flat = ops.matmul(ops.reshape(input, (-1, k)), ops.transpose(ops.reshape(other, (-1, k)),
                                                                (1, 0)))
    return ops.reshape(flat, input.shape[:-1] + other.shape[:-1])


def dot(input, other):
    """The dot product of two 1-d Tensors."""
    if input.ndim != 1 or other.ndim != 1:
        raise ValueError(f"dot: expected two 1-d Tensors, got shapes {input.shape} and "
                         f"{other.shape}")
    return ops.sum(ops.mul(input, other))


def mv(mat, vec):
    """Matrix times vector."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise ValueError(f"mv: expected a 2-d matrix and a 1-d vector, got shapes "
                         f"{mat.shape} and {vec.shape}")
    return ops.matmul(mat, vec)


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


def is_complex(input):
    """False: mscore has no complex dtypes."""
    return False


# -- inverse trigonometric and hyperbolic functions ----------------------------------------
# The backend contract has no inverse trigonometric primitive: arctan is Cephes' single
# precision rational approximation (range reduced to |x| <= tan(pi/8); error ~1 ulp of
# float32), the others follow from it and from log/sqrt. Every branch's input is made safe
# before ``where`` picks, so no branch computes inf/NaN whose gradient would leak.
_TAN_3PI_8 = 2.414213562373095
_TAN_PI_8 = 0.4142135623730950


def _odd(x, positive_part):
    """``f(x)`` of an odd function from ``f`` on ``x >= 0``: ``-f(-x)`` for negative ``x``.
    Mirrored with ``where`` (not ``sign * f(abs)``), so the gradient at 0 is ``f'(0)``."""
    negative = ops.less(x, 0.0)
    t = ops.where(negative, ops.neg(x), x)
    out = positive_part(t)
    return ops.where(negative, ops.neg(out), out)


def _atan_positive(a):
    """Arctangent of ``a >= 0`` (Cephes' reduction and polynomial)."""
    big = ops.greater(a, _TAN_3PI_8)
    mid = ops.logical_and(ops.greater(a, _TAN_PI_8), ops.logical_not(big))
    a_big = ops.where(big, a, ops.ones_like(a))
    reduced = ops.where(big, ops.neg(ops.reciprocal(a_big)),
                        ops.where(mid, ops.div(ops.sub(a, 1.0), ops.add(a, 1.0)), a))
    offset = ops.where(big, ops.full_like(a, math.pi / 2),
                       ops.where(mid, ops.full_like(a, math.pi / 4), ops.zeros_like(a)))
    z = ops.mul(reduced, reduced)
    poly = ops.sub(ops.mul(ops.add(ops.mul(ops.sub(ops.mul(z, 8.05374449538e-2),
                                                   1.38776856032e-1), z),
                                   1.99777106478e-1), z), 3.33329491539e-1)
    return ops.add(offset, ops.add(ops.mul(ops.mul(poly, z), reduced), reduced))


def atan(input):
    """Arctangent, elementwise (radians in ``(-pi/2, pi/2)``)."""
    return _odd(_float(input), _atan_positive)


def arctan(input):
    """NumPy's name of :func:`atan`."""
    return atan(input)


def atan2(input, other):
    """The angle of the point ``(other, input)``: ``atan(input / other)`` in the right
    quadrant, in ``[-pi, pi]``."""
    y, x = _float(input), _float(other, "other")
    y, x = ops.broadcast_to(y, _broadcast(y, x)), ops.broadcast_to(x, _broadcast(y, x))
    x_zero = ops.equal(x, 0.0)
    base = atan(ops.div(y, ops.where(x_zero, ops.ones_like(x), x)))
    half_pi = ops.mul(ops.where(ops.less(y, 0.0), ops.full_like(y, -1.0),
                                ops.where(ops.greater(y, 0.0), ops.ones_like(y),
                                          ops.zeros_like(y))), math.pi / 2)
    shift = ops.where(ops.less(y, 0.0), ops.full_like(y, -math.pi), ops.full_like(y, math.pi))
    out = ops.where(ops.less(x, 0.0), ops.add(base, shift), base)
    return ops.where(x_zero, half_pi, out)


def _broadcast(a, b):
    return tuple(np.broadcast_shapes(a.shape, b.shape))


def arctan2(input, other):
    """NumPy's name of :func:`atan2`."""
    return atan2(input, other)


def _unit_root(x):
    """``sqrt(1 - x**2)``, kept at 0 (not NaN) at |x| = 1 and beyond."""
    return ops.sqrt(ops.maximum(ops.sub(1.0, ops.mul(x, x)), 0.0))


def asin(input):
    """Arcsine, elementwise (NaN outside [-1, 1])."""
    x = _float(input)
    out = atan2(x, _unit_root(x))
    return ops.where(ops.greater(ops.abs(x), 1.0), ops.full_like(x, math.nan), out)


def arcsin(x):
    """NumPy's name of :func:`asin`."""
    return asin(x)


def acos(input):
    """Arccosine, elementwise (NaN outside [-1, 1])."""
    return ops.sub(math.pi / 2, asin(input))


def arccos(input):
    """NumPy's name of :func:`acos`."""
    return acos(input)


def asinh(input):
    """Inverse hyperbolic sine: ``sign(x) * log(|x| + sqrt(x**2 + 1))``."""
    return _odd(_float(input),
                lambda t: ops.log(ops.add(t, ops.sqrt(ops.add(ops.mul(t, t), 1.0)))))


def arcsinh(input):
    """NumPy's name of :func:`asinh`."""
    return asinh(input)


def acosh(input):
    """Inverse hyperbolic cosine: ``log(x + sqrt(x**2 - 1))`` (NaN below 1)."""
    x = _float(input)
    return ops.log(ops.add(x, ops.sqrt(ops.sub(ops.mul(x, x), 1.0))))


def arccosh(input):
    """NumPy's name of :func:`acosh`."""
    return acosh(input)


def atanh(input):
    """Inverse hyperbolic tangent: ``log((1 + x) / (1 - x)) / 2``."""
    x = _float(input)
    return ops.mul(ops.log(ops.div(ops.add(1.0, x), ops.sub(1.0, x))), 0.5)


def arctanh(input):
    """NumPy's name of :func:`atanh`."""
    return atanh(input)


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


def angle(input):
    """The argument of each entry: pi for negative reals, 0 otherwise (nan stays nan;
    mscore's dtypes are real)."""
    x = _float(input)
    return ops.where(ops.less(x, 0.0), math.pi, ops.mul(x, 0.0))


def conj(input):
    """The complex conjugate: a real tensor's own values (a new tensor)."""
    x = _as_real(input, "conj")
    return ops.mul(x, 1) if not x.dtype.is_bool else ops.logical_and(x, x)


def real(input):
    """The real part: a real tensor's own values (a new tensor)."""
    return conj(_as_real(input, "real"))


def imag(input):
    """The imaginary part: zeros of a real tensor's shape and dtype."""
    return ops.zeros_like(_as_real(input, "imag"))


def _as_real(x, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{name}', 'input' must be a Tensor, but got {type(x).__name__}")
    return x
