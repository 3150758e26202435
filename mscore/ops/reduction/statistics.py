"""Statistics of ``mindspore.ops``: medians, quantiles, covariance and ``bincount``.

Quantiles and medians pick their order statistics on the host (like the orders of
:mod:`mscore.ops.array.sorting`, they run in PyNative mode, not inside a traced program) and
interpolate with the differentiable ops.
"""
from __future__ import annotations

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops._args import _axis, _host, _tensor
from mscore.ops.array.indexing import _take_along

__all__ = [
    "quantile", "nanquantile", "cov", "median", "bincount",
]


def _quantile(input, q, axis, keepdims, ignore_nan):
    x = input if input.dtype.is_floating else ops.cast(input, mdt.float32)
    if axis is None:
        x, axis, restore = ops.reshape(x, (-1,)), 0, x.ndim
    else:
        restore = None
    axis %= x.ndim
    a = x.asnumpy()
    qs = np.atleast_1d(_host(q)).astype(np.float64)
    order = np.argsort(np.where(np.isnan(a), np.inf, a) if ignore_nan else a, axis=axis,
                       kind="stable")
    valid = (~np.isnan(a)).sum(axis=axis, keepdims=True) if ignore_nan else \
        np.full([1 if i == axis else s for i, s in enumerate(a.shape)], a.shape[axis])
    outs = []
    for qv in qs:
        pos = qv * (valid - 1)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, np.maximum(valid - 1, 0))
        frac = Tensor((pos - lo).astype(a.dtype))
        low = _take_along(x, axis, np.take_along_axis(order, np.maximum(lo, 0), axis))
        high = _take_along(x, axis, np.take_along_axis(order, hi, axis))
        val = ops.add(low, ops.mul(ops.sub(high, low), frac))
        if not keepdims:
            val = ops.squeeze(val, axis)
        elif restore is not None:
            val = ops.reshape(val, (1,) * restore)
        outs.append(val)
    out = ops.stack(outs) if np.ndim(_host(q)) else outs[0]
    return out


def quantile(input, q, axis=None, keepdims=False):
    """The ``q``-th quantiles over ``axis`` (linear interpolation between order
    statistics; a 1-d ``q`` adds a leading axis)."""
    return _quantile(input, q, axis, keepdims, ignore_nan=False)


def nanquantile(input, q, axis=None, keepdims=False):
    """:func:`quantile` ignoring NaN."""
    return _quantile(input, q, axis, keepdims, ignore_nan=True)


def nanmedian(input, axis=-1, keepdims=False):
    """``(values, indices)``: the lower median along ``axis`` ignoring NaN."""
    a = _host(input)
    axis %= max(a.ndim, 1)
    order = np.argsort(np.where(np.isnan(a), np.inf, a), axis=axis, kind="stable")
    valid = (~np.isnan(a)).sum(axis=axis, keepdims=True)
    pos = np.take_along_axis(order, np.maximum((valid - 1) // 2, 0), axis)
    values = _take_along(input, axis, pos)
    if not keepdims:
        values, pos = ops.squeeze(values, axis), np.squeeze(pos, axis)
    return values, Tensor(pos.astype(np.int64))


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the rows of ``input`` (variables) over its columns (observations),
    with frequency and analytic weights."""
    x = input if input.dtype.is_floating else ops.cast(input, mdt.float32)
    if x.ndim == 1:
        x = ops.reshape(x, (1, -1))
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = ops.cast(fweights, x.dtype)
    if aweights is not None:
        w = ops.cast(aweights, x.dtype) if w is None else ops.mul(w, aweights)
    if w is None:
        w = ops.ones((n,), x.dtype)
    w_sum = ops.sum(w)
    mean = ops.div(ops.sum(ops.mul(x, w), 1, True), w_sum)
    centred = ops.sub(x, mean)
    if aweights is None:
        norm = ops.sub(w_sum, correction)
    else:
        norm = ops.sub(w_sum, ops.div(ops.mul(ops.sum(ops.mul(w, aweights)), correction),
                                      w_sum))
    out = ops.div(ops.matmul(ops.mul(centred, w), ops.transpose(centred, (1, 0))), norm)
    return ops.squeeze(out) if input.ndim == 1 else out


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


def bincount(input, weights=None, minlength=0):
    """Counts of each non-negative integer value (weighted sums with ``weights``)."""
    a = _host(_tensor(input))
    w = None if weights is None else _host(weights)
    out = np.bincount(a.reshape(-1), None if w is None else w.reshape(-1), minlength)
    return Tensor(out if w is not None else out.astype(np.int64))
