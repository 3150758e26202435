"""Integer bit functions, quantiles, covariance and extra random draws of
``mindspore.ops``.

Bit functions have no backend primitive and no gradient: they compute on the host with numpy
(like the orders of :mod:`mscore.ops.array.sorting`, they run in PyNative mode, not inside
a traced program). Quantiles pick their order statistics on the host and interpolate with the
differentiable ops; random draws transform the uniform and normal streams of the backend.
"""
from __future__ import annotations

import math

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore import ops
from mscore.ops.array import sorting as arr
__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift", "gcd", "lcm", "nextafter", "ldexp", "multinomial",
           "quantile", "nanquantile", "cov"]


def _host(x):
    return x.asnumpy() if isinstance(x, Tensor) else np.asarray(x)


def _integer_binary(name, fn):
    def op(input, other):
        a, b = _host(input), _host(other)
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            raise TypeError(f"{name}: expected integer or bool Tensors, got {a.dtype} and "
                            f"{b.dtype}")
        out = fn(a, b)
        dtype = input.dtype if isinstance(input, Tensor) else other.dtype
        return Tensor(np.asarray(out).astype(dtype.np_dtype))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}`` of two integer (or bool) Tensors, elementwise (on the host)."
    return op


bitwise_and = _integer_binary("bitwise_and", np.bitwise_and)
bitwise_or = _integer_binary("bitwise_or", np.bitwise_or)
bitwise_xor = _integer_binary("bitwise_xor", np.bitwise_xor)
bitwise_left_shift = _integer_binary("bitwise_left_shift", np.left_shift)
bitwise_right_shift = _integer_binary("bitwise_right_shift", np.right_shift)
gcd = _integer_binary("gcd", np.gcd)
lcm = _integer_binary("lcm", np.lcm)


def bitwise_not(input):
    """Bitwise NOT of an integer Tensor (logical NOT of a bool one), on the host."""
    a = _host(input)
    if a.dtype.kind == "f":
        raise TypeError(f"bitwise_not: expected an integer or bool Tensor, got {a.dtype}")
    return Tensor(np.invert(a))


def nextafter(input, other):
    """The next representable float after ``input`` toward ``other`` (on the host)."""
    a = _host(input)
    return Tensor(np.nextafter(a, _host(other).astype(a.dtype)).astype(a.dtype))


def ldexp(x, other):
    """``x * 2 ** other``."""
    x = x if x.dtype.is_floating else ops.cast(x, mdt.float32)
    return ops.mul(x, ops.exp(ops.mul(ops.cast(other, x.dtype) if isinstance(other, Tensor)
                                      else float(other), math.log(2.0))))


def cauchy(shape, median, sigma, dtype):
    """Cauchy draws: ``median + sigma * tan(pi * (u - 1/2))`` of uniform draws ``u``."""
    u = ops.uniform(tuple(shape), 0.0, 1.0, dtype=dtype)
    angle = ops.mul(ops.sub(u, 0.5), math.pi)
    return ops.add(ops.mul(ops.div(ops.sin(angle), ops.cos(angle)), sigma), median)


def exponential(shape, lambd, dtype):
    """Exponential draws with rate ``lambd``: ``-log(1 - u) / lambd``."""
    u = ops.uniform(tuple(shape), 0.0, 1.0, dtype=dtype)
    return ops.div(ops.neg(ops.log(ops.sub(1.0, u))), float(lambd))


def multinomial(input, num_samples, replacement=True, seed=None):
    """``num_samples`` category indices per row drawn with probabilities ``input``
    (int64), from the uniform stream."""
    probs = _host(input).astype(np.float64)
    rows = probs.reshape(-1, probs.shape[-1])
    n = int(num_samples)
    if not replacement and n > rows.shape[1]:
        raise ValueError(f"num_samples: {n} is more than the {rows.shape[1]} categories "
                         f"(replacement=False)")
    out = []
    for row in rows:
        p = row / row.sum()
        if replacement:
            draws = ops.rand((n,)).asnumpy()
            out.append(np.minimum(np.searchsorted(np.cumsum(p), draws, side="right"),
                                  len(p) - 1))
        else:  # exponential race: the n smallest -log(u) / p, without repeats
            keys = -np.log(ops.rand((len(p),)).asnumpy() + 1e-30) / np.maximum(p, 1e-300)
            out.append(np.argsort(keys, kind="stable")[:n])
    return Tensor(np.stack(out).astype(np.int64).reshape(probs.shape[:-1] + (n,)))


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
        low = arr._take_along(x, axis, np.take_along_axis(order, np.maximum(lo, 0), axis))
        high = arr._take_along(x, axis, np.take_along_axis(order, hi, axis))
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
    values = arr._take_along(input, axis, pos)
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
