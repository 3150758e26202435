"""Pooling layers: ``nn.MaxPool1d/2d/3d``, ``nn.AvgPool1d/2d/3d``, ``nn.AdaptiveAvgPool1d/2d/3d``,
``nn.AdaptiveMaxPool1d/2d/3d``, ``nn.LPPool1d/2d``, ``nn.MaxUnpool1d/2d/3d`` and
``nn.FractionalMaxPool2d/3d``.

Plain max/avg windows run on the backend's pooling op; ``return_indices``, ``ceil_mode``,
dilation and ``divisor_override`` (MindSpore's 'pad'-mode options) and the other poolings use
:mod:`mscore.ops.nn.pooling`'s gathered windows."""
from __future__ import annotations

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_str, check_tensor, int_tuple
from mscore.ops import functional as F
from mscore.ops.nn.pooling import (
    adaptive_avg_pool_nd,
    adaptive_max_pool_nd,
    fractional_max_pool_nd,
    max_unpool_nd,
    sliding_avg,
    sliding_max,
)

_wrap = Tensor._wrap


class _Pool(Cell):
    _nd = 2
    _op = "max_pool"

    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode, data_format,
                 count_include_pad=True, dilation=1, return_indices=False,
                 divisor_override=None):
        super().__init__()
        cls = type(self).__name__
        nd = self._nd
        self.kernel_size = int_tuple(kernel_size, nd, "kernel_size", cls)
        self.stride = int_tuple(stride, nd, "stride", cls)
        if not isinstance(pad_mode, str):
            raise TypeError(f"For '{cls}', 'pad_mode' must be a str, got "
                            f"{type(pad_mode).__name__}")
        self.pad_mode = check_str(pad_mode.lower(), "pad_mode", cls, ("same", "valid", "pad"))
        self.padding = int_tuple(padding, nd, "padding", cls, minimum=0)
        for p, k in zip(self.padding, self.kernel_size):
            if p > k // 2:
                raise ValueError(f"For '{cls}', 'padding' must be at most half the kernel size, "
                                 f"got padding {self.padding} for kernel {self.kernel_size}")
        self.count_include_pad = check_bool(count_include_pad, "count_include_pad", cls)
        self.ceil_mode = check_bool(ceil_mode, "ceil_mode", cls)
        self.dilation = int_tuple(dilation, nd, "dilation", cls)
        self.return_indices = check_bool(return_indices, "return_indices", cls)
        if divisor_override is not None:
            if isinstance(divisor_override, bool) or not isinstance(divisor_override, int):
                raise TypeError(f"For '{cls}', 'divisor_override' must be an int or None, got "
                                f"{type(divisor_override).__name__}")
            if divisor_override <= 0:
                raise ValueError(f"For '{cls}', the 'divisor_override' must be > 0, but got "
                                 f"{divisor_override}.")
        self.divisor_override = divisor_override
        if self._op == "max_pool" and self.pad_mode != "pad" and (
                any(self.padding) or self.dilation != (1,) * nd or self.return_indices or
                self.ceil_mode):
            raise ValueError(f"For {cls}, the parameter 'padding', 'dilation', "
                             f"'return_indices', 'ceil_mode' can not be set to non-default "
                             f"value when pad_mode is not 'pad', but got pad_mode:{pad_mode}.")
        if self.pad_mode != "pad" and any(self.padding):
            raise ValueError(f"For '{cls}', 'padding' must be 0 when 'pad_mode' is "
                             f"{self.pad_mode!r}, got {padding!r}")
        if data_format != "NCHW":
            raise ValueError(f"For '{cls}', data_format={data_format!r} is not supported "
                             f"(channels-last pooling is GPU-only in MindSpore)")

    def _pads(self, spatial):
        if self.pad_mode == "valid":
            return ((0, 0),) * self._nd
        if self.pad_mode == "pad":
            return tuple((p, p) for p in self.padding)
        pads = []
        for s, k, st in zip(spatial, self.kernel_size, self.stride):
            total = max((-(-s // st) - 1) * st + k - s, 0)
            pads.append((total // 2, total - total // 2))
        return tuple(pads)

    def construct(self, x):
        cls = type(self).__name__
        check_tensor(x, "x", cls)
        nd = self._nd
        if x.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"For '{cls}', 'x' must be {nd + 1}-d or {nd + 2}-d, got shape "
                             f"{x.shape}")
        unbatched = x.ndim == nd + 1
        xb = F.expand_dims(x, 0) if unbatched else x
        pads = self._pads(xb.shape[2:])
        for s, k, d, (lo, hi) in zip(xb.shape[2:], self.kernel_size, self.dilation, pads):
            if s + lo + hi < d * (k - 1) + 1:
                raise ValueError(f"For '{cls}', the input's spatial size {s} is smaller than the "
                                 f"kernel {self.kernel_size}")
        if self._op == "max_pool":
            out = self._max(xb, pads)
        else:
            out = self._avg(xb, pads)
        if unbatched:
            out = tuple(F.squeeze(o, 0) for o in out) if isinstance(out, tuple) else \
                F.squeeze(out, 0)
        return out

    def _max(self, xb, pads):
        nd = self._nd
        if self.return_indices or self.ceil_mode or self.dilation != (1,) * nd:
            return sliding_max(xb, self.kernel_size, self.stride, pads,
                               self.dilation, self.ceil_mode, self.return_indices)
        return _wrap(call("max_pool", xb._data, kernel=self.kernel_size, stride=self.stride,
                          padding=pads))

    def _avg(self, xb, pads):
        # MindSpore's 2-d/1-d 'same' pooling (its AvgPool kernel) averages the input
        # elements only; its AvgPool3D kernel (3-d pools, ceil mode, divisor override)
        # counts the 'same' padding as count_include_pad says.
        count_include_pad = self.count_include_pad and (
            self.pad_mode != "same" or self._nd == 3 or self.ceil_mode or
            bool(self.divisor_override))
        if self.ceil_mode or self.divisor_override:
            return sliding_avg(xb, self.kernel_size, self.stride, pads,
                               self.ceil_mode, count_include_pad,
                               self.divisor_override)
        return _wrap(call("avg_pool", xb._data, kernel=self.kernel_size, stride=self.stride,
                          padding=pads, count_include_pad=count_include_pad))

    def extend_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}")


class MaxPool2d(_Pool):
    """2-d max pooling over (N, C, H, W) or (C, H, W).

    ``MaxPool2d(kernel_size=1, stride=1, pad_mode='valid', padding=0, dilation=1,
    return_indices=False, ceil_mode=False, data_format='NCHW')``; 'same' pads so the output
    is ``ceil(H / stride)``, 'pad' pads ``padding`` on both sides with -inf.
    """

    _nd = 2
    _op = "max_pool"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format,
                         dilation=dilation, return_indices=return_indices)


class AvgPool2d(_Pool):
    """2-d average pooling over (N, C, H, W) or (C, H, W); 'same' padding is not counted in
    the mean, 'pad' padding is unless ``count_include_pad=False``.

    ``AvgPool2d(kernel_size=1, stride=1, pad_mode='valid', padding=0, ceil_mode=False,
    count_include_pad=True, divisor_override=None, data_format='NCHW')``.
    """

    _nd = 2
    _op = "avg_pool"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format,
                         count_include_pad=count_include_pad, divisor_override=divisor_override)


class MaxPool1d(_Pool):
    """1-d max pooling over (N, C, L) or (C, L)."""

    _nd = 1
    _op = "max_pool"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, "NCHW",
                         dilation=dilation, return_indices=return_indices)


class AvgPool1d(_Pool):
    """1-d average pooling over (N, C, L) or (C, L)."""

    _nd = 1
    _op = "avg_pool"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, "NCHW",
                         count_include_pad=count_include_pad)


class MaxPool3d(_Pool):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W).

    ``MaxPool3d(kernel_size=1, stride=1, pad_mode='valid', padding=0, dilation=1,
    return_indices=False, ceil_mode=False)``; dilation, ``return_indices`` and
    ``ceil_mode`` need ``pad_mode='pad'``.
    """

    _nd = 3
    _op = "max_pool"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, "NCHW",
                         dilation=dilation, return_indices=return_indices)


class AvgPool3d(_Pool):
    """3-d average pooling over (N, C, D, H, W) or (C, D, H, W).

    ``AvgPool3d(kernel_size=1, stride=1, pad_mode='valid', padding=0, ceil_mode=False,
    count_include_pad=True, divisor_override=None)``.
    """

    _nd = 3
    _op = "avg_pool"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, "NCHW",
                         count_include_pad=count_include_pad, divisor_override=divisor_override)


def _check_output_size_1d(output_size, cls):
    if isinstance(output_size, bool) or not isinstance(output_size, int):
        raise TypeError(f"For '{cls}', the type of 'output_size' should be 'int', but got type "
                        f"'{type(output_size).__name__}'.")
    if output_size < 1:
        raise ValueError(f"For '{cls}', the 'output_size' must be int and must >= 1, but got "
                         f"'{output_size}' with type 'int'.")
    return output_size


def _check_output_size(output_size, nd, cls):
    if isinstance(output_size, bool) or not isinstance(output_size, (int, tuple)):
        raise TypeError(f"For '{cls}', the type of 'output_size' should be one of '['int', "
                        f"'tuple']', but got type '{type(output_size).__name__}'.")
    if isinstance(output_size, tuple):
        if len(output_size) != nd:
            raise ValueError(f"For '{cls}', the 'length of output_size' must be int and must = "
                             f"{nd}, but got '{len(output_size)}' with type 'int'.")
        for i, v in enumerate(output_size):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise TypeError(f"For '{cls}', 'output_size[{i}]' must be an int or None, got "
                                f"{type(v).__name__}")
            if v is not None and v < 0:
                raise ValueError(f"For '{cls}', the argument 'output_size[{i}]' must >= 0, but "
                                 f"got {v}.")
    elif output_size < 0:
        raise ValueError(f"For '{cls}', the argument 'output_size[0]' must >= 0, but got "
                         f"{output_size}.")
    return output_size


class _AdaptivePool1d(Cell):
    """Shared by the 1-d adaptive pools: MindSpore needs a 3-d float16/float32 input whose
    length is a multiple of ``output_size``."""

    _max = False

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _check_output_size_1d(output_size, type(self).__name__)

    def construct(self, input):
        cls = type(self).__name__
        check_tensor(input, "input", cls)
        if input.ndim != 3:
            raise ValueError(f"For {cls}, the input must has 3 dim, but got {input.ndim}.")
        width = input.shape[2]
        if width < self.output_size:
            raise ValueError(f"For {cls}, the input's last dimension must be greater or equal "
                             f"to output size {self.output_size}, but got {width}.")
        if width % self.output_size:
            raise ValueError(f"For {cls}, the input's last dimension must be divisible by "
                             f"output size {self.output_size}, but got {width}.")
        if input.dtype not in (mdt.float16, mdt.float32):
            raise TypeError(f"For {cls}, the x_dtype must be float16 or float32, but got "
                            f"{input.dtype}.")
        if self._max:
            return adaptive_max_pool_nd(input, self.output_size, False, 1, cls)
        return adaptive_avg_pool_nd(input, self.output_size, 1, cls)

    def extend_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool1d):
    """Average pooling of (N, C, L) to (N, C, output_size) (L a multiple of it)."""


class AdaptiveMaxPool1d(_AdaptivePool1d):
    """Max pooling of (N, C, L) to (N, C, output_size) (L a multiple of it)."""

    _max = True


class AdaptiveAvgPool2d(Cell):
    """Adaptive average pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (an int or
    a pair; None keeps that axis)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _check_output_size(output_size, 2, "AdaptiveAvgPool2D")

    def construct(self, input):
        return adaptive_avg_pool_nd(input, self.output_size, 2, "AdaptiveAvgPool2D")


class AdaptiveAvgPool3d(Cell):
    """Adaptive average pooling of (N, C, D, H, W) or (C, D, H, W)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _check_output_size(output_size, 3, "AdaptiveAvgPool3D")

    def construct(self, input):
        return adaptive_avg_pool_nd(input, self.output_size, 3, "AdaptiveAvgPool3D")


class AdaptiveMaxPool2d(Cell):
    """Adaptive max pooling of (N, C, H, W) or (C, H, W); with ``return_indices`` also the
    int64 flat H * W index of each maximum."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def construct(self, input):
        _check_output_size(self.output_size, 2, "AdaptiveMaxPool2d")
        return adaptive_max_pool_nd(input, self.output_size, self.return_indices, 2,
                                    "AdaptiveMaxPool2d")


class AdaptiveMaxPool3d(Cell):
    """Adaptive max pooling of (N, C, D, H, W) or (C, D, H, W); with ``return_indices``
    also the int32 flat index of each maximum."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        if isinstance(output_size, int) and not isinstance(output_size, bool):
            output_size = (output_size,) * 3
        self.output_size = output_size
        self.return_indices = return_indices

    def construct(self, input):
        _check_output_size(self.output_size, 3, "AdaptiveMaxPool3d")
        return adaptive_max_pool_nd(input, self.output_size, self.return_indices, 3,
                                    "AdaptiveMaxPool3d", mdt.int32)


class LPPool1d(Cell):
    """Power-average pooling ``(sum over the window of x ** p) ** (1 / p)`` of (N, C, L) or
    (C, L)."""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def construct(self, x):
        return ops.lp_pool1d(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(Cell):
    """Power-average pooling of (N, C, H, W)."""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def construct(self, x):
        return ops.lp_pool2d(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpool(Cell):
    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def construct(self, x, indices, output_size=None):
        cls = type(self).__name__
        if output_size is not None:
            if not isinstance(output_size, tuple):
                raise ValueError(f"For {cls}, output_size must be tuple, but type "
                                 f"{type(output_size)}.")
            if not output_size:
                raise ValueError(f"For {cls}, the length of output_size must be positive, but "
                                 f"got 0.")
        return max_unpool_nd(x, indices, self.kernel_size, self.stride, self.padding,
                             output_size, self._nd, cls)


class MaxUnpool1d(_MaxUnpool):
    """Inverse of ``MaxPool1d(return_indices=True)``: ``x`` (N, C, L) placed at the flat
    ``indices`` of an (N, C, L_out) zero tensor, L_out = (L - 1) * stride - 2 * padding +
    kernel_size unless ``output_size`` is given."""

    _nd = 1


class MaxUnpool2d(_MaxUnpool):
    """Inverse of ``MaxPool2d(return_indices=True)`` (indices flat over H_out * W_out)."""

    _nd = 2


class MaxUnpool3d(_MaxUnpool):
    """Inverse of ``MaxPool3d(return_indices=True)``."""

    _nd = 3


class _FractionalMaxPool(Cell):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.output_size = output_size
        self.output_ratio = output_ratio
        self.return_indices = return_indices
        self._random_samples = _random_samples

    def construct(self, input):
        return fractional_max_pool_nd(input, self.kernel_size, self.output_size,
                                      self.output_ratio, self.return_indices,
                                      self._random_samples, self._nd,
                                      type(self).__name__)


class FractionalMaxPool2d(_FractionalMaxPool):
    """Fractional max pooling of (N, C, H, W) or (C, H, W): ``kernel_size`` windows at
    pseudo-random starts so the output is ``output_size`` (or ``output_ratio`` of the
    input); ``_random_samples`` (N, C, 2) in [0, 1) fixes the starts."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPool):
    """Fractional max pooling of (N, C, D, H, W) or (C, D, H, W); ``_random_samples`` is
    (N, C, 3)."""

    _nd = 3
