"""Image ops: ``interpolate``/``upsample``, ``unfold``, ``extract_image_patches``,
``pixel_shuffle``/``pixel_unshuffle``, ``channel_shuffle``.

Resampling is separable: one (out, in) weight matrix per spatial axis (built on the host)
applied with a matmul, or an integer gather for the nearest modes.
"""
from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from mscore.common.tensor import Tensor
from mscore.ops._args import _check_tensor
from mscore.ops.array.indexing import getitem
from mscore.ops.array.manipulation import reshape, stack, swapaxes, transpose
from mscore.ops.linalg.products import matmul
from mscore.ops.nn.pad_modes import pad
from mscore.ops.nn.pooling import _ints, adaptive_avg


def _check_factor(value, name, cls):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"The '{name}' must be int, but got '{type(value).__name__}'")
    if value <= 0:
        raise ValueError(f"For '{cls}', '{name}' must be a positive int, got {value}")
    return int(value)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = _check_factor(upscale_factor, "upscale_factor", "pixel_shuffle")
    x = _check_tensor(input, "input")
    if x.ndim < 3:
        raise ValueError(f"For pixel_shuffle, the dimension of `input` should be larger than "
                         f"2, got {x.ndim}")
    *pre, c, h, w = x.shape
    if c % (r * r):
        raise ValueError(f"For 'pixel_shuffle', the length of third to last dimension {c} is "
                         f"not divisible by `upscale_factor` squared {r * r}")
    pre = tuple(pre)
    k = len(pre)
    y = reshape(x, pre + (c // (r * r), r, r, h, w))
    y = transpose(y, tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return reshape(y, pre + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = _check_factor(downscale_factor, "downscale_factor", "pixel_unshuffle")
    x = _check_tensor(input, "input")
    if x.ndim < 3:
        raise ValueError(f"For pixel_unshuffle, the dimension of `input` should be larger "
                         f"than 2, got {x.ndim}")
    *pre, c, h, w = x.shape
    if h % r or w % r:
        raise ValueError(f"For 'pixel_unshuffle', the length of second to last 2 dimension "
                         f"should be divisible by downscale_factor {r}, got ({h}, {w})")
    pre = tuple(pre)
    k = len(pre)
    y = reshape(x, pre + (c, h // r, r, w // r, r))
    y = transpose(y, tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return reshape(y, pre + (c * r * r, h // r, w // r))


def channel_shuffle(x, groups):
    """Channels of (N, C, *) regrouped: (N, groups, C // groups, -1) transposed to
    (N, C // groups, groups, -1) (MindSpore's arrangement)."""
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise TypeError(f"For ChannelShuffle, the param `groups` must be int, but got "
                        f"{type(groups)}.")
    if groups < 1:
        raise ValueError(f"For ChannelShuffle, the param `groups` must be larger than 0, but "
                         f"got {groups}.")
    x = _check_tensor(x, "x")
    if x.ndim < 2:
        raise ValueError(f"For ChannelShuffle, the input must be at least 2-d, got shape "
                         f"{x.shape}")
    n, c = x.shape[:2]
    y = reshape(x, (n, groups, c // groups, -1))
    return reshape(transpose(y, (0, 2, 1, 3)), x.shape)


# mode -> {input rank: the optional arguments it accepts} (MindSpore 2.10's table)
_SUPPORTED = {
    "nearest": {3: (), 4: (), 5: ("scale_factor",)},
    "linear": {3: ("align_corners",)},
    "bilinear": {4: ("align_corners",)},
    "bicubic": {4: ("align_corners",)},
    "area": {3: ("scale_factor",), 4: ("scale_factor",), 5: ("scale_factor",)},
    "nearest-exact": {3: (), 4: ()},
    "trilinear": {5: ("align_corners", "scale_factor")},
}


def _check_sizes(size, scale_factor, rank):
    cls = "interpolate"
    if size is not None and scale_factor is not None:
        raise ValueError(f"For '{cls}', 'size' and 'scale_factor' cannot be set simultaneously")
    if size is None and scale_factor is None:
        raise ValueError(f"For '{cls}', 'size' and 'scale_factor' cannot be both empty")
    nd = rank - 2
    if size is not None:
        if isinstance(size, list):
            size = tuple(size)
        if not isinstance(size, tuple):
            size = (size,) * nd
        if not builtins.all(isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                            and s > 0 for s in size):
            raise ValueError(f"For '{cls}', 'size' must hold positive ints, got {size}")
        if len(size) != nd:
            raise ValueError(f"For '{cls}', 'size' must have {nd} elements for a {rank}-d "
                             f"input, got {size}")
        return tuple(int(s) for s in size), None
    if isinstance(scale_factor, list):
        scale_factor = tuple(scale_factor)
    if not isinstance(scale_factor, tuple):
        scale_factor = (scale_factor,) * nd
    if not builtins.all(isinstance(s, numbers.Real) and not isinstance(s, bool) and s > 0
                        for s in scale_factor):
        raise ValueError(f"For '{cls}', 'scale_factor' must hold positive floats, got "
                         f"{scale_factor}")
    if len(scale_factor) != nd:
        raise ValueError(f"For '{cls}', 'scale_factor' must have {nd} elements for a "
                         f"{rank}-d input, got {scale_factor}")
    return None, tuple(float(s) for s in scale_factor)


def interpolate(input, size=None, scale_factor=None, mode="nearest",
                align_corners=None, recompute_scale_factor=None):
    """Resize the spatial axes of a 3-5-d (N, C, *) input, as MindSpore 2.10 does:
    'nearest' (src = floor(dst * in / out)), 'nearest-exact' (half-pixel), 'linear' /
    'bilinear' / 'trilinear' (half-pixel, or ``align_corners``), 'bicubic' (TensorFlow's
    kernel: a = -0.5 half-pixel, -0.75 with ``align_corners``) and 'area' (adaptive
    average). ``scale_factor`` is accepted where MindSpore accepts it (5-d nearest,
    trilinear, area) or with ``recompute_scale_factor=True``; the output size is
    floor(in * scale_factor)."""
    cls = "interpolate"
    if not isinstance(input, Tensor):
        raise TypeError(f"For '{cls}', 'input' must be a tensor, but got {type(input)}")
    if mode not in _SUPPORTED:
        raise ValueError(f"For '{cls}', 'mode' must be one of {list(_SUPPORTED)}, got {mode!r}")
    rank = input.ndim
    size, scale_factor = _check_sizes(size, scale_factor, rank)
    accepted = _SUPPORTED[mode]
    if rank not in accepted:
        raise ValueError(f"For '{cls}', mode {mode!r} supports {sorted(accepted)}-d inputs, "
                         f"got a {rank}-d input")
    spatial = input.shape[2:]
    if mode == "area" and size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        if not isinstance(recompute_scale_factor, bool):
            raise TypeError(f"For '{cls}', 'recompute_scale_factor' must be a bool")
        if size is not None:
            raise ValueError(f"For '{cls}', it is incorrect to set 'recompute_scale_factor' to "
                             f"True after specifying an explicit 'size'.")
        size = tuple(int(math.floor(s * f)) for s, f in zip(spatial, scale_factor))
        scale_factor = None
    elif scale_factor is not None and "scale_factor" not in accepted[rank]:
        raise ValueError(f"For '{cls}', 'scale_factor' option cannot currently be set with the "
                         f"mode = {mode} and dim = {rank}D.")
    if align_corners is not None:
        if not isinstance(align_corners, bool):
            raise TypeError(f"For '{cls}', 'align_corners' must be a bool, got "
                            f"{type(align_corners).__name__}")
        if "align_corners" not in accepted[rank]:
            raise ValueError(f"For '{cls}', 'align_corners' option can only be set with the "
                             f"interpolating modes: linear | bilinear | bicubic | trilinear, "
                             f"got mode {mode!r}")
    align = bool(align_corners)
    if size is None:
        size = tuple(int(math.floor(s * f)) for s, f in zip(spatial, scale_factor))
        ratios = tuple(1.0 / f for f in scale_factor)
    else:
        ratios = tuple(s / o for s, o in zip(spatial, size))
    if mode == "area":
        return adaptive_avg(input, size)
    x = input
    for k, (n_in, n_out, ratio) in enumerate(zip(spatial, size, ratios)):
        ax = 2 + k
        if mode in ("nearest", "nearest-exact"):
            src = _nearest_index(n_in, n_out, ratio, mode == "nearest-exact")
            x = getitem(x, (builtins.slice(None),) * ax + (Tensor(src),))
        else:
            if not x.dtype.is_floating:
                raise TypeError(f"For '{cls}', mode {mode!r} needs a floating-point input, "
                                f"got {x.dtype}")
            m = _cubic_matrix(n_in, n_out, ratio, align) if mode == "bicubic" else \
                _linear_matrix(n_in, n_out, ratio, align)
            x = _apply_along(x, ax, m)
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest",
             align_corners=None, recompute_scale_factor=None):
    """Alias of :func:`interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


def _nearest_index(n_in, n_out, ratio, half_pixel):
    dst = np.arange(n_out, dtype=np.float64)
    src = np.floor((dst + 0.5) * ratio) if half_pixel else np.floor(dst * ratio)
    return np.clip(src, 0, n_in - 1).astype(np.int64)


def _source_coords(n_in, n_out, ratio, align):
    dst = np.arange(n_out, dtype=np.float64)
    if align:
        return dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    return (dst + 0.5) * ratio - 0.5


def _linear_matrix(n_in, n_out, ratio, align):
    src = np.maximum(_source_coords(n_in, n_out, ratio, align), 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    w = src - lo
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    np.add.at(m, (rows, lo), 1.0 - w)
    np.add.at(m, (rows, hi), w)
    return m


def _cubic_weights(t, a):
    t = np.abs(t)
    return np.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                    np.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0))


def _cubic_matrix(n_in, n_out, ratio, align):
    """TensorFlow's bicubic resize: with half-pixel centres the Keys kernel (a = -0.5) and
    taps outside the input dropped and the rest renormalised; with ``align_corners`` the
    legacy kernel (a = -0.75) with clamped taps."""
    src = _source_coords(n_in, n_out, ratio, align)
    base = np.floor(src).astype(np.int64)
    # TensorFlow reads the kernel from a 1024-step table: the fraction is rounded to it.
    frac = np.round((src - base) * 1024) / 1024
    m = np.zeros((n_out, n_in))
    a = -0.75 if align else -0.5
    for off in (-1, 0, 1, 2):
        idx = base + off
        w = _cubic_weights(frac - off, a)
        if not align:
            w = np.where((idx >= 0) & (idx < n_in), w, 0.0)
        np.add.at(m, (np.arange(n_out), np.clip(idx, 0, n_in - 1)), w)
    if not align:
        m = m / m.sum(axis=1, keepdims=True)
    return m


def _apply_along(x, ax, m):
    """``m`` (out, in) applied along axis ``ax`` of ``x``."""
    w = Tensor(m.T.astype(np.float32), dtype=x.dtype)
    last = ax == x.ndim - 1
    y = x if last else swapaxes(x, ax, -1)
    y = matmul(y, w)
    return y if last else swapaxes(y, ax, -1)


def _patch_slices(x, kernel, stride, dilation, outs):
    """For each kernel offset (row-major), the (N, C, *outs) strided slice it reads."""
    import itertools
    for offset in itertools.product(*(range(k) for k in kernel)):
        index = (builtins.slice(None), builtins.slice(None)) + tuple(
            builtins.slice(o * d, o * d + s * (n - 1) + 1, s)
            for o, d, s, n in zip(offset, dilation, stride, outs))
        yield getitem(x, index)


def _out_sizes(spatial, kernel, stride, dilation, pads):
    outs = []
    for n, k, s, d, (lo, hi) in zip(spatial, kernel, stride, dilation, pads):
        eff = d * (k - 1) + 1
        out = (n + lo + hi - eff) // s + 1
        if out <= 0:
            raise ValueError(f"the window {kernel} (dilation {dilation}) does not fit the "
                             f"input {tuple(spatial)}")
        outs.append(out)
    return tuple(outs)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C * kh * kw, L) sliding blocks, channel-major."""
    cls = "unfold"
    x = _check_tensor(input, "input")
    if x.ndim != 4:
        raise ValueError(f"For '{cls}', 'input' must be 4-d, got shape {x.shape}")
    kernel = _ints(kernel_size, 2, "kernel_size", cls)
    dil = _ints(dilation, 2, "dilation", cls)
    pad_hw = _ints(padding, 2, "padding", cls, minimum=0)
    st = _ints(stride, 2, "stride", cls)
    pads = tuple((p, p) for p in pad_hw)
    outs = _out_sizes(x.shape[2:], kernel, st, dil, pads)
    xp = pad(x, (pad_hw[1], pad_hw[1], pad_hw[0], pad_hw[0])) if builtins.any(pad_hw) else x
    cols = stack(list(_patch_slices(xp, kernel, st, dil, outs)), 2)   # (N, C, K, oh, ow)
    n, c = x.shape[:2]
    return reshape(cols, (n, c * math.prod(kernel), math.prod(outs)))


def extract_image_patches(x, ksizes, strides, rates, padding):
    """TensorFlow's extract_image_patches on NCHW: (N, C, H, W) -> (N, kh * kw * C, oh, ow),
    depth ordered (row offset, column offset, channel); 'same' pads so that
    oh = ceil(H / stride), 'valid' keeps windows inside the input."""
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    eff = [r * (k - 1) + 1 for k, r in zip(ksizes, rates)]
    if padding == "same":
        pads = []
        for size, e, s in zip(spatial, eff, strides):
            out = -(-size // s)
            total = builtins.max((out - 1) * s + e - size, 0)
            pads.append((total // 2, total - total // 2))
        x = pad(x, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
    else:
        pads = [(0, 0), (0, 0)]
    outs = _out_sizes(spatial, ksizes, strides, rates, pads)
    cols = stack(list(_patch_slices(x, ksizes, strides, rates, outs)), 1)  # (N, K, C, ...)
    return reshape(cols, (n, math.prod(ksizes) * c) + outs)
