"""Combined cells of MindSpore 1.x: ``nn.Conv2dBnAct`` and ``nn.DenseBnAct``.

A convolution (or dense layer), an optional BatchNorm and an optional activation in one cell:
the unit :func:`mscore.train.quant.convert_quant_network` turns into a fake-quantized block.
"""
from __future__ import annotations

from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_number
from mscore.nn.layer.activation import LeakyReLU, get_activation
from mscore.nn.layer.basic import Dense
from mscore.nn.layer.conv import Conv2d
from mscore.nn.layer.normalization import BatchNorm1d, BatchNorm2d


def _activation(activation, alpha, cls):
    if isinstance(activation, str):
        if activation.lower() == "leakyrelu":
            return LeakyReLU(alpha)
        return get_activation(activation)
    if activation is not None and not isinstance(activation, Cell):
        raise TypeError(f"For '{cls}', 'activation' must be a str, a Cell or None, got "
                        f"{type(activation).__name__}")
    return activation


class _Combined(Cell):
    """``core`` (as ``conv`` or ``dense``), then ``batchnorm`` if ``has_bn``, then
    ``activation`` if ``has_act``."""

    _core_name = None

    def _init_tail(self, num_features, bn_class, has_bn, momentum, eps, activation, alpha,
                   after_fake):
        cls = type(self).__name__
        self.has_bn = check_bool(has_bn, "has_bn", cls)
        self.after_fake = check_bool(after_fake, "after_fake", cls)
        self.batchnorm = None
        if self.has_bn:
            self.batchnorm = bn_class(num_features, eps=eps, momentum=momentum)
        self.activation = _activation(activation, check_number(alpha, "alpha", cls), cls)
        self.has_act = self.activation is not None

    def construct(self, x):
        x = getattr(self, self._core_name)(x)
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x


class Conv2dBnAct(_Combined):
    """``Conv2d``, optionally ``BatchNorm2d`` and an activation, as one cell.

    ``Conv2dBnAct(in_channels, out_channels, kernel_size, stride=1, pad_mode='same',
    padding=0, dilation=1, group=1, has_bias=False, weight_init='normal', bias_init='zeros',
    has_bn=False, momentum=0.997, eps=1e-5, activation=None, alpha=0.2, after_fake=True)``;
    ``activation`` is a name ('relu', 'leakyrelu' with slope ``alpha``, ...) or a Cell;
    ``after_fake`` asks quantization to fake-quantize the output when there is no activation.
    """

    _core_name = "conv"

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init="normal",
                 bias_init="zeros", has_bn=False, momentum=0.997, eps=1e-5, activation=None,
                 alpha=0.2, after_fake=True):
        super().__init__()
        self.conv = Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                           pad_mode=pad_mode, padding=padding, dilation=dilation, group=group,
                           has_bias=has_bias, weight_init=weight_init, bias_init=bias_init)
        self._init_tail(out_channels, BatchNorm2d, has_bn, momentum, eps, activation, alpha,
                        after_fake)


class DenseBnAct(_Combined):
    """``Dense``, optionally ``BatchNorm1d`` and an activation, as one cell.

    ``DenseBnAct(in_channels, out_channels, weight_init='normal', bias_init='zeros',
    has_bias=True, has_bn=False, momentum=0.9, eps=1e-5, activation=None, alpha=0.2,
    after_fake=True)``.
    """

    _core_name = "dense"

    def __init__(self, in_channels, out_channels, weight_init="normal", bias_init="zeros",
                 has_bias=True, has_bn=False, momentum=0.9, eps=1e-5, activation=None,
                 alpha=0.2, after_fake=True):
        super().__init__()
        self.dense = Dense(in_channels, out_channels, weight_init=weight_init,
                           bias_init=bias_init, has_bias=has_bias)
        self._init_tail(out_channels, BatchNorm1d, has_bn, momentum, eps, activation, alpha,
                        after_fake)
