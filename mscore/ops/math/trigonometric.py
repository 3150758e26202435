"""Trigonometric and hyperbolic functions of ``mindspore.ops`` and their inverses, built from
the backend's elementwise ops (so every backend runs them and gradients follow from those
ops' rules)."""
from __future__ import annotations

import math

import numpy as np

from mscore import ops
from mscore.ops.math.arithmetic import _float

__all__ = [
    "tan", "sinh", "cosh", "deg2rad", "rad2deg", "hypot", "sinc", "atan", "arctan", "atan2",
    "arctan2", "asin", "arcsin", "acos", "arccos", "asinh", "arcsinh", "acosh", "arccosh",
    "atanh", "arctanh",
]


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


def deg2rad(x):
    """Degrees to radians, elementwise."""
    return ops.mul(_float(x, "x"), math.pi / 180.0)


def rad2deg(x):
    """Radians to degrees, elementwise."""
    return ops.mul(_float(x, "x"), 180.0 / math.pi)


def hypot(input, other):
    """``sqrt(input ** 2 + other ** 2)``, elementwise."""
    a, b = _float(input), _float(other, "other")
    return ops.sqrt(ops.add(ops.mul(a, a), ops.mul(b, b)))


def sinc(input):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x = _float(input)
    zero = ops.equal(x, 0.0)
    px = ops.mul(ops.where(zero, ops.ones_like(x), x), math.pi)
    return ops.where(zero, ops.ones_like(x), ops.div(ops.sin(px), px))


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
