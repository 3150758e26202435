"""Colour and tone adjustments of ``mindspore.dataset.vision`` (brightness, contrast,
saturation, hue, gamma, inversion, posterize, solarize, auto-contrast, equalize), the random
colour jitter and ``CutOut``, and the image facts (``get_image_size``,
``get_image_num_channels``).

uint8 results round half to even and saturate, as OpenCV's ``saturate_cast`` does; float
images are scaled without clipping. Grey means OpenCV's RGB-to-grey weights.
"""
from __future__ import annotations

import numbers

import numpy as np

from mscore.dataset.engine._stdrandom import std_shuffle
from mscore.dataset.engine.op_random import generator_for
from mscore.dataset.transforms.transforms import PyTensorOperation
from mscore.dataset.vision import utils
from mscore.dataset.vision.primitives import check_inter, gray, image_array, is_pil, size_arg
from mscore.dataset.vision.utils import Inter

__all__ = ["AdjustBrightness", "AdjustContrast", "AdjustSaturation", "AdjustHue",
           "AdjustGamma", "Invert", "Posterize", "Solarize", "AutoContrast", "Equalize",
           "RandomColorAdjust", "CutOut", "ToNumpy", "get_image_size",
           "get_image_num_channels", "RandomInvert", "RandomEqualize", "RandomAutoContrast",
           "ResizedCrop", "RgbToHsv", "HsvToRgb"]

_MAX_FACTOR = 16777216


def _factor(value, name, low=0.0, high=_MAX_FACTOR):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"Input {name} is not within the required interval of "
                         f"[{low:g}, {high:g}].")
    return float(value)


def _saturate(values, like):
    """``values`` (float) back in the dtype of ``like``: rounded and clipped for integers."""
    if np.issubdtype(like.dtype, np.integer):
        info = np.iinfo(like.dtype)
        return np.clip(np.rint(values), info.min, info.max).astype(like.dtype)
    return values.astype(like.dtype)


def _rgb(img, op):
    arr = image_array(img)
    if arr.ndim != 3 or arr.shape[-1] != 3:
        raise RuntimeError(f"{op}: expected an RGB H x W x 3 image, got shape {arr.shape}")
    return arr


def _blend(arr, other, alpha):
    work = np.float32 if arr.dtype != np.float64 else np.float64
    return _saturate(arr.astype(work) * alpha + np.asarray(other, work) * (1 - alpha), arr)


def adjust_brightness(arr, factor):
    return _saturate(arr.astype(np.float32) * np.float32(factor), arr)


def adjust_contrast(arr, factor):
    mean = float(np.mean(gray(arr)))
    if np.issubdtype(arr.dtype, np.integer):
        mean = float(np.rint(mean))
    return _blend(arr, mean, factor)


def adjust_saturation(arr, factor):
    return _blend(arr, gray(arr)[..., None].astype(np.float32), factor)


_HSV_SHIFT = 12
_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def rgb_to_hsv_full(arr):
    """OpenCV's ``COLOR_RGB2HSV_FULL`` of a uint8 image (hue in [0, 256), 12-bit fixed point)."""
    r, g, b = (arr[..., i].astype(np.int64) for i in range(3))
    v = np.maximum(np.maximum(r, g), b)
    diff = v - np.minimum(np.minimum(r, g), b)
    half = 1 << (_HSV_SHIFT - 1)
    idx = np.arange(256, dtype=np.float64)
    with np.errstate(divide="ignore"):
        sdiv = np.where(idx == 0, 0, np.rint((255 << _HSV_SHIFT) / idx)).astype(np.int64)
        hdiv = np.where(idx == 0, 0, np.rint((256 << _HSV_SHIFT) / (6 * idx))).astype(np.int64)
    s = (diff * sdiv[v] + half) >> _HSV_SHIFT
    h = np.where(v == r, g - b, np.where(v == g, b - r + 2 * diff, r - g + 4 * diff))
    h = (h * hdiv[diff] + half) >> _HSV_SHIFT
    h = np.maximum(h, 0)
    return np.stack([np.clip(h, 0, 255), s, v], axis=-1).astype(np.uint8)


def hsv_full_to_rgb(hsv):
    """OpenCV's ``COLOR_HSV2RGB_FULL`` of a uint8 image (computed in float32)."""
    f = np.float32
    h = hsv[..., 0].astype(f) * f(6.0 / 256)
    s = hsv[..., 1].astype(f) * f(1 / 255.)
    v = hsv[..., 2].astype(f) * f(1 / 255.)
    h = np.where(h >= 6, h - 6, h)
    sector = np.floor(h).astype(np.int64)
    h = h - sector
    tab = np.stack([v, v * (1 - s), v * (1 - s * h), v * (1 - s * (1 - h))], axis=-1)
    pick = _SECTORS[np.clip(sector, 0, 5)]
    bgr = np.take_along_axis(tab, pick, axis=-1)
    bgr = np.where((s == 0)[..., None], v[..., None], bgr)
    rgb = bgr[..., ::-1] * f(255)
    return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)


def adjust_hue(arr, factor):
    """Turn the hue by ``factor`` of a full turn: OpenCV's full-range HSV, the hue channel
    shifted by ``factor * 255`` truncated, modulo 256, as MindSpore does."""
    if arr.dtype != np.uint8:
        raise RuntimeError(f"AdjustHue: expected a uint8 image, got {arr.dtype}")
    hsv = rgb_to_hsv_full(arr)
    shift = int(np.trunc(np.float32(factor) * np.float32(255))) % 256
    hsv[..., 0] = (hsv[..., 0].astype(np.int64) + shift) % 256
    return hsv_full_to_rgb(hsv)


class AdjustBrightness(PyTensorOperation):
    """The image times ``brightness_factor`` (0 gives black, 1 the image itself)."""

    def __init__(self, brightness_factor):
        self.brightness_factor = _factor(brightness_factor, "brightness_factor")

    def __call__(self, img):
        return adjust_brightness(_rgb(img, "AdjustBrightness"), self.brightness_factor)


class AdjustContrast(PyTensorOperation):
    """The image blended with its mean grey level (0 gives a flat grey image)."""

    def __init__(self, contrast_factor):
        self.contrast_factor = _factor(contrast_factor, "contrast_factor")

    def __call__(self, img):
        return adjust_contrast(_rgb(img, "AdjustContrast"), self.contrast_factor)


class AdjustSaturation(PyTensorOperation):
    """The image blended with its grey version (0 gives grey, 1 the image itself)."""

    def __init__(self, saturation_factor):
        self.saturation_factor = _factor(saturation_factor, "saturation_factor")

    def __call__(self, img):
        return adjust_saturation(_rgb(img, "AdjustSaturation"), self.saturation_factor)


class AdjustHue(PyTensorOperation):
    """The hue turned by ``hue_factor`` (in [-0.5, 0.5]) of a full turn."""

    def __init__(self, hue_factor):
        self.hue_factor = _factor(hue_factor, "hue_factor", -0.5, 0.5)

    def __call__(self, img):
        return adjust_hue(_rgb(img, "AdjustHue"), self.hue_factor)


class AdjustGamma(PyTensorOperation):
    """Gamma correction: a uint8 value ``x`` becomes ``floor(gain * (x / 255) ** gamma * 256)``
    (saturated), a float value ``min((gain * x) ** gamma, 1)`` (MindSpore's arithmetic)."""

    def __init__(self, gamma, gain=1.0):
        self.gamma = _factor(gamma, "gamma")
        if not isinstance(gain, numbers.Real) or isinstance(gain, bool):
            raise TypeError(f"gain: expected a number, got {type(gain).__name__}")
        self.gain = float(gain)

    def __call__(self, img):
        arr = image_array(img)
        if np.issubdtype(arr.dtype, np.integer):
            scale = float(np.iinfo(arr.dtype).max)
            table = np.arange(int(scale) + 1, dtype=np.float64) / scale
            table = np.clip(np.floor(np.power(table, self.gamma) * (scale + 1) * self.gain),
                            0, scale)
            return table.astype(arr.dtype)[arr]
        out = np.minimum(np.power(arr.astype(np.float32) * np.float32(self.gain),
                                  np.float32(self.gamma)), np.float32(1))
        return out.astype(arr.dtype)


class Invert(PyTensorOperation):
    """``255 - image`` (uint8 RGB)."""

    def __call__(self, img):
        arr = _rgb(img, "Invert")
        return (255 - arr.astype(np.int32)).astype(arr.dtype)


def _uint8(img, op):
    arr = image_array(img)
    if arr.dtype != np.uint8:
        raise RuntimeError(f"{op}: expected a uint8 image, got {arr.dtype}")
    return arr


class Posterize(PyTensorOperation):
    """Each uint8 value keeps its ``bits`` highest bits."""

    def __init__(self, bits):
        if not isinstance(bits, numbers.Integral) or isinstance(bits, bool):
            raise TypeError(f"bits: expected an int, got {type(bits).__name__}")
        if not 0 <= bits <= 8:
            raise ValueError("Input bits is not within the required interval of [0, 8].")
        self.bits = int(bits)

    def __call__(self, img):
        mask = np.uint8((0xFF << (8 - self.bits)) & 0xFF)
        return _uint8(img, "Posterize") & mask


class Solarize(PyTensorOperation):
    """Values in ``threshold`` (a ``(min, max)`` pair, or ``t`` for ``(t, 255)``) inverted."""

    def __init__(self, threshold):
        if isinstance(threshold, numbers.Real) and not isinstance(threshold, bool):
            threshold = (threshold, 255)
        if not isinstance(threshold, (list, tuple)) or len(threshold) != 2:
            raise TypeError(f"threshold: expected a number or a (min, max) pair, got "
                            f"{threshold!r}")
        lo, hi = (_factor(t, "threshold", 0, 255) for t in threshold)
        if lo > hi:
            raise ValueError("threshold must be in order of (min, max).")
        self.threshold = (lo, hi)

    def __call__(self, img):
        arr = _uint8(img, "Solarize")
        lo, hi = self.threshold
        return np.where((arr >= lo) & (arr <= hi), 255 - arr, arr).astype(np.uint8)


def _per_channel(arr, fn):
    if arr.ndim == 2:
        return fn(arr)
    return np.stack([fn(arr[..., c]) for c in range(arr.shape[-1])], axis=-1)


def _cut_histogram(hist, cutoff):
    """Drop ``cutoff`` percent of the pixels from each end of ``hist`` (in place)."""
    total = int(hist.sum())
    for order in (range(256), range(255, -1, -1)):
        cut = total * cutoff // 100
        for i in order:
            if cut > hist[i]:
                cut -= hist[i]
                hist[i] = 0
            else:
                hist[i] -= cut
                cut = 0
            if cut <= 0:
                break


def auto_contrast_channel(ch, cutoff, ignore):
    hist = np.bincount(ch.ravel(), minlength=256).astype(np.int64)
    if ignore:
        hist[list(ignore)] = 0
    if cutoff:
        _cut_histogram(hist, cutoff)
    present = np.nonzero(hist)[0]
    if present.size == 0 or present[-1] <= present[0]:
        return ch
    lo, hi = int(present[0]), int(present[-1])
    scale = np.float32(255) / np.float32(hi - lo)    # float32 and truncation: MindSpore's
    table = np.trunc(np.arange(256, dtype=np.float32) * scale + np.float32(-lo) * scale)
    return np.clip(table, 0, 255).astype(np.uint8)[ch]


def equalize_channel(ch):
    """OpenCV's ``equalizeHist``."""
    hist = np.bincount(ch.ravel(), minlength=256)
    first = int(np.argmax(hist > 0))
    if hist[first] == ch.size:
        return np.full_like(ch, first)
    scale = np.float32(255.0 / (ch.size - hist[first]))
    table = np.zeros(256, np.uint8)
    running = np.cumsum(hist)[first + 1:] - hist[first]
    table[first + 1:] = np.clip(np.rint(running * scale), 0, 255)
    return table[ch]


class AutoContrast(PyTensorOperation):
    """Each channel stretched to the full range after dropping ``cutoff`` percent of the
    darkest and of the brightest pixels (the values in ``ignore`` left out of the
    histogram)."""

    def __init__(self, cutoff=0.0, ignore=None):
        if not isinstance(cutoff, numbers.Real) or isinstance(cutoff, bool):
            raise TypeError(f"cutoff: expected a number, got {type(cutoff).__name__}")
        if not 0 <= cutoff < 50:
            raise ValueError("Input cutoff is not within the required interval of [0, 50).")
        if isinstance(ignore, numbers.Integral) and not isinstance(ignore, bool):
            ignore = [ignore]
        if ignore is not None and (not isinstance(ignore, (list, tuple)) or any(
                not isinstance(v, numbers.Integral) or not 0 <= v <= 255 for v in ignore)):
            raise TypeError(f"ignore: expected an int or a list of ints in [0, 255], got "
                            f"{ignore!r}")
        self.cutoff, self.ignore = float(cutoff), ignore

    def __call__(self, img):
        arr = _uint8(img, "AutoContrast")
        return _per_channel(arr, lambda ch: auto_contrast_channel(ch, self.cutoff, self.ignore))


class Equalize(PyTensorOperation):
    """Each channel's histogram equalised (OpenCV's ``equalizeHist``)."""

    def __call__(self, img):
        return _per_channel(_uint8(img, "Equalize"), equalize_channel)


def _jitter_range(value, name, centre_ok_low=0.0, single_low=True):
    """A (min, max) range: a number ``v`` means ``(max(0, 1 - v), 1 + v)``."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        v = _factor(value, name)
        return (max(0.0, 1 - v), 1 + v)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise TypeError(f"{name}: expected a number or a (min, max) pair, got {value!r}")
    lo, hi = (_factor(v, name) for v in value)
    if lo > hi:
        raise ValueError(f"{name}: min must not exceed max, got {value!r}")
    return lo, hi


class RandomColorAdjust(PyTensorOperation):
    """Brightness, contrast, saturation and hue adjusted in a random order, each by a factor
    drawn from its range when its turn comes (a number ``v`` means ``[max(0, 1 - v), 1 + v]``;
    hue: ``v`` means ``[-v, v]`` within [-0.5, 0.5])."""

    def __init__(self, brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0)):
        self.brightness = _jitter_range(brightness, "brightness")
        self.contrast = _jitter_range(contrast, "contrast")
        self.saturation = _jitter_range(saturation, "saturation")
        if isinstance(hue, numbers.Real) and not isinstance(hue, bool):
            h = _factor(hue, "hue", 0, 0.5)
            hue = (-h, h)
        if not isinstance(hue, (list, tuple)) or len(hue) != 2:
            raise TypeError(f"hue: expected a number or a (min, max) pair, got {hue!r}")
        lo, hi = (_factor(v, "hue", -0.5, 0.5) for v in hue)
        if lo > hi:
            raise ValueError(f"hue: min must not exceed max, got {hue!r}")
        self.hue = (lo, hi)

    def __call__(self, img):
        arr = _rgb(img, "RandomColorAdjust")
        gen = generator_for(self)
        ranges = (self.brightness, self.contrast, self.saturation, self.hue)
        steps = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)
        neutral = (1.0, 1.0, 1.0, 0.0)
        for i in std_shuffle(np.arange(4), gen):  # the order first, each factor when used
            if ranges[i] == (neutral[i], neutral[i]):
                continue  # a range left at its neutral default draws nothing
            factor = float(gen.uniform_float(*ranges[i])[0])
            if abs(factor - neutral[i]) > 1e-6:
                arr = steps[i](arr, factor)
        return arr


class CutOut(PyTensorOperation):
    """``num_patches`` random ``length`` x ``length`` squares set to 0 (HWC images, or CHW
    with ``is_hwc=False``); a square may lie partly outside the image."""

    def __init__(self, length, num_patches=1, is_hwc=True):
        for value, name in ((length, "length"), (num_patches, "num_patches")):
            if not isinstance(value, numbers.Integral) or isinstance(value, bool):
                raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
            _factor(value, name, 1)
        if not isinstance(is_hwc, bool):
            raise TypeError(f"is_hwc: expected a bool, got {type(is_hwc).__name__}")
        self.length, self.num_patches, self.is_hwc = int(length), int(num_patches), is_hwc

    def __call__(self, img):
        arr = np.array(image_array(img))
        view = arr if self.is_hwc or arr.ndim == 2 else np.moveaxis(arr, 0, -1)
        h, w = view.shape[:2]
        gen = generator_for(self)
        for _ in range(self.num_patches):
            top = int(gen.uniform_int(0, h + self.length)[0]) - self.length
            left = int(gen.uniform_int(0, w + self.length)[0]) - self.length
            view[max(top, 0):max(top + self.length, 0),
                 max(left, 0):max(left + self.length, 0)] = 0
        return arr


def _check_prob(prob):
    if not isinstance(prob, numbers.Real) or isinstance(prob, bool):
        raise TypeError(f"prob: expected a float, got {type(prob).__name__}")
    if not 0 <= prob <= 1:
        raise ValueError("Input prob is not within the required interval of [0.0, 1.0].")
    return float(prob)


class _WithProbability(PyTensorOperation):
    """Applies ``self.op`` when ``bernoulli(prob)`` draws true (one draw per image)."""

    op = None

    def __call__(self, img):
        arr = image_array(img)
        return self.op(arr) if generator_for(self).bernoulli(self.prob)[0] else arr


class RandomInvert(_WithProbability):
    """``Invert`` with probability ``prob``."""

    def __init__(self, prob=0.5):
        self.prob, self.op = _check_prob(prob), Invert()


class RandomEqualize(_WithProbability):
    """``Equalize`` with probability ``prob``."""

    def __init__(self, prob=0.5):
        self.prob, self.op = _check_prob(prob), Equalize()


class RandomAutoContrast(_WithProbability):
    """``AutoContrast(cutoff, ignore)`` with probability ``prob``."""

    def __init__(self, cutoff=0.0, ignore=None, prob=0.5):
        self.op = AutoContrast(cutoff, ignore)
        self.cutoff, self.ignore, self.prob = self.op.cutoff, self.op.ignore, _check_prob(prob)


def _non_negative_int(value, name):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if not 0 <= value <= 2 ** 31 - 1:
        raise ValueError(f"Input {name} is not within the required interval of "
                         f"[0, 2147483647].")
    return int(value)


class ResizedCrop(PyTensorOperation):
    """The region ``height`` x ``width`` at (``top``, ``left``), resized to ``size``."""

    def __init__(self, top, left, height, width, size, interpolation=Inter.BILINEAR):
        self.top, self.left = _non_negative_int(top, "top"), _non_negative_int(left, "left")
        self.height, self.width = size_arg(height, "height"), size_arg(width, "width")
        self.size = size_arg(size)
        self.interpolation = check_inter(interpolation)

    def __call__(self, img):
        arr = image_array(img)
        if self.top + self.height > arr.shape[0] or self.left + self.width > arr.shape[1]:
            raise RuntimeError(f"ResizedCrop: the region at ({self.top}, {self.left}) of "
                               f"{self.height} x {self.width} goes beyond the image of shape "
                               f"{arr.shape[:2]}")
        region = arr[self.top:self.top + self.height, self.left:self.left + self.width]
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        return utils.resize(region, th, tw, self.interpolation)


class ToNumpy(PyTensorOperation):
    """A PIL image (or anything array-like) as a numpy array."""

    def __call__(self, img):
        return np.asarray(img)


def get_image_size(image):
    """``[height, width]`` of an H x W (x C) image."""
    arr = np.asarray(image) if not is_pil(image) else None
    if arr is None:
        return [image.size[1], image.size[0]]
    if arr.ndim not in (2, 3):
        raise RuntimeError(f"image: expected an H x W or H x W x C image, got shape "
                           f"{arr.shape}")
    return [int(arr.shape[0]), int(arr.shape[1])]


def get_image_num_channels(image):
    """The number of channels of an H x W (1) or H x W x C (C) image."""
    if is_pil(image):
        return len(image.getbands())
    arr = np.asarray(image)
    if arr.ndim not in (2, 3):
        raise RuntimeError(f"image: expected an H x W or H x W x C image, got shape "
                           f"{arr.shape}")
    return 1 if arr.ndim == 2 else int(arr.shape[-1])


def _channels(imgs, is_hwc, name):
    """``imgs`` (HWC/NHWC or CHW/NCHW) as float64 with its 3 channels last."""
    if not isinstance(imgs, np.ndarray):
        raise TypeError(f"img should be NumPy image. Got {type(imgs)}.")
    if not isinstance(is_hwc, bool):
        raise TypeError(f"is_hwc should be bool type. Got {type(is_hwc)}.")
    if imgs.ndim not in (3, 4):
        raise TypeError(f"img shape should be (H, W, C)/(N, H, W, C)/(C ,H, W)/(N, C, H, W). "
                        f"Got {imgs.shape}.")
    arr = imgs.astype(np.float64)
    if not is_hwc:
        arr = np.moveaxis(arr, -3, -1)
    if arr.shape[-1] != 3:
        raise TypeError(f"img should be 3 channels {name} img. Got {arr.shape[-1]} channels.")
    return arr


def _channels_back(arr, is_hwc):
    return arr if is_hwc else np.moveaxis(arr, -1, -3)


def rgb_to_hsv(arr):
    """Python's ``colorsys.rgb_to_hsv`` on every pixel of float64 ``arr`` (channels last)."""
    r, g, b = arr[..., 0], arr[..., 1], arr[..., 2]
    maxc, minc = arr.max(-1), arr.min(-1)
    span = maxc - minc
    flat = span == 0
    safe = np.where(flat, 1.0, span)
    rc, gc, bc = ((maxc - c) / safe for c in (r, g, b))
    h = np.where(r == maxc, bc - gc, np.where(g == maxc, 2.0 + rc - bc, 4.0 + gc - rc))
    h = np.where(flat, 0.0, (h / 6.0) % 1.0)
    s = np.where(flat, 0.0, span / np.where(maxc == 0, 1.0, maxc))
    return np.stack((h, s, maxc), -1)


def hsv_to_rgb(arr):
    """Python's ``colorsys.hsv_to_rgb`` on every pixel of float64 ``arr`` (channels last)."""
    h, s, v = arr[..., 0], arr[..., 1], arr[..., 2]
    i = np.trunc(h * 6.0)
    f = h * 6.0 - i
    p, q, t = v * (1.0 - s), v * (1.0 - s * f), v * (1.0 - s * (1.0 - f))
    i = i.astype(np.int64) % 6
    table = np.stack([np.stack(c, -1) for c in
                      ((v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q))])
    rgb = np.take_along_axis(table, i[None, ..., None], 0)[0]
    return np.where((s == 0)[..., None], v[..., None], rgb)


class _ColorSpaceConversion(PyTensorOperation):
    """A colour-space conversion of HWC/NHWC images, or CHW/NCHW ones with ``is_hwc=False``."""

    def __init__(self, is_hwc=False):
        if not isinstance(is_hwc, bool):
            raise TypeError(f"Argument is_hwc with value {is_hwc} is not of type "
                            f"[<class 'bool'>], but got {type(is_hwc)}.")
        self.is_hwc = is_hwc


class RgbToHsv(_ColorSpaceConversion):
    """RGB images (HWC/NHWC, or CHW/NCHW with ``is_hwc=False``) to HSV in [0, 1] hue, as
    Python's ``colorsys`` (float64)."""

    def __call__(self, img):
        return _channels_back(rgb_to_hsv(_channels(img, self.is_hwc, "RGB")), self.is_hwc)


class HsvToRgb(_ColorSpaceConversion):
    """HSV images (hue in [0, 1]) back to RGB, as Python's ``colorsys`` (float64)."""

    def __call__(self, img):
        return _channels_back(hsv_to_rgb(_channels(img, self.is_hwc, "HSV")), self.is_hwc)
