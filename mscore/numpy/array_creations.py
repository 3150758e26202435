"""``mindspore.numpy``'s array creation functions, thin over :mod:`mscore.ops`."""
from __future__ import annotations

import numbers

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.numpy._convert import asarray as _asarray

__all__ = [
    "array", "asarray", "asfarray", "copy_", "ones", "zeros", "full", "empty", "ones_like",
    "zeros_like", "full_like", "empty_like", "arange", "linspace", "logspace", "geomspace",
    "eye", "identity", "tri", "tril", "triu", "diag", "diagflat", "diagonal", "meshgrid",
    "indices", "rand", "randn", "randint",
]


def _shape(shape):
    if isinstance(shape, Tensor):
        shape = shape.asnumpy().tolist()
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _dt(dtype, default=mdt.float32):
    return default if dtype is None else mdt.as_dtype(dtype)


def array(obj, dtype=None, copy=True, ndmin=0):
    """A Tensor of ``obj`` (at least ``ndmin`` dimensions)."""
    out = _asarray(obj, dtype)
    if copy and isinstance(obj, Tensor):
        out = out.copy()
    while out.ndim < ndmin:
        out = ops.expand_dims(out, 0)
    return out


def asarray(a, dtype=None):
    """``a`` as a Tensor (no copy when it is one already)."""
    return _asarray(a, dtype)


def asfarray(a, dtype=mdt.float32):
    """``a`` as a floating Tensor."""
    dtype = mdt.as_dtype(dtype)
    return _asarray(a, dtype if dtype.is_floating else mdt.float32)


def copy_(a):
    """A copy of ``a``."""
    return _asarray(a).copy()


def ones(shape, dtype=mdt.float32):
    """Ones of ``shape``."""
    return ops.ones(_shape(shape), _dt(dtype))


def zeros(shape, dtype=mdt.float32):
    """Zeros of ``shape``."""
    return ops.zeros(_shape(shape), _dt(dtype))


def empty(shape, dtype=mdt.float32):
    """A Tensor of ``shape`` (zeros: values are always initialised)."""
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    """``fill_value`` everywhere in ``shape`` (its dtype inferred as ``array`` does)."""
    if isinstance(fill_value, (Tensor, list, tuple, np.ndarray)):
        return ops.broadcast_to(_asarray(fill_value, dtype), _shape(shape))
    dt = mdt.as_dtype(dtype) if dtype is not None else _asarray(fill_value).dtype
    return ops.full(_shape(shape), fill_value, dtype=dt)


def _like(a, dtype, shape, fill):
    a = _asarray(a)
    return full(a.shape if shape is None else shape, fill, dtype or a.dtype)


def ones_like(a, dtype=None, shape=None):
    """Ones with ``a``'s shape and dtype (or the given ones)."""
    return _like(a, dtype, shape, 1)


def zeros_like(a, dtype=None, shape=None):
    """Zeros with ``a``'s shape and dtype (or the given ones)."""
    return _like(a, dtype, shape, 0)


def empty_like(prototype, dtype=None, shape=None):
    """Zeros with ``prototype``'s shape and dtype (values are always initialised)."""
    return _like(prototype, dtype, shape, 0)


def full_like(a, fill_value, dtype=None, shape=None):
    """``fill_value`` with ``a``'s shape and dtype (or the given ones)."""
    return _like(a, dtype, shape, fill_value)


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``: int32 for ints, float32 for floats."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, stop, step)]
    floats = any(isinstance(v, float) for v in values)
    dt = mdt.as_dtype(dtype) if dtype is not None else (mdt.float32 if floats else mdt.int32)
    return Tensor(np.arange(*values).astype(dt.np_dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    start = start.asnumpy() if isinstance(start, Tensor) else start
    stop = stop.asnumpy() if isinstance(stop, Tensor) else stop
    values, step = np.linspace(start, stop, int(num), endpoint, retstep=True, axis=axis)
    out = Tensor(values.astype(_dt(dtype).np_dtype))
    return (out, step) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``."""
    values = np.logspace(start, stop, int(num), endpoint, base, axis=axis)
    return Tensor(values.astype(_dt(dtype).np_dtype))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values spaced evenly on a log scale from ``start`` to ``stop``."""
    values = np.geomspace(start, stop, int(num), endpoint, axis=axis)
    return Tensor(values.astype(_dt(dtype).np_dtype))


def eye(N, M=None, k=0, dtype=mdt.float32):
    """Ones on the ``k``-th diagonal of an ``N`` x ``M`` matrix."""
    return Tensor(np.eye(N, M, k, dtype=_dt(dtype).np_dtype))


def identity(n, dtype=mdt.float32):
    """The ``n`` x ``n`` identity."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=mdt.float32):
    """Ones at and below the ``k``-th diagonal."""
    return Tensor(np.tri(N, M, k, dtype=_dt(dtype).np_dtype))


def tril(m, k=0):
    """Lower triangle of the last two axes (the rest zero)."""
    return ops.tril(_asarray(m), k)


def triu(m, k=0):
    """Upper triangle of the last two axes (the rest zero)."""
    return ops.triu(_asarray(m), k)


def diag(v, k=0):
    """A 1-d ``v`` as a diagonal matrix; the ``k``-th diagonal of a 2-d one."""
    return ops.diag(_asarray(v), k)


def diagflat(v, k=0):
    """The flattened ``v`` as the ``k``-th diagonal of a square matrix."""
    return ops.diag(ops.reshape(_asarray(v), (-1,)), k)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of the ``axis1``/``axis2`` planes as the last axis."""
    return ops.diagonal(_asarray(a), offset, axis1, axis2)


def meshgrid(*xi, sparse=False, indexing="xy"):
    """Coordinate grids from 1-d coordinate vectors."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing: expected 'xy' or 'ij', got {indexing!r}")
    vectors = [ops.reshape(_asarray(x), (-1,)) for x in xi]
    n = len(vectors)
    shapes = []
    for i, v in enumerate(vectors):
        shape = [1] * n
        shape[i] = v.shape[0]
        shapes.append(shape)
    if indexing == "xy" and n >= 2:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    out = [ops.reshape(v, tuple(s)) for v, s in zip(vectors, shapes)]
    if sparse:
        return out
    full_shape = tuple(max(s[i] for s in shapes) for i in range(n))
    return [ops.broadcast_to(o, full_shape) for o in out]


def indices(dimensions, dtype=mdt.int32, sparse=False):
    """The index grids of an array of shape ``dimensions``."""
    grids = np.indices(tuple(dimensions), dtype=_dt(dtype).np_dtype, sparse=sparse)
    return tuple(Tensor(g) for g in grids) if sparse else Tensor(grids)


def rand(*shape, dtype=mdt.float32):
    """Uniform draws in ``[0, 1)`` of ``shape``."""
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return ops.cast(ops.rand(tuple(shape)), _dt(dtype))


def randn(*shape, dtype=mdt.float32):
    """Standard normal draws of ``shape``."""
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return ops.cast(ops.randn(tuple(shape)), _dt(dtype))


def randint(minval, maxval=None, shape=None, dtype=mdt.int32):
    """Integers drawn uniformly from ``[minval, maxval)``."""
    if maxval is None:
        minval, maxval = 0, minval
    shape = () if shape is None else _shape(shape)
    draws = ops.uniform(shape, float(minval), float(maxval))
    return ops.cast(ops.floor(draws), _dt(dtype))
