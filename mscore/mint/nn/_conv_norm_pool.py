"""``mint.nn``'s convolutions, batch normalisations and 3-d/unpooling layers, with
MindSpore's (PyTorch's) parameter names and layouts: convolution weights (out, in // groups,
*kernel) and transposed ones (in, out // groups, *kernel) for every rank; batch norms with
``weight``, ``bias``, ``running_mean``, ``running_var`` and ``num_batches_tracked``. The
arithmetic is :mod:`mscore.mint.nn.functional`'s (that is, :mod:`mscore.ops`')."""
from __future__ import annotations

import math

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.mint.nn import functional
from mscore.nn.cell import Cell
from mscore.nn.layer.basic import make_bias, make_weight

__all__ = ["Conv1d", "Conv3d", "ConvTranspose2d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
           "SyncBatchNorm", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "MaxUnpool2d"]


def _ints(value, nd, name, cls):
    if isinstance(value, bool) or not isinstance(value, (int, tuple, list)):
        raise TypeError(f"For '{cls}', '{name}' must be an int or a tuple of {nd} ints, got "
                        f"{value!r}")
    values = (value,) * nd if isinstance(value, int) else tuple(value)
    if len(values) != nd:
        raise ValueError(f"For '{cls}', '{name}' must be an int or a tuple of {nd} ints, got "
                         f"{value!r}")
    return values


_CONVOLUTIONS = {1: functional.conv1d, 2: functional.conv2d, 3: functional.conv3d}


class _ConvNd(Cell):
    """A convolution Cell over ``functional.conv1d/2d/3d`` (or ``conv_transpose2d``)."""

    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, dtype, output_padding=0):
        super().__init__()
        cls = type(self).__name__
        if padding_mode != "zeros":
            raise NotImplementedError(f"For '{cls}', padding_mode={padding_mode!r} is not "
                                      f"supported; use 'zeros'")
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or \
                in_channels % groups or out_channels % groups:
            raise ValueError(f"For '{cls}', 'groups' must be a positive int dividing "
                             f"in_channels {in_channels} and out_channels {out_channels}, "
                             f"got {groups!r}")
        nd = self._nd
        self.kernel_size = _ints(kernel_size, nd, "kernel_size", cls)
        self.stride = _ints(stride, nd, "stride", cls)
        self.dilation = _ints(dilation, nd, "dilation", cls)
        self.padding = padding if isinstance(padding, str) else \
            _ints(padding, nd, "padding", cls)
        self.output_padding = _ints(output_padding, nd, "output_padding", cls)
        self.groups = groups
        dtype = dtype or mdt.float32
        lead = (in_channels, out_channels // groups) if self._transposed else \
            (out_channels, in_channels // groups)
        shape = lead + self.kernel_size
        fan_in = shape[1] * math.prod(self.kernel_size)
        self.weight = Parameter(make_weight(None, shape, dtype, cls), name="weight")
        self.bias = Parameter(make_bias(None, (out_channels,), fan_in, dtype, cls),
                              name="bias") if bias else None

    def construct(self, input):
        if self._transposed:
            return functional.conv_transpose2d(input, self.weight, self.bias, self.stride,
                                               self.padding, self.output_padding,
                                               self.groups, self.dilation)
        conv = _CONVOLUTIONS[self._nd]
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)


class _ForwardConvNd(_ConvNd):
    """A (not transposed) convolution with PyTorch's argument order and defaults."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype)


class Conv1d(_ForwardConvNd):
    """1-d convolution of (N, C, L); the weight is (out, in // groups, k)."""

    _nd = 1


class Conv3d(_ForwardConvNd):
    """3-d convolution of (N, C, D, H, W); the weight is (out, in // groups, kd, kh, kw)."""

    _nd = 3


class ConvTranspose2d(_ConvNd):
    """2-d transposed convolution; the weight is (in, out // groups, kh, kw)."""

    _nd = 2
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype, output_padding)


class _BatchNorm(Cell):
    """Batch normalisation over axis 1 with PyTorch's ``momentum`` (the new batch's
    weight) and parameter names; the batch's statistics in training or without running
    ones, the running ones otherwise."""

    _ranks = (2, 3, 4, 5)

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        super().__init__()
        dtype = dtype or mdt.float32
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        ones = np.ones(num_features, np.float32)
        zeros = np.zeros(num_features, np.float32)
        if affine:
            self.weight = Parameter(Tensor(ones, dtype), name="weight")
            self.bias = Parameter(Tensor(zeros, dtype), name="bias")
        else:
            self.weight = self.bias = None
        if track_running_stats:
            self.running_mean = Parameter(Tensor(zeros, dtype), name="running_mean",
                                          requires_grad=False)
            self.running_var = Parameter(Tensor(ones, dtype), name="running_var",
                                         requires_grad=False)
            self.num_batches_tracked = Parameter(Tensor(0, mdt.int64),
                                                 name="num_batches_tracked",
                                                 requires_grad=False)
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def construct(self, input):
        if input.ndim not in self._ranks:
            raise ValueError(f"For '{type(self).__name__}', expected a "
                             f"{' or '.join(map(str, self._ranks))}-d input, got shape "
                             f"{input.shape}")
        use_batch = self.training or self.running_mean is None
        if use_batch and self.running_mean is not None:
            self.num_batches_tracked.set_data(self.num_batches_tracked + 1)
        return functional.batch_norm(input, self.running_mean, self.running_var, self.weight,
                                     self.bias, use_batch, self.momentum, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L)."""

    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W)."""

    _ranks = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W)."""

    _ranks = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation whose training statistics are those of the whole batch across
    processes; on one process (the only case mscore runs it) those of the local batch."""

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)
        self.process_group = process_group


class _Functional(Cell):
    """A Cell applying ``self.fn`` with the options saved at construction."""

    fn = None

    def __init__(self, **options):
        super().__init__()
        self.options = options

    def construct(self, input):
        return type(self).fn(input, **self.options)


class AvgPool3d(_Functional):
    """3-d average pooling of (N, C, D, H, W)."""
    fn = staticmethod(functional.avg_pool3d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding,
                         ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                         divisor_override=divisor_override)


class AdaptiveAvgPool3d(_Functional):
    """3-d average pooling to ``output_size``."""
    fn = staticmethod(functional.adaptive_avg_pool3d)

    def __init__(self, output_size):
        super().__init__(output_size=output_size)


class AdaptiveMaxPool1d(_Functional):
    """1-d max pooling to ``output_size`` (and the indices of the maxima)."""
    fn = staticmethod(functional.adaptive_max_pool1d)

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size=output_size, return_indices=return_indices)


class MaxUnpool2d(Cell):
    """The inverse of 2-d max pooling: values scattered to their indices, zeros
    elsewhere."""

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def construct(self, input, indices, output_size=None):
        return functional.max_unpool2d(input, indices, self.kernel_size, self.stride,
                                       self.padding, output_size)
