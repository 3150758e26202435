"""Adaptive, Lp, unpooling and fractional pooling layers: ``nn.AdaptiveAvgPool1d/2d/3d``,
``nn.AdaptiveMaxPool1d/2d/3d``, ``nn.LPPool1d/2d``, ``nn.MaxUnpool1d/2d/3d`` and
``nn.FractionalMaxPool2d/3d`` (computed by :mod:`mscore.ops.pooling`)."""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_tensor
from mscore import ops
from mscore.ops.pooling import (adaptive_avg_pool_nd, adaptive_max_pool_nd,
                                 fractional_max_pool_nd, max_unpool_nd)


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

    def construct(self, input):  # noqa: A002
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

    def construct(self, input):  # noqa: A002
        return adaptive_avg_pool_nd(input, self.output_size, 2, "AdaptiveAvgPool2D")


class AdaptiveAvgPool3d(Cell):
    """Adaptive average pooling of (N, C, D, H, W) or (C, D, H, W)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _check_output_size(output_size, 3, "AdaptiveAvgPool3D")

    def construct(self, input):  # noqa: A002
        return adaptive_avg_pool_nd(input, self.output_size, 3, "AdaptiveAvgPool3D")


class AdaptiveMaxPool2d(Cell):
    """Adaptive max pooling of (N, C, H, W) or (C, H, W); with ``return_indices`` also the
    int64 flat H * W index of each maximum."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def construct(self, input):  # noqa: A002
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

    def construct(self, input):  # noqa: A002
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

    def construct(self, input):  # noqa: A002
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
