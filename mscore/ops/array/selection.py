"""Selection and scatter functions of ``mindspore.ops``: by mask, by index along an axis, and
scatters into a copy, built from the differentiable ``getitem``/``setitem`` and ``gather``."""
from __future__ import annotations

import numpy as np

from mscore import dispatch, ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops._args import _axis, _host, _tensor
from mscore.ops.array.indexing import _grids

__all__ = [
    "masked_select", "index_select", "scatter",
    "tensor_scatter_elements", "index_add", "index_fill",
]


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


# -- shapes and selection -----------------------------------------------------------------
def index_select(input, axis, index):
    """Slices of ``input`` along ``axis`` at the 1-d integer ``index``."""
    x = _tensor(input)
    idx = _tensor(index, "index")
    if idx.ndim != 1:
        raise ValueError(f"index: expected a 1-d Tensor, got shape {idx.shape}")
    return ops.gather(x, idx, _axis(axis, x.ndim))


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
