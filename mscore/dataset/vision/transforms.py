"""Image transforms for ``Dataset.map`` (MindSpore's ``mindspore.dataset.vision``).

Images are numpy arrays in HWC layout (H x W, or H x W x C) unless a transform says
otherwise; PIL images are accepted where MindSpore takes them (and come back as PIL images
from the transforms that MindSpore runs on PIL). This module defines the deterministic
geometric and format transforms; like MindSpore's ``vision.transforms`` it also holds the
colour transforms of :mod:`~mscore.dataset.vision.adjust` and the random ones of
:mod:`~mscore.dataset.vision.random_transforms`, which build on the shared operations of
:mod:`~mscore.dataset.vision.primitives`.
"""
from __future__ import annotations

import numbers

import numpy as np

from mscore.dataset.engine.datasets_vision import _pillow
from mscore.dataset.transforms.transforms import PyTensorOperation, np_dtype
from mscore.dataset.vision import utils
from mscore.dataset.vision.adjust import (
    AdjustBrightness,
    AdjustContrast,
    AdjustGamma,
    AdjustHue,
    AdjustSaturation,
    AutoContrast,
    CutOut,
    Equalize,
    HsvToRgb,
    Invert,
    Posterize,
    RandomAutoContrast,
    RandomColorAdjust,
    RandomEqualize,
    RandomInvert,
    ResizedCrop,
    RgbToHsv,
    Solarize,
    ToNumpy,
    get_image_num_channels,
    get_image_size,
)
from mscore.dataset.vision.primitives import (
    check_center,
    check_inter,
    crop_or_pad_center,
    decode,
    fill_arg,
    gray,
    grayscale,
    image_array,
    is_pil,
    number_arg,
    pad_image,
    padding_arg,
    rotate,
    size_arg,
)
from mscore.dataset.vision.random_transforms import (
    RandomCrop,
    RandomCropDecodeResize,
    RandomErasing,
    RandomGrayscale,
    RandomHorizontalFlip,
    RandomResizedCrop,
    RandomRotation,
    RandomVerticalFlip,
    not_random,
)
from mscore.dataset.vision.utils import Border, ConvertMode, ImageBatchFormat, Inter

__all__ = ["Decode", "Resize", "Rescale", "Normalize", "HWC2CHW", "CenterCrop", "Crop", "Pad",
           "ToTensor", "ToType", "ToPIL", "Grayscale", "ConvertColor", "HorizontalFlip",
           "VerticalFlip", "Rotate",
           # defined in vision.adjust, vision.random_transforms and vision.utils
           "AdjustBrightness", "AdjustContrast", "AdjustGamma", "AdjustHue", "AdjustSaturation",
           "AutoContrast", "CutOut", "Equalize", "HsvToRgb", "Invert", "Posterize",
           "RandomAutoContrast", "RandomColorAdjust", "RandomEqualize", "RandomInvert",
           "ResizedCrop", "RgbToHsv", "Solarize", "ToNumpy", "get_image_num_channels",
           "get_image_size", "RandomCrop", "RandomCropDecodeResize", "RandomErasing",
           "RandomGrayscale", "RandomHorizontalFlip", "RandomResizedCrop", "RandomRotation",
           "RandomVerticalFlip", "not_random", "Border", "ConvertMode", "ImageBatchFormat",
           "Inter"]


class Decode(PyTensorOperation):
    """An encoded image (a 1-D uint8 array, or bytes) decoded to an RGB H x W x 3 uint8
    array, or a PIL image with ``to_pil=True`` (decoded with Pillow)."""

    def __init__(self, to_pil=False):
        if not isinstance(to_pil, bool):
            raise TypeError(f"to_pil: expected a bool, got {type(to_pil).__name__}")
        self.to_pil = to_pil

    def __call__(self, img):
        out = decode(img)
        if self.to_pil:
            import PIL.Image
            return PIL.Image.fromarray(out)
        return out


class Resize(PyTensorOperation):
    """Resize to ``size``: (height, width), or an int for the shorter side (the longer one
    scaled and truncated)."""

    def __init__(self, size, interpolation=Inter.BILINEAR):
        self.size = size_arg(size)
        self.interpolation = check_inter(interpolation)

    def target(self, h, w):
        if isinstance(self.size, tuple):
            return self.size
        s = self.size
        return (s, max(1, int(w * s / h))) if h <= w else (max(1, int(h * s / w)), s)

    def __call__(self, img):
        if is_pil(img):
            return _pil_like(self(np.asarray(img)), img)
        arr = image_array(img)
        th, tw = self.target(*arr.shape[:2])
        return utils.resize(arr, th, tw, self.interpolation)


def _pil_like(arr, like):
    import PIL.Image
    return PIL.Image.fromarray(np.asarray(arr), mode=like.mode)


class Rescale(PyTensorOperation):
    """``image * rescale + shift`` as float32."""

    def __init__(self, rescale, shift):
        self.rescale = number_arg(rescale, "rescale")
        self.shift = number_arg(shift, "shift")

    def __call__(self, img):
        return (np.asarray(img, dtype=np.float32) * np.float32(self.rescale)
                + np.float32(self.shift)).astype(np.float32)


def _channel_values(values, name, low_open):
    if isinstance(values, numbers.Real) and not isinstance(values, bool):
        values = [values]
    if not isinstance(values, (list, tuple)) or not values:
        raise TypeError(f"{name}: expected a list or tuple of numbers, got {values!r}")
    out = []
    for i, x in enumerate(values):
        x = number_arg(x, name)
        if not (0 < x <= 255 if low_open else 0 <= x <= 255):
            raise ValueError(f"{name}: {name}[{i}] must be in {'(0' if low_open else '[0'}, "
                             f"255], got {x}")
        out.append(x)
    return np.asarray(out, dtype=np.float32)


class Normalize(PyTensorOperation):
    """``(image - mean) / std`` per channel, as float32 (values on the 0..255 scale);
    ``is_hwc`` says where the channel axis is (last, or first for CHW)."""

    def __init__(self, mean, std, is_hwc=True):
        self.mean = _channel_values(mean, "mean", False)
        self.std = _channel_values(std, "std", True)
        if len(self.mean) != len(self.std):
            raise ValueError(f"mean and std: expected the same length, got {len(self.mean)} "
                             f"and {len(self.std)}")
        if not isinstance(is_hwc, bool):
            raise TypeError(f"is_hwc: expected a bool, got {type(is_hwc).__name__}")
        self.is_hwc = is_hwc

    def __call__(self, img):
        arr = image_array(img).astype(np.float32)
        channels = 1 if arr.ndim == 2 else (arr.shape[-1] if self.is_hwc else arr.shape[0])
        if len(self.mean) not in (1, channels):
            raise RuntimeError(f"Normalize: {len(self.mean)} mean/std values for an image "
                               f"with {channels} channel(s)")
        shape = (-1,) if arr.ndim == 3 and self.is_hwc else (-1, 1, 1) if arr.ndim == 3 else ()
        mean = self.mean.reshape(shape) if shape else self.mean[0]
        std = self.std.reshape(shape) if shape else self.std[0]
        return ((arr - mean) / std).astype(np.float32)


class HWC2CHW(PyTensorOperation):
    """H x W x C to C x H x W (an H x W image stays as it is)."""

    def __call__(self, img):
        arr = image_array(img)
        if arr.ndim == 2:
            return arr
        return np.ascontiguousarray(arr.transpose(2, 0, 1))


class ToTensor(PyTensorOperation):
    """An HWC image (numpy or PIL) to CHW ``output_type`` (float32) scaled by 1/255."""

    def __init__(self, output_type=np.float32):
        self.output_type = np_dtype(output_type, "output_type")

    def __call__(self, img):
        arr = image_array(img)
        if arr.ndim == 2:
            arr = arr[..., None]
        out = arr.transpose(2, 0, 1).astype(np.float32) / np.float32(255.0)
        return np.ascontiguousarray(out.astype(self.output_type))


class ToType(PyTensorOperation):
    """The image cast to ``data_type``."""

    def __init__(self, data_type):
        self.data_type = np_dtype(data_type)

    def __call__(self, img):
        return np.asarray(img).astype(self.data_type)


class ToPIL(PyTensorOperation):
    """A decoded H x W (x C) uint8 array as a PIL image."""

    def __call__(self, img):
        if is_pil(img):
            return img
        return _pillow().Image.fromarray(image_array(img))


class Pad(PyTensorOperation):
    """Pad an HWC image: ``padding`` is an int (all sides), (left/right, top/bottom) or
    (left, top, right, bottom); ``fill_value`` (an int or one per channel) for
    ``Border.CONSTANT``."""

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        self.padding = padding_arg(padding)
        self.fill_value = fill_arg(fill_value)
        if not isinstance(padding_mode, Border):
            raise TypeError(f"padding_mode: expected a Border value, got {padding_mode!r}")
        self.padding_mode = padding_mode

    def __call__(self, img):
        arr = image_array(img)
        return pad_image(arr, *self.padding, self.fill_value, self.padding_mode)


class CenterCrop(PyTensorOperation):
    """The central ``size`` (an int for a square, or (height, width)) of an HWC image; a
    smaller image is padded with zeros first."""

    def __init__(self, size):
        self.size = size_arg(size)

    def __call__(self, img):
        arr = image_array(img)
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        return crop_or_pad_center(arr, th, tw)


class Crop(PyTensorOperation):
    """The region of ``size`` whose top-left corner is ``coordinates`` (top, left)."""

    def __init__(self, coordinates, size):
        if not isinstance(coordinates, (list, tuple)) or len(coordinates) != 2:
            raise TypeError(f"coordinates: expected (top, left), got {coordinates!r}")
        for c in coordinates:
            if not isinstance(c, numbers.Integral) or isinstance(c, bool) or c < 0:
                raise ValueError(f"coordinates: expected ints >= 0, got {coordinates!r}")
        self.coordinates = tuple(int(c) for c in coordinates)
        self.size = size_arg(size)

    def __call__(self, img):
        arr = image_array(img)
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        top, left = self.coordinates
        if top + th > arr.shape[0] or left + tw > arr.shape[1]:
            raise RuntimeError(f"Crop: the region {self.coordinates} + {(th, tw)} goes beyond "
                               f"the image of shape {arr.shape[:2]}")
        return arr[top:top + th, left:left + tw]


class HorizontalFlip(PyTensorOperation):
    """The image mirrored left to right."""

    def __call__(self, img):
        return np.ascontiguousarray(image_array(img)[:, ::-1])


class VerticalFlip(PyTensorOperation):
    """The image mirrored top to bottom."""

    def __call__(self, img):
        return np.ascontiguousarray(image_array(img)[::-1])


def _with_alpha(arr):
    alpha = np.iinfo(arr.dtype).max if arr.dtype.kind in "iu" else 1
    return np.concatenate([arr, np.full(arr.shape[:2] + (1,), alpha, arr.dtype)], axis=-1)


_CONVERSIONS = {
    ConvertMode.COLOR_BGR2BGRA: _with_alpha,
    ConvertMode.COLOR_BGRA2BGR: lambda a: a[..., :3],
    ConvertMode.COLOR_BGR2RGBA: lambda a: _with_alpha(a[..., ::-1]),
    ConvertMode.COLOR_RGBA2BGR: lambda a: a[..., 2::-1],
    ConvertMode.COLOR_BGR2RGB: lambda a: a[..., ::-1],
    ConvertMode.COLOR_BGRA2RGBA: lambda a: a[..., [2, 1, 0, 3]],
    ConvertMode.COLOR_BGR2GRAY: lambda a: gray(a, "bgr"),
    ConvertMode.COLOR_RGB2GRAY: lambda a: gray(a, "rgb"),
    ConvertMode.COLOR_GRAY2BGR: lambda a: np.repeat(a.reshape(a.shape[:2] + (1,)), 3, -1),
    ConvertMode.COLOR_GRAY2BGRA: lambda a: _with_alpha(np.repeat(a.reshape(a.shape[:2] + (1,)),
                                                                 3, -1)),
    ConvertMode.COLOR_BGRA2GRAY: lambda a: gray(a, "bgr"),
    ConvertMode.COLOR_RGBA2GRAY: lambda a: gray(a, "rgb"),
}
_CHANNELS_IN = {ConvertMode.COLOR_GRAY2BGR: 1, ConvertMode.COLOR_GRAY2BGRA: 1,
                ConvertMode.COLOR_BGRA2BGR: 4, ConvertMode.COLOR_RGBA2BGR: 4,
                ConvertMode.COLOR_BGRA2RGBA: 4, ConvertMode.COLOR_BGRA2GRAY: 4,
                ConvertMode.COLOR_RGBA2GRAY: 4}


class ConvertColor(PyTensorOperation):
    """Convert between colour spaces (OpenCV's ``cvtColor``; grey = 0.299 R + 0.587 G +
    0.114 B)."""

    def __init__(self, convert_mode):
        if not isinstance(convert_mode, ConvertMode):
            raise TypeError(f"convert_mode: expected a ConvertMode, got {convert_mode!r}")
        self.convert_mode = convert_mode

    def __call__(self, img):
        arr = image_array(img)
        want = _CHANNELS_IN.get(self.convert_mode, 3)
        have = 1 if arr.ndim == 2 else arr.shape[-1]
        if have != want:
            raise RuntimeError(f"ConvertColor: {self.convert_mode.name} needs {want} "
                               f"channel(s), the image has {have}")
        return np.ascontiguousarray(_CONVERSIONS[self.convert_mode](arr))


class Grayscale(PyTensorOperation):
    """A PIL image (or an RGB array) converted to grey (Pillow's ``L`` mode:
    ``(299 R + 587 G + 114 B) / 1000``), with 1 or 3 output channels."""

    def __init__(self, num_output_channels=1):
        if not isinstance(num_output_channels, int) or isinstance(num_output_channels, bool):
            raise TypeError(f"num_output_channels: expected an int, got "
                            f"{num_output_channels!r}")
        if num_output_channels not in (1, 3):
            raise ValueError(f"num_output_channels: expected 1 or 3, got {num_output_channels}")
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        return grayscale(img, self.num_output_channels)


class Rotate(PyTensorOperation):
    """The image rotated ``degrees`` counter-clockwise about ``center`` (default the image
    centre); ``expand`` enlarges the output to hold the whole rotated image; uncovered pixels
    are ``fill_value``."""

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None,
                 fill_value=0):
        self.degrees = number_arg(degrees, "degrees")
        self.resample = check_inter(resample)
        if not isinstance(expand, bool):
            raise TypeError(f"expand: expected a bool, got {type(expand).__name__}")
        self.expand, self.center = expand, check_center(center)
        self.fill_value = fill_arg(fill_value)

    def __call__(self, img):
        arr = image_array(img)
        return rotate(arr, self.degrees, self.resample, self.expand, self.center,
                      self.fill_value)
