"""MindSpore 2.10's Tensor methods that select or scatter entries: gathers, index and mask
selection, ``where``, masked fills, scatters and index updates (with their in-place
variants); each a thin binding to the functional op in :mod:`mscore.ops` (attached by
:mod:`mscore.ops.tensor_api`)."""
from __future__ import annotations

import numbers

from mscore import ops
from mscore.common.tensor import Tensor
from mscore.ops.array import selection
from mscore.ops.tensor_api.helpers import store
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
method = METHODS.method


# -- selection ----------------------------------------------------------------------------------
@method
def gather(self, dim=None, index=None, batch_dims=0, *, input_indices=None, axis=None):
    """``gather(dim, index)``: entries picked along ``dim`` (``gather_elements``);
    ``gather(input_indices, axis, batch_dims=0)``: slices along ``axis``."""
    if input_indices is not None or axis is not None:
        return ops.gather(self, dim if input_indices is None else input_indices,
                          index if axis is None else axis, batch_dims)
    if isinstance(dim, Tensor) or not isinstance(dim, numbers.Integral):
        return ops.gather(self, dim, index, batch_dims)
    return ops.gather_elements(self, dim, index)


@method
def gather_elements(self, dim, index):
    """Entries picked along ``dim`` by ``index``."""
    return ops.gather_elements(self, dim, index)


@method
def index_select(self, axis, index):
    """Slices along ``axis`` at ``index``."""
    return ops.index_select(self, axis, index)


@method
def take(self, indices, axis=None, mode="clip"):
    """Entries at ``indices`` (of the flattened tensor when ``axis`` is None)."""
    return selection.take(self, indices, axis, mode)


@method
def select(self, dim, index):
    """``select(dim, index)``: the slice at ``index`` along ``dim``;
    ``select(condition, y)``: ``self`` where ``condition`` else ``y``."""
    if isinstance(dim, Tensor):
        return ops.select(dim, self, index)
    return ops.getitem(self, (slice(None),) * (dim % self.ndim) + (index,))


@method
def where(self, condition, y):
    """``self`` where ``condition`` else ``y``."""
    return ops.where(condition, self, y)


@method
def masked_fill(self, mask, value):
    """``value`` where ``mask`` is true."""
    return ops.masked_fill(self, mask, value)


@method
def masked_fill_(self, mask, value):
    """In place: :meth:`masked_fill`; returns the tensor."""
    return store(self, ops.masked_fill(self, mask, value))


@method
def masked_scatter(self, mask, source):
    """The positions where ``mask`` is true filled in order from ``source``."""
    return selection.masked_scatter(self, mask, source)


@method
def masked_scatter_(self, mask, source):
    """In place: :meth:`masked_scatter`; returns the tensor."""
    return store(self, selection.masked_scatter(self, mask, source))


@method
def scatter(self, dim=None, index=None, src=None, *, axis=None, value=None, reduce=None):
    """``src`` (or the number ``value``) written along ``dim`` at ``index``; ``reduce``
    'add' adds instead."""
    dim = dim if axis is None else axis
    src = src if value is None else value
    if reduce == "add":
        if not isinstance(src, Tensor):
            src = ops.full(index.shape, src, self.dtype)
        return selection.scatter_add_dim(self, dim, index, src)
    if reduce is not None:
        raise ValueError(f"reduce: expected None or 'add', got {reduce!r}")
    return ops.scatter(self, dim, index, src)


@method
def scatter_(self, dim, index, src):
    """In place: :meth:`scatter`; returns the tensor."""
    return store(self, ops.scatter(self, dim, index, src))


@method
def scatter_add(self, dim, index, src):
    """``src`` added along ``dim`` at ``index``."""
    return selection.scatter_add_dim(self, dim, index, src)


@method
def scatter_add_(self, dim, index, src):
    """In place: :meth:`scatter_add`; returns the tensor."""
    return store(self, selection.scatter_add_dim(self, dim, index, src))


@method
def index_add(self, indices, y, axis, use_lock=True, check_index_bound=True, *, alpha=1):
    """``index_add(indices, y, axis)``: slices of ``y`` added along ``axis`` at
    ``indices``; ``index_add(dim, index, source, *, alpha=1)``: ``alpha * source``."""
    if isinstance(indices, numbers.Integral):  # the (dim, index, source) overload
        indices, y, axis = y, axis, indices
    return ops.index_add(self, indices, y if alpha == 1 else ops.mul(y, alpha), axis)


@method
def index_add_(self, dim, index, source, *, alpha=1):
    """In place: ``source * alpha`` added along ``dim`` at ``index``; returns the tensor."""
    source = source if alpha == 1 else ops.mul(source, alpha)
    return store(self, ops.index_add(self, index, source, dim))


@method
def index_fill(self, axis, index, value):
    """``value`` in the slices along ``axis`` at ``index``."""
    return ops.index_fill(self, axis, index, value)


@method
def index_fill_(self, dim, index, value):
    """In place: :meth:`index_fill`; returns the tensor."""
    return store(self, ops.index_fill(self, dim, index, value))


@method
def index_put(self, indices, values, accumulate=False):
    """``values`` written (added with ``accumulate``) at the advanced index ``indices``."""
    index = tuple(indices)
    if accumulate:
        return ops.setitem(self, index, ops.add(ops.getitem(self, index), values))
    return ops.setitem(self, index, values)


@method
def index_put_(self, indices, values, accumulate=False):
    """In place: :meth:`index_put`; returns the tensor."""
    return store(self, index_put(self, indices, values, accumulate))
