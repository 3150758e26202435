"""Padding: ``pad`` (constant, reflect, symmetric, replicate, circular), the width
conventions it accepts, and the ``Pad`` Primitive.

Negative constant widths crop. The modes are built on slicing and integer-index gathers,
so every backend computes and differentiates them. ``pad_axes(x, widths, mode, value)``
takes one ``(before, after)`` pair per axis (first axis first); :func:`torch_style_widths`
turns the ``(left, right, top, bottom, ...)`` tuples of ``ops.pad`` and the ``nn.*Pad*d``
layers into that form.
"""
from __future__ import annotations

import builtins

import numpy as np

from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _check_tensor
from mscore.ops.array.indexing import getitem
from mscore.ops.primitive_base import Primitive, check_int

_wrap = Tensor._wrap


def pad(input_x, padding, mode="constant", value=None):
    """Pad the last ``len(padding) // 2`` axes, torch-style ``padding`` (last axis first:
    (left, right, top, ...)). ``mode``: 'constant' (``value``, default 0; negative widths
    crop), 'reflect', 'replicate' or 'circular' (these pad the last 1-3 axes of a 3-5-d
    input, as MindSpore's PadV3 does)."""
    x = _check_tensor(input_x, "input_x")
    if isinstance(padding, Tensor):
        padding = tuple(int(v) for v in padding.asnumpy().reshape(-1))
    if not isinstance(padding, (tuple, list)) or not builtins.all(
            isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in padding):
        raise TypeError(f"For 'pad', 'padding' must be a tuple or list of ints, got {padding!r}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ValueError(f"For 'pad', 'mode' must be one of 'constant', 'reflect', "
                         f"'replicate', 'circular', got {mode!r}")
    if len(padding) % 2:
        raise ValueError(f"For 'pad', the size of padding must be divisible by 2, got "
                         f"{len(padding)}")
    n = len(padding) // 2
    if n > x.ndim:
        raise ValueError(f"For 'pad', padding {tuple(padding)} covers {n} axes but the input "
                         f"has {x.ndim}")
    if mode != "constant":
        if value is not None:
            raise ValueError(f"For 'pad', 'value' is only used in 'constant' mode, got mode "
                             f"{mode!r}")
        if n > 3 or x.ndim != n + 2:
            raise ValueError(f"For 'pad', mode {mode!r} pads the last 1-3 axes of a 3-5-d "
                             f"input (padding of {2 * n} values needs a {n + 2}-d input), "
                             f"got a {x.ndim}-d input")
    widths = torch_style_widths(padding, x.ndim)
    return pad_axes(x, widths, mode, value, "pad")


class Pad(Primitive):
    """``Pad(paddings)(x)``: constant zero padding, ``paddings[i] = (before, after)`` for
    axis i."""

    def __init__(self, paddings):
        super().__init__()
        if not isinstance(paddings, (tuple, list)) or not all(
                isinstance(p, (tuple, list)) and len(p) == 2 for p in paddings):
            raise TypeError(f"Pad: paddings must be a tuple of (before, after) pairs, got "
                            f"{paddings!r}")
        self.paddings = tuple((check_int(a, "paddings", "Pad"), check_int(b, "paddings",
                                                                          "Pad"))
                              for a, b in paddings)

    def compute(self, input_x):
        x = _check_tensor(input_x, "input_x")
        if len(self.paddings) != x.ndim:
            raise ValueError(f"Pad: paddings has {len(self.paddings)} pairs for a {x.ndim}-d "
                             f"input")
        flat = tuple(v for pair in reversed(self.paddings) for v in pair)
        return pad(x, flat)


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
        out = getitem(out, (builtins.slice(None),) * ax + (Tensor(idx.astype(np.int64)),))
    return out


def _pad_constant(x, widths, value):
    crop = tuple(builtins.slice(-lo if lo < 0 else 0, s + hi if hi < 0 else s)
                 for (lo, hi), s in zip(widths, x.shape))
    if builtins.any(lo < 0 or hi < 0 for lo, hi in widths):
        x = getitem(x, crop)
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
