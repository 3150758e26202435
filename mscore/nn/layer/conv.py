"""Convolution layers: ``nn.Conv1d/2d/3d`` and ``nn.Conv1dTranspose/2dTranspose/3dTranspose``.

Weights follow MindSpore's layouts: (out, in // group, *kernel) for convolutions and
(in, out // group, *kernel) for transposed ones; the 1-d layers keep MindSpore's 4-d weight
(..., 1, k) so checkpoints are interchangeable, and reshape it where it is used.
"""
from __future__ import annotations

import math

from mscore import dispatch
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import (
    check_bool,
    check_dtype,
    check_positive_int,
    check_str,
    check_tensor,
    int_tuple,
)
from mscore.nn.layer.basic import make_bias, make_weight
from mscore.ops import functional as F

_wrap = Tensor._wrap


def _padding_pairs(padding, nd, cls):
    """``(before, after)`` per spatial axis from an int, ``nd`` ints or ``2*nd`` ints."""
    if isinstance(padding, bool):
        raise TypeError(f"For '{cls}', 'padding' must be an int or a tuple of ints")
    if isinstance(padding, int):
        values = (padding,) * (2 * nd)
    elif isinstance(padding, (tuple, list)) and len(padding) in (nd, 2 * nd) and all(
            isinstance(p, int) and not isinstance(p, bool) for p in padding):
        values = tuple(padding) if len(padding) == 2 * nd else \
            tuple(v for p in padding for v in (p, p))
    else:
        raise TypeError(f"For '{cls}', 'padding' must be an int or a tuple of {nd} or "
                        f"{2 * nd} ints, got {padding!r}")
    if any(v < 0 for v in values):
        raise ValueError(f"For '{cls}', 'padding' must be non-negative, got {padding!r}")
    return tuple((values[2 * i], values[2 * i + 1]) for i in range(nd))


class _Conv(Cell):
    """Shared construction of the convolution layers."""

    _nd = 2
    _transposed = False
    _weight_nd = None   # spatial rank of the stored weight (2 for the 1-d layers)

    def __init__(self, in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                 dilation, group, has_bias, weight_init, bias_init, data_format, dtype,
                 output_padding=0):
        super().__init__()
        cls = type(self).__name__
        nd = self._nd
        self.in_channels = check_positive_int(in_channels, "in_channels", cls)
        self.out_channels = check_positive_int(out_channels, "out_channels", cls)
        self.kernel_size = int_tuple(kernel_size, nd, "kernel_size", cls)
        self.stride = int_tuple(stride, nd, "stride", cls)
        self.dilation = int_tuple(dilation, nd, "dilation", cls)
        self.group = check_positive_int(group, "group", cls)
        self.pad_mode = check_str(pad_mode, "pad_mode", cls, ("same", "valid", "pad"))
        self.padding = padding
        self._pads = _padding_pairs(padding, nd, cls)
        if self.pad_mode != "pad" and any(p for pair in self._pads for p in pair):
            raise ValueError(f"For '{cls}', 'padding' must be 0 when 'pad_mode' is "
                             f"{self.pad_mode!r}, got {padding!r}")
        self.output_padding = int_tuple(output_padding, nd, "output_padding", cls, minimum=0)
        self.has_bias = check_bool(has_bias, "has_bias", cls)
        fmt = "NCHW" if nd < 3 else "NCDHW"
        if data_format != fmt:
            raise ValueError(f"For '{cls}', 'data_format' must be {fmt!r} (channels last is "
                             f"not supported), got {data_format!r}")
        self.data_format = data_format
        if self.in_channels % self.group or self.out_channels % self.group:
            raise ValueError(f"For '{cls}', 'in_channels' ({in_channels}) and 'out_channels' "
                             f"({out_channels}) must be divisible by 'group' ({group})")
        dtype = check_dtype(dtype, "dtype", cls)
        kernel = self.kernel_size if self._weight_nd is None else (1,) + self.kernel_size
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.group) + kernel
        else:
            shape = (self.out_channels, self.in_channels // self.group) + kernel
        self.weight = Parameter(make_weight(weight_init, shape, dtype, cls), name="weight")
        self.bias = None
        if self.has_bias:
            fan_in = shape[1] * math.prod(kernel)
            self.bias = Parameter(make_bias(bias_init, (self.out_channels,), fan_in, dtype, cls),
                                  name="bias")
        self._bias_shape = (1, self.out_channels) + (1,) * nd

    def _weight(self):
        w = self.cast_param(self.weight)
        if self._weight_nd is not None:
            s = w.shape
            w = _wrap(call("reshape", w._data, s[:2] + s[3:]))
        return w

    def _check_input(self, x):
        if not isinstance(x, Tensor):
            check_tensor(x, "x", type(self).__name__)
        shape = dispatch.shape(x._data)
        if len(shape) != self._nd + 2:
            cls = type(self).__name__
            raise ValueError(f"For '{cls}', 'x' must be {self._nd + 2}-d (N, C, ...), got shape "
                             f"{shape}")
        if shape[1] != self.in_channels:
            raise ValueError(f"For '{type(self).__name__}', 'x' must have {self.in_channels} "
                             f"channels (axis 1), got shape {shape}")
        return shape

    def _add_bias(self, out):
        if self.bias is None:
            return out
        b = call("reshape", self.cast_param(self.bias)._data, self._bias_shape)
        return call("add", out, b)

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, has_bias={self.has_bias}")

    def _operands(self, x):
        """The input's shape, input and weight in one dtype, and the padding pairs."""
        shape = self._check_input(x)
        w = self._weight()
        if not dispatch.same_dtype(x._data, w._data):
            common = mdt.promote(x.dtype, w.dtype)
            x, w = F.cast(x, common), F.cast(w, common)
        if self.pad_mode == "pad":
            pads = self._pads
        elif self.pad_mode == "valid":
            pads = ((0, 0),) * self._nd
        else:
            pads = self._same_padding(shape[2:])
        return shape, x, w, pads


class _ConvNd(_Conv):
    def _same_padding(self, spatial):
        return F.conv_padding_pairs("same", 0, self._nd, spatial, self.kernel_size,
                                    self.stride, self.dilation)

    def construct(self, x):
        shape, x, w, pads = self._operands(x)
        for s, k, d, (lo, hi) in zip(shape[2:], self.kernel_size, self.dilation, pads):
            if s + lo + hi < d * (k - 1) + 1:
                raise ValueError(f"For '{type(self).__name__}', the input's spatial size {s} "
                                 f"(padded {s + lo + hi}) is smaller than the dilated kernel "
                                 f"{d * (k - 1) + 1}")
        fused = None if self.bias is None else dispatch.fused("conv_bias")
        if fused is not None:   # one op where there is one
            b = self.cast_param(self.bias)
            if b.dtype is x.dtype:
                return _wrap(fused(x._data, w._data, b._data, self.stride, pads,
                                   self.dilation, self.group))
        out = call("conv", x._data, w._data, stride=self.stride, padding=pads,
                   dilation=self.dilation, groups=self.group)
        if self.bias is not None:
            # cast after the convolution, in MindSpore's order (exported graphs follow it);
            # a Parameter's cast is made once per value, so a second call costs nothing
            b = self.cast_param(self.bias)
            out = call("add", out, call("reshape", b._data, self._bias_shape))
        return _wrap(out)


class Conv2d(_ConvNd):
    """2-d convolution over (N, C, H, W).

    ``Conv2d(in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0,
    dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
    data_format='NCHW', dtype=float32)``; ``padding`` is an int or (top, bottom, left, right)
    and only allowed with ``pad_mode='pad'``.
    """

    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, data_format="NCHW", dtype=mdt.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, data_format, dtype)


class Conv1d(_ConvNd):
    """1-d convolution over (N, C, L); the weight is stored (out, in // group, 1, k) as in
    MindSpore. ``padding`` is an int or (left, right)."""

    _nd = 1
    _weight_nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, dtype=mdt.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, "NCHW", dtype)


class Conv3d(_ConvNd):
    """3-d convolution over (N, C, D, H, W); ``padding`` is an int or (head, tail, top,
    bottom, left, right)."""

    _nd = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, data_format="NCDHW", dtype=mdt.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, data_format, dtype)


class _ConvTransposeNd(_Conv):
    _transposed = True
    # MindSpore's Conv2dTranspose appends ``output_padding`` as zeros after the bias (its
    # CPU kernel computes no values there); Conv3dTranspose computes them.
    _zero_output_padding = False

    def _same_padding(self, spatial):
        return F.conv_transpose_same_padding(self.kernel_size, self.stride, self.dilation)

    def _check_output_padding(self):
        """MindSpore's checks (and messages) of a non-zero 2-d ``output_padding``."""
        for i, (op, st, d) in enumerate(zip(self.output_padding, self.stride, self.dilation)):
            if op >= max(d, st):
                what = "output_padding" if self._output_padding_int else f"output_padding[{i}]"
                axis = "hw"[i]
                raise ValueError(f"{what} must be in range of [0, max(stride_{axis}, "
                                 f"dilation_{axis})).")
        if self.pad_mode != "pad" and any(self.output_padding):
            raise ValueError("when output_padding is not zero, pad_mode must be 'pad'")

    def construct(self, x):
        shape, x, w, pads = self._operands(x)
        zero_fill = self._zero_output_padding and any(self.output_padding)
        if zero_fill:
            self._check_output_padding()
        computed = (0,) * self._nd if zero_fill else self.output_padding
        for s, k, st, d, (lo, hi), op in zip(shape[2:], self.kernel_size, self.stride,
                                             self.dilation, pads, computed):
            if (s - 1) * st + d * (k - 1) + 1 - lo - hi + op <= 0:
                raise ValueError(f"For '{type(self).__name__}', the padding {pads} leaves no "
                                 f"output for an input of spatial size {s}")
        out = call("conv_transpose", x._data, w._data, stride=self.stride, padding=pads,
                   output_padding=computed, dilation=self.dilation, groups=self.group)
        out = _wrap(self._add_bias(out))
        if zero_fill:
            out = F.pad(out, tuple(v for op in reversed(self.output_padding) for v in (0, op)))
        return out


class Conv2dTranspose(_ConvTransposeNd):
    """2-d transposed convolution; 'same' gives ``H * stride`` outputs, 'valid'
    ``(H - 1) * stride + dilation * (k - 1) + 1``, 'pad' subtracts ``padding``; a non-zero
    ``output_padding`` (pad_mode 'pad' only, below ``max(stride, dilation)``) appends that
    many rows/columns of zeros at the bottom/right, as MindSpore's does.
    The weight is (in_channels, out_channels // group, kh, kw)."""

    _nd = 2
    _zero_output_padding = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, output_padding=0, dilation=1, group=1, has_bias=False,
                 weight_init=None, bias_init=None, dtype=mdt.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, "NCHW", dtype,
                         output_padding)
        self._output_padding_int = isinstance(output_padding, int)


class Conv1dTranspose(_ConvTransposeNd):
    """1-d transposed convolution; the weight is stored (in, out // group, 1, k)."""

    _nd = 1
    _weight_nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, dtype=mdt.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, "NCHW", dtype)


class Conv3dTranspose(_ConvTransposeNd):
    """3-d transposed convolution; the weight is (in, out // group, kd, kh, kw)."""

    _nd = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, output_padding=0, has_bias=False,
                 weight_init=None, bias_init=None, data_format="NCDHW", dtype=mdt.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, data_format, dtype,
                         output_padding)


