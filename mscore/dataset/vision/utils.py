"""Enums of the image transforms and the pixel kernels they share.

MindSpore's image operations run on OpenCV; the kernels here follow OpenCV's documented
arithmetic so that results agree: bilinear resizing of uint8 images in 11-bit fixed point
(exact for downscaling; MindSpore's x86 build hands uint8 upscaling to Intel IPP, which rounds
some pixels one level differently), half-pixel centres, nearest neighbour as
``floor(x * scale)``, and affine warps with the inverse map in 10-bit fixed point.
"""
from __future__ import annotations

import enum

import numpy as np

__all__ = ["Inter", "Border", "ConvertMode", "ImageBatchFormat", "resize", "warp_affine"]


class Inter(enum.IntEnum):
    """Interpolation modes."""
    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, enum.Enum):
    """How padding fills: a constant, the edge value, a reflection without the edge
    (``REFLECT``) or with it (``SYMMETRIC``)."""
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


class ConvertMode(enum.IntEnum):
    """The colour conversions of ``ConvertColor``."""
    COLOR_BGR2BGRA = 0
    COLOR_BGRA2BGR = 1
    COLOR_BGR2RGBA = 2
    COLOR_RGBA2BGR = 3
    COLOR_BGR2RGB = 4
    COLOR_BGRA2RGBA = 5
    COLOR_BGR2GRAY = 6
    COLOR_RGB2GRAY = 7
    COLOR_GRAY2BGR = 8
    COLOR_GRAY2BGRA = 9
    COLOR_BGRA2GRAY = 10
    COLOR_RGBA2GRAY = 11
    COLOR_RGB2BGR = COLOR_BGR2RGB
    COLOR_RGBA2BGRA = COLOR_BGRA2RGBA
    COLOR_GRAY2RGB = COLOR_GRAY2BGR
    COLOR_GRAY2RGBA = COLOR_GRAY2BGRA


class ImageBatchFormat(enum.IntEnum):
    """Layouts of a batch of images."""
    NHWC = 0
    NCHW = 1


_COEF_SCALE = 2048   # OpenCV's INTER_RESIZE_COEF_SCALE (11 bits)


def _linear_taps(n_in, n_out):
    """Source indices and the weight of the second for each output position (half-pixel
    centres, computed in float32, clamped at the borders as OpenCV does)."""
    f = ((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5).astype(np.float32)
    s = np.floor(f).astype(np.int64)
    f = (f - s.astype(np.float32)).astype(np.float32)
    low, high = s < 0, s >= n_in - 1
    f[low | high] = 0
    s[low] = 0
    s[high] = n_in - 1
    return s, np.minimum(s + 1, n_in - 1), f


def _expand(weights, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return weights.reshape(shape)


def _resize_linear(img, th, tw):
    h, w = img.shape[:2]
    x0, x1, fx = _linear_taps(w, tw)
    y0, y1, fy = _linear_taps(h, th)
    nd = img.ndim
    if img.dtype == np.uint8:
        ax1 = np.rint(fx * _COEF_SCALE).astype(np.int64)
        ax0 = np.rint((1 - fx) * _COEF_SCALE).astype(np.int64)
        by1 = np.rint(fy * _COEF_SCALE).astype(np.int64)
        by0 = np.rint((1 - fy) * _COEF_SCALE).astype(np.int64)
        src = img.astype(np.int64)
        rows = src[:, x0] * _expand(ax0, 1, nd) + src[:, x1] * _expand(ax1, 1, nd)
        out = (((_expand(by0, 0, nd) * (rows[y0] >> 4)) >> 16) +
               ((_expand(by1, 0, nd) * (rows[y1] >> 4)) >> 16) + 2) >> 2
        return np.clip(out, 0, 255).astype(np.uint8)
    work = np.float64 if img.dtype == np.float64 else np.float32
    src = img.astype(work)
    fx, fy = fx.astype(work), fy.astype(work)
    rows = src[:, x0] * _expand(1 - fx, 1, nd) + src[:, x1] * _expand(fx, 1, nd)
    out = rows[y0] * _expand(1 - fy, 0, nd) + rows[y1] * _expand(fy, 0, nd)
    return _cast_like(out, img.dtype)


def _cast_like(values, dtype):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(values), info.min, info.max).astype(dtype)
    return values.astype(dtype)


def _resize_nearest(img, th, tw):
    h, w = img.shape[:2]
    rows = np.minimum(np.floor(np.arange(th) * (h / th)).astype(np.int64), h - 1)
    cols = np.minimum(np.floor(np.arange(tw) * (w / tw)).astype(np.int64), w - 1)
    return img[rows][:, cols]


def _cubic_weights(t, a=-0.75):
    t = np.abs(t)
    return np.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                    np.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0))


def _resize_cubic(img, th, tw):
    out = img.astype(np.float64)
    for axis, (n_in, n_out) in enumerate(((img.shape[0], th), (img.shape[1], tw))):
        pos = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
        base = np.floor(pos).astype(np.int64)
        frac = pos - base
        acc = 0
        for k in range(-1, 3):
            idx = np.clip(base + k, 0, n_in - 1)
            acc = acc + np.take(out, idx, axis=axis) * _expand(_cubic_weights(frac - k), axis,
                                                               out.ndim)
        out = acc
    return _cast_like(out, img.dtype)


def _area_matrix(n_in, n_out):
    """Weights of the input pixels each output pixel covers (areas of overlap)."""
    scale = n_in / n_out
    start = np.arange(n_out) * scale
    lo = np.arange(n_in)
    overlap = np.clip(np.minimum(lo[None, :] + 1, start[:, None] + scale) -
                      np.maximum(lo[None, :], start[:, None]), 0, None)
    return overlap / scale


def _resize_area(img, th, tw):
    h, w = img.shape[:2]
    if th > h or tw > w:
        return _resize_linear(img, th, tw)
    rows, cols = _area_matrix(h, th), _area_matrix(w, tw)
    out = np.tensordot(rows, img.astype(np.float64), axes=(1, 0))
    out = np.moveaxis(np.tensordot(cols, out, axes=(1, 1)), 0, 1)
    return _cast_like(out, img.dtype)


def resize(img, th, tw, interpolation):
    """``img`` (H x W or H x W x C) resized to ``th`` x ``tw``."""
    if interpolation is Inter.NEAREST:
        return _resize_nearest(img, th, tw)
    if interpolation in (Inter.BICUBIC, Inter.PILCUBIC):
        return _resize_cubic(img, th, tw)
    if interpolation in (Inter.AREA, Inter.ANTIALIAS):
        return _resize_area(img, th, tw)
    return _resize_linear(img, th, tw)


_AB_BITS = 10
_AB_SCALE = 1 << _AB_BITS


def warp_affine(img, matrix, out_h, out_w, interpolation, fill):
    """OpenCV's ``warpAffine``: ``matrix`` maps output (x, y) to input coordinates; outside
    the input the output is ``fill`` (a value, or one per channel)."""
    h, w = img.shape[:2]
    m = np.asarray(matrix, dtype=np.float64)
    ys, xs = np.mgrid[0:out_h, 0:out_w]
    if interpolation is Inter.NEAREST:
        x0 = np.rint((m[0, 1] * ys + m[0, 2]) * _AB_SCALE).astype(np.int64)
        y0 = np.rint((m[1, 1] * ys + m[1, 2]) * _AB_SCALE).astype(np.int64)
        dx = np.rint(m[0, 0] * xs * _AB_SCALE).astype(np.int64)
        dy = np.rint(m[1, 0] * xs * _AB_SCALE).astype(np.int64)
        sx = (x0 + dx + _AB_SCALE // 2) >> _AB_BITS
        sy = (y0 + dy + _AB_SCALE // 2) >> _AB_BITS
        inside = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
        out = np.empty((out_h, out_w) + img.shape[2:], dtype=img.dtype)
        out[...] = np.asarray(fill, dtype=img.dtype)
        out[inside] = img[sy[inside], sx[inside]]
        return out
    px = m[0, 0] * xs + m[0, 1] * ys + m[0, 2]
    py = m[1, 0] * xs + m[1, 1] * ys + m[1, 2]
    x0, y0 = np.floor(px).astype(np.int64), np.floor(py).astype(np.int64)
    fx, fy = px - x0, py - y0
    src = np.empty((h + 2, w + 2) + img.shape[2:], dtype=np.float64)
    src[...] = np.asarray(fill, dtype=np.float64)
    src[1:-1, 1:-1] = img
    acc = 0
    for oy, wy in ((0, 1 - fy), (1, fy)):
        for ox, wx in ((0, 1 - fx), (1, fx)):
            yy = np.clip(y0 + oy + 1, 0, h + 1)
            xx = np.clip(x0 + ox + 1, 0, w + 1)
            weight = wy * wx
            acc = acc + src[yy, xx] * (weight if img.ndim == 2 else weight[..., None])
    return _cast_like(acc, img.dtype)
