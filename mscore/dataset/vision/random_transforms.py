"""Random image transforms.

Each draws from the stream the pipeline gives it (see
:mod:`mscore.dataset.engine.op_random`) in the order MindSpore's operations draw: a flip is
``bernoulli(prob)``; ``RandomCrop`` draws the left then the top offset; ``RandomRotation``
draws the angle from ``uniform_real<float>``; ``RandomResizedCrop`` draws scale, log-ratio,
then left and top.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore.dataset.engine.op_random import generator_for
from mscore.dataset.engine.validators import argument_type_error
from mscore.dataset.transforms.transforms import PyTensorOperation, _check_prob
from mscore.dataset.vision import utils
from mscore.dataset.vision.primitives import (
    check_center,
    check_inter,
    decode,
    fill_arg,
    grayscale,
    image_array,
    number_arg,
    pad_image,
    padding_arg,
    rotate,
    size_arg,
)
from mscore.dataset.vision.utils import Border, Inter

__all__ = ["RandomHorizontalFlip", "RandomVerticalFlip", "RandomCrop", "RandomResizedCrop",
           "RandomRotation", "RandomGrayscale", "RandomCropDecodeResize", "RandomErasing",
           "not_random"]

_MAX_INT = 16777216


def not_random(func):
    """Mark a user's image function as deterministic (``func.random = False``) and return
    it."""
    func.random = False
    return func


class RandomHorizontalFlip(PyTensorOperation):
    """Mirror the image left to right with probability ``prob``."""

    def __init__(self, prob=0.5):
        self.prob = _check_prob(prob)

    def __call__(self, img):
        arr = image_array(img)
        if generator_for(self).bernoulli(self.prob)[0]:
            return np.ascontiguousarray(arr[:, ::-1])
        return arr


class RandomVerticalFlip(PyTensorOperation):
    """Mirror the image top to bottom with probability ``prob``."""

    def __init__(self, prob=0.5):
        self.prob = _check_prob(prob)

    def __call__(self, img):
        arr = image_array(img)
        if generator_for(self).bernoulli(self.prob)[0]:
            return np.ascontiguousarray(arr[::-1])
        return arr


class RandomCrop(PyTensorOperation):
    """A random ``size`` region of the image, after padding it by ``padding`` (see ``Pad``)
    and, with ``pad_if_needed``, up to ``size``."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0,
                 padding_mode=Border.CONSTANT):
        self.size = size_arg(size)
        self.padding = None if padding is None else padding_arg(padding)
        if not isinstance(pad_if_needed, bool):
            raise TypeError(f"pad_if_needed: expected a bool, got {type(pad_if_needed).__name__}")
        self.pad_if_needed = pad_if_needed
        self.fill_value = fill_arg(fill_value)
        if not isinstance(padding_mode, Border):
            raise TypeError(f"padding_mode: expected a Border value, got {padding_mode!r}")
        self.padding_mode = padding_mode

    def __call__(self, img):
        arr = image_array(img)
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        if self.padding is not None:
            arr = pad_image(arr, *self.padding, self.fill_value, self.padding_mode)
        h, w = arr.shape[:2]
        if self.pad_if_needed and (h < th or w < tw):
            ph, pw = max(th - h, 0), max(tw - w, 0)
            arr = pad_image(arr, pw, ph, pw, ph, self.fill_value, self.padding_mode)
            h, w = arr.shape[:2]
        if h < th or w < tw:
            raise RuntimeError(f"RandomCrop: the crop size {(th, tw)} is larger than the image "
                               f"{(h, w)}; set pad_if_needed=True or padding")
        gen = generator_for(self)
        left = int(gen.uniform_int(0, w - tw)[0])
        top = int(gen.uniform_int(0, h - th)[0])
        return arr[top:top + th, left:left + tw]


def _pair(value, name, low=None):
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise TypeError(f"{name}: expected a (min, max) pair, got {value!r}")
    lo, hi = (number_arg(x, name) for x in value)
    if lo > hi:
        raise ValueError(f"{name}: min must not exceed max, got {value!r}")
    if low is not None and lo < low:
        raise ValueError(f"{name}: values must be >= {low}, got {value!r}")
    return lo, hi


class RandomResizedCrop(PyTensorOperation):
    """A random region (area a fraction ``scale`` of the image, aspect ratio in ``ratio``)
    resized to ``size``; after ``max_attempts`` draws that do not fit, the central region of
    the nearest allowed ratio."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.),
                 interpolation=Inter.BILINEAR, max_attempts=10):
        self.size = size_arg(size)
        self.scale = _pair(scale, "scale", 0)
        self.ratio = _pair(ratio, "ratio")
        if self.ratio[0] <= 0:
            raise ValueError(f"ratio: values must be positive, got {ratio!r}")
        self.interpolation = check_inter(interpolation)
        if not isinstance(max_attempts, int) or isinstance(max_attempts, bool):
            raise TypeError(f"max_attempts: expected an int, got {max_attempts!r}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts: expected a positive int, got {max_attempts}")
        self.max_attempts = max_attempts

    def _box(self, h, w, gen):
        log_lo, log_hi = math.log(self.ratio[0]), math.log(self.ratio[1])
        for _ in range(self.max_attempts):
            scale = float(gen.uniform_float(*self.scale)[0])
            aspect = math.exp(float(gen.uniform_float(log_lo, log_hi)[0]))
            cw = int(round(math.sqrt(h * w * scale * aspect)))
            ch = int(round(cw / aspect))
            if 0 < cw <= w and 0 < ch <= h:
                left = int(gen.uniform_int(0, w - cw)[0])
                top = int(gen.uniform_int(0, h - ch)[0])
                return top, left, ch, cw
        img_ratio = w / h
        if img_ratio < self.ratio[0]:
            cw, ch = w, int(round(w / self.ratio[0]))
        elif img_ratio > self.ratio[1]:
            ch, cw = h, int(round(h * self.ratio[1]))
        else:
            cw, ch = w, h
        return (h - ch) // 2, (w - cw) // 2, ch, cw

    def __call__(self, img):
        arr = image_array(img)
        top, left, ch, cw = self._box(arr.shape[0], arr.shape[1], generator_for(self))
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        return utils.resize(arr[top:top + ch, left:left + cw], th, tw, self.interpolation)


class RandomRotation(PyTensorOperation):
    """The image rotated by a random angle in ``degrees`` (a number ``d``: ``(-d, d)``, or a
    (min, max) pair); see ``Rotate`` for the other arguments."""

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None,
                 fill_value=0):
        if isinstance(degrees, numbers.Real) and not isinstance(degrees, bool):
            if degrees < 0:
                raise ValueError(f"degrees: a single number must be >= 0, got {degrees}")
            degrees = (-float(degrees), float(degrees))
        self.degrees = _pair(degrees, "degrees")
        self.resample = check_inter(resample)
        if not isinstance(expand, bool):
            raise TypeError(f"expand: expected a bool, got {type(expand).__name__}")
        self.expand, self.center = expand, check_center(center)
        self.fill_value = fill_arg(fill_value)

    def __call__(self, img):
        arr = image_array(img)
        angle = float(generator_for(self).uniform_float(*self.degrees)[0])
        return rotate(arr, angle, self.resample, self.expand, self.center, self.fill_value)


class RandomGrayscale(PyTensorOperation):
    """With probability ``prob``, the image in grey, keeping its number of channels."""

    def __init__(self, prob=0.1):
        self.prob = _check_prob(prob)

    def __call__(self, img):
        arr = image_array(img)
        if not generator_for(self).bernoulli(self.prob)[0]:
            return arr
        channels = 1 if arr.ndim == 2 else arr.shape[-1]
        return grayscale(arr, 3 if channels == 3 else 1)




class RandomCropDecodeResize(RandomResizedCrop):
    """``Decode`` then ``RandomResizedCrop`` with the same arguments, in one operation (the
    random region is drawn as ``RandomResizedCrop`` draws it)."""

    def __call__(self, img):
        return super().__call__(decode(img))


def _erasing_args(prob, scale, ratio, value, inplace, max_attempts):
    """RandomErasing's argument checks, with MindSpore's exception types and messages."""
    if isinstance(prob, bool) or not isinstance(prob, (float, int)):
        raise argument_type_error(prob, [float, int], "prob")
    for pair, name in ((scale, "scale"), (ratio, "ratio")):
        if not isinstance(pair, (list, tuple)):
            raise argument_type_error(pair, [list, tuple], name)
        for x in pair:
            if isinstance(x, bool) or not isinstance(x, (float, int)):
                raise argument_type_error(x, [float, int], name)
        if len(pair) != 2:
            raise TypeError(f"{name} should be a list or tuple of length 2.")
    if isinstance(value, bool) or not isinstance(value, (int, list, tuple, str)):
        raise argument_type_error(value, [int, list, tuple, str], "value")
    if not isinstance(inplace, bool):
        raise argument_type_error(inplace, [bool], "inplace")
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int):
        raise argument_type_error(max_attempts, [int], "max_attempts")
    if not (isinstance(value, int) or value == "random"
            or (isinstance(value, (list, tuple)) and len(value) == 3)):
        raise ValueError("The value for erasing should be either a single value, or a string "
                         "'random', or a sequence of 3 elements for RGB respectively.")
    if not 0 <= prob <= 1:
        raise ValueError("Input prob is not within the required interval of [0.0, 1.0].")
    for pair, name in ((scale, "scale"), (ratio, "ratio")):
        if pair[0] > pair[1]:
            raise ValueError(f"{name} should be in (min,max) format. Got (max,min).")
        if pair[0] < 0 or (name == "scale" and pair[1] <= 0):
            raise ValueError(f"Input {name} is not within the required interval of "
                             f"[0, {_MAX_INT}].")
    if isinstance(value, int) and not 0 <= value <= 255:
        raise ValueError("Input is not within the required interval of [0, 255].")
    for x in value if isinstance(value, (list, tuple)) else ():
        if isinstance(x, bool) or not isinstance(x, int):
            raise argument_type_error(x, [int], "value")
        if not 0 <= x <= 255:
            raise ValueError("Input value is not within the required interval of [0, 255].")
    if not 1 <= max_attempts <= _MAX_INT:
        raise ValueError(f"Input is not within the required interval of [1, {_MAX_INT}].")


class RandomErasing(PyTensorOperation):
    """With probability ``prob``, set a random rectangle of a CHW image to ``value`` (an
    int, three per-channel ints, or ``'random'``: standard normal draws): its area a
    fraction ``scale`` of the image, its aspect ratio in ``ratio``; after ``max_attempts``
    draws that do not fit inside the image, the image is returned unchanged."""

    def __init__(self, prob=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False,
                 max_attempts=10):
        _erasing_args(prob, scale, ratio, value, inplace, max_attempts)
        self.prob, self.scale, self.ratio = float(prob), tuple(scale), tuple(ratio)
        self.value, self.inplace, self.max_attempts = value, inplace, max_attempts

    def _region(self, gen, c, h, w):
        """``(top, left, height, width)`` of the erased region, or None."""
        for _ in range(self.max_attempts):
            area = float(gen.uniform_float(*self.scale)[0]) * h * w
            aspect = float(gen.uniform_float(*self.ratio)[0])
            ew = int(round(math.sqrt(area * aspect)))
            eh = int(round(ew / aspect))
            if eh < h and ew < w:
                return (int(gen.uniform_int(0, h - eh)[0]), int(gen.uniform_int(0, w - ew)[0]),
                        eh, ew)
        return None

    def __call__(self, img):
        arr = image_array(img)
        if arr.ndim != 3:
            raise ValueError(f"RandomErasing: expected a (C, H, W) image, got shape "
                             f"{arr.shape}")
        gen = generator_for(self)
        if not gen.bernoulli(self.prob)[0]:
            return arr
        c, h, w = arr.shape
        region = self._region(gen, c, h, w)
        if region is None:
            return arr
        top, left, eh, ew = region
        if self.value == "random":
            fill = np.random.standard_normal((c, eh, ew))
        else:
            fill = np.asarray(self.value, np.float64).reshape(-1, 1, 1)
        out = arr if self.inplace and arr.flags.writeable else arr.copy()
        out[:, top:top + eh, left:left + ew] = fill
        return out
