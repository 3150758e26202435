"""Sorting, selection, scatter and reduction functions of ``mindspore.ops`` that Tensor
methods and ``mscore.numpy``/``mscore.mint`` use, built from the ops in :mod:`mscore.ops`.

Orders (``sort``, ``topk``, ``unique``, ``nonzero``) are computed on the host with numpy:
the backend contract has no sort, and these results are integer positions, which carry no
gradient; the values are then picked with the differentiable ``getitem``/``gather``, so the
gradient reaches the input as MindSpore's does. A function that computes on the host cannot
be traced into a compiled program (``jit``); it runs in PyNative mode.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from mscore import dispatch
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore import ops

__all__ = [
    "sort", "argsort", "topk", "msort", "median", "unique", "unique_consecutive",
    "nonzero", "argwhere", "masked_select", "count_nonzero", "prod", "cumprod", "nansum",
    "nanmean", "index_select", "movedim", "moveaxis", "diagonal", "trace", "diff",
    "repeat_interleave", "tensor_split", "hsplit", "vsplit", "dsplit", "diag", "ravel",
    "scatter", "tensor_scatter_elements", "index_add", "index_fill",
    "aminmax", "searchsorted", "bincount", "logcumsumexp", "cummax", "cummin", "rot90",
    "fliplr", "flipud", "hstack", "vstack",
    "cross",
]


def _tensor(x, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    return x


def _axis(axis, ndim, name="axis"):
    """``axis`` as a non-negative int in ``[0, ndim)`` (a 0-d tensor has axis 0 and -1)."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {type(axis).__name__}")
    n = builtins.max(ndim, 1)
    if not -n <= axis < n:
        raise ValueError(f"{name}: {axis} is out of range [{-n}, {n})")
    return int(axis) % n


def _host(x):
    return x.asnumpy()


def _grids(index_shape, axis, index):
    """Advanced-index tuple that picks ``index`` along ``axis`` and every other position in
    place (``take_along_axis``'s index)."""
    grids = []
    for ax in range(len(index_shape)):
        if ax == axis:
            grids.append(index)
        else:
            shape = [1] * len(index_shape)
            shape[ax] = index_shape[ax]
            grids.append(Tensor(np.arange(index_shape[ax], dtype=np.int64).reshape(shape)))
    return tuple(grids)


def _take_along(x, axis, idx):
    """``x`` picked along ``axis`` by the integer numpy array ``idx`` (differentiable in
    ``x``)."""
    if x.ndim == 0:
        return x
    return ops.getitem(x, _grids(idx.shape, axis, Tensor(idx.astype(np.int64))))


# -- orders -------------------------------------------------------------------------------
def argsort(input, axis=-1, descending=False):
    """Indices that sort ``input`` along ``axis`` (stable), as int32 (MindSpore's index
    dtype for sorting)."""
    x = _tensor(input)
    ax = _axis(axis, x.ndim)
    a = _host(x)
    if a.ndim == 0:
        return Tensor(np.zeros((), np.int32))
    idx = np.argsort(-a if descending and a.dtype.kind != "b" else a, axis=ax,
                     kind="stable")
    if descending and a.dtype.kind == "b":
        idx = np.argsort(~a, axis=ax, kind="stable")
    return Tensor(idx.astype(np.int32))


def sort(input_x, axis=-1, descending=False):
    """``(values, indices)`` of ``input_x`` sorted along ``axis`` (indices as int32)."""
    x = _tensor(input_x, "input_x")
    idx = argsort(x, axis, descending)
    return _take_along(x, _axis(axis, x.ndim), idx.asnumpy()), idx


def msort(input):
    """``input`` sorted along its first axis."""
    return sort(input, 0)[0]


def topk(input, k, dim=None, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (or smallest) entries along ``dim`` (the
    last axis when None)."""
    x = _tensor(input)
    ax = _axis(-1 if dim is None else dim, x.ndim, "dim")
    size = x.shape[ax] if x.ndim else 1
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 0 <= k <= size:
        raise ValueError(f"k: expected an int in [0, {size}], got {k!r}")
    a = _host(x)
    order = np.argsort(-a if largest else a, axis=ax, kind="stable") if a.ndim else \
        np.zeros((), np.int64)
    idx = np.take(order, np.arange(k), axis=ax) if a.ndim else order
    return _take_along(x, ax, idx), Tensor(idx.astype(np.int32))


def median(input, axis=-1, keepdims=False):
    """``(values, indices)``: the lower median along ``axis`` and where it is."""
    x = _tensor(input)
    ax = _axis(axis, x.ndim)
    a = _host(x)
    if a.ndim == 0:
        return x, Tensor(np.zeros((), np.int64))
    order = np.argsort(a, axis=ax, kind="stable")
    pos = np.take(order, [(a.shape[ax] - 1) // 2], axis=ax)
    values = _take_along(x, ax, pos)
    if not keepdims:
        values, pos = ops.squeeze(values, ax), np.squeeze(pos, ax)
    return values, Tensor(pos.astype(np.int64))


def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)``: the ``k``-th smallest entry (1-based) along ``dim``."""
    x = _tensor(input)
    ax = _axis(dim, x.ndim, "dim")
    a = _host(x)
    size = a.shape[ax] if a.ndim else 1
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= size:
        raise ValueError(f"k: expected an int in [1, {size}], got {k!r}")
    order = np.argsort(a, axis=ax, kind="stable") if a.ndim else np.zeros((), np.int64)
    pos = np.take(order, [k - 1], axis=ax) if a.ndim else order
    values = _take_along(x, ax, pos)
    if not keepdim and a.ndim:
        values, pos = ops.squeeze(values, ax), np.squeeze(pos, ax)
    return values, Tensor(pos.astype(np.int64))


def unique(input):
    """``(values, inverse)``: the distinct values (sorted) and, for each entry, the position
    of its value among them (MindSpore's ``ops.unique``)."""
    return unique_values(input, return_inverse=True)


def unique_values(input, sorted=True, return_inverse=False, return_counts=False,
                  dim=None):
    """The distinct values (sorted), optionally with the inverse indices and the counts."""
    a = _host(_tensor(input))
    out = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
    values = Tensor(out[0])
    extra = []
    if return_inverse:
        extra.append(Tensor(out[1].reshape(a.shape if dim is None else -1).astype(np.int64)))
    if return_counts:
        extra.append(Tensor(out[2].astype(np.int64)))
    return (values, *extra) if extra else values


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Runs of equal consecutive values collapsed to one, with the inverse and counts."""
    a = _host(_tensor(input))
    flat = a.reshape(-1) if dim is None else np.moveaxis(a, dim, 0)
    keep = np.ones(len(flat), bool)
    if len(flat) > 1:
        same = flat[1:] == flat[:-1]
        keep[1:] = ~(same.reshape(len(flat) - 1, -1).all(axis=1))
    starts = np.flatnonzero(keep)
    values = flat[starts] if dim is None else np.moveaxis(flat[starts], 0, dim)
    extra = []
    if return_inverse:
        inverse = np.cumsum(keep) - 1
        extra.append(Tensor(inverse.reshape(a.shape if dim is None else -1).astype(np.int64)))
    if return_counts:
        extra.append(Tensor(np.diff(np.append(starts, len(flat))).astype(np.int64)))
    return (Tensor(values), *extra) if extra else Tensor(values)


def nonzero(input, as_tuple=False):
    """Indices of the non-zero entries: an ``(n, ndim)`` int64 Tensor, or one 1-d Tensor per
    axis with ``as_tuple``."""
    a = _host(_tensor(input))
    idx = np.nonzero(a) if a.ndim else np.nonzero(a.reshape(1))
    if as_tuple:
        return tuple(Tensor(i.astype(np.int64)) for i in idx)
    return Tensor(np.stack(idx, axis=-1).astype(np.int64).reshape(-1, builtins.max(a.ndim, 1)))


def argwhere(input):
    """``nonzero(input)``: the ``(n, ndim)`` indices of the non-zero entries."""
    return nonzero(input)


def masked_select(input, mask):
    """The entries of ``input`` where ``mask`` (broadcast together) is true, as 1-d."""
    x = _tensor(input)
    m = _tensor(mask, "mask")
    shape = np.broadcast_shapes(x.shape, m.shape)
    xb = ops.broadcast_to(x, shape) if tuple(x.shape) != shape else x
    where = np.nonzero(np.broadcast_to(_host(m).astype(bool), shape))
    return ops.getitem(xb, tuple(Tensor(i.astype(np.int64)) for i in where))


def masked_scatter(input, mask, source):
    """``input`` with the positions where ``mask`` is true filled, in order, from
    ``source``'s first entries."""
    x = _tensor(input)
    m = np.broadcast_to(_host(_tensor(mask, "mask")).astype(bool), x.shape)
    where = np.nonzero(m)
    n = len(where[0]) if where else 0
    values = ops.reshape(source, (-1,))[:n]
    return ops.setitem(x, tuple(Tensor(i.astype(np.int64)) for i in where), values)


def count_nonzero(x, axis=(), keep_dims=False, dtype=mdt.int32):
    """How many entries along ``axis`` (all for ``()``) are non-zero."""
    nz = ops.cast(ops.not_equal(_tensor(x, "x"), 0), mdt.int32)
    axis = None if axis in ((), [], None) else axis
    return ops.cast(ops.sum(nz, axis, keep_dims), dtype)


# -- reductions ---------------------------------------------------------------------------
def prod(input, axis=None, keep_dims=False, dtype=None):
    """Product over ``axis`` (all axes when None), by pairwise multiplication (exact,
    differentiable)."""
    x = _tensor(input)
    if dtype is not None:
        x = ops.cast(x, dtype)
    elif x.dtype.is_bool:
        x = ops.cast(x, mdt.int64)
    if axis is None:
        out = _prod_axis(ops.reshape(x, (-1,)), 0)
        return ops.reshape(out, (1,) * x.ndim) if keep_dims else out
    axes = sorted({_axis(a, x.ndim) for a in (axis if isinstance(axis, (tuple, list))
                                               else (axis,))}, reverse=True)
    for ax in axes:
        x = _prod_axis(x, ax)
        if keep_dims:
            x = ops.expand_dims(x, ax)
    return x


def _prod_axis(x, ax):
    """The product along axis ``ax`` (removed), halving the axis each round."""
    if x.ndim == 0:
        return x
    n = x.shape[ax]
    if n == 0:
        shape = x.shape[:ax] + x.shape[ax + 1:]
        return ops.ones(shape, x.dtype)
    while n > 1:
        half = n // 2
        lead = (slice(None),) * ax
        pairs = ops.mul(x[lead + (slice(0, half),)], x[lead + (slice(half, 2 * half),)])
        x = ops.concat((pairs, x[lead + (slice(2 * half, n),)]), ax) if n % 2 else pairs
        n = x.shape[ax]
    return ops.squeeze(x, ax)


def cumprod(input, dim, dtype=None):
    """Running products along ``dim``."""
    x = _tensor(input)
    if dtype is not None:
        x = ops.cast(x, dtype)
    ax = _axis(dim, x.ndim, "dim")
    if x.ndim == 0:
        return x
    lead = (slice(None),) * ax
    parts = [x[lead + (slice(0, 1),)]]
    for i in range(1, x.shape[ax]):
        parts.append(ops.mul(parts[-1], x[lead + (slice(i, i + 1),)]))
    return ops.concat(parts, ax)


def _running(x, ax, better):
    """``(values, indices)``: running max/min along ``ax`` (``better``: ops.greater or
    ops.less)."""
    lead = (slice(None),) * ax
    vals = [x[lead + (slice(0, 1),)]]
    idx = [ops.zeros_like(vals[0], dtype=mdt.int64)]
    for i in range(1, x.shape[ax]):
        cur = x[lead + (slice(i, i + 1),)]
        take = ops.logical_not(better(vals[-1], cur))
        take = ops.logical_or(take, ops.isnan(cur)) if x.dtype.is_floating else take
        vals.append(ops.where(take, cur, vals[-1]))
        idx.append(ops.where(take, ops.full_like(idx[-1], i), idx[-1]))
    return ops.concat(vals, ax), ops.concat(idx, ax)


def cummax(input, axis):
    """``(values, indices)`` of the running maximum along ``axis``."""
    x = _tensor(input)
    return _running(x, _axis(axis, x.ndim), ops.greater)


def cummin(input, axis):
    """``(values, indices)`` of the running minimum along ``axis``."""
    x = _tensor(input)
    return _running(x, _axis(axis, x.ndim), ops.less)


def logcumsumexp(input, axis):
    """``log(cumsum(exp(input)))`` along ``axis``, shifted by the maximum for stability."""
    x = _tensor(input)
    top = ops.stop_gradient(ops.amax(x, axis, True))
    return ops.add(ops.log(ops.cumsum(ops.exp(ops.sub(x, top)), axis)), top)


def nansum(input, axis=None, keepdims=False, dtype=None):
    """Sum over ``axis`` treating NaN as 0."""
    x = _tensor(input)
    if x.dtype.is_floating:
        x = ops.where(ops.isnan(x), ops.zeros_like(x), x)
    return ops.sum(x, axis, keepdims, dtype=dtype)


def nanmean(input, axis=None, keepdims=False, dtype=None):
    """Mean over ``axis`` of the entries that are not NaN."""
    x = _tensor(input)
    if dtype is not None:
        x = ops.cast(x, dtype)
    valid = ops.cast(ops.logical_not(ops.isnan(x)), x.dtype)
    return ops.div(nansum(x, axis, keepdims), ops.sum(valid, axis, keepdims))


def aminmax(input, axis=0, keepdims=False):
    """``(minimum, maximum)`` along ``axis``."""
    return (ops.amin(input, axis, keepdims), ops.amax(input, axis, keepdims))


def argmax_with_value(x, axis=0, keep_dims=False):
    """``(index, value)`` of the maximum along ``axis``."""
    return (ops.argmax(x, axis, keep_dims), ops.amax(x, axis, keep_dims))


def argmin_with_value(x, axis=0, keep_dims=False):
    """``(index, value)`` of the minimum along ``axis``."""
    return (ops.argmin(x, axis, keep_dims), ops.amin(x, axis, keep_dims))


# -- shapes and selection -----------------------------------------------------------------
def index_select(input, axis, index):
    """Slices of ``input`` along ``axis`` at the 1-d integer ``index``."""
    x = _tensor(input)
    idx = _tensor(index, "index")
    if idx.ndim != 1:
        raise ValueError(f"index: expected a 1-d Tensor, got shape {idx.shape}")
    return ops.gather(x, idx, _axis(axis, x.ndim))


def movedim(x, source, destination):
    """``x`` with the axes ``source`` moved to the positions ``destination``."""
    src = source if isinstance(source, (tuple, list)) else (source,)
    dst = destination if isinstance(destination, (tuple, list)) else (destination,)
    if len(src) != len(dst):
        raise ValueError(f"source and destination: expected the same number of axes, got "
                         f"{len(src)} and {len(dst)}")
    src = [_axis(a, x.ndim, "source") for a in src]
    dst = [_axis(a, x.ndim, "destination") for a in dst]
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ops.transpose(x, tuple(order))


def moveaxis(x, source, destination):
    """NumPy's spelling of :func:`movedim`."""
    return movedim(x, source, destination)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the ``dim1``/``dim2`` planes (shifted by ``offset``) as the last
    axis."""
    x = _tensor(input)
    d1, d2 = _axis(dim1, x.ndim, "dim1"), _axis(dim2, x.ndim, "dim2")
    if d1 == d2:
        raise ValueError("dim1 and dim2 must differ")
    x = movedim(x, (d1, d2), (-2, -1))
    rows, cols = x.shape[-2], x.shape[-1]
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    n = builtins.max(0, builtins.min(rows - start_r, cols - start_c))
    r = Tensor(np.arange(start_r, start_r + n, dtype=np.int64))
    c = Tensor(np.arange(start_c, start_c + n, dtype=np.int64))
    return ops.getitem(x, (Ellipsis, r, c))


def trace(input, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum of the diagonal."""
    out = ops.sum(diagonal(input, offset, axis1, axis2), -1)
    return ops.cast(out, dtype) if dtype is not None else out


def diag(input, diagonal=0):
    """A 1-d input as the diagonal of a square matrix; the diagonal of a 2-d input."""
    x = _tensor(input)
    if x.ndim == 1:
        n = x.shape[0] + builtins.abs(diagonal)
        r = np.arange(x.shape[0]) + builtins.max(0, -diagonal)
        c = np.arange(x.shape[0]) + builtins.max(0, diagonal)
        return ops.setitem(ops.zeros((n, n), x.dtype),
                           (Tensor(r.astype(np.int64)), Tensor(c.astype(np.int64))), x)
    if x.ndim == 2:
        return globals()["diagonal"](x, diagonal)
    raise ValueError(f"diag: expected a 1-d or 2-d Tensor, got shape {x.shape}")


def diff(x, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``."""
    ax = _axis(axis, x.ndim)
    parts = [p for p in (prepend, x, append) if p is not None]
    x = ops.concat(parts, ax) if len(parts) > 1 else x
    lead = (slice(None),) * ax
    for _ in range(n):
        x = ops.sub(x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)])
    return x


def repeat_interleave(input, repeats, axis=None):
    """Each entry repeated ``repeats`` times along ``axis`` (the flattened input when
    None)."""
    x = _tensor(input)
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    ax = _axis(axis, x.ndim)
    reps = repeats.asnumpy() if isinstance(repeats, Tensor) else np.asarray(repeats)
    idx = np.repeat(np.arange(x.shape[ax]), np.broadcast_to(reps, (x.shape[ax],)))
    return ops.gather(x, Tensor(idx.astype(np.int64)), ax)


def tensor_split(input, indices_or_sections, axis=0):
    """Pieces of ``input`` along ``axis``: ``n`` near-equal ones (the first ``size % n``
    one larger), or cut at the given indices."""
    x = _tensor(input)
    ax = _axis(axis, x.ndim)
    size = x.shape[ax]
    if isinstance(indices_or_sections, numbers.Integral):
        n = int(indices_or_sections)
        if n <= 0:
            raise ValueError(f"indices_or_sections: expected a positive int, got {n}")
        q, r = divmod(size, n)
        cuts = np.cumsum([q + 1] * r + [q] * (n - r))[:-1].tolist()
    else:
        cuts = [int(i) for i in indices_or_sections]
    bounds = [0] + cuts + [size]
    lead = (slice(None),) * ax
    return tuple(x[lead + (slice(a, builtins.max(a, b)),)]
                 for a, b in zip(bounds[:-1], bounds[1:]))


def hsplit(input, indices_or_sections):
    """:func:`tensor_split` along axis 1 (axis 0 for a 1-d input)."""
    return tensor_split(input, indices_or_sections, 1 if input.ndim > 1 else 0)


def vsplit(input, indices_or_sections):
    """:func:`tensor_split` along axis 0."""
    return tensor_split(input, indices_or_sections, 0)


def dsplit(input, indices_or_sections):
    """:func:`tensor_split` along axis 2."""
    return tensor_split(input, indices_or_sections, 2)


def ravel(input):
    """``input`` flattened to 1-d."""
    return ops.reshape(_tensor(input), (-1,))


def take(x, indices, axis=None, mode="clip"):
    """Entries of ``x`` (flattened when ``axis`` is None) at ``indices``; out-of-range
    indices are clipped (``mode='clip'``) or wrapped (``'wrap'``); ``'raise'`` checks."""
    x = _tensor(x, "x")
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    ax = _axis(axis, x.ndim)
    n = x.shape[ax]
    idx = indices.asnumpy() if isinstance(indices, Tensor) else np.asarray(indices)
    if mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "raise":
        if np.any((idx < -n) | (idx >= n)):
            raise IndexError(f"take: an index is out of range for size {n}")
    else:
        raise ValueError(f"mode: expected 'raise', 'wrap' or 'clip', got {mode!r}")
    return ops.gather(x, Tensor(idx.astype(np.int64)), ax)


def scatter(input, axis, index, src):
    """``input`` with ``src``'s entries written along ``axis`` at ``index`` (a number
    ``src`` is written everywhere ``index`` points)."""
    x = _tensor(input)
    ax = _axis(axis, x.ndim)
    idx = _tensor(index, "index")
    if not isinstance(src, Tensor):
        src = ops.full(idx.shape, src, x.dtype)
    src = src[tuple(slice(0, s) for s in idx.shape)]
    return ops.setitem(x, _grids(idx.shape, ax, ops.cast(idx, mdt.int64)), src)


def tensor_scatter_elements(input_x, indices, updates, axis=0, reduction="none"):
    """MindSpore's ``tensor_scatter_elements``: :func:`scatter` (``reduction='add'``:
    :func:`scatter_add_dim`)."""
    if reduction == "add":
        return scatter_add_dim(input_x, axis, indices, updates)
    if reduction != "none":
        raise ValueError(f"reduction: expected 'none' or 'add', got {reduction!r}")
    return scatter(input_x, axis, indices, updates)


def scatter_add_dim(input, dim, index, src):
    """``input`` with ``src``'s entries added along ``dim`` at ``index`` (repeats add up)."""
    x = _tensor(input)
    ax = _axis(dim, x.ndim, "dim")
    idx = ops.cast(_tensor(index, "index"), mdt.int64)
    src = ops.cast(src[tuple(slice(0, s) for s in idx.shape)], x.dtype)
    grid = tuple(g._data for g in _grids(idx.shape, ax, idx))
    return Tensor._wrap(dispatch.call("scatter_add", x._data, grid, src._data))


def index_add(x, indices, y, axis, use_lock=True, check_index_bound=True):
    """``x`` with the slices of ``y`` added along ``axis`` at ``indices`` (repeats add
    up)."""
    ax = _axis(axis, x.ndim)
    idx = ops.cast(_tensor(indices, "indices"), mdt.int64)
    index = (slice(None),) * ax + (idx._data,)
    y = ops.cast(y, x.dtype)
    return Tensor._wrap(dispatch.call("scatter_add", x._data, index, y._data))


def index_fill(x, axis, index, value):
    """``x`` with the slices along ``axis`` at ``index`` set to ``value``."""
    ax = _axis(axis, x.ndim)
    idx = ops.cast(_tensor(index, "index"), mdt.int64)
    return ops.setitem(x, (slice(None),) * ax + (idx,),
                       value if isinstance(value, Tensor) else float(value)
                       if x.dtype.is_floating else value)


def searchsorted(sorted_sequence, values, out_int32=False, right=False, side=None,
                 sorter=None):
    """Where ``values`` would be inserted into the last axis of ``sorted_sequence`` to keep
    it sorted."""
    seq = _host(_tensor(sorted_sequence, "sorted_sequence"))
    vals = values.asnumpy() if isinstance(values, Tensor) else np.asarray(values)
    side = side or ("right" if right else "left")
    if sorter is not None:
        seq = np.take_along_axis(seq, _host(sorter), -1)
    if seq.ndim == 1:
        out = np.searchsorted(seq, vals, side=side)
    else:
        out = np.stack([np.searchsorted(s, v, side=side)
                        for s, v in zip(seq.reshape(-1, seq.shape[-1]),
                                        vals.reshape(-1, vals.shape[-1]))]).reshape(vals.shape)
    return Tensor(out.astype(np.int32 if out_int32 else np.int64))


def bincount(input, weights=None, minlength=0):
    """Counts of each non-negative integer value (weighted sums with ``weights``)."""
    a = _host(_tensor(input))
    w = None if weights is None else _host(weights)
    out = np.bincount(a.reshape(-1), None if w is None else w.reshape(-1), minlength)
    return Tensor(out if w is not None else out.astype(np.int64))


def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by 90 degrees ``k`` times in the plane ``dims``."""
    x = _tensor(input)
    k %= 4
    d0, d1 = dims
    for _ in range(k):
        x = ops.swapaxes(ops.flip(x, (d1,)), d0, d1)
    return x


def fliplr(input):
    """``input`` reversed along axis 1."""
    return ops.flip(input, (1,))


def flipud(input):
    """``input`` reversed along axis 0."""
    return ops.flip(input, (0,))


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (the first axis of size 3 when None)."""
    x = _tensor(input)
    if dim is None:
        dim = next((i for i, s in enumerate(x.shape) if s == 3), None)
        if dim is None:
            raise ValueError(f"cross: no dimension of size 3 in shape {x.shape}")
    ax = _axis(dim, x.ndim, "dim")
    lead = (slice(None),) * ax

    def part(t, i):
        return t[lead + (slice(i, i + 1),)]
    a = [part(x, i) for i in range(3)]
    b = [part(other, i) for i in range(3)]
    return ops.concat((ops.sub(ops.mul(a[1], b[2]), ops.mul(a[2], b[1])),
                       ops.sub(ops.mul(a[2], b[0]), ops.mul(a[0], b[2])),
                       ops.sub(ops.mul(a[0], b[1]), ops.mul(a[1], b[0]))), ax)


def hstack(tensors):
    """Joined along axis 1 (axis 0 for 1-d tensors)."""
    tensors = [_tensor(t, "tensors") for t in tensors]
    return ops.concat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(inputs):
    """Joined along axis 0 (1-d tensors as rows)."""
    rows = [ops.reshape(t, (1, -1)) if _tensor(t, "inputs").ndim < 2 else t for t in inputs]
    return ops.concat(rows, 0)
