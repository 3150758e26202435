"""MindSpore 2.10's reducing Tensor methods: sums, means, products, extremes (``max``/``min``
with MindSpore's three overloads), ``all``/``any``, moments, norms, running (cumulative)
reductions and the trace; each a thin binding to the functional op in :mod:`mscore.ops`
(attached by :mod:`mscore.ops.tensor_api`)."""
from __future__ import annotations

import numbers

from mscore import ops
from mscore.common import dtype as mdt
from mscore.ops.reduction import reduce as _reduce
from mscore.ops.tensor_api.helpers import dim_alias
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
method = METHODS.method


# -- reductions -------------------------------------------------------------------------------
@method
def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None,
        initial=None):
    """Sum over ``dim`` (every axis when None); ``axis``/``keepdims``/``initial`` are the
    NumPy-style overload's spellings."""
    if isinstance(keepdim, mdt.DType):  # sum(axis, dtype) positionally (the other overload)
        keepdim, dtype = False, keepdim
    dim = dim_alias(dim, "dim", "axis", axis, None)
    keepdim = keepdims if keepdims is not None else keepdim
    out = ops.sum(self, dim, keepdim, dtype=dtype)
    return out if initial is None else ops.add(out, initial)


@method
def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None, keep_dims=None):
    """Mean over ``dim`` (every axis when None)."""
    dim = dim_alias(dim, "dim", "axis", axis, None)
    keepdim = keep_dims if keep_dims is not None else keepdim
    x = self if dtype is None else ops.cast(self, dtype)
    return ops.mean(x, dim, keepdim)


@method
def prod(self, dim=None, keepdim=False, dtype=None, *, axis=None, keep_dims=None):
    """Product over ``dim`` (every axis when None)."""
    dim = dim_alias(dim, "dim", "axis", axis, None)
    keepdim = keep_dims if keep_dims is not None else keepdim
    return ops.prod(self, dim, keepdim, dtype)


@method
def nansum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    """Sum over ``dim`` with NaN counted as 0."""
    dim = dim_alias(dim, "dim", "axis", axis, None)
    keepdim = keepdims if keepdims is not None else keepdim
    return ops.nansum(self, dim, keepdim, dtype)


@method
def nanmean(self, axis=None, keepdims=False, *, dtype=None):
    """Mean over ``axis`` of the entries that are not NaN."""
    return ops.nanmean(self, axis, keepdims, dtype)


def _extreme(self, reduce, arg, args, kwargs, name):
    """MindSpore's three overloads of ``max``/``min``: no argument (the value), a positional
    ``dim`` or ``dim=`` (``(values, indices)``), ``axis=`` & co. (the values; the indices too
    with ``return_indices=True``)."""
    if not args and not kwargs:
        return reduce(self)
    if args and not isinstance(args[0], numbers.Integral) and args[0] is not None:
        raise TypeError(f"{name}: expected an int dim, got {type(args[0]).__name__}")
    if (args and "axis" not in kwargs) or "dim" in kwargs:
        dim = args[0] if args else kwargs.pop("dim")
        keepdim = args[1] if len(args) > 1 else kwargs.pop("keepdim", False)
        if kwargs:
            raise TypeError(f"{name}: unexpected arguments {sorted(kwargs)}")
        return reduce(self, dim, keepdim), ops.cast(arg(self, dim, keepdim), mdt.int64)
    axis = kwargs.pop("axis", args[0] if args else None)
    keepdims = kwargs.pop("keepdims", args[1] if len(args) > 1 else False)
    initial, where = kwargs.pop("initial", None), kwargs.pop("where", None)
    return_indices = kwargs.pop("return_indices", False)
    if kwargs:
        raise TypeError(f"{name}: unexpected arguments {sorted(kwargs)}")
    values = reduce(self, axis, keepdims, initial=initial, where=where)
    return (values, ops.cast(arg(self, axis, keepdims), mdt.int64)) if return_indices \
        else values


@method
def max(self, *args, **kwargs):
    """``max()``: the largest value; ``max(dim, keepdim=False)``: ``(values, indices)``;
    ``max(axis=None, keepdims=False, *, initial=None, where=True, return_indices=False)``:
    the values (MindSpore's three overloads)."""
    return _extreme(self, ops.amax, ops.argmax, args, kwargs, "max")


@method
def min(self, *args, **kwargs):
    """``min()``, ``min(dim, keepdim=False)``, ``min(axis=..., ...)``: as :meth:`max`."""
    return _extreme(self, ops.amin, ops.argmin, args, kwargs, "min")


@method
def amax(self, axis=None, keepdims=False, *, initial=None, where=None):
    """Largest values over ``axis``."""
    return ops.amax(self, axis, keepdims, initial=initial, where=where)


@method
def amin(self, axis=None, keepdims=False, *, initial=None, where=None):
    """Smallest values over ``axis``."""
    return ops.amin(self, axis, keepdims, initial=initial, where=where)


@method
def aminmax(self, *, axis=0, keepdims=False):
    """``(minimum, maximum)`` along ``axis``."""
    return ops.aminmax(self, axis, keepdims)


@method
def ptp(self, axis=None, keepdims=False):
    """Range (maximum minus minimum) over ``axis``."""
    return ops.sub(ops.amax(self, axis, keepdims), ops.amin(self, axis, keepdims))


@method
def argmax(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
    """Index of the largest value over ``axis`` (the flattened tensor when None)."""
    axis = dim_alias(axis, "axis", "dim", dim, None)
    keepdims = keepdim if keepdim is not None else keepdims
    return ops.argmax(self, axis, keepdims)


@method
def argmin(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
    """Index of the smallest value over ``axis`` (the flattened tensor when None)."""
    axis = dim_alias(axis, "axis", "dim", dim, None)
    keepdims = keepdim if keepdim is not None else keepdims
    return ops.argmin(self, axis, keepdims)


@method
def argmax_with_value(self, axis=0, keep_dims=False):
    """``(index, value)`` of the maximum along ``axis``."""
    return _reduce.argmax_with_value(self, axis, keep_dims)


@method
def argmin_with_value(self, axis=0, keep_dims=False):
    """``(index, value)`` of the minimum along ``axis``."""
    return _reduce.argmin_with_value(self, axis, keep_dims)


@method
def all(self, axis=None, keep_dims=False, *, dim=None, keepdim=None):
    """True where every entry over ``axis`` is true."""
    axis = dim_alias(axis, "axis", "dim", dim, None)
    keep_dims = keepdim if keepdim is not None else keep_dims
    return ops.all(self, axis, keep_dims)


@method
def any(self, axis=None, keep_dims=False, *, dim=None, keepdim=None):
    """True where some entry over ``axis`` is true."""
    axis = dim_alias(axis, "axis", "dim", dim, None)
    keep_dims = keepdim if keepdim is not None else keep_dims
    return ops.any(self, axis, keep_dims)


def _moment(self, op, axis, ddof, keepdims, dim, correction, keepdim):
    axis = dim_alias(axis, "axis", "dim", dim, None)
    ddof = correction if correction is not None else ddof
    keepdims = keepdim if keepdim is not None else keepdims
    return op(self, axis, ddof, keepdims)


@method
def std(self, axis=None, ddof=0, keepdims=False, *, dim=None, correction=None,
        keepdim=None):
    """Standard deviation over ``axis`` with ``ddof`` (``correction``) degrees of freedom
    removed."""
    return _moment(self, ops.std, axis, ddof, keepdims, dim, correction, keepdim)


@method
def var(self, axis=None, ddof=0, keepdims=False, *, dim=None, correction=None,
        keepdim=None):
    """Variance over ``axis`` with ``ddof`` (``correction``) degrees of freedom removed."""
    return _moment(self, ops.var, axis, ddof, keepdims, dim, correction, keepdim)


@method
def logsumexp(self, dim, keepdim=False):
    """``log(sum(exp(self)))`` over ``dim``, stably."""
    return ops.logsumexp(self, dim, keepdim)


@method
def norm(self, ord=None, dim=None, keepdim=False, *, dtype=None):
    """Vector or matrix norm over ``dim``."""
    return ops.norm(self, ord, dim, keepdim, dtype=dtype)


@method
def count_nonzero(self, dim=None, *, axis=None, keep_dims=False, dtype=None):
    """Number of non-zero entries over ``dim`` (int64)."""
    dim = dim_alias(dim, "dim", "axis", axis, None)
    return ops.count_nonzero(self, () if dim is None else dim, keep_dims,
                             dtype or mdt.int64)


@method
def cumsum(self, dim=None, *, dtype=None, axis=None):
    """Running sums along ``dim``."""
    dim = dim_alias(dim, "dim", "axis", axis, None)
    if dim is None:
        return ops.cumsum(ops.reshape(self, (-1,)), 0, dtype)
    return ops.cumsum(self, dim, dtype)


@method
def cumprod(self, dim, dtype=None):
    """Running products along ``dim``."""
    return ops.cumprod(self, dim, dtype)


@method
def cummax(self, axis=None, *, dim=None):
    """``(values, indices)`` of the running maximum along ``axis``."""
    return ops.cummax(self, dim_alias(axis, "axis", "dim", dim, None))


@method
def cummin(self, axis=None, *, dim=None):
    """``(values, indices)`` of the running minimum along ``axis``."""
    return ops.cummin(self, dim_alias(axis, "axis", "dim", dim, None))


@method
def logcumsumexp(self, axis):
    """``log(cumsum(exp(self)))`` along ``axis``, stably."""
    return ops.logcumsumexp(self, axis)


@method
def trace(self, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum of the diagonal."""
    return ops.trace(self, offset, axis1, axis2, dtype)
