"""``FakeQuantWithMinMaxObserver``: min/max observation and fake quantization of one value.

The export hook: while a quantized network is exported, a context variable holds the exporter
(:func:`export_target`); the observers and the quantized layers hand themselves to it in
inference mode instead of computing (the ONNX exporter emits QuantizeLinear/DequantizeLinear
there), or compute a plain fake quantization without the straight-through estimator (MINDIR).
"""
from __future__ import annotations

import contextvars
import numbers

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_int, check_number, check_tensor
from mscore.train.quant import _fake_quant as fq

_wrap = Tensor._wrap

_EXPORT_TARGET = contextvars.ContextVar("mscore_quant_export_target", default=None)


def export_target():
    """The exporter tracing a quantized network in this context, or None."""
    return _EXPORT_TARGET.get()


def set_export_target(target):
    """Install ``target`` as the exporter of this context; returns the reset token."""
    return _EXPORT_TARGET.set(target)


def reset_export_target(token):
    """Undo :func:`set_export_target`."""
    _EXPORT_TARGET.reset(token)


def check_num_bits(num_bits, name, cls):
    """An int among the supported widths (4, 7, 8), as MindSpore's fake-quant ops accept."""
    num_bits = check_int(num_bits, name, cls, minimum=0)
    if num_bits not in fq.SUPPORTED_BITS:
        raise ValueError(f"For '{cls}', '{name}' must be one of {fq.SUPPORTED_BITS}, got "
                         f"{num_bits}")
    return num_bits


class FakeQuantWithMinMaxObserver(Cell):
    r"""Observe the min and max of its input and fake-quantize it (MindSpore 1.x's
    ``nn.FakeQuantWithMinMaxObserver``).

    ``FakeQuantWithMinMaxObserver(min_init=-6, max_init=6, ema=False, ema_decay=0.999,
    per_channel=False, channel_axis=1, num_channels=1, num_bits=8, symmetric=False,
    narrow_range=False, quant_delay=0)``.

    In training, ``minq``/``maxq`` (float32 Parameters, one value or ``num_channels`` values
    along ``channel_axis``) take the input's min/max (``ema=False``) or their exponential
    moving average ``c * old + (1 - c) * batch`` (``ema=True``, ``c = ema_decay``), always
    including 0; the output is the input fake-quantized on the updated grid, with the
    straight-through gradient (identity inside the nudged range, zero outside). With
    ``quant_delay > 0`` the output is the input itself for the first ``quant_delay`` training
    steps (counted in the int32 Parameter ``step``). In inference the stored range is used
    and nothing is updated. The formulas are in :mod:`mscore.train.quant._fake_quant`.
    """

    def __init__(self, min_init=-6, max_init=6, ema=False, ema_decay=0.999, per_channel=False,
                 channel_axis=1, num_channels=1, num_bits=8, symmetric=False,
                 narrow_range=False, quant_delay=0):
        super().__init__()
        cls = "FakeQuantWithMinMaxObserver"
        for name, value in (("min_init", min_init), ("max_init", max_init)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"For '{cls}', '{name}' must be an int or float, got "
                                f"{type(value).__name__}")
        if not min_init < max_init:
            raise ValueError(f"For '{cls}', 'min_init' must be less than 'max_init', got "
                             f"{min_init} and {max_init}")
        self.ema = check_bool(ema, "ema", cls)
        self.ema_decay = check_number(ema_decay, "ema_decay", cls, 0.0, 1.0)
        self.per_channel = check_bool(per_channel, "per_channel", cls)
        self.channel_axis = check_int(channel_axis, "channel_axis", cls, minimum=0)
        self.num_channels = check_int(num_channels, "num_channels", cls, minimum=1)
        self.num_bits = check_num_bits(num_bits, "num_bits", cls)
        self.symmetric = check_bool(symmetric, "symmetric", cls)
        self.narrow_range = check_bool(narrow_range, "narrow_range", cls)
        self.quant_delay = check_int(quant_delay, "quant_delay", cls, minimum=0)
        self.min_init, self.max_init = min_init, max_init
        self.quant_min, self.quant_max = fq.quant_range(self.num_bits, self.narrow_range)
        n = self.num_channels if self.per_channel else 1
        self.minq = Parameter(Tensor(np.full((n,), min_init, np.float32)), requires_grad=False)
        self.maxq = Parameter(Tensor(np.full((n,), max_init, np.float32)), requires_grad=False)
        self.step = None
        if self.quant_delay:
            self.step = Parameter(Tensor(np.zeros((1,), np.int32)), requires_grad=False)

    # -- the grid ----------------------------------------------------------------------------
    def _axis_for(self, shape):
        if not self.per_channel:
            return None
        cls = "FakeQuantWithMinMaxObserver"
        if self.channel_axis >= len(shape) or shape[self.channel_axis] != self.num_channels:
            raise ValueError(f"For '{cls}', the input must have {self.num_channels} channels "
                             f"on axis {self.channel_axis}, got shape {shape}")
        return self.channel_axis

    def grid(self, x_min=None, x_max=None):
        """The :class:`~mscore.train.quant._fake_quant.QuantParams` of ``[x_min, x_max]``
        (natives; the stored ``minq``/``maxq`` by default), one value per channel."""
        x_min = self.minq._data if x_min is None else x_min
        x_max = self.maxq._data if x_max is None else x_max
        return fq.nudge(x_min, x_max, self.quant_min, self.quant_max, self.symmetric)

    def _grid_for(self, shape, dtype, x_min=None, x_max=None):
        axis = self._axis_for(shape)
        qp = fq.QuantParams(*fq.broadcast_params(self.grid(x_min, x_max), len(shape), axis))
        return fq.cast_params(qp, dtype)

    # -- calling -----------------------------------------------------------------------------
    def construct(self, x):
        check_tensor(x, "x", "FakeQuantWithMinMaxObserver")
        if not x.dtype.is_floating:
            raise TypeError(f"For 'FakeQuantWithMinMaxObserver', 'x' must be floating point, "
                            f"got {x.dtype}")
        target = _EXPORT_TARGET.get()
        if target is not None and not self.training:
            return target.fake_quant(self, x)
        xd = x._data
        if not self.training:
            return _wrap(fq.fake_quant_ste(xd, self._grid_for(x.shape, x.dtype)))
        new_min, new_max = self._observe(xd, x.shape)
        out = fq.fake_quant_ste(xd, self._grid_for(x.shape, x.dtype, new_min, new_max))
        if self.step is not None:
            out = self._delayed(xd, out)
        return _wrap(out)

    def _observe(self, xd, shape):
        """Update ``minq``/``maxq`` from the batch; returns the new natives."""
        batch_min, batch_max = fq.batch_min_max(call("stop_gradient", xd),
                                                self._axis_for(shape))
        new_min, new_max = fq.update_min_max(self.minq._data, self.maxq._data, batch_min,
                                             batch_max, self.ema, self.ema_decay)
        self.minq._assign(new_min)
        self.maxq._assign(new_max)
        return new_min, new_max

    def _delayed(self, xd, out):
        """``out`` once ``step >= quant_delay``, the input before; counts the step."""
        step = self.step._data
        ready = call("reshape", call("greater_equal", step,
                                     call("full", (), self.quant_delay, mdt.int32)), ())
        self.step._assign(call("add", step, call("full", (), 1, mdt.int32)))
        return call("where", ready, out, xd)

    def extend_repr(self):
        return (f"num_bits={self.num_bits}, symmetric={self.symmetric}, "
                f"narrow_range={self.narrow_range}, ema={self.ema}({self.ema_decay}), "
                f"per_channel={self.per_channel}({self.channel_axis}, {self.num_channels}), "
                f"quant_delay={self.quant_delay}, min_init={self.min_init}, "
                f"max_init={self.max_init}")


FakeQuantWithMinMax = FakeQuantWithMinMaxObserver   # MindSpore 1.0's name of the same cell
