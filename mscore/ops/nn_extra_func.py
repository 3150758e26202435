"""More of MindSpore's neural-network functions: shrink/threshold activations, ``softmin``,
``rrelu``, channel dropout (``dropout1d/2d/3d``), ``group_norm``, ``instance_norm``,
``lrn``, ``pixel_shuffle``/``pixel_unshuffle``, ``channel_shuffle``, ``bidense`` and
``roll``, composed from the functional ops so every backend computes and differentiates
them."""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from mscore.common import dtype as mdt
from mscore.common._errors import tensor_hint
from mscore.common.tensor import Tensor
from mscore.ops import functional as F


def _real(value, name, cls):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{cls}', the type of '{name}' must be float or int, got "
                        f"{type(value).__name__}")
    return float(value)


def _float_tensor(x, name, cls):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{cls}', '{name}' must be a Tensor, got {type(x).__name__}"
                        f"{tensor_hint(x)}")
    if not x.dtype.is_floating:
        raise TypeError(f"For '{cls}', '{name}' must be a floating-point Tensor, got {x.dtype}")
    return x


# -- activations ---------------------------------------------------------------------------------
def hardshrink(input, lambd=0.5):  # noqa: A002
    """``x`` where ``|x| > lambd``, 0 elsewhere."""
    x = _float_tensor(input, "input", "hardshrink")
    lambd = _real(lambd, "lambd", "hardshrink")
    return F.where(F.greater(F.abs(x), lambd), x, 0.0)


def softshrink(input, lambd=0.5):  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between
    (``lambd`` >= 0; MindSpore's kernel raises RuntimeError otherwise)."""
    x = _float_tensor(input, "input", "softshrink")
    lambd = _real(lambd, "lambd", "softshrink")
    if lambd < 0:
        raise RuntimeError(f"For 'SoftShrink', the values for lambd should be greater or "
                           f"equal to 0, but found to be [{lambd:g}]")
    return F.where(F.greater(x, lambd), F.sub(x, lambd),
                   F.where(F.less(x, -lambd), F.add(x, lambd), 0.0))


def tanhshrink(input):  # noqa: A002
    """``x - tanh(x)`` (integer inputs compute in float32)."""
    x = F._check_tensor(input, "input")
    if not x.dtype.is_floating:
        x = F.cast(x, mdt.float32)
    return F.sub(x, F.tanh(x))


def threshold(input, thr, value):  # noqa: A002
    """``x`` where ``x > thr``, ``value`` elsewhere (in the input's dtype)."""
    x = F._check_tensor(input, "input")
    thr = _real(thr, "thr", "threshold")
    value = _real(value, "value", "threshold")
    if not x.dtype.is_floating:
        value = int(value)
    return F.where(F.greater(x, thr), x, value)


def softmin(x, axis=-1, *, dtype=None):
    """``softmax(-x)`` along ``axis``."""
    F._check_tensor(x, "x")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer, tuple)):
        raise TypeError(f"For 'Softmax', the type of 'axis' must be an int or a tuple of "
                        f"ints, got {type(axis).__name__}")
    if dtype is not None:
        x = F.cast(x, dtype)
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError(f"For 'softmin', 'axis' must hold one axis, got {axis}")
        axis = axis[0]
    return F.softmax(F.neg(x), int(axis))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=True):  # noqa: A002
    """Randomized leaky ReLU: negative values scaled by a slope drawn uniformly from
    [lower, upper) per element (``training``), by (lower + upper) / 2 otherwise."""
    upper = _real(upper, "upper", "rrelu")
    lower = _real(lower, "lower", "rrelu")
    if lower > upper:
        raise ValueError(f"For 'rrelu', the value of 'upper' must be greater than or equal to "
                         f"'lower', got upper: {upper}, lower: {lower}")
    x = F._check_tensor(input, "input")
    if training:
        slope = F.cast(F.uniform(x.shape, lower, upper), x.dtype)
    else:
        slope = (lower + upper) / 2
    return F.where(F.less(x, 0), F.mul(x, slope), x)


# -- channel dropout -----------------------------------------------------------------------------
def _p(p, cls):
    if not isinstance(p, float):
        raise TypeError(f"For '{cls}', the type of 'p' must be float, got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"For '{cls}', the 'p' must be a number in range [0, 1], got {p}")
    return p


def channel_dropout(x, p, training, ndim_ok, cls):
    """Zero whole channels (axis 1, or axis 0 of an unbatched input) with probability
    ``p``, scaling the rest by 1 / (1 - p)."""
    x = F._check_tensor(x, "input")
    if x.ndim not in ndim_ok:
        raise ValueError(f"For '{cls}', the input must be "
                         f"{' or '.join(f'{n}-d' for n in ndim_ok)}, got shape {x.shape}")
    if not training or p == 0:
        return x
    if p == 1:
        return F.zeros_like(x)
    unbatched = x.ndim == ndim_ok[0] and len(ndim_ok) > 1
    lead = 1 if unbatched else 2
    mask_shape = x.shape[:lead] + (1,) * (x.ndim - lead)
    u = F.uniform(mask_shape, 0.0, 1.0, dtype=mdt.float32)
    keep = F.greater_equal(u, p)
    return F.where(keep, F.mul(x, 1.0 / (1.0 - p)), 0.0)


def dropout1d(input, p=0.5, training=True):  # noqa: A002
    """Channel dropout of (N, C, L) or (C, L)."""
    _p(p, "dropout1d")
    return channel_dropout(input, p, training, (2, 3), "dropout1d")


def dropout2d(input, p=0.5, training=True):  # noqa: A002
    """Channel dropout of (N, C, H, W)."""
    _p(p, "dropout2d")
    return channel_dropout(input, p, training, (4,), "dropout2d")


def dropout3d(input, p=0.5, training=True):  # noqa: A002
    """Channel dropout of (N, C, D, H, W)."""
    _p(p, "dropout3d")
    return channel_dropout(input, p, training, (5,), "dropout3d")


# -- normalisation ---------------------------------------------------------------------------------
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):  # noqa: A002
    """Normalise (N, C, *) over each group of ``C // num_groups`` channels and the spatial
    axes (biased variance), then scale by ``weight`` and shift by ``bias`` per channel."""
    x = _float_tensor(input, "input", "group_norm")
    if x.ndim < 2:
        raise ValueError(f"For 'group_norm', 'input' must be at least 2-d (N, C, ...), got "
                         f"shape {x.shape}")
    n, c = x.shape[:2]
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)) or \
            num_groups <= 0 or c % num_groups:
        raise ValueError(f"For 'group_norm', 'num_groups' must be a positive int dividing the "
                         f"{c} channels, got {num_groups!r}")
    g = F.reshape(x, (n, int(num_groups), -1))
    m = F.mean(g, 2, True)
    d = F.sub(g, m)
    v = F.mean(F.mul(d, d), 2, True)
    out = F.reshape(F.mul(d, F.rsqrt(F.add(v, float(eps)))), x.shape)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and tuple(t.shape) != (c,):
            raise ValueError(f"For 'group_norm', '{name}' must have shape ({c},), got "
                             f"{t.shape}")
    if weight is not None:
        out = F.mul(out, F.reshape(F.cast(weight, x.dtype), bshape))
    if bias is not None:
        out = F.add(out, F.reshape(F.cast(bias, x.dtype), bshape))
    return out


def instance_norm(x, eps=1e-5):
    """Each (sample, channel) plane of (N, C, *) normalised by its own mean and (biased)
    variance; returns ``(out, mean, var)`` with the statistics shaped (N, C)."""
    x = _float_tensor(x, "x", "instance_norm")
    axes = tuple(range(2, x.ndim))
    m = F.mean(x, axes, True)
    d = F.sub(x, m)
    v = F.mean(F.mul(d, d), axes, True)
    out = F.mul(d, F.rsqrt(F.add(v, float(eps))))
    return out, F.reshape(m, x.shape[:2]), F.reshape(v, x.shape[:2])


def lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
    """Local response normalisation across channels of (N, C, H, W):
    ``x / (bias + alpha * sum of x^2 over channels c-r..c+r) ** beta``."""
    cls = "LRN"
    if isinstance(depth_radius, bool) or not isinstance(depth_radius, (int, np.integer)):
        raise TypeError(f"For '{cls}', the type of 'depth_radius' must be int, got "
                        f"{type(depth_radius).__name__}")
    if depth_radius < 0:
        raise ValueError(f"For '{cls}', 'depth_radius' must be >= 0, got {depth_radius}")
    for name, v in (("bias", bias), ("alpha", alpha), ("beta", beta)):
        if not isinstance(v, float):
            raise TypeError(f"For '{cls}', the type of '{name}' must be float, got "
                            f"{type(v).__name__}")
    if norm_region != "ACROSS_CHANNELS":
        raise ValueError(f"For '{cls}', the 'norm_region' must be in ['ACROSS_CHANNELS'], got "
                         f"{norm_region!r}")
    x = _float_tensor(x, "input_x", cls)
    if x.ndim != 4:
        raise ValueError(f"For '{cls}', the rank of input must be 4, got {x.ndim}")
    r = int(depth_radius)
    c = x.shape[1]
    sq = F.pad(F.mul(x, x), (0, 0, 0, 0, r, r))
    total = None
    for k in range(2 * r + 1):
        part = F.getitem(sq, (builtins.slice(None), builtins.slice(k, k + c)))
        total = part if total is None else F.add(total, part)
    return F.div(x, F.pow(F.add(F.mul(total, float(alpha)), float(bias)), float(beta)))


# -- rearrangements ------------------------------------------------------------------------------
def _check_factor(value, name, cls):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"The '{name}' must be int, but got '{type(value).__name__}'")
    if value <= 0:
        raise ValueError(f"For '{cls}', '{name}' must be a positive int, got {value}")
    return int(value)


def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = _check_factor(upscale_factor, "upscale_factor", "pixel_shuffle")
    x = F._check_tensor(input, "input")
    if x.ndim < 3:
        raise ValueError(f"For pixel_shuffle, the dimension of `input` should be larger than "
                         f"2, got {x.ndim}")
    *pre, c, h, w = x.shape
    if c % (r * r):
        raise ValueError(f"For 'pixel_shuffle', the length of third to last dimension {c} is "
                         f"not divisible by `upscale_factor` squared {r * r}")
    pre = tuple(pre)
    k = len(pre)
    y = F.reshape(x, pre + (c // (r * r), r, r, h, w))
    y = F.transpose(y, tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return F.reshape(y, pre + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = _check_factor(downscale_factor, "downscale_factor", "pixel_unshuffle")
    x = F._check_tensor(input, "input")
    if x.ndim < 3:
        raise ValueError(f"For pixel_unshuffle, the dimension of `input` should be larger "
                         f"than 2, got {x.ndim}")
    *pre, c, h, w = x.shape
    if h % r or w % r:
        raise ValueError(f"For 'pixel_unshuffle', the length of second to last 2 dimension "
                         f"should be divisible by downscale_factor {r}, got ({h}, {w})")
    pre = tuple(pre)
    k = len(pre)
    y = F.reshape(x, pre + (c, h // r, r, w // r, r))
    y = F.transpose(y, tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return F.reshape(y, pre + (c * r * r, h // r, w // r))


def channel_shuffle(x, groups):
    """Channels of (N, C, *) regrouped: (N, groups, C // groups, -1) transposed to
    (N, C // groups, groups, -1) (MindSpore's arrangement)."""
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise TypeError(f"For ChannelShuffle, the param `groups` must be int, but got "
                        f"{type(groups)}.")
    if groups < 1:
        raise ValueError(f"For ChannelShuffle, the param `groups` must be larger than 0, but "
                         f"got {groups}.")
    x = F._check_tensor(x, "x")
    if x.ndim < 2:
        raise ValueError(f"For ChannelShuffle, the input must be at least 2-d, got shape "
                         f"{x.shape}")
    n, c = x.shape[:2]
    y = F.reshape(x, (n, groups, c // groups, -1))
    return F.reshape(F.transpose(y, (0, 2, 1, 3)), x.shape)


def bidense(input1, input2, weight, bias=None):
    """Bilinear map ``y_k = x1 W_k x2^T + b_k`` with ``weight`` (out, in1, in2); inputs
    (*, in1) and (*, in2) with the same leading shape."""
    a = _float_tensor(input1, "input1", "bidense")
    b = _float_tensor(input2, "input2", "bidense")
    w = F._check_tensor(weight, "weight")
    out_c, in1, in2 = w.shape
    if a.shape[-1] != in1 or b.shape[-1] != in2 or a.shape[:-1] != b.shape[:-1]:
        raise ValueError(f"For 'bidense', input1 {a.shape} and input2 {b.shape} must share "
                         f"their leading shape and end in {in1} and {in2}")
    lead = a.shape[:-1]
    a2 = F.reshape(a, (-1, in1))
    b2 = F.reshape(b, (-1, in2))
    # (B, in1) @ (in1, out * in2) -> (B, out, in2), then contract with x2.
    wt = F.reshape(F.transpose(F.cast(w, a.dtype), (1, 0, 2)), (in1, out_c * in2))
    t = F.reshape(F.matmul(a2, wt), (-1, out_c, in2))
    y = F.sum(F.mul(t, F.expand_dims(b2, 1)), 2)
    if bias is not None:
        y = F.add(y, F.cast(bias, a.dtype))
    return F.reshape(y, lead + (out_c,))


def roll(input, shifts, dims=None):  # noqa: A002
    """Elements shifted cyclically by ``shifts`` along ``dims`` (flattened when None)."""
    x = F._check_tensor(input, "input")
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    if dims is None:
        flat = F.reshape(x, (-1,))
        return F.reshape(roll(flat, shifts[:1] if len(shifts) == 1 else shifts, 0), x.shape)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise ValueError(f"For 'roll', 'shifts' {shifts} and 'dims' {dims} must have the same "
                         f"length")
    out = x
    for s, d in zip(shifts, dims):
        ax = F._axis1(int(d), x.ndim, "dims")
        n = x.shape[ax]
        if n == 0:
            continue
        idx = (np.arange(n) - int(s)) % n
        out = F.getitem(out, (builtins.slice(None),) * ax + (Tensor(idx.astype(np.int64)),))
    return out


__all__ = ["hardshrink", "softshrink", "tanhshrink", "threshold", "softmin", "rrelu",
           "dropout1d", "dropout2d", "dropout3d", "group_norm", "lrn", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "bidense", "roll"]
