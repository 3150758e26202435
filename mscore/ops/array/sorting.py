"""Sorting and searching functions of ``mindspore.ops``: orders, top-k, distinct values,
non-zero positions and ``searchsorted``.

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

from mscore import ops
from mscore.common.tensor import Tensor
from mscore.ops._args import _axis, _host, _tensor
from mscore.ops.array.indexing import _take_along

__all__ = [
    "sort", "argsort", "topk", "msort", "unique", "unique_consecutive", "nonzero", "argwhere",
    "searchsorted",
]


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
