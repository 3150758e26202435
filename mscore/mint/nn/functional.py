"""MindSpore's ``mindspore.mint.nn.functional``: PyTorch-style functions over
:mod:`mscore.ops` (the argument names and orders of PyTorch; one op implementation)."""
from __future__ import annotations

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops.nn.conv import conv as _conv_nd
from mscore.ops.nn.pooling import adaptive_max_pool_nd, avg_pool, sliding_avg

__all__ = [
    "relu", "relu_", "relu6", "gelu", "silu", "sigmoid", "tanh", "elu", "leaky_relu",
    "hardtanh", "logsigmoid", "prelu", "glu", "softmax", "log_softmax", "dropout",
    "linear", "layer_norm", "group_norm", "batch_norm", "embedding", "normalize", "one_hot",
    "pad", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "interpolate",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss",
    "soft_margin_loss", "threshold", "pixel_shuffle", "flatten", "sigmoid_",
    "adaptive_max_pool2d", "adaptive_avg_pool1d", "avg_pool1d", "hardshrink", "hardsigmoid",
    "hardswish", "mish", "selu", "unfold", "upsample", "conv1d", "conv3d",
    "conv_transpose2d", "dropout2d", "elu_", "hardtanh_", "threshold_", "avg_pool3d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "max_unpool2d", "fold",
]


def relu(input, inplace=False):
    """``max(input, 0)``."""
    return ops.relu(input)


def relu_(input):
    """In place: ``max(input, 0)``; returns ``input``."""
    return input.copy_(ops.relu(input))


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``."""
    return ops.relu6(input)


def gelu(input, approximate="none"):
    """Gaussian error linear unit (``approximate`` 'none' or 'tanh')."""
    return ops.gelu(input, approximate)


def silu(input, inplace=False):
    """``input * sigmoid(input)``."""
    return ops.silu(input)


def sigmoid(input):
    """Logistic sigmoid."""
    return ops.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return ops.tanh(input)


def elu(input, alpha=1.0, inplace=False):
    """Exponential linear unit."""
    return ops.elu(input, alpha)


def leaky_relu(input, negative_slope=0.01):
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    return ops.leaky_relu(input, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to ``[min_val, max_val]``."""
    return ops.hardtanh(input, min_val, max_val)


def logsigmoid(input):
    """``log(sigmoid(input))``."""
    return ops.logsigmoid(input)


def prelu(input, weight):
    """``input`` where positive, ``weight * input`` elsewhere."""
    return ops.prelu(input, weight)


def glu(input, dim=-1):
    """Gated linear unit: the first half times sigmoid of the second along ``dim``."""
    return ops.glu(input, dim)


def softmax(input, dim=None, dtype=None):
    """Softmax along ``dim`` (the last axis when None)."""
    return ops.softmax(input, -1 if dim is None else dim, dtype=dtype)


def log_softmax(input, dim=None, *, dtype=None):
    """Log-softmax along ``dim`` (the last axis when None)."""
    x = input if dtype is None else ops.cast(input, dtype)
    return ops.log_softmax(x, -1 if dim is None else dim)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes entries with probability ``p`` and scales the rest by ``1 / (1 - p)``."""
    return ops.dropout(input, p, training)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``."""
    return ops.dense(input, weight, bias)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalised over the trailing ``normalized_shape`` axes, then scaled and shifted."""
    return ops.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalised over groups of channels."""
    return ops.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None,
               training=False, momentum=0.1, eps=1e-05):
    """Batch normalisation (running statistics updated in training)."""
    return ops.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                          eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False):
    """Rows of ``weight`` at the indices ``input``."""
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm is not supported")
    return ops.gather(weight, input, 0)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``)."""
    norm = ops.pow(ops.sum(ops.pow(ops.abs(input), p), dim, True), 1.0 / p)
    return ops.div(input, ops.clamp(norm, eps))


def one_hot(tensor, num_classes=-1):
    """Class indices as one-hot int64 rows (``num_classes`` -1: the largest index + 1)."""
    if num_classes == -1:
        num_classes = int(ops.amax(tensor).item()) + 1
    return ops.cast(ops.one_hot(tensor, num_classes, 1, 0), mdt.int64)


def pad(input, pad, mode="constant", value=None):
    """``input`` padded by ``pad`` (pairs from the last axis backwards)."""
    return ops.pad(input, pad, mode, value)


def _conv(input, weight, bias, stride, padding, dilation, groups):
    """N-d convolution (the rank from ``weight``) with PyTorch's ``padding``: an int, one
    per spatial axis, 'same' or 'valid'."""
    if isinstance(padding, str):
        return _conv_nd(input, weight, bias, stride, padding, 0, dilation, groups)
    return _conv_nd(input, weight, bias, stride, "pad", padding, dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution of (N, C, L) by a (out, C // groups, k) weight; ``padding`` an int,
    'same' or 'valid'."""
    return _conv(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution; ``padding`` an int, a pair, 'same' or 'valid'."""
    return _conv(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution of (N, C, D, H, W); ``padding`` an int, a triple, 'same' or
    'valid'."""
    return _conv(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0,
                     output_padding=0, groups=1, dilation=1):
    """2-d transposed convolution by a (C, out // groups, kh, kw) weight: the output is
    ``(in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``."""
    return ops.conv_transpose(input, weight, bias, stride, "pad", padding, output_padding,
                              dilation, groups)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    """2-d max pooling."""
    return ops.max_pool2d(input, kernel_size, stride, padding, dilation, return_indices,
                          ceil_mode)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling."""
    return ops.avg_pool2d(input, kernel_size, kernel_size if stride is None else stride,
                          padding, ceil_mode, count_include_pad, divisor_override or 0)


def adaptive_avg_pool2d(input, output_size):
    """2-d average pooling to ``output_size``."""
    return ops.adaptive_avg_pool2d(input, output_size)


def interpolate(input, size=None, scale_factor=None, mode="nearest",
                align_corners=None, recompute_scale_factor=None):
    """Resampled to ``size`` or by ``scale_factor`` (the output size ``floor(in *
    scale_factor)`` per spatial axis, as PyTorch)."""
    if size is None and scale_factor is not None:
        spatial = input.shape[2:]
        factors = scale_factor if isinstance(scale_factor, (tuple, list)) else \
            (scale_factor,) * len(spatial)
        size = tuple(int(s * f) for s, f in zip(spatial, factors))
    return ops.interpolate(input, size, None, mode, align_corners)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy of logits against class indices or probabilities."""
    return ops.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of log-probabilities against class indices."""
    return ops.nll_loss(input, target, weight, ignore_index, reduction)


def mse_loss(input, target, reduction="mean"):
    """Mean squared error."""
    return ops.mse_loss(input, target, reduction)


def l1_loss(input, target, reduction="mean"):
    """Mean absolute error."""
    return ops.l1_loss(input, target, reduction)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """Binary cross entropy of probabilities."""
    return ops.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy of logits."""
    return ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def kl_div(input, target, reduction="mean", log_target=False):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``."""
    if log_target:
        target = ops.exp(target)
    return ops.kl_div(input, target, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """Cosine embedding loss."""
    return ops.cosine_embedding_loss(input1, input2, target, margin, reduction)


def soft_margin_loss(input, target, reduction="mean"):
    """``log(1 + exp(-target * input))``, reduced."""
    return ops.soft_margin_loss(input, target, reduction)


def threshold(input, threshold, value, inplace=False):
    """``input`` where above ``threshold``, else ``value``."""
    return ops.threshold(input, threshold, value)


def pixel_shuffle(input, upscale_factor):
    """Channels rearranged into an ``upscale_factor`` larger spatial grid."""
    return ops.pixel_shuffle(input, upscale_factor)


def flatten(input, start_dim=0, end_dim=-1):
    """Axes ``start_dim`` .. ``end_dim`` merged."""
    return ops.flatten(input, start_dim=start_dim, end_dim=end_dim)


def sigmoid_(input):
    """In place: logistic sigmoid; returns ``input``."""
    return input.copy_(ops.sigmoid(input))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-d max pooling to ``output_size``."""
    return ops.adaptive_max_pool2d(input, output_size, return_indices)


def adaptive_avg_pool1d(input, output_size):
    """1-d average pooling to ``output_size``."""
    return ops.adaptive_avg_pool1d(input, output_size)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-d average pooling of (N, C, L) as a 2-d pooling of height 1."""
    k = kernel_size if isinstance(kernel_size, int) else kernel_size[0]
    st = k if stride is None else (stride if isinstance(stride, int) else stride[0])
    pd = padding if isinstance(padding, int) else padding[0]
    out = ops.avg_pool2d(ops.expand_dims(input, 2), (1, k), (1, st), (0, pd), ceil_mode,
                         count_include_pad, 0)
    return ops.squeeze(out, 2)


def hardshrink(input, lambd=0.5):
    """0 where ``|x| <= lambd``, else ``x``."""
    return ops.hardshrink(input, lambd)


def hardsigmoid(input):
    """``relu6(x + 3) / 6``."""
    return ops.hardsigmoid(input)


def hardswish(input):
    """``x * relu6(x + 3) / 6``."""
    return ops.hardswish(input)


def mish(input):
    """``x * tanh(softplus(x))``."""
    return ops.mish(input)


def selu(input):
    """Scaled exponential linear unit."""
    return ops.selu(input)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of (N, C, H, W) as columns (im2col)."""
    return ops.unfold(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding-block columns (N, C * kh * kw, L), or (C * kh * kw, L) unbatched, summed back
    into images (N, C, H, W) or (C, H, W) (col2im; overlaps add): :func:`mscore.ops.fold`."""
    if isinstance(input, Tensor) and input.ndim == 2:
        batched = ops.expand_dims(input, 0)
        return ops.squeeze(ops.fold(batched, output_size, kernel_size, dilation, padding,
                                    stride), 0)
    return ops.fold(input, output_size, kernel_size, dilation, padding, stride)


def upsample(input, size=None, scale_factor=None, mode="nearest",
             align_corners=None):
    """Resampled to ``size`` or by ``scale_factor``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) with probability ``p`` in training, scaling
    the rest by ``1 / (1 - p)``; the input unchanged otherwise."""
    if not training or p == 0:
        return input
    return ops.dropout2d(input, p, training)


def elu_(input, alpha=1.0):
    """In place: exponential linear unit; returns ``input``."""
    return input.copy_(ops.elu(input, alpha))


def hardtanh_(input, min_val=-1, max_val=1):
    """In place: ``input`` clamped to ``[min_val, max_val]``; returns ``input``."""
    return input.copy_(ops.hardtanh(input, float(min_val), float(max_val)))


def threshold_(input, threshold, value):
    """In place: ``input`` where above ``threshold``, else ``value``; returns ``input``."""
    return input.copy_(ops.threshold(input, threshold, value))


def _triple(value, name):
    if isinstance(value, int):
        return (value,) * 3
    if isinstance(value, (tuple, list)) and len(value) == 3:
        return tuple(value)
    raise TypeError(f"avg_pool3d: '{name}' must be an int or 3 ints, got {value!r}")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-d average pooling of (N, C, D, H, W); ``stride`` defaults to ``kernel_size``."""
    kernel = _triple(kernel_size, "kernel_size")
    stride = kernel if stride is None else _triple(stride, "stride")
    if ceil_mode or divisor_override:
        pads = tuple((p, p) for p in _triple(padding, "padding"))
        return sliding_avg(input, kernel, stride, pads, ceil_mode, count_include_pad,
                           divisor_override)
    return avg_pool(input, kernel, stride, padding, count_include_pad, 3)


def adaptive_avg_pool3d(input, output_size):
    """3-d average pooling to ``output_size``."""
    return ops.adaptive_avg_pool3d(input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-d max pooling of (N, C, L) to ``output_size`` (and the indices of the maxima)."""
    return adaptive_max_pool_nd(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None):
    """The inverse of 2-d max pooling: ``input`` scattered to ``indices``, zeros
    elsewhere."""
    return ops.max_unpool2d(input, indices, kernel_size, stride, padding, output_size)
