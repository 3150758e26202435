"""Padding with MindSpore's modes: constant (negative widths crop), reflect, symmetric,
replicate (edge) and circular, built on slicing and integer-index gathers so every backend
computes and differentiates them.

``pad_axes(x, widths, mode, value)`` takes one ``(before, after)`` pair per axis (first axis
first); :func:`torch_style_widths` turns the ``(left, right, top, bottom, ...)`` tuples of
``ops.pad`` and the ``nn.*Pad*d`` layers into that form.
"""
from __future__ import annotations

import builtins

import numpy as np

from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops import functional as F

_wrap = Tensor._wrap

MODES = ("constant", "reflect", "symmetric", "replicate", "circular")


def torch_style_widths(padding, ndim):
    """``(left, right, top, bottom, ...)`` (last axis first) as one pair per axis of an
    ``ndim``-d tensor, first axis first."""
    widths = [(0, 0)] * ndim
    for i in range(len(padding) // 2):
        widths[ndim - 1 - i] = (int(padding[2 * i]), int(padding[2 * i + 1]))
    return tuple(widths)


def source_index(size, before, after, mode):
    """For each position of a padded axis, the position of the input it copies
    (``size`` input elements, ``before``/``after`` >= 0 added)."""
    pos = np.arange(-before, size + after)
    if mode == "replicate":
        return np.clip(pos, 0, size - 1)
    if mode == "circular":
        return pos % size
    if mode == "reflect":       # mirror without repeating the edge: 2 1 | 0 1 2 | 1 0
        period = 2 * (size - 1)
        if period == 0:
            return np.zeros_like(pos)
        pos = pos % period
        return np.where(pos < size, pos, period - pos)
    period = 2 * size           # symmetric: mirror repeating the edge: 1 0 | 0 1 2 | 2 1
    pos = pos % period
    return np.where(pos < size, pos, period - 1 - pos)


def check_widths(shape, widths, mode, cls):
    """ValueError (MindSpore's type) when a mode cannot pad that much."""
    for ax, ((lo, hi), size) in enumerate(zip(widths, shape)):
        if mode == "constant":
            if size + lo + hi < 0 or (lo < -size or hi < -size):
                raise ValueError(f"For '{cls}', padding {(lo, hi)} of axis {ax} would leave "
                                 f"a negative size (the axis has {size})")
            continue
        if lo < 0 or hi < 0:
            raise ValueError(f"For '{cls}', mode {mode!r} needs non-negative padding, got "
                             f"{(lo, hi)} for axis {ax}")
        if mode == "reflect" and (lo or hi) and builtins.max(lo, hi) >= size:
            raise ValueError(f"For '{cls}', reflect padding {(lo, hi)} of axis {ax} must be "
                             f"less than its size {size}")
        if mode in ("symmetric", "circular") and builtins.max(lo, hi) > size:
            raise ValueError(f"For '{cls}', {mode} padding {(lo, hi)} of axis {ax} must not "
                             f"exceed its size {size}")
        if size == 0 and (lo or hi):
            raise ValueError(f"For '{cls}', cannot pad the empty axis {ax} in mode {mode!r}")


def pad_axes(x, widths, mode="constant", value=0, cls="pad"):
    """``x`` padded by ``widths`` (one ``(before, after)`` per axis) in ``mode``."""
    check_widths(x.shape, widths, mode, cls)
    if mode == "constant":
        return _pad_constant(x, widths, value)
    out = x
    for ax, (lo, hi) in enumerate(widths):
        if lo == 0 and hi == 0:
            continue
        idx = source_index(out.shape[ax], lo, hi, mode)
        out = F.getitem(out, (builtins.slice(None),) * ax + (Tensor(idx.astype(np.int64)),))
    return out


def _pad_constant(x, widths, value):
    crop = tuple(builtins.slice(-lo if lo < 0 else 0, s + hi if hi < 0 else s)
                 for (lo, hi), s in zip(widths, x.shape))
    if builtins.any(lo < 0 or hi < 0 for lo, hi in widths):
        x = F.getitem(x, crop)
    grow = tuple((builtins.max(lo, 0), builtins.max(hi, 0)) for lo, hi in widths)
    if not builtins.any(lo or hi for lo, hi in grow):
        return x
    fill = 0 if value is None else value
    if x.dtype.is_floating:
        fill = float(fill)
    elif x.dtype.is_bool:
        fill = bool(fill)
    else:
        fill = int(fill)
    return _wrap(call("pad", x._data, grow, value=fill))


__all__ = []
