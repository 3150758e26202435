"""Running (cumulative) reductions of ``mindspore.ops``: sums, products, extrema and
``logcumsumexp`` along an axis, and ``diff``."""
from __future__ import annotations

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _axis, _axis1, _check_tensor, _tensor
from mscore.ops.array.manipulation import reshape, swapaxes
from mscore.ops.control import cast
from mscore.ops.linalg.products import matmul
from mscore.ops.primitive_base import Primitive, check_bool

_wrap = Tensor._wrap


def _cumsum_axis(x, axis):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis: expected an int, got {type(axis).__name__}")
    return _axis1(axis, x.ndim)


def cumulative_sum(x, axis, exclusive=False, reverse=False):
    """Running sums along ``axis`` as one matrix product with a triangular mask (so it
    differentiates and compiles on every backend); integer inputs keep their dtype."""
    x = _check_tensor(x, "x")
    ax = _cumsum_axis(x, axis)
    n = x.shape[ax] if x.ndim else 1
    rows = call("reshape", call("arange", 0, n, 1, mdt.int64), (n, 1))
    cols = call("reshape", call("arange", 0, n, 1, mdt.int64), (1, n))
    # mask[i, j]: input element i contributes to output j
    if reverse:
        keep = call("greater", rows, cols) if exclusive else call("greater_equal", rows,
                                                                  cols)
    else:
        keep = call("less", rows, cols) if exclusive else call("less_equal", rows, cols)
    work = x.dtype if x.dtype.is_floating else mdt.float64
    mask = _wrap(call("cast", keep, work))
    data = x if x.dtype is work else cast(x, work)
    moved = swapaxes(data, ax, -1) if x.ndim > 1 else reshape(data, (1, n))
    out = matmul(moved, mask)
    out = swapaxes(out, ax, -1) if x.ndim > 1 else reshape(out, x.shape)
    return out if work is x.dtype else cast(out, x.dtype)


def cumsum(x, axis, dtype=None):
    """Running sums of ``x`` along ``axis`` (``dtype`` casts the input first)."""
    x = _check_tensor(x, "x")
    if dtype is not None:
        x = cast(x, dtype)
    return cumulative_sum(x, axis)


class CumSum(Primitive):
    """``CumSum(exclusive=False, reverse=False)(input, axis)``: running sums."""

    def __init__(self, exclusive=False, reverse=False):
        super().__init__()
        self.exclusive = check_bool(exclusive, "exclusive", "CumSum")
        self.reverse = check_bool(reverse, "reverse", "CumSum")

    def compute(self, input, axis):
        return cumulative_sum(input, axis, self.exclusive, self.reverse)


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


def diff(x, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``."""
    ax = _axis(axis, x.ndim)
    parts = [p for p in (prepend, x, append) if p is not None]
    x = ops.concat(parts, ax) if len(parts) > 1 else x
    lead = (slice(None),) * ax
    for _ in range(n):
        x = ops.sub(x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)])
    return x
