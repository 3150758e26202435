"""Complex numbers' parts of ``mindspore.ops`` (``real``, ``imag``, ``angle``, ``conj``) and
the tests for complex dtypes."""
from __future__ import annotations

import math

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops.math.arithmetic import _float

__all__ = [
    "isreal", "is_complex", "angle", "conj", "real", "imag",
]


def isreal(input):
    """True everywhere: mscore's dtypes are real."""
    return ops.ones_like(input, dtype=mdt.bool_)


def is_complex(input):
    """False: mscore has no complex dtypes."""
    return False


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
