"""MindSpore 2.10's Tensor methods that order or search: sorting, top-k, medians and k-th
values, distinct values, non-zero positions, ``masked_select``, ``searchsorted`` and
``bincount``; each a thin binding to the functional op in :mod:`mscore.ops` (attached by
:mod:`mscore.ops.tensor_api`)."""
from __future__ import annotations

from mscore import ops
from mscore.ops.array import sorting
from mscore.ops.tensor_api.helpers import dim_alias
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
method = METHODS.method


# -- orders ------------------------------------------------------------------------------------
@method
def sort(self, dim=-1, descending=False, stable=False, *, axis=None):
    """``(values, indices)`` sorted along ``dim``."""
    return sorting.sort(self, dim_alias(dim, "dim", "axis", axis, -1), descending)


@method
def argsort(self, axis=-1, descending=False, *, dim=None, stable=False):
    """Indices that sort the tensor along ``axis``."""
    return sorting.argsort(self, dim_alias(axis, "axis", "dim", dim, -1), descending)


@method
def msort(self):
    """Sorted along the first axis."""
    return sorting.msort(self)


@method
def topk(self, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (smallest) entries along ``dim``."""
    return sorting.topk(self, k, dim, largest, sorted)


@method
def top_k(self, k, sorted=True):
    """``(values, indices)`` of the ``k`` largest entries along the last axis."""
    return sorting.topk(self, k, -1, True, sorted)


@method
def median(self, axis=-1, keepdims=False, *, dim=None, keepdim=None):
    """``(values, indices)`` of the lower median along ``axis``."""
    axis = dim_alias(axis, "axis", "dim", dim, -1)
    keepdims = keepdim if keepdim is not None else keepdims
    return ops.median(self, axis, keepdims)


@method
def kthvalue(self, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest entry along ``dim``."""
    return sorting.kthvalue(self, k, dim, keepdim)


@method
def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values, with the inverse indices and counts on request."""
    return sorting.unique_values(self, sorted, return_inverse, return_counts, dim)


@method
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """Runs of equal consecutive values collapsed to one."""
    return sorting.unique_consecutive(self, return_inverse, return_counts, dim)


@method
def nonzero(self, *, as_tuple=False):
    """Indices of the non-zero entries."""
    return sorting.nonzero(self, as_tuple)


@method
def argwhere(self):
    """``(n, ndim)`` indices of the non-zero entries."""
    return sorting.argwhere(self)


@method
def masked_select(self, mask):
    """The entries where ``mask`` is true, as 1-d."""
    return ops.masked_select(self, mask)


@method
def searchsorted(self, v, side="left", sorter=None):
    """Where ``v`` would be inserted to keep the last axis sorted."""
    return sorting.searchsorted(self, v, side=side, sorter=sorter)


@method
def bincount(self, weights=None, minlength=0):
    """Counts of each non-negative integer value."""
    return ops.bincount(self, weights, minlength)
