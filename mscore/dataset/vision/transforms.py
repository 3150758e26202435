"""Image transforms for ``Dataset.map`` (MindSpore's ``mindspore.dataset.vision``).

Images are numpy arrays in HWC layout (H x W, or H x W x C) unless a transform says
otherwise; every transform also accepts a batch-free single image only.
"""
from __future__ import annotations

import enum
import numbers

import numpy as np

from mscore.dataset.transforms.transforms import PyTensorOperation

__all__ = ["Inter", "Rescale", "Normalize", "HWC2CHW", "ToTensor", "Resize", "Pad",
           "CenterCrop"]


class Inter(enum.Enum):
    """Interpolation modes of :class:`Resize`."""
    NEAREST = 0
    LINEAR = 1
    BILINEAR = 1


def _number(value, name):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    return float(value)


def _image(img, name="image"):
    arr = np.asarray(img)
    if arr.ndim not in (2, 3):
        raise ValueError(f"{name}: expected an H x W or H x W x C image, got shape {arr.shape}")
    return arr


class Rescale(PyTensorOperation):
    """``image * rescale + shift`` as float32."""

    def __init__(self, rescale, shift):
        self.rescale = _number(rescale, "rescale")
        self.shift = _number(shift, "shift")

    def __call__(self, img):
        return (np.asarray(img, dtype=np.float32) * np.float32(self.rescale)
                + np.float32(self.shift)).astype(np.float32)


def _channel_values(values, name):
    if isinstance(values, numbers.Real) and not isinstance(values, bool):
        values = [values]
    if not isinstance(values, (list, tuple)) or not values:
        raise TypeError(f"{name}: expected a number or a list/tuple of numbers, got {values!r}")
    return np.asarray([_number(v, name) for v in values], dtype=np.float32)


class Normalize(PyTensorOperation):
    """``(image - mean) / std`` per channel, as float32; ``is_hwc`` says where the channel
    axis is (last, or first for CHW)."""

    def __init__(self, mean, std, is_hwc=True):
        self.mean = _channel_values(mean, "mean")
        self.std = _channel_values(std, "std")
        if len(self.mean) != len(self.std):
            raise ValueError(f"mean and std: expected the same length, got {len(self.mean)} "
                             f"and {len(self.std)}")
        if np.any(self.std <= 0):
            raise ValueError(f"std: expected positive values, got {self.std.tolist()}")
        if not isinstance(is_hwc, bool):
            raise TypeError(f"is_hwc: expected a bool, got {type(is_hwc).__name__}")
        self.is_hwc = is_hwc

    def __call__(self, img):
        arr = _image(img).astype(np.float32)
        if arr.ndim == 2:
            channels = 1
        else:
            channels = arr.shape[-1] if self.is_hwc else arr.shape[0]
        if len(self.mean) not in (1, channels):
            raise ValueError(f"Normalize: {len(self.mean)} mean/std values for an image with "
                             f"{channels} channel(s)")
        if arr.ndim == 3 and not self.is_hwc:
            shape = (-1, 1, 1)
        else:
            shape = (-1,) if arr.ndim == 3 else ()
        mean = self.mean.reshape(shape) if shape else self.mean[0]
        std = self.std.reshape(shape) if shape else self.std[0]
        return ((arr - mean) / std).astype(np.float32)


class HWC2CHW(PyTensorOperation):
    """H x W x C to C x H x W (an H x W image becomes 1 x H x W)."""

    def __call__(self, img):
        arr = _image(img)
        if arr.ndim == 2:
            return arr[None]
        return np.ascontiguousarray(arr.transpose(2, 0, 1))


class ToTensor(PyTensorOperation):
    """An HWC uint8 image to CHW ``output_type`` (float32) in [0, 1]."""

    def __init__(self, output_type=np.float32):
        from mscore.dataset.transforms.transforms import _np_dtype
        self.output_type = _np_dtype(output_type, "output_type")

    def __call__(self, img):
        arr = _image(img)
        out = HWC2CHW()(arr).astype(np.float32) / 255.0
        return out.astype(self.output_type)


def _size_arg(size, name="size"):
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        if size <= 0:
            raise ValueError(f"{name}: expected a positive int, got {size}")
        return int(size)
    if isinstance(size, (list, tuple)) and len(size) == 2 and all(
            isinstance(s, numbers.Integral) and not isinstance(s, bool) and s > 0 for s in size):
        return (int(size[0]), int(size[1]))
    raise TypeError(f"{name}: expected a positive int or a (height, width) pair, got {size!r}")


def _axis_weights(n_in, n_out):
    """Bilinear source indices and weights with half-pixel centres (OpenCV's convention)."""
    pos = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    pos = np.clip(pos, 0, n_in - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, (pos - lo).astype(np.float32)


class Resize(PyTensorOperation):
    """Resize to ``size``: (height, width), or an int for the shorter side (aspect kept)."""

    def __init__(self, size, interpolation=Inter.LINEAR):
        self.size = _size_arg(size)
        if not isinstance(interpolation, Inter):
            raise TypeError(f"interpolation: expected an Inter value, got {interpolation!r}")
        self.interpolation = interpolation

    def _target(self, h, w):
        if isinstance(self.size, tuple):
            return self.size
        s = self.size
        return (s, max(1, round(w * s / h))) if h <= w else (max(1, round(h * s / w)), s)

    def __call__(self, img):
        arr = _image(img)
        h, w = arr.shape[:2]
        th, tw = self._target(h, w)
        if self.interpolation is Inter.NEAREST:
            ri = np.minimum((np.arange(th) * h / th).astype(np.int64), h - 1)
            ci = np.minimum((np.arange(tw) * w / tw).astype(np.int64), w - 1)
            return arr[ri][:, ci]
        x = arr.astype(np.float32)
        r0, r1, rw = _axis_weights(h, th)
        c0, c1, cw = _axis_weights(w, tw)
        extra = (1,) * (arr.ndim - 2)
        rw = rw.reshape((-1, 1) + extra)
        cw = cw.reshape((1, -1) + extra)
        top = x[r0][:, c0] * (1 - cw) + x[r0][:, c1] * cw
        bot = x[r1][:, c0] * (1 - cw) + x[r1][:, c1] * cw
        out = top * (1 - rw) + bot * rw
        if arr.dtype == np.uint8:
            return np.clip(np.rint(out), 0, 255).astype(np.uint8)
        return out.astype(arr.dtype) if arr.dtype.kind == "f" else out


class Pad(PyTensorOperation):
    """Pad an HWC image: ``padding`` is an int (all sides), (left/right, top/bottom) or
    (left, top, right, bottom); ``fill_value`` the constant."""

    def __init__(self, padding, fill_value=0):
        if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
            padding = (padding,) * 4
        elif isinstance(padding, (list, tuple)) and len(padding) == 2:
            padding = (padding[0], padding[1], padding[0], padding[1])
        if not (isinstance(padding, (list, tuple)) and len(padding) == 4 and all(
                isinstance(p, numbers.Integral) and not isinstance(p, bool) and p >= 0
                for p in padding)):
            raise TypeError(f"padding: expected a non-negative int or a 2/4-tuple of them, got "
                            f"{padding!r}")
        self.padding = tuple(int(p) for p in padding)
        self.fill_value = _number(fill_value, "fill_value")

    def __call__(self, img):
        arr = _image(img)
        left, top, right, bottom = self.padding
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
        return np.pad(arr, widths, constant_values=np.asarray(self.fill_value).astype(arr.dtype))


class CenterCrop(PyTensorOperation):
    """The central ``size`` (an int for a square, or (height, width)) of an HWC image."""

    def __init__(self, size):
        self.size = _size_arg(size)

    def __call__(self, img):
        arr = _image(img)
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        h, w = arr.shape[:2]
        if th > h or tw > w:
            arr = Pad((max(tw - w, 0) // 2, max(th - h, 0) // 2,
                       -(-max(tw - w, 0) // 2), -(-max(th - h, 0) // 2)))(arr)
            h, w = arr.shape[:2]
        top, left = (h - th) // 2, (w - tw) // 2
        return arr[top:top + th, left:left + tw]
