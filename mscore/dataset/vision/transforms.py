"""Image transforms for ``Dataset.map`` (MindSpore's ``mindspore.dataset.vision``).

Images are numpy arrays in HWC layout (H x W, or H x W x C) unless a transform says
otherwise; PIL images are accepted where MindSpore takes them (and come back as PIL images
from the transforms that MindSpore runs on PIL). Random transforms are in
:mod:`mscore.dataset.vision.random_transforms`.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore.dataset.engine.datasets_vision import _pillow, decode_image
from mscore.dataset.transforms.transforms import PyTensorOperation, np_dtype
from mscore.dataset.vision import utils
from mscore.dataset.vision.utils import Border, ConvertMode, Inter

__all__ = ["Decode", "Resize", "Rescale", "Normalize", "HWC2CHW", "CenterCrop", "Crop", "Pad",
           "ToTensor", "ToType", "ToPIL", "Grayscale", "ConvertColor", "HorizontalFlip",
           "VerticalFlip", "Rotate"]


def _number(value, name):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    return float(value)


def _is_pil(img):
    return type(img).__module__.startswith("PIL.")


def image_array(img, name="image"):
    """A numpy view of ``img`` (a numpy array or a PIL image) with 2 or 3 dimensions."""
    arr = np.asarray(img)
    if arr.ndim not in (2, 3):
        raise RuntimeError(f"{name}: expected an H x W or H x W x C image, got shape "
                           f"{arr.shape}")
    return arr


def size_arg(size, name="size"):
    """An int, or an (h, w) tuple, each positive."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        if not 1 <= size <= 2 ** 31 - 1:
            raise ValueError(f"{name}: expected a value in [1, 2147483647], got {size}")
        return int(size)
    if isinstance(size, (list, tuple)) and len(size) == 2:
        for i, s in enumerate(size):
            if not isinstance(s, numbers.Integral) or isinstance(s, bool):
                raise TypeError(f"{name}: {name}[{i}] must be an int, got {s!r}")
            if not 1 <= s <= 2 ** 31 - 1:
                raise ValueError(f"{name}: {name}[{i}] must be in [1, 2147483647], got {s}")
        return (int(size[0]), int(size[1]))
    raise TypeError(f"{name}: should be a single integer or a list/tuple (h, w) of length 2, "
                    f"got {size!r}")


def check_inter(interpolation):
    if not isinstance(interpolation, Inter):
        raise TypeError(f"interpolation: expected an Inter value, got {interpolation!r}")
    return interpolation


class Decode(PyTensorOperation):
    """An encoded image (a 1-D uint8 array, or bytes) decoded to an RGB H x W x 3 uint8
    array, or a PIL image with ``to_pil=True`` (decoded with Pillow)."""

    def __init__(self, to_pil=False):
        if not isinstance(to_pil, bool):
            raise TypeError(f"to_pil: expected a bool, got {type(to_pil).__name__}")
        self.to_pil = to_pil

    def __call__(self, img):
        if isinstance(img, bytes):
            img = np.frombuffer(img, np.uint8)
        arr = np.asarray(img)
        if arr.ndim != 1:
            raise TypeError(f"Decode: the encoded image should be 1-D, got {arr.ndim} "
                            f"dimensions")
        try:
            out = decode_image(arr)
        except ValueError as exc:
            raise RuntimeError(f"Decode: {exc}") from None
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
        if _is_pil(img):
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
        self.rescale = _number(rescale, "rescale")
        self.shift = _number(shift, "shift")

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
        x = _number(x, name)
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
        if _is_pil(img):
            return img
        return _pillow().Image.fromarray(image_array(img))


def _fill_arg(fill_value):
    if isinstance(fill_value, numbers.Integral) and not isinstance(fill_value, bool):
        if not 0 <= fill_value <= 255:
            raise ValueError(f"fill_value: expected a value in [0, 255], got {fill_value}")
        return int(fill_value)
    if isinstance(fill_value, tuple) and len(fill_value) == 3:
        for x in fill_value:
            if not isinstance(x, numbers.Integral) or isinstance(x, bool) or not 0 <= x <= 255:
                raise ValueError(f"fill_value: expected ints in [0, 255], got {fill_value}")
        return tuple(int(x) for x in fill_value)
    raise TypeError(f"fill_value: expected an int or a 3-tuple of ints, got {fill_value!r}")


def padding_arg(padding, name="padding"):
    """``(left, top, right, bottom)`` from an int, a 2-sequence or a 4-sequence."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        padding = (padding,) * 4
    elif isinstance(padding, (list, tuple)) and len(padding) == 2:
        padding = (padding[0], padding[1], padding[0], padding[1])
    if not isinstance(padding, (list, tuple)) or len(padding) != 4:
        raise TypeError(f"{name}: expected an int or a list/tuple of 2 or 4 ints, got "
                        f"{padding!r}")
    for p in padding:
        if not isinstance(p, numbers.Integral) or isinstance(p, bool):
            raise TypeError(f"{name}: expected ints, got {p!r}")
        if not 0 <= p <= 2 ** 31 - 1:
            raise ValueError(f"{name}: expected values >= 0, got {p}")
    return tuple(int(p) for p in padding)


def pad_image(arr, left, top, right, bottom, fill=0, mode=Border.CONSTANT):
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    if mode is Border.CONSTANT:
        out = np.pad(arr, widths)
        fill = np.asarray(fill, dtype=arr.dtype)
        mask = np.ones(out.shape[:2], bool)
        mask[top:top + arr.shape[0], left:left + arr.shape[1]] = False
        out[mask] = fill if fill.ndim == 0 or arr.ndim == 3 else fill[0]
        return out
    return np.pad(arr, widths, mode=mode.value)


class Pad(PyTensorOperation):
    """Pad an HWC image: ``padding`` is an int (all sides), (left/right, top/bottom) or
    (left, top, right, bottom); ``fill_value`` (an int or one per channel) for
    ``Border.CONSTANT``."""

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        self.padding = padding_arg(padding)
        self.fill_value = _fill_arg(fill_value)
        if not isinstance(padding_mode, Border):
            raise TypeError(f"padding_mode: expected a Border value, got {padding_mode!r}")
        self.padding_mode = padding_mode

    def __call__(self, img):
        arr = image_array(img)
        return pad_image(arr, *self.padding, self.fill_value, self.padding_mode)


def crop_or_pad_center(arr, th, tw):
    """The central ``th`` x ``tw`` of ``arr``, padded with zeros where it is smaller."""
    h, w = arr.shape[:2]
    if th > h or tw > w:
        ph, pw = max(th - h, 0), max(tw - w, 0)
        arr = pad_image(arr, pw // 2, ph // 2, pw - pw // 2, ph - ph // 2)
        h, w = arr.shape[:2]
    top, left = (h - th) // 2, (w - tw) // 2
    return arr[top:top + th, left:left + tw]


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


def _gray_u8(arr):
    r, g, b = (arr[..., i].astype(np.int64) for i in range(3))
    return ((r * 4899 + g * 9617 + b * 1868 + 8192) >> 14).astype(np.uint8)


def _gray(arr, order="rgb"):
    rgb = arr[..., :3] if order == "rgb" else arr[..., 2::-1]
    if arr.dtype == np.uint8:
        return _gray_u8(rgb)
    r, g, b = (rgb[..., i].astype(np.float32) for i in range(3))
    return (r * np.float32(0.299) + g * np.float32(0.587) + b * np.float32(0.114)).astype(
        arr.dtype)


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
    ConvertMode.COLOR_BGR2GRAY: lambda a: _gray(a, "bgr"),
    ConvertMode.COLOR_RGB2GRAY: lambda a: _gray(a, "rgb"),
    ConvertMode.COLOR_GRAY2BGR: lambda a: np.repeat(a.reshape(a.shape[:2] + (1,)), 3, -1),
    ConvertMode.COLOR_GRAY2BGRA: lambda a: _with_alpha(np.repeat(a.reshape(a.shape[:2] + (1,)),
                                                                 3, -1)),
    ConvertMode.COLOR_BGRA2GRAY: lambda a: _gray(a, "bgr"),
    ConvertMode.COLOR_RGBA2GRAY: lambda a: _gray(a, "rgb"),
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
        if _is_pil(img):
            gray = img.convert("L")
            return gray if self.num_output_channels == 1 else gray.convert("RGB")
        arr = image_array(img)
        if arr.ndim == 2:
            gray = arr
        else:
            rgb = arr[..., :3].astype(np.int64)
            gray = ((rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000)
                    >> 16).astype(arr.dtype)
        return gray if self.num_output_channels == 1 else np.repeat(gray[..., None], 3, -1)


def rotation_matrix(h, w, degrees, center, expand):
    """The inverse map of a rotation by ``degrees`` (counter-clockwise) about ``center``
    (default: the image centre), and the output size (larger with ``expand``)."""
    cx, cy = ((w - 1) / 2, (h - 1) / 2) if center is None else center
    a = math.radians(degrees)
    alpha, beta = math.cos(a), math.sin(a)
    fwd = np.array([[alpha, beta, (1 - alpha) * cx - beta * cy],
                    [-beta, alpha, beta * cx + (1 - alpha) * cy]])
    out_h, out_w = h, w
    if expand:
        corners = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], dtype=np.float64)
        pts = corners @ fwd.T
        out_w = int(math.ceil(pts[:, 0].max() - pts[:, 0].min()))
        out_h = int(math.ceil(pts[:, 1].max() - pts[:, 1].min()))
        fwd[0, 2] += (out_w - w) / 2
        fwd[1, 2] += (out_h - h) / 2
    full = np.vstack([fwd, [0, 0, 1]])
    return np.linalg.inv(full)[:2], out_h, out_w


def check_center(center):
    if center is None:
        return None
    if not isinstance(center, (list, tuple)) or len(center) != 2:
        raise TypeError(f"center: expected (x, y), got {center!r}")
    return tuple(_number(c, "center") for c in center)


def rotate(arr, degrees, resample, expand, center, fill):
    inv, out_h, out_w = rotation_matrix(arr.shape[0], arr.shape[1], degrees, center, expand)
    return utils.warp_affine(arr, inv, out_h, out_w, resample, fill)


class Rotate(PyTensorOperation):
    """The image rotated ``degrees`` counter-clockwise about ``center`` (default the image
    centre); ``expand`` enlarges the output to hold the whole rotated image; uncovered pixels
    are ``fill_value``."""

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None,
                 fill_value=0):
        self.degrees = _number(degrees, "degrees")
        self.resample = check_inter(resample)
        if not isinstance(expand, bool):
            raise TypeError(f"expand: expected a bool, got {type(expand).__name__}")
        self.expand, self.center = expand, check_center(center)
        self.fill_value = _fill_arg(fill_value)

    def __call__(self, img):
        arr = image_array(img)
        return rotate(arr, self.degrees, self.resample, self.expand, self.center,
                      self.fill_value)


def __getattr__(name):
    """MindSpore's ``vision.transforms`` module also holds the random and colour transforms:
    ``from mscore.dataset.vision.transforms import RandomCrop`` finds them in their modules
    (bound late: those modules build on this one)."""
    from mscore.dataset.vision import adjust, random_transforms
    for module in (random_transforms, adjust, utils):
        if name in module.__all__:
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
