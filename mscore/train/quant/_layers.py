"""Fake-quantized layers: ``DenseQuant``, ``Conv2dQuant``, ``Conv2dBnFoldQuant``,
``Conv2dBnWithoutFoldQuant`` and ``ActQuant`` (MindSpore 1.x's names).

Each weight layer is built from a float layer and *shares its Parameters* (the float network's
names are kept), adding a weight observer (``fake_quant_weight``, per layer or per output
channel). Inference folds and exports the same way: :meth:`_QuantWeightLayer.folded` gives the
weight and bias the layer applies after training (BatchNorm folded in), and the exporter
quantizes that weight with ``fake_quant_weight``'s grid.
"""
from __future__ import annotations

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.dispatch import dtype as _dtype
from mscore.dispatch import shape as _shape
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_tensor
from mscore.ops import functional as F
from mscore.train.quant._observer import export_target

_wrap = Tensor._wrap


def _scalar(value, dtype=mdt.float32):
    return call("full", (), value, dtype)


class _QuantWeightLayer(Cell):
    """A Dense or Conv2d whose weight is fake-quantized by ``fake_quant_weight``."""

    kind = None   # "dense" or "conv"

    def __init__(self, layer, weight_observer):
        super().__init__()
        self.in_channels = layer.in_channels
        self.out_channels = layer.out_channels
        self.has_bias = layer.bias is not None
        self.weight = layer.weight
        self.bias = layer.bias
        self.fake_quant_weight = weight_observer

    def construct(self, x):
        check_tensor(x, "x", type(self).__name__)
        self._check_input(x.shape)
        target = export_target()
        if target is not None and not self.training and hasattr(target, "weight_layer"):
            return target.weight_layer(self, x)
        return _wrap(self._forward(x._data))

    def _forward(self, x):
        w, b = self.folded()
        out = self.apply_weight(x, self._quantized(w))
        return out if b is None else call("add", out, self.bias_shaped(b))

    def _quantized(self, w):
        return self.fake_quant_weight(_wrap(w))._data

    def folded(self):
        """The (weight, bias) natives this layer applies in inference, before the weight's
        fake quantization; the bias may be None."""
        b = None if self.bias is None else self.cast_param(self.bias)._data
        return self.cast_param(self.weight)._data, b

    def bias_shaped(self, b):
        """The 1-d bias ``b`` shaped to broadcast over this layer's output."""
        return b if self.kind == "dense" else call("reshape", b, (1, -1, 1, 1))

    def apply_weight(self, x, w):
        """The layer's product of input ``x`` and weight ``w`` (natives), without bias."""
        raise NotImplementedError

    def _check_input(self, shape):
        raise NotImplementedError


class DenseQuant(_QuantWeightLayer):
    """``x @ fake_quant(weight).T + bias`` sharing the Parameters of an ``nn.Dense``."""

    kind = "dense"

    def apply_weight(self, x, w):
        return call("matmul", x, call("transpose", w, (1, 0)))

    def _check_input(self, shape):
        if len(shape) < 2 or shape[-1] != self.in_channels:
            raise ValueError(f"For 'DenseQuant', 'x' must be (..., {self.in_channels}), got "
                             f"shape {shape}")

    def extend_repr(self):
        return (f"in_channels={self.in_channels}, out_channels={self.out_channels}, "
                f"has_bias={self.has_bias}")


class Conv2dQuant(_QuantWeightLayer):
    """A 2-d convolution with a fake-quantized weight, sharing an ``nn.Conv2d``'s
    Parameters and geometry."""

    kind = "conv"

    def __init__(self, conv, weight_observer):
        super().__init__(conv, weight_observer)
        self.kernel_size = conv.kernel_size
        self.stride = conv.stride
        self.dilation = conv.dilation
        self.group = conv.group
        self.pad_mode = conv.pad_mode
        self.padding = conv.padding
        self._pads = conv._pads

    def padding_pairs(self, spatial):
        """((top, bottom), (left, right)) for an input of spatial size ``spatial``."""
        if self.pad_mode == "pad":
            return self._pads
        if self.pad_mode == "valid":
            return ((0, 0), (0, 0))
        return F.conv_padding_pairs("same", 0, 2, spatial, self.kernel_size, self.stride,
                                    self.dilation)

    def apply_weight(self, x, w):
        pads = self.padding_pairs(tuple(_shape(x)[2:]))
        return call("conv", x, w, stride=self.stride, padding=pads, dilation=self.dilation,
                    groups=self.group)

    def _check_input(self, shape):
        if len(shape) != 4 or shape[1] != self.in_channels:
            raise ValueError(f"For '{type(self).__name__}', 'x' must be (N, {self.in_channels}"
                             f", H, W), got shape {shape}")

    def extend_repr(self):
        return (f"in_channels={self.in_channels}, out_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}, "
                f"dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}")


class Conv2dBnWithoutFoldQuant(Conv2dQuant):
    """A fake-quantized convolution followed by its BatchNorm2d, unfolded
    (``bn_fold=False``): the BatchNorm keeps its own batch statistics."""

    def __init__(self, conv, batchnorm, weight_observer):
        super().__init__(conv, weight_observer)
        self.batchnorm = batchnorm

    def construct(self, x):
        return self.batchnorm(super().construct(x))


class Conv2dBnFoldQuant(Conv2dQuant):
    """A convolution with its BatchNorm2d folded into the weight (``bn_fold=True``).

    With ``s = gamma / sqrt(moving_variance + eps)`` the weight quantized is ``weight * s``
    (per output channel), so the grid learnt in training is the one inference uses. Training:
    ``y = conv(x, fq(weight * s)) / s (+ bias)`` is normalised by its batch statistics
    (which update the moving ones with the BatchNorm's momentum), until ``freeze_bn``
    training steps have run (the int32 Parameter ``step``); from then on the moving
    statistics normalise and stay fixed. Inference: ``conv(x, fq(weight * s)) + beta +
    (bias - moving_mean) * s``, the folded layer.
    """

    def __init__(self, conv, batchnorm, weight_observer, freeze_bn):
        super().__init__(conv, weight_observer)
        self.eps = batchnorm.eps
        self.momentum = batchnorm.momentum
        self.freeze_bn = freeze_bn
        self.gamma = batchnorm.gamma
        self.beta = batchnorm.beta
        self.moving_mean = batchnorm.moving_mean
        self.moving_variance = batchnorm.moving_variance
        self.step = Parameter(Tensor(np.zeros((1,), np.int32)), requires_grad=False)

    def _scale(self):
        """gamma / sqrt(moving_variance + eps), 1-d (native)."""
        var = self.moving_variance._data
        return call("div", self.gamma._data,
                    call("sqrt", call("add", var, _scalar(self.eps, _dtype(var)))))

    def folded(self):
        s = self._scale()
        w = call("mul", self.weight._data, call("reshape", s, (-1, 1, 1, 1)))
        bias = self.beta._data if self.bias is None else \
            call("add", self.beta._data, call("mul", self.bias._data, s))
        return w, call("sub", bias, call("mul", self.moving_mean._data, s))

    def _forward(self, x):
        if not self.training:
            return super()._forward(x)
        s = self._scale()
        w = call("mul", self.weight._data, call("reshape", s, (-1, 1, 1, 1)))
        z = call("div", self.apply_weight(x, self._quantized(w)),
                 call("reshape", s, (1, -1, 1, 1)))
        if self.bias is not None:
            z = call("add", z, call("reshape", self.bias._data, (1, -1, 1, 1)))
        return self._normalize(z)

    def _normalize(self, z):
        """BatchNorm of ``z``: batch statistics before ``freeze_bn`` steps, moving ones after;
        updates the moving statistics (before the freeze) and the step."""
        shape = _shape(z)
        n = shape[0] * shape[2] * shape[3]
        dt = mdt.float32
        bshape = (1, -1, 1, 1)
        step = self.step._data
        frozen = call("reshape", call("greater_equal", step,
                                      call("full", (), self.freeze_bn, mdt.int32)), ())
        self.step._assign(call("add", step, call("full", (), 1, mdt.int32)))
        gamma = call("reshape", self.gamma._data, bshape)
        beta = call("reshape", self.beta._data, bshape)
        mean = call("mul", call("sum", z, (0, 2, 3), True), _scalar(1.0 / n, dt))
        centered = call("sub", z, mean)
        var = call("mul", call("sum", call("mul", centered, centered), (0, 2, 3), True),
                   _scalar(1.0 / n, dt))
        inv_std = call("div", _scalar(1.0, dt), call("sqrt", call("add", var,
                                                                  _scalar(self.eps, dt))))
        batch_out = call("add", call("mul", centered, call("mul", gamma, inv_std)), beta)
        moving_mean = call("reshape", self.moving_mean._data, bshape)
        moving_inv = call("div", _scalar(1.0, dt), call("sqrt", call(
            "add", call("reshape", self.moving_variance._data, bshape), _scalar(self.eps, dt))))
        moving_out = call("add", call("mul", call("sub", z, moving_mean),
                                      call("mul", gamma, moving_inv)), beta)
        self._update_moving(mean, var, n, frozen)
        return call("where", frozen, moving_out, batch_out)

    def _update_moving(self, mean, var, n, frozen):
        m = self.momentum
        for param, batch, factor in ((self.moving_mean, mean, 1.0),
                                     (self.moving_variance, var, n / max(n - 1, 1))):
            batch = call("reshape", call("stop_gradient", batch), (-1,))
            new = call("add", call("mul", param._data, _scalar(m)),
                       call("mul", batch, _scalar((1.0 - m) * factor)))
            param._assign(call("where", frozen, param._data, new))

    def extend_repr(self):
        return super().extend_repr() + f", freeze_bn={self.freeze_bn}, momentum={self.momentum}"


class ActQuant(Cell):
    """An activation (or none: identity) followed by the observer ``fake_quant_act``."""

    def __init__(self, activation, act_observer):
        super().__init__()
        self.act = activation
        self.fake_quant_act = act_observer

    def construct(self, x):
        target = export_target()
        if target is not None and not self.training and hasattr(target, "act_quant"):
            out = target.act_quant(self, x)
            if out is not None:
                return out
        if self.act is not None:
            x = self.act(x)
        return self.fake_quant_act(x)

    def get_origin(self):
        """The float activation (None for the identity)."""
        return self.act
