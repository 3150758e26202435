"""Pooling layers: ``nn.MaxPool2d``, ``nn.AvgPool2d``, ``nn.MaxPool1d``, ``nn.AvgPool1d``."""
from __future__ import annotations

from mscore.common.tensor import Tensor
from mscore import dispatch
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_str, check_tensor, int_tuple

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
        self.pad_mode = check_str(pad_mode.lower() if isinstance(pad_mode, str) else pad_mode,
                                  "pad_mode", cls, ("same", "valid", "pad"))
        self.padding = int_tuple(padding, nd, "padding", cls, minimum=0)
        if self.pad_mode != "pad" and any(self.padding):
            raise ValueError(f"For '{cls}', 'padding' must be 0 when 'pad_mode' is "
                             f"{self.pad_mode!r}, got {padding!r}")
        for p, k in zip(self.padding, self.kernel_size):
            if p > k // 2:
                raise ValueError(f"For '{cls}', 'padding' must be at most half the kernel size, "
                                 f"got padding {self.padding} for kernel {self.kernel_size}")
        self.count_include_pad = check_bool(count_include_pad, "count_include_pad", cls)
        unsupported = []
        if check_bool(ceil_mode, "ceil_mode", cls):
            unsupported.append("ceil_mode=True")
        if int_tuple(dilation, nd, "dilation", cls) != (1,) * nd:
            unsupported.append("dilation != 1")
        if check_bool(return_indices, "return_indices", cls):
            unsupported.append("return_indices=True")
        if divisor_override is not None:
            unsupported.append("divisor_override")
        if data_format != "NCHW":
            unsupported.append(f"data_format={data_format!r}")
        if unsupported:
            raise ValueError(f"For '{cls}', {', '.join(unsupported)} is not supported")

    def construct(self, x):
        cls = type(self).__name__
        check_tensor(x, "x", cls)
        shape = x.shape
        nd = self._nd
        xd = x._data
        unbatched = len(shape) == nd + 1
        if unbatched:
            xd = call("reshape", xd, (1,) + shape)
            shape = (1,) + shape
        elif len(shape) != nd + 2:
            raise ValueError(f"For '{cls}', 'x' must be {nd + 1}-d or {nd + 2}-d, got shape "
                             f"{x.shape}")
        count_include_pad = self.count_include_pad
        if self.pad_mode == "valid":
            pads = ((0, 0),) * nd
        elif self.pad_mode == "pad":
            pads = tuple((p, p) for p in self.padding)
        else:
            pads = []
            for s, k, st in zip(shape[2:], self.kernel_size, self.stride):
                total = max((-(-s // st) - 1) * st + k - s, 0)
                pads.append((total // 2, total - total // 2))
            pads = tuple(pads)
            count_include_pad = False
        for s, k, (lo, hi) in zip(shape[2:], self.kernel_size, pads):
            if s + lo + hi < k:
                raise ValueError(f"For '{cls}', the input's spatial size {s} is smaller than the "
                                 f"kernel {self.kernel_size}")
        if self._op == "max_pool":
            out = call("max_pool", xd, kernel=self.kernel_size, stride=self.stride,
                       padding=pads)
        else:
            out = call("avg_pool", xd, kernel=self.kernel_size, stride=self.stride,
                       padding=pads, count_include_pad=count_include_pad)
        if unbatched:
            out = call("reshape", out, dispatch.shape(out)[1:])
        return _wrap(out)

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
