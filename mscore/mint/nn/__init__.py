"""MindSpore's ``mindspore.mint.nn``: PyTorch-style layers (``Linear``, ``ReLU``, losses
...) as Cells over :mod:`mscore.mint.nn.functional` and :mod:`mscore.nn`."""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore import nn as _nn
from mscore.mint.nn import functional
from mscore.mint.nn import functional as F  # noqa: N812  (MindSpore's alias)

__all__ = [
    "Linear", "Identity", "Flatten", "ReLU", "ReLU6", "GELU", "SiLU", "Sigmoid", "Tanh",
    "ELU", "Hardtanh", "LogSigmoid", "Softmax", "LogSoftmax", "Threshold", "PixelShuffle",
    "L1Loss", "MSELoss", "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
    "SoftMarginLoss", "CosineEmbeddingLoss", "AdaptiveAvgPool2d", "AvgPool2d", "GroupNorm",
    "BatchNorm1d", "BatchNorm2d", "Conv2d", "functional", "F",
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

    def construct(self, input):  # noqa: A002
        return input


class Flatten(_nn.Cell):
    """Axes ``start_dim`` .. ``end_dim`` merged."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, input):  # noqa: A002
        return functional.flatten(input, self.start_dim, self.end_dim)


class _Activation(_nn.Cell):
    """A Cell applying ``self.fn`` with the options saved at construction."""

    fn = None

    def __init__(self, **options):
        super().__init__()
        self.options = options

    def construct(self, input):  # noqa: A002
        return type(self).fn(input, **self.options)


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

    def construct(self, input, target):  # noqa: A002
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

    def construct(self, input, target):  # noqa: A002
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


class BatchNorm1d(_nn.BatchNorm1d):
    """Batch normalisation of (N, C) or (N, C, L); ``momentum`` weighs the new batch
    (PyTorch's convention: MindSpore's ``1 - momentum``)."""

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        super().__init__(num_features, eps, 1.0 - momentum, affine)


class BatchNorm2d(_nn.BatchNorm2d):
    """Batch normalisation of (N, C, H, W); ``momentum`` weighs the new batch (PyTorch's
    convention: MindSpore's ``1 - momentum``)."""

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        super().__init__(num_features, eps, 1.0 - momentum, affine)


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
