"""Array-level image operations and argument checks that the image transforms share
(:mod:`~mscore.dataset.vision.transforms`, :mod:`~mscore.dataset.vision.adjust`,
:mod:`~mscore.dataset.vision.random_transforms` build on them): image views, size, padding
and fill arguments, decoding, grey conversion, padding and rotation.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore.dataset.engine.datasets_vision import decode_image
from mscore.dataset.vision import utils
from mscore.dataset.vision.utils import Border, Inter


def number_arg(value, name):
    """``value`` as a float; ``TypeError`` naming ``name`` if it is not a real number."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    return float(value)


def is_pil(img):
    """True for a PIL image."""
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
    """``interpolation``, which must be an :class:`Inter` value."""
    if not isinstance(interpolation, Inter):
        raise TypeError(f"interpolation: expected an Inter value, got {interpolation!r}")
    return interpolation


def fill_arg(fill_value):
    """A fill value: an int in [0, 255] or a 3-tuple of them."""
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
    """``arr`` padded on each side, with ``fill`` (``Border.CONSTANT``) or by ``mode``."""
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    if mode is Border.CONSTANT:
        out = np.pad(arr, widths)
        fill = np.asarray(fill, dtype=arr.dtype)
        mask = np.ones(out.shape[:2], bool)
        mask[top:top + arr.shape[0], left:left + arr.shape[1]] = False
        out[mask] = fill if fill.ndim == 0 or arr.ndim == 3 else fill[0]
        return out
    return np.pad(arr, widths, mode=mode.value)


def crop_or_pad_center(arr, th, tw):
    """The central ``th`` x ``tw`` of ``arr``, padded with zeros where it is smaller."""
    h, w = arr.shape[:2]
    if th > h or tw > w:
        ph, pw = max(th - h, 0), max(tw - w, 0)
        arr = pad_image(arr, pw // 2, ph // 2, pw - pw // 2, ph - ph // 2)
        h, w = arr.shape[:2]
    top, left = (h - th) // 2, (w - tw) // 2
    return arr[top:top + th, left:left + tw]


def _gray_u8(arr):
    r, g, b = (arr[..., i].astype(np.int64) for i in range(3))
    return ((r * 4899 + g * 9617 + b * 1868 + 8192) >> 14).astype(np.uint8)


def gray(arr, order="rgb"):
    """The grey values of an RGB (or, ``order="bgr"``, BGR) image, with OpenCV's weights."""
    rgb = arr[..., :3] if order == "rgb" else arr[..., 2::-1]
    if arr.dtype == np.uint8:
        return _gray_u8(rgb)
    r, g, b = (rgb[..., i].astype(np.float32) for i in range(3))
    return (r * np.float32(0.299) + g * np.float32(0.587) + b * np.float32(0.114)).astype(
        arr.dtype)


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
    """A rotation centre: None or an (x, y) pair of numbers."""
    if center is None:
        return None
    if not isinstance(center, (list, tuple)) or len(center) != 2:
        raise TypeError(f"center: expected (x, y), got {center!r}")
    return tuple(number_arg(c, "center") for c in center)


def rotate(arr, degrees, resample, expand, center, fill):
    """``arr`` rotated ``degrees`` counter-clockwise (see :func:`rotation_matrix`)."""
    inv, out_h, out_w = rotation_matrix(arr.shape[0], arr.shape[1], degrees, center, expand)
    return utils.warp_affine(arr, inv, out_h, out_w, resample, fill)


def decode(img):
    """An encoded image (a 1-D uint8 array, or bytes) decoded to an RGB H x W x 3 uint8
    array."""
    if isinstance(img, bytes):
        img = np.frombuffer(img, np.uint8)
    arr = np.asarray(img)
    if arr.ndim != 1:
        raise TypeError(f"Decode: the encoded image should be 1-D, got {arr.ndim} "
                        f"dimensions")
    try:
        return decode_image(arr)
    except ValueError as exc:
        raise RuntimeError(f"Decode: {exc}") from None


def grayscale(img, num_output_channels):
    """A PIL image (or an RGB array) converted to grey (Pillow's ``L`` mode), with 1 or 3
    output channels."""
    if is_pil(img):
        grey = img.convert("L")
        return grey if num_output_channels == 1 else grey.convert("RGB")
    arr = image_array(img)
    if arr.ndim == 2:
        grey = arr
    else:
        rgb = arr[..., :3].astype(np.int64)
        grey = ((rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000)
                >> 16).astype(arr.dtype)
    return grey if num_output_channels == 1 else np.repeat(grey[..., None], 3, -1)
