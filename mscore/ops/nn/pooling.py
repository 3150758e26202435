"""Pooling: max/average, adaptive, fractional, LP pooling and max-unpooling, with their
Primitives.

All are composed from primitives, so every backend computes and differentiates them. Adaptive
average pooling is separable: one averaging matrix per spatial axis. The other window
reductions gather each window's elements by integer index (the window layout is computed on
the host from the shapes) and reduce over them; a max hands its gradient to the first
maximum of each window, as MindSpore and torch do.
"""
from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from mscore import dispatch
from mscore._state import thread as _thread
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _check_tensor, _check_window, _float_input, _tuple
from mscore.ops.array.creation import ones
from mscore.ops.array.manipulation import expand_dims, reshape, squeeze, swapaxes
from mscore.ops.control import cast, stop_gradient
from mscore.ops.linalg.products import matmul
from mscore.ops.math.elementwise import abs, add, div, mul, pow, sign, sub
from mscore.ops.nn.activation import relu
from mscore.ops.nn.conv import _check_format, _positive, _strip, conv_padding_pairs
from mscore.ops.primitive_base import Primitive
from mscore.ops.random.draws import draw
from mscore.ops.reduction.reduce import amax, amin

_wrap = Tensor._wrap


def _pool_args(x, kernel_size, stride, padding, nd):
    kernel = _tuple(kernel_size, nd, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, nd, "stride")
    if isinstance(padding, int):
        pads = ((padding, padding),) * nd
    else:
        padding = tuple(padding)
        pads = tuple((int(p), int(p)) for p in padding) if len(padding) == nd else \
            tuple((int(padding[2 * i]), int(padding[2 * i + 1])) for i in range(nd))
    if x.ndim != nd + 2:
        raise ValueError(f"pool: expected a {nd + 2}-d input (N, C, ...), got shape {x.shape}")
    for k, (lo, hi) in zip(kernel, pads):
        if lo > k // 2 or hi > k // 2:
            raise ValueError(f"padding: must be at most half the kernel size, got {pads}")
    _check_window("pool", x.shape[2:], kernel, pads, (1,) * nd)
    return kernel, stride, pads


def max_pool(x, kernel_size, stride=None, padding=0, nd=2):
    """N-d max pooling over the last ``nd`` axes."""
    x = _check_tensor(x, "x")
    kernel, stride, pads = _pool_args(x, kernel_size, stride, padding, nd)
    return _wrap(call("max_pool", x._data, kernel=kernel, stride=stride, padding=pads))


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
               ceil_mode=False):
    """2-d max pooling of (N, C, H, W); with ``dilation``, ``ceil_mode`` (the last window
    may start in the bottom/right padding, never past it) and ``return_indices`` (also the
    int64 position of each maximum in its H*W plane), as MindSpore's ``ops.max_pool2d``."""
    dilation = _tuple(dilation, 2, "dilation")
    if dilation == (1, 1) and not return_indices and not ceil_mode:
        return max_pool(x, kernel_size, stride, padding, 2)
    x = _check_tensor(x, "x")
    kernel, stride, pads = _pool_args(x, kernel_size, stride, padding, 2)
    return sliding_max(x, kernel, stride, pads, dilation, bool(ceil_mode),
                       bool(return_indices))


def avg_pool(x, kernel_size, stride=None, padding=0, count_include_pad=True, nd=2):
    """N-d average pooling over the last ``nd`` axes."""
    x = _float_input(x, "x")
    kernel, stride, pads = _pool_args(x, kernel_size, stride, padding, nd)
    return _wrap(call("avg_pool", x._data, kernel=kernel, stride=stride, padding=pads,
                      count_include_pad=bool(count_include_pad)))


def avg_pool2d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=0):
    """2-d average pooling."""
    if ceil_mode or divisor_override:
        raise ValueError("avg_pool2d: ceil_mode and divisor_override are not supported")
    return avg_pool(input_x, kernel_size, stride, padding, count_include_pad, 2)


class MaxPool(Primitive):
    """``MaxPool(kernel_size=1, strides=1, pad_mode='valid')(x)`` over NCHW."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        super().__init__()
        prim = type(self).__name__
        self.kernel_size = _positive(_strip(kernel_size), 2, "kernel_size", prim)
        self.strides = _positive(_strip(strides), 2, "strides", prim)
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("valid", "same"):
            raise ValueError(f"{prim}: pad_mode must be 'valid' or 'same', got {pad_mode!r}")
        _check_format(data_format, ("NCHW",), prim)
        self.pad_mode = pad_mode.lower()
        self.data_format = data_format

    def compute(self, x):
        if self.pad_mode == "same":
            pads = conv_padding_pairs("same", 0, 2, x.shape[2:], self.kernel_size, self.strides,
                                      (1, 1))
            x = _wrap(call("pad", x._data, ((0, 0), (0, 0)) + pads, value=float("-inf")))
        return max_pool(x, self.kernel_size, self.strides, 0, 2)


class AvgPool(MaxPool):
    """``AvgPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x)``;
    with 'same' padding the padded elements do not count in the average."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", data_format="NCHW"):
        if isinstance(strides, (int, tuple, list)) and any(
                isinstance(s, int) and s <= 0 for s in
                (strides if isinstance(strides, (tuple, list)) else (strides,))):
            # MindSpore's kernel check raises RuntimeError for non-positive strides.
            raise RuntimeError(f"AvgPool: strides must be positive, got {strides!r}")
        super().__init__(kernel_size, strides, pad_mode, data_format)

    def compute(self, x):
        pads = 0
        if self.pad_mode == "same":
            pairs = conv_padding_pairs("same", 0, 2, x.shape[2:], self.kernel_size,
                                       self.strides, (1, 1))
            pads = tuple(v for pair in pairs for v in pair)
        return avg_pool(x, self.kernel_size, self.strides, pads, False, 2)


def _ints(value, n, name, cls, minimum=1, allow_none=False):
    """An int or a sequence of ``n`` ints (None allowed where ``allow_none``) as a tuple."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),) * n
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"For '{cls}', '{name}' must be an int or a tuple of {n} ints, got "
                        f"{type(value).__name__}")
    if len(value) == 1 and n > 1:
        value = tuple(value) * n
    if len(value) != n:
        raise ValueError(f"For '{cls}', '{name}' must have {n} elements, got {tuple(value)}")
    out = []
    for v in value:
        if v is None and allow_none:
            out.append(None)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"For '{cls}', '{name}' must hold ints, got {tuple(value)}")
        if v < minimum:
            raise ValueError(f"For '{cls}', '{name}' must be >= {minimum}, got {tuple(value)}")
        out.append(int(v))
    return tuple(out)


def batched(x, nd, cls, name="input"):
    """``(x as (N, C, *spatial), unbatched)``: an (nd+1)-d input gets a batch axis."""
    _check_tensor(x, name)
    if x.ndim == nd + 1:
        return expand_dims(x, 0), True
    if x.ndim != nd + 2:
        raise ValueError(f"For '{cls}', '{name}' must be {nd + 1}-d or {nd + 2}-d, got shape "
                         f"{x.shape}")
    return x, False


def _unbatch(t, unbatched):
    return squeeze(t, 0) if unbatched else t


def adaptive_bounds(size, out):
    """Start and end (exclusive) of each of ``out`` adaptive windows over ``size``."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def adaptive_positions(size, out):
    """(out, K) input positions of each adaptive window (short windows repeat their last
    element, which changes neither a max nor its first index)."""
    start, end = adaptive_bounds(size, out)
    k = int((end - start).max())
    return np.minimum(start[:, None] + np.arange(k)[None, :], end[:, None] - 1)


def sliding_out_size(size, kernel, stride, lo, hi, dilation, ceil_mode):
    """Output length of a sliding window (torch's rule: with ``ceil_mode`` the last window
    must start inside the input or the leading padding)."""
    span = dilation * (kernel - 1) + 1
    num = size + lo + hi - span
    if num < 0:
        return 0
    out = (-(-num // stride) if ceil_mode else num // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + lo:
        out -= 1
    return out


def sliding_positions(size, kernel, stride, lo, dilation, out):
    """(out, kernel) input positions of sliding windows; -1 marks padding."""
    pos = np.arange(out)[:, None] * stride - lo + np.arange(kernel)[None, :] * dilation
    return np.where((pos >= 0) & (pos < size), pos, -1)


def flat_windows(positions, spatial):
    """Per-axis (out_a, K_a) positions as (prod out, prod K) flat indices into the spatial
    axes (row-major); -1 where any axis falls in padding."""
    nd = len(positions)
    strides = [math.prod(spatial[a + 1:]) for a in range(nd)]
    outs = [p.shape[0] for p in positions]
    ks = [p.shape[1] for p in positions]
    flat = np.zeros(tuple(outs) + tuple(ks), np.int64)
    invalid = np.zeros(flat.shape, bool)
    for a, p in enumerate(positions):
        shape = [1] * (2 * nd)
        shape[a], shape[nd + a] = p.shape
        pa = p.reshape(shape)
        flat = flat + pa * strides[a]
        invalid = invalid | (pa < 0)
    flat = np.where(invalid, -1, flat)
    return flat.reshape(math.prod(outs), math.prod(ks)), tuple(outs)


def _native_index(arr):
    return dispatch.backend().from_numpy(np.ascontiguousarray(arr, dtype=np.int64))


def _gather_windows(x, flat, fill):
    """``x`` (N, C, *spatial) -> its native (N, C, S + 1) flattening (element S reads
    ``fill``), the (N, C, P, K) window elements for ``flat`` ((P, K) shared by every plane
    or (N, C, P, K) per plane; -1 reads ``fill``) and the host index used."""
    n, c = x.shape[:2]
    s = math.prod(x.shape[2:])
    xd = call("reshape", x._data, (n, c, s))
    xd = call("pad", xd, ((0, 0), (0, 0), (0, 1)), value=fill)
    idx = np.where(flat < 0, s, flat)
    if idx.ndim == 2:
        windows = call("getitem", xd, (slice(None), slice(None), _native_index(idx)))
    else:
        windows = call("getitem", xd, (_native_index(np.arange(n))[:, None, None, None],
                                       _native_index(np.arange(c))[None, :, None, None],
                                       _native_index(idx)))
    return xd, windows, idx


def _pick(host, first):
    """``host[..., p, first[..., p]]`` for the (P, K) or (N, C, P, K) host index and the
    native (N, C, P) choice ``first``."""
    n, c, p = dispatch.shape(first)
    pp = _native_index(np.arange(p))[None, None, :]
    if host.ndim == 2:
        return call("getitem", _native_index(host), (pp, first))
    return call("getitem", _native_index(host), (_native_index(np.arange(n))[:, None, None],
                                                _native_index(np.arange(c))[None, :, None],
                                                pp, first))


def window_max(x, positions, with_indices=False, index_dtype=mdt.int64):
    """Max over windows given per spatial axis as (out_a, K_a) positions (-1: padding).
    Returns the values (N, C, *out) and, with ``with_indices``, the flat spatial index of
    each window's first maximum."""
    flat, outs = flat_windows(positions, x.shape[2:])
    return window_max_flat(x, flat, outs, with_indices, index_dtype)


def window_max_flat(x, flat, outs, with_indices=False, index_dtype=mdt.int64):
    """:func:`window_max` for windows given as flat indices ((P, K), or (N, C, P, K) when
    every plane has its own)."""
    n, c = x.shape[:2]
    low = -math.inf if x.dtype.is_floating else _int_min(x.dtype)
    xd, windows, idx = _gather_windows(x, flat, low)
    first = call("stop_gradient", call("argmax", windows, axis=3))         # (N, C, P)
    nn = _native_index(np.arange(n))[:, None, None]
    cc = _native_index(np.arange(c))[None, :, None]
    values = call("getitem", xd, (nn, cc, _pick(idx, first)))
    out = _wrap(call("reshape", values, (n, c) + tuple(outs)))
    if not with_indices:
        return out
    real = call("reshape", _pick(flat, first), (n, c) + tuple(outs))
    if index_dtype is not mdt.int64:
        real = call("cast", real, index_dtype)
    return out, _wrap(real)


def window_sum(x, positions):
    """Sum over windows (padding reads 0): native (N, C, *out), plus the host count of
    in-input elements per window (P,)."""
    n, c = x.shape[:2]
    flat, outs = flat_windows(positions, x.shape[2:])
    _, windows, _ = _gather_windows(x, flat, 0.0)
    total = call("sum", windows, axis=(3,), keepdims=False)
    return call("reshape", total, (n, c) + outs), (flat >= 0).sum(axis=1), outs


def _int_min(dtype):
    return int(np.iinfo(np.dtype(dtype.name)).min)


def adaptive_output_size(output_size, spatial, cls):
    """``output_size`` (int or tuple, None keeps the input size) as a tuple of ints."""
    nd = len(spatial)
    if isinstance(output_size, bool) or not isinstance(output_size, (int, np.integer, tuple,
                                                                     list)):
        raise TypeError(f"For '{cls}', 'output_size' must be an int or a tuple, got "
                        f"{type(output_size).__name__}")
    sizes = _ints(output_size, nd, "output_size", cls, minimum=1, allow_none=True)
    return tuple(s if o is None else o for o, s in zip(sizes, spatial))


def _averaging_matrix(size, out):
    start, end = adaptive_bounds(size, out)
    m = np.zeros((out, size), np.float64)
    for i, (a, b) in enumerate(zip(start, end)):
        m[i, a:b] = 1.0 / (b - a)
    return m


def adaptive_avg(x, out_sizes):
    """Adaptive average pooling of the last ``len(out_sizes)`` axes (one averaging matrix
    per axis)."""
    nd = len(out_sizes)
    for k, out in enumerate(out_sizes):
        ax = x.ndim - nd + k
        size = x.shape[ax]
        if size == out:
            continue
        m = Tensor(_averaging_matrix(size, out).T.astype(np.float32), dtype=x.dtype)
        last = ax == x.ndim - 1
        y = x if last else swapaxes(x, ax, -1)
        y = matmul(y, m)
        x = y if last else swapaxes(y, ax, -1)
    return x


def _float_pool_input(x, cls, name="input"):
    _check_tensor(x, name)
    if x.dtype not in (mdt.float16, mdt.float32, mdt.float64, mdt.bfloat16):
        raise TypeError(f"For '{cls}', '{name}' must be a float16, float32 or float64 Tensor, "
                        f"got {x.dtype}")
    return x


def adaptive_avg_pool_nd(input, output_size, nd, cls):
    """Adaptive average pooling over the last ``nd`` axes of an (nd+1)- or (nd+2)-d input."""
    x = _float_pool_input(input, cls)
    xb, unbatched = batched(x, nd, cls)
    sizes = adaptive_output_size(output_size, xb.shape[2:], cls)
    return _unbatch(adaptive_avg(xb, sizes), unbatched)


def adaptive_max_pool_nd(input, output_size, return_indices, nd, cls,
                         index_dtype=mdt.int64):
    """Adaptive max pooling over the last ``nd`` axes; with ``return_indices`` also the
    flat spatial index of each maximum."""
    x = _float_pool_input(input, cls)
    xb, unbatched = batched(x, nd, cls)
    sizes = adaptive_output_size(output_size, xb.shape[2:], cls)
    positions = [adaptive_positions(s, o) for s, o in zip(xb.shape[2:], sizes)]
    out = window_max(xb, positions, bool(return_indices), index_dtype)
    if return_indices:
        return _unbatch(out[0], unbatched), _unbatch(out[1], unbatched)
    return _unbatch(out, unbatched)


def adaptive_avg_pool1d(input, output_size):
    """Adaptive average pooling of (N, C, L) to (N, C, output_size)."""
    return adaptive_avg_pool_nd(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """Adaptive average pooling of (N, C, H, W) or (C, H, W); ``output_size`` an int or a
    pair (None keeps that axis)."""
    return adaptive_avg_pool_nd(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """Adaptive average pooling of (N, C, D, H, W) or (C, D, H, W)."""
    return adaptive_avg_pool_nd(input, output_size, 3, "adaptive_avg_pool3d")


def adaptive_max_pool1d(input, output_size):
    """Adaptive max pooling of (N, C, L) to (N, C, output_size)."""
    return adaptive_max_pool_nd(input, output_size, False, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive max pooling of (N, C, H, W) or (C, H, W); indices (int64) are flat over
    H * W."""
    return adaptive_max_pool_nd(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive max pooling of (N, C, D, H, W) or (C, D, H, W); indices are int32, as
    MindSpore's AdaptiveMaxPool3D gives them."""
    return adaptive_max_pool_nd(input, output_size, return_indices, 3, "adaptive_max_pool3d",
                                mdt.int32)


def sliding_max(x, kernel, stride, pads, dilation, ceil_mode, return_indices):
    """Max pooling of (N, C, *spatial) with ``pads`` ((lo, hi) per axis), dilation, ceil
    mode and optional indices."""
    positions = []
    for size, k, s, (lo, hi), d in zip(x.shape[2:], kernel, stride, pads, dilation):
        out = sliding_out_size(size, k, s, lo, hi, d, ceil_mode)
        if out <= 0:
            raise ValueError(f"max pooling: the window ({k}, dilation {d}) does not fit the "
                             f"padded input size {size + lo + hi}")
        positions.append(sliding_positions(size, k, s, lo, d, out))
    return window_max(x, positions, return_indices)


def sliding_avg(x, kernel, stride, pads, ceil_mode, count_include_pad, divisor_override):
    """Average pooling of (N, C, *spatial) with ceil mode and a divisor override: the
    divisor is ``divisor_override``, else the window's elements inside the padded input
    (``count_include_pad``) or inside the input."""
    positions, padded_counts = [], []
    for size, k, s, (lo, hi) in zip(x.shape[2:], kernel, stride, pads):
        out = sliding_out_size(size, k, s, lo, hi, 1, ceil_mode)
        if out <= 0:
            raise ValueError(f"avg pooling: the kernel {k} does not fit the padded input "
                             f"size {size + lo + hi}")
        positions.append(sliding_positions(size, k, s, lo, 1, out))
        start = np.arange(out) * s - lo
        padded_counts.append(np.minimum(start + k, size + hi) - np.maximum(start, -lo))
    total, inside, outs = window_sum(x, positions)
    if divisor_override:
        count = np.full(outs, float(divisor_override))
    elif count_include_pad:
        count = padded_counts[0]
        for extra in padded_counts[1:]:
            count = np.multiply.outer(count, extra)
    else:
        count = np.maximum(inside.reshape(outs), 1)
    divisor = Tensor(np.asarray(count, np.float32), dtype=x.dtype)
    return div(_wrap(total), divisor)


def max_unpool_nd(x, indices, kernel_size, stride, padding, output_size, nd, cls):
    """Scatter ``x`` into zeros at the flat spatial ``indices`` a max pooling returned."""
    _check_tensor(x, "x")
    _check_tensor(indices, "indices")
    if indices.dtype.is_floating or indices.dtype.is_bool:
        raise TypeError(f"For '{cls}', 'indices' must be an integer Tensor, got "
                        f"{indices.dtype}")
    if tuple(indices.shape) != tuple(x.shape):
        raise ValueError(f"For '{cls}', 'indices' must have the shape of 'x' {x.shape}, got "
                         f"{indices.shape}")
    kernel = _ints(kernel_size, nd, "kernel_size", cls)
    stride = kernel if stride is None else _ints(stride, nd, "stride", cls)
    pads = _ints(padding, nd, "padding", cls, minimum=0)
    xb, unbatched = batched(x, nd, cls, "x")
    ib = reshape(indices, xb.shape)
    default = tuple((s - 1) * st - 2 * p + k
                    for s, st, p, k in zip(xb.shape[2:], stride, pads, kernel))
    out_sp = _unpool_size(output_size, default, nd, cls)
    n, c = xb.shape[:2]
    total = math.prod(out_sp)
    idx = cast(reshape(ib, (n, c, -1)), mdt.int64)
    _check_unpool_indices(idx, total, cls)
    nn = _native_index(np.arange(n))[:, None, None]
    cc = _native_index(np.arange(c))[None, :, None]
    index = (nn, cc, idx._data)
    values = reshape(xb, (n, c, -1))

    def scatter(v):
        return _wrap(call("scatter_add", call("full", (n, c, total), 0, v.dtype), index, v._data))

    # Overlapping windows can name one position twice (with the same value): the value is
    # written once (each copy weighted by 1/count), while each copy's gradient is the
    # output gradient there, as a gather (MindSpore's and torch's backward).
    unit = ones(values.shape, values.dtype)
    count = _wrap(call("getitem", scatter(unit)._data, index))
    once = stop_gradient(scatter(div(values, count)))
    flat = add(once, sub(scatter(values), stop_gradient(scatter(values))))
    return _unbatch(reshape(flat, (n, c) + out_sp), unbatched)


def _check_unpool_indices(idx, total, cls):
    """RuntimeError (MindSpore's) for an index outside the output, where values exist."""
    if _thread.compiled_depth:
        return
    try:
        low, high = int(amin(idx).asnumpy()), int(amax(idx).asnumpy())
    except Exception:
        return
    if low < 0 or high >= total:
        raise RuntimeError(f"{cls}: 'indices' must lie in [0, {total}) for an output of "
                           f"{total} elements per plane, got values in [{low}, {high}]; give "
                           f"'output_size' for the pooled input's size")


def _unpool_size(output_size, default, nd, cls):
    if output_size is None or output_size == ():
        return default
    size = tuple(int(v) for v in output_size)
    if len(size) in (nd + 1, nd + 2):
        size = size[len(size) - nd:]
    if len(size) != nd:
        raise ValueError(f"For '{cls}', 'output_size' must have {nd} spatial sizes, got "
                         f"{tuple(output_size)}")
    return size


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of a 1-d max pooling: ``x`` placed at ``indices``, zeros elsewhere."""
    return max_unpool_nd(x, indices, kernel_size, stride, padding, output_size, 1,
                         "max_unpool1d")


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of a 2-d max pooling (indices flat over H * W)."""
    return max_unpool_nd(x, indices, kernel_size, stride, padding, output_size, 2,
                         "max_unpool2d")


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of a 3-d max pooling (indices flat over D * H * W)."""
    return max_unpool_nd(x, indices, kernel_size, stride, padding, output_size, 3,
                         "max_unpool3d")


def lp_pool_nd(x, norm_type, kernel_size, stride, ceil_mode, nd, cls):
    """``(sum over each window of x ** p) ** (1 / p)`` (MindSpore's formula: the mean
    times the window size, negative sums kept as they are, so odd ``p`` can give nan)."""
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real):
        raise TypeError(f"For '{cls}', 'norm_type' must be a float or int, got "
                        f"{type(norm_type).__name__}")
    p = float(norm_type)
    if p == 0:
        raise ValueError(f"For '{cls}', 'norm_type' must not be 0")
    kernel = _ints(kernel_size, nd, "kernel_size", cls)
    stride = kernel if stride is None else _ints(stride, nd, "stride", cls)
    xb = _check_tensor(x, "x")
    unbatched = False
    if nd == 1:
        xb, unbatched = batched(xb, nd, cls, "x")
    elif xb.ndim != nd + 2:
        raise ValueError(f"For '{cls}', 'x' must be {nd + 2}-d, got shape {xb.shape}")
    powered = pow(xb, p)
    pads = ((0, 0),) * nd
    if ceil_mode:
        mean = sliding_avg(powered, kernel, stride, pads, True, True, 0)
    else:
        mean = avg_pool(powered, kernel, stride, 0, True, nd)
    scaled = mul(mul(sign(mean), relu(abs(mean))), float(math.prod(kernel)))
    return _unbatch(pow(scaled, 1.0 / p), unbatched)


def lp_pool1d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """1-d power-average pooling of (N, C, L) or (C, L)."""
    return lp_pool_nd(x, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-d power-average pooling of (N, C, H, W)."""
    return lp_pool_nd(x, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")


def fractional_positions(size, kernel, out, u):
    """(N*C, out, kernel) window positions of fractional max pooling for the per-plane
    samples ``u`` in [0, 1): ``start_i = floor((i + u) a) - floor(u a)``, a = (size -
    kernel) / (out - 1), the last window ending at the input's end."""
    u = np.asarray(u, np.float64)
    if out == 1:
        starts = np.zeros(u.shape + (1,), np.int64)
    else:
        alpha = (size - kernel) / (out - 1)
        i = np.arange(out - 1)
        starts = np.floor((i[None, :] + u[:, None]) * alpha) - np.floor(u[:, None] * alpha)
        starts = np.concatenate([starts, np.full((u.shape[0], 1), size - kernel)], 1)
    return starts.astype(np.int64)[:, :, None] + np.arange(kernel)[None, None, :]


def fractional_max_pool_nd(input, kernel_size, output_size, output_ratio,
                           return_indices, random_samples, nd, cls):
    """Fractional max pooling (Graham 2014) of (N, C, *spatial) or (C, *spatial): windows
    of ``kernel_size`` at pseudo-random starts; ``random_samples`` (N, C, nd) in [0, 1)
    fixes them (drawn from the global stream otherwise)."""
    x = _float_pool_input(input, cls)
    xb, unbatched = batched(x, nd, cls)
    kernel = _ints(kernel_size, nd, "kernel_size", cls)
    spatial = xb.shape[2:]
    if output_size is None and output_ratio is None:
        raise ValueError(f"For '{cls}', one of 'output_size' and 'output_ratio' must be set")
    if output_size is not None:
        outs = _ints(output_size, nd, "output_size", cls)
    else:
        ratio = (output_ratio,) * nd if isinstance(output_ratio, numbers.Real) \
            else tuple(output_ratio)
        if len(ratio) != nd or not builtins.all(0 < r < 1 for r in ratio):
            raise ValueError(f"For '{cls}', 'output_ratio' must be {nd} numbers in (0, 1), "
                             f"got {output_ratio!r}")
        outs = tuple(int(s * r) for s, r in zip(spatial, ratio))
    for s, k, o in zip(spatial, kernel, outs):
        if o + k - 1 > s:
            raise ValueError(f"For '{cls}', output_size {outs} + kernel_size {kernel} - 1 "
                             f"must not exceed the input size {spatial}")
    n, c = xb.shape[:2]
    if random_samples is None:
        samples = _wrap(draw("uniform", (n, c, nd), mdt.float32))
    else:
        samples = _check_tensor(random_samples, "_random_samples")
    u = samples.asnumpy().astype(np.float64)
    if u.shape != (n, c, nd):
        raise ValueError(f"For '{cls}', '_random_samples' must have shape ({n}, {c}, {nd}), "
                         f"got {samples.shape}")
    u = u.reshape(n * c, nd)
    if nd == 2:           # 2-d samples are (width, height), 3-d ones (depth, height, width)
        u = u[:, ::-1]
    # Every plane has its own windows: (N*C, out_a, k_a) positions per axis, combined into
    # flat indices (N, C, P, K).
    per_axis = [fractional_positions(s, k, o, u[:, a])
                for a, (s, k, o) in enumerate(zip(spatial, kernel, outs))]
    flat = np.stack([flat_windows([p[i] for p in per_axis], spatial)[0]
                     for i in range(n * c)]).reshape((n, c) + (math.prod(outs), -1))
    out = window_max_flat(xb, flat, outs, bool(return_indices))
    if return_indices:
        return _unbatch(out[0], unbatched), _unbatch(out[1], unbatched)
    return _unbatch(out, unbatched)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-d fractional max pooling (see :func:`fractional_max_pool_nd`)."""
    return fractional_max_pool_nd(input, kernel_size, output_size, output_ratio,
                                  return_indices, _random_samples, 2, "fractional_max_pool2d")


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-d fractional max pooling (see :func:`fractional_max_pool_nd`)."""
    return fractional_max_pool_nd(input, kernel_size, output_size, output_ratio,
                                  return_indices, _random_samples, 3, "fractional_max_pool3d")
