"""The fake-quantization arithmetic, written once in primitive ops on native arrays.

Every backend runs it and differentiates it with the autodiff it uses (torch autograd, jax, the
reference autodiff): the straight-through estimator is expressed with ``stop_gradient``, so no
backend needs a custom gradient rule.

Formulas (MindSpore 1.x's documented ``FakeQuantWithMinMaxObserver``, signed quantization
range ``[Qmin, Qmax] = [-2**(b-1), 2**(b-1) - 1]``, ``Qmin + 1`` with ``narrow_range``)::

    running min/max   x_min = min(min(X), 0)                   (ema False)
                      x_min = min((1 - c) min(X) + c x_min, 0) (ema True, c = ema_decay)
                      and likewise x_max with max(., 0)
    symmetric         x_max = max(x_max, -x_min), x_min = -x_max
    scale             (x_max - x_min) / (Qmax - Qmin)
    zero point        zp = round(clip(Qmin - x_min / scale, Qmin, Qmax))
    nudged range      u_min = (Qmin - zp) scale, u_max = (Qmax - zp) scale
    output            round((clip(X, u_min, u_max) - u_min) / scale) scale + u_min
    gradient          dY/dX = 1 where u_min <= X <= u_max, else 0

where ``round(v) = floor(v + 0.5)`` (MindSpore's rounding: ties up), computed as
``floor(v + 0.5 + 2**-12)``: see ``HALF_UP``. A zero range (``x_min == x_max == 0``) gives
scale 0 and outputs 0.
"""
from __future__ import annotations

from typing import NamedTuple

from mscore.dispatch import call
from mscore.dispatch import dtype as _dtype
from mscore.dispatch import shape as _shape

SUPPORTED_BITS = (4, 7, 8)
# Rounding adds 0.5 and a hair more (2**-12 of a level): a quotient that is a tie in exact
# arithmetic rounds up on every backend, also where float32 division is a few ulps off (XLA's
# vectorised division on CPU), instead of landing on either side of the tie.
HALF_UP = 0.5 + 2.0 ** -12


def quant_range(num_bits, narrow_range):
    """``(Qmin, Qmax)`` of the signed ``num_bits`` range (``Qmin + 1`` when narrow)."""
    qmin = -(1 << (num_bits - 1))
    qmax = (1 << (num_bits - 1)) - 1
    return (qmin + 1 if narrow_range else qmin), qmax


def _scalar(value, dtype):
    return call("full", (), value, dtype)


class QuantParams(NamedTuple):
    """Native arrays (one shape: a scalar, or broadcastable per channel) describing a grid."""

    scale: object        # (x_max - x_min) / (Qmax - Qmin), 0 for an empty range
    safe_scale: object   # scale, or 1 where it is 0 (the divisor)
    zero_point: object   # in [Qmin, Qmax], integral values in the floating dtype
    nudged_min: object   # (Qmin - zp) * scale
    nudged_max: object   # (Qmax - zp) * scale


def batch_min_max(x, channel_axis=None):
    """Min and max of native ``x``: over everything (0-d results), or over every axis but
    ``channel_axis`` (1-d results of that axis' length)."""
    if channel_axis is None:
        axes = None
    else:
        axes = tuple(i for i in range(len(_shape(x))) if i != channel_axis)
    return call("min", x, axes, False), call("max", x, axes, False)


def update_min_max(old_min, old_max, batch_min, batch_max, ema, ema_decay):
    """The observer's new ``(min, max)`` (natives of ``old_min``'s shape and dtype)."""
    dt = _dtype(old_min)
    shape = _shape(old_min)
    new = []
    for old, batch in ((old_min, batch_min), (old_max, batch_max)):
        if _dtype(batch) is not dt:
            batch = call("cast", batch, dt)
        batch = call("reshape", batch, shape)
        if ema:
            batch = call("add", call("mul", old, _scalar(ema_decay, dt)),
                         call("mul", batch, _scalar(1.0 - ema_decay, dt)))
        new.append(batch)
    zero = _scalar(0.0, dt)
    return call("minimum", new[0], zero), call("maximum", new[1], zero)


def nudge(x_min, x_max, qmin, qmax, symmetric):
    """The :class:`QuantParams` of the range ``[x_min, x_max]`` (natives, one shape)."""
    dt = _dtype(x_min)
    if symmetric:
        x_max = call("maximum", x_max, call("neg", x_min))
        x_min = call("neg", x_max)
    scale = call("div", call("sub", x_max, x_min), _scalar(float(qmax - qmin), dt))
    zero = _scalar(0.0, dt)
    safe = call("where", call("greater", scale, zero), scale, _scalar(1.0, dt))
    lo, hi = _scalar(float(qmin), dt), _scalar(float(qmax), dt)
    zp_from_min = call("sub", lo, call("div", x_min, safe))
    clipped = call("minimum", call("maximum", zp_from_min, lo), hi)
    zp = call("floor", call("add", clipped, _scalar(HALF_UP, dt)))
    nudged_min = call("mul", call("sub", lo, zp), scale)
    nudged_max = call("mul", call("sub", hi, zp), scale)
    return QuantParams(scale, safe, zp, nudged_min, nudged_max)


def cast_params(qp, dtype):
    """``qp`` with every array in ``dtype``."""
    return QuantParams(*(a if _dtype(a) is dtype else call("cast", a, dtype) for a in qp))


def levels(x, qp):
    """The grid index (0 .. Qmax - Qmin, integral values in ``x``'s dtype) of each element
    of native ``x``: the integer ``levels + Qmin`` is its quantized value."""
    clipped = call("minimum", call("maximum", x, qp.nudged_min), qp.nudged_max)
    steps = call("div", call("sub", clipped, qp.nudged_min), qp.safe_scale)
    return call("floor", call("add", steps, _scalar(HALF_UP, _dtype(x))))


def fake_quant(x, qp):
    """Quantize-dequantize native ``x`` on the grid ``qp`` (no gradient)."""
    return call("add", call("mul", levels(x, qp), qp.scale), qp.nudged_min)


def fake_quant_ste(x, qp):
    """:func:`fake_quant` whose gradient is the straight-through estimator: 1 inside the
    nudged range, 0 outside. The forward value is exactly :func:`fake_quant`'s:
    ``q + (x - stop_gradient(x)) * mask`` adds an exact zero."""
    q = call("stop_gradient", fake_quant(call("stop_gradient", x), qp))
    inside = call("logical_and", call("greater_equal", x, qp.nudged_min),
                  call("less_equal", x, qp.nudged_max))
    mask = call("cast", inside, _dtype(x))
    through = call("mul", call("sub", x, call("stop_gradient", x)), mask)
    return call("add", q, through)


def broadcast_params(values, ndim, channel_axis):
    """Reshape 1-d per-channel natives to broadcast along ``channel_axis`` of an
    ``ndim``-d value; per-layer (one element) natives become 0-d."""
    out = []
    for v in values:
        if channel_axis is None:
            out.append(call("reshape", v, ()))
        else:
            shape = [1] * ndim
            shape[channel_axis] = _shape(v)[0]
            out.append(call("reshape", v, tuple(shape)))
    return out
