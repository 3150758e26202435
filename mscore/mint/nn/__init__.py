"""MindSpore's ``mindspore.mint.nn``: PyTorch-style layers (``Linear``, ``ReLU``, losses
...) as Cells over :mod:`mscore.mint.nn.functional` and :mod:`mscore.nn`."""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore import nn as _nn
from mscore.nn.layer.activation import PReLUExt as _PReLUExt
from mscore.mint.nn import functional
from mscore.mint.nn import functional as F
from mscore.mint.nn._conv_norm_pool import _Functional
from mscore.mint.nn._conv_norm_pool import (AdaptiveAvgPool3d, AdaptiveMaxPool1d, AvgPool3d,
                                            BatchNorm1d, BatchNorm2d, BatchNorm3d, Conv1d,
                                            Conv3d, ConvTranspose2d, MaxUnpool2d,
                                            SyncBatchNorm)

__all__ = [
    "Linear", "Identity", "Flatten", "ReLU", "ReLU6", "GELU", "SiLU", "Sigmoid", "Tanh",
    "ELU", "Hardtanh", "LogSigmoid", "Softmax", "LogSoftmax", "Threshold", "PixelShuffle",
    "L1Loss", "MSELoss", "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
    "SoftMarginLoss", "CosineEmbeddingLoss", "AdaptiveAvgPool2d", "AvgPool2d", "GroupNorm",
    "BatchNorm1d", "BatchNorm2d", "Conv2d", "functional", "F", "Hardshrink", "Hardsigmoid",
    "Hardswish", "Mish", "SELU", "PReLU", "AdaptiveMaxPool2d", "AdaptiveAvgPool1d",
    "AvgPool1d", "Unfold", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "Conv1d", "Conv3d",
    "ConvTranspose2d", "BatchNorm3d", "SyncBatchNorm", "AvgPool3d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "MaxUnpool2d", "Fold",
]


class Linear(_nn.Dense):
    """``y = x @ weight.T + bias`` (PyTorch's argument names on :class:`mscore.nn.Dense`)."""

    def __init__(self, in_features, out_features, bias=True, weight_init=None,
                 bias_init=None, dtype=None):
        super().__init__(in_features, out_features, weight_init, bias_init, has_bias=bias,
                         dtype=dtype or mdt.float32)


class Identity(_nn.Cell):
    """Returns its input."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def construct(self, input):
        return input


class Flatten(_nn.Cell):
    """Axes ``start_dim`` .. ``end_dim`` merged."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, input):
        return functional.flatten(input, self.start_dim, self.end_dim)


_Activation = _Functional  # a Cell applying ``fn`` with the options given at construction


class ReLU(_Activation):
    """``max(x, 0)``."""
    fn = staticmethod(functional.relu)

    def __init__(self):
        super().__init__()


class ReLU6(_Activation):
    """``min(max(x, 0), 6)``."""
    fn = staticmethod(functional.relu6)

    def __init__(self, inplace=False):
        super().__init__()


class GELU(_Activation):
    """Gaussian error linear unit."""
    fn = staticmethod(functional.gelu)

    def __init__(self, approximate="none"):
        super().__init__(approximate=approximate)


class SiLU(_Activation):
    """``x * sigmoid(x)``."""
    fn = staticmethod(functional.silu)

    def __init__(self, inplace=False):
        super().__init__()


class Sigmoid(_Activation):
    """Logistic sigmoid."""
    fn = staticmethod(functional.sigmoid)

    def __init__(self):
        super().__init__()


class Tanh(_Activation):
    """Hyperbolic tangent."""
    fn = staticmethod(functional.tanh)

    def __init__(self):
        super().__init__()


class LogSigmoid(_Activation):
    """``log(sigmoid(x))``."""
    fn = staticmethod(functional.logsigmoid)

    def __init__(self):
        super().__init__()


class ELU(_Activation):
    """Exponential linear unit."""
    fn = staticmethod(functional.elu)

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(alpha=alpha)


class Hardtanh(_Activation):
    """``x`` clamped to ``[min_val, max_val]``."""
    fn = staticmethod(functional.hardtanh)

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__(min_val=min_val, max_val=max_val)


class Softmax(_Activation):
    """Softmax along ``dim``."""
    fn = staticmethod(functional.softmax)

    def __init__(self, dim=None):
        super().__init__(dim=dim)


class LogSoftmax(_Activation):
    """Log-softmax along ``dim``."""
    fn = staticmethod(functional.log_softmax)

    def __init__(self, dim=None):
        super().__init__(dim=dim)


class Threshold(_Activation):
    """``x`` above ``threshold``, else ``value``."""
    fn = staticmethod(functional.threshold)

    def __init__(self, threshold, value, inplace=False):
        super().__init__(threshold=threshold, value=value)


class PixelShuffle(_Activation):
    """Channels rearranged into an ``upscale_factor`` larger spatial grid."""
    fn = staticmethod(functional.pixel_shuffle)

    def __init__(self, upscale_factor):
        super().__init__(upscale_factor=upscale_factor)


class AdaptiveAvgPool2d(_Activation):
    """2-d average pooling to ``output_size``."""
    fn = staticmethod(functional.adaptive_avg_pool2d)

    def __init__(self, output_size):
        super().__init__(output_size=output_size)


class AvgPool2d(_Activation):
    """2-d average pooling."""
    fn = staticmethod(functional.avg_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                         divisor_override=divisor_override)


class _Loss(_nn.Cell):
    """A loss Cell: ``self.fn(input, target, reduction=..., **options)``."""

    fn = None

    def __init__(self, reduction="mean", **options):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction: expected 'mean', 'sum' or 'none', got "
                             f"{reduction!r}")
        self.reduction, self.options = reduction, options

    def construct(self, input, target):
        return type(self).fn(input, target, reduction=self.reduction, **self.options)


class L1Loss(_Loss):
    """Mean absolute error."""
    fn = staticmethod(functional.l1_loss)

    def __init__(self, reduction="mean"):
        super().__init__(reduction)


class MSELoss(_Loss):
    """Mean squared error."""
    fn = staticmethod(functional.mse_loss)

    def __init__(self, reduction="mean"):
        super().__init__(reduction)


class SmoothL1Loss(_Loss):
    """Smooth L1 (Huber-like) loss with threshold ``beta``."""

    def __init__(self, reduction="mean", beta=1.0):
        super().__init__(reduction)
        self.loss = _nn.SmoothL1Loss(beta, reduction)

    def construct(self, input, target):
        return self.loss(input, target)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities."""
    fn = staticmethod(functional.binary_cross_entropy)

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction, weight=weight)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits."""
    fn = staticmethod(functional.binary_cross_entropy_with_logits)

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(reduction, weight=weight, pos_weight=pos_weight)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence."""
    fn = staticmethod(functional.kl_div)

    def __init__(self, reduction="mean", log_target=False):
        super().__init__(reduction, log_target=log_target)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-target * input))``, reduced."""
    fn = staticmethod(functional.soft_margin_loss)

    def __init__(self, reduction="mean"):
        super().__init__(reduction)


class CosineEmbeddingLoss(_nn.Cell):
    """Cosine embedding loss."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__()
        self.margin, self.reduction = margin, reduction

    def construct(self, input1, input2, target):
        return functional.cosine_embedding_loss(input1, input2, target, self.margin,
                                                self.reduction)


class GroupNorm(_nn.GroupNorm):
    """Group normalisation (PyTorch's argument names on :class:`mscore.nn.GroupNorm`)."""

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, dtype=None):
        super().__init__(num_groups, num_channels, eps, affine)


class Conv2d(_nn.Conv2d):
    """2-d convolution with PyTorch's argument names (``padding`` an int, a pair,
    'same' or 'valid')."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", dtype=None):
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv2d: padding_mode={padding_mode!r} is not "
                                      f"supported; use 'zeros'")
        pad_mode = padding if isinstance(padding, str) else "pad"
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode,
                         0 if isinstance(padding, str) else padding, dilation, groups,
                         has_bias=bias)


class Hardshrink(_Activation):
    """0 where ``|x| <= lambd``, else ``x``."""
    fn = staticmethod(functional.hardshrink)

    def __init__(self, lambd=0.5):
        super().__init__(lambd=lambd)


class Hardsigmoid(_Activation):
    """``relu6(x + 3) / 6``."""
    fn = staticmethod(functional.hardsigmoid)

    def __init__(self):
        super().__init__()


class Hardswish(_Activation):
    """``x * relu6(x + 3) / 6``."""
    fn = staticmethod(functional.hardswish)

    def __init__(self):
        super().__init__()


class Mish(_Activation):
    """``x * tanh(softplus(x))``."""
    fn = staticmethod(functional.mish)

    def __init__(self, auto_prefix=True, flags=None):
        super().__init__()


class SELU(_Activation):
    """Scaled exponential linear unit."""
    fn = staticmethod(functional.selu)

    def __init__(self, auto_prefix=True, flags=None):
        super().__init__()


PReLU = _PReLUExt   # MindSpore's mint.nn.PReLU is nn.layer.activation.PReLUExt


class AdaptiveMaxPool2d(_Activation):
    """2-d max pooling to ``output_size``."""
    fn = staticmethod(functional.adaptive_max_pool2d)

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size=output_size, return_indices=return_indices)


class AdaptiveAvgPool1d(_Activation):
    """1-d average pooling to ``output_size``."""
    fn = staticmethod(functional.adaptive_avg_pool1d)

    def __init__(self, output_size):
        super().__init__(output_size=output_size)


class AvgPool1d(_Activation):
    """1-d average pooling."""
    fn = staticmethod(functional.avg_pool1d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         ceil_mode=ceil_mode, count_include_pad=count_include_pad)


class Unfold(_Activation):
    """Sliding blocks of (N, C, H, W) as columns (im2col)."""
    fn = staticmethod(functional.unfold)

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size=kernel_size, dilation=dilation, padding=padding,
                         stride=stride)


class Fold(_Activation):
    """Sliding-block columns summed back into images (col2im)."""
    fn = staticmethod(functional.fold)

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(output_size=output_size, kernel_size=kernel_size, dilation=dilation,
                         padding=padding, stride=stride)


class Upsample(_Activation):
    """Resampling to ``size`` or by ``scale_factor``."""
    fn = staticmethod(functional.interpolate)

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__(size=size, scale_factor=scale_factor, mode=mode,
                         align_corners=align_corners,
                         recompute_scale_factor=recompute_scale_factor)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-d resampling."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-d resampling with aligned corners."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "bilinear", True)


class _Pad(_nn.Cell):
    """Padding of the last ``dims`` axes by ``padding`` (an int: every side)."""

    dims = 1
    mode = "constant"

    def __init__(self, padding, value=None):
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self.dims)
        if len(padding) != 2 * self.dims:
            raise ValueError(f"{type(self).__name__}: expected an int or {2 * self.dims} "
                             f"paddings, got {padding!r}")
        self.padding, self.value = tuple(padding), value

    def construct(self, input):
        return functional.pad(input, self.padding, self.mode,
                              self.value if self.mode == "constant" else None)


def _pad_class(name, dims, mode, with_value):
    doc = f"{mode.capitalize()} padding of the last {dims} axes."
    if with_value:
        def __init__(self, padding, value):
            _Pad.__init__(self, padding, value)
    elif mode == "constant":
        def __init__(self, padding):
            _Pad.__init__(self, padding, 0.0)
    else:
        def __init__(self, padding):
            _Pad.__init__(self, padding)
    cls = type(name, (_Pad,), {"dims": dims, "mode": mode, "__init__": __init__,
                               "__doc__": doc, "__module__": __name__})
    globals()[name] = cls


for _d in (1, 2, 3):
    _pad_class(f"ZeroPad{_d}d", _d, "constant", False)
    _pad_class(f"ConstantPad{_d}d", _d, "constant", True)
    _pad_class(f"ReflectionPad{_d}d", _d, "reflect", False)
    _pad_class(f"ReplicationPad{_d}d", _d, "replicate", False)
