"""``mindspore.mint.special``: PyTorch's ``torch.special`` names of elementwise functions of
:mod:`mscore.ops`."""
from __future__ import annotations

from mscore import ops
from mscore.mint.nn.functional import log_softmax

__all__ = ["erfc", "expm1", "exp2", "round", "sinc", "log1p", "log_softmax"]


def erfc(input):
    """The complementary error function ``1 - erf(input)``."""
    return ops.erfc(input)


def expm1(input):
    """``exp(input) - 1``, exact for small inputs."""
    return ops.expm1(input)


def exp2(input):
    """``2 ** input``."""
    return ops.exp2(input)


def round(input):
    """Rounded to the nearest integer, halves to even."""
    return ops.round(input)


def sinc(input):
    """The normalised sinc ``sin(pi x) / (pi x)`` (1 at 0)."""
    return ops.sinc(input)


def log1p(input):
    """``log(1 + input)``, exact for small inputs."""
    return ops.log1p(input)
