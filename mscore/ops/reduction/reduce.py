"""Reductions: ``sum``, ``mean``, ``var``/``std``, ``max``/``min``, ``argmax``/``argmin``,
``all``/``any``, ``logsumexp``, ``prod``, ``nansum``/``nanmean``, ``count_nonzero``,
``aminmax``, norms and norm clipping, with their Primitives.
"""
from __future__ import annotations

import builtins
import math
import numbers

from mscore import dispatch, ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import (
    _as_tensor,
    _axes,
    _axis,
    _axis1,
    _bool,
    _check_tensor,
    _float_input,
    _scalar_array,
    _tensor,
)
from mscore.ops.array.creation import full, zeros
from mscore.ops.array.manipulation import expand_dims, reshape, squeeze, stack
from mscore.ops.control import cast, stop_gradient
from mscore.ops.math.elementwise import (
    abs,
    add,
    div,
    exp,
    isfinite,
    log,
    maximum,
    minimum,
    mul,
    pow,
    sqrt,
    square,
    sub,
)
from mscore.ops.primitive_base import Primitive, check_bool, check_int

_wrap = Tensor._wrap


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) along ``dim``, computed stably."""
    x = _float_input(input)
    m = stop_gradient(amax(x, dim, True))
    out = add(log(sum(exp(sub(x, m)), dim, True)), m)
    return out if keepdim else squeeze(out, _axes(dim, x.ndim))


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (all axes when None); bool inputs count as int64."""
    x = _check_tensor(input, "input")
    data = x._data
    if dtype is not None:
        data = call("cast", data, mdt.as_dtype(dtype))
    elif x.dtype.is_bool:
        data = call("cast", data, mdt.int64)
    return _wrap(call("sum", data, axis=_axes(dim, x.ndim, "dim"), keepdims=bool(keepdim)))


reduce_sum = sum


def mean(x, axis=None, keep_dims=False):
    """Mean over ``axis`` (all axes when None); ints give float32."""
    x = _check_tensor(x, "x")
    axes = _axes(axis, x.ndim)
    shape = x.shape
    count = math.prod(shape) if axes is None else math.prod(shape[a] for a in axes)
    data = x._data if x.dtype.is_floating else call("cast", x._data, mdt.float32)
    total = call("sum", data, axis=axes, keepdims=bool(keep_dims))
    return _wrap(call("div", total, call("full", (), float(builtins.max(count, 1)),
                                         dispatch.dtype(total))))


reduce_mean = mean


def var(input, axis=None, ddof=0, keepdims=False):
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom."""
    x = _float_input(input)
    axes = _axes(axis, x.ndim)
    m = mean(x, axes, True)
    d = sub(x, m)
    shape = x.shape
    count = math.prod(shape) if axes is None else math.prod(shape[a] for a in axes)
    return div(sum(mul(d, d), axes, keepdims), float(builtins.max(count - ddof, 1)))


def _masked_extreme(x, where, initial):
    """``x`` with the positions ``where`` excludes replaced by ``initial`` (required then),
    for amax/amin's ``where``/``initial`` arguments."""
    if where is None:
        return x
    if initial is None:
        raise ValueError("where: a reduction with 'where' needs 'initial' for the excluded "
                         "elements")
    return _wrap(call("where", _bool(where), x._data, _scalar_array(initial, x.dtype)))


def _reduce_extreme(op, input, axis, keepdims, initial, where):
    x = _check_tensor(input, "input")
    x = _masked_extreme(x, where, initial)
    out = _wrap(call(op, x._data, axis=_axes(axis, x.ndim), keepdims=bool(keepdims)))
    if initial is not None:
        out = (maximum if op == "max" else minimum)(out, initial)
    return out


def amax(input, axis=None, keepdims=False, *, initial=None, where=None):
    """Largest value over ``axis``; ``initial`` takes part in the comparison and
    ``where`` (a mask) limits it to the selected elements."""
    return _reduce_extreme("max", input, axis, keepdims, initial, where)


def amin(input, axis=None, keepdims=False, *, initial=None, where=None):
    """Smallest value over ``axis`` (``initial``/``where`` as in :func:`amax`)."""
    return _reduce_extreme("min", input, axis, keepdims, initial, where)


def max(input, axis=None, keepdims=False, *, initial=None, where=None):
    """MindSpore 2.x ``ops.max``: ``(values, indices)`` along ``axis``; when ``axis`` is
    None the overall maximum and, as MindSpore 2.10 returns it, index 0."""
    x = _masked_extreme(_check_tensor(input, "input"), where, initial)
    if axis is None:
        flat = reshape(x, (-1,))
        return amax(flat, 0, False, initial=initial), zeros((), mdt.int64)
    return amax(x, axis, keepdims, initial=initial), argmax(x, axis, keepdims)


def min(input, axis=None, keepdims=False, *, initial=None, where=None):
    """MindSpore 2.x ``ops.min``: ``(values, indices)`` (index 0 when ``axis`` is None,
    as in MindSpore 2.10)."""
    x = _masked_extreme(_check_tensor(input, "input"), where, initial)
    if axis is None:
        flat = reshape(x, (-1,))
        return amin(flat, 0, False, initial=initial), zeros((), mdt.int64)
    return amin(x, axis, keepdims, initial=initial), cast(argmin(x, axis, keepdims),
                                                          mdt.int64)


def _arg_extreme(op, x, dim, keepdim, name):
    if dim is None:
        return _wrap(call(op, call("reshape", x._data, (-1,)), axis=0))
    ax = _axis1(dim, x.ndim, name)
    out = _wrap(call(op, x._data, axis=ax))
    return expand_dims(out, ax) if keepdim else out


def argmax(input, dim=None, keepdim=False):
    """Index of the first maximum along ``dim`` (of the flattened input when None)."""
    return _arg_extreme("argmax", _check_tensor(input, "input"), dim, keepdim, "dim")


def argmin(input, axis=None, keepdims=False):
    """Index (int32, as in MindSpore) of the first minimum along ``axis`` (of the
    flattened input when None)."""
    out = _arg_extreme("argmin", _check_tensor(input, "input"), axis, keepdims, "axis")
    return cast(out, mdt.int32)


def all(input, axis=None, keep_dims=False):
    """True when every element along ``axis`` is true."""
    x = _as_tensor(input)
    return _wrap(call("all", _bool(x), axis=_axes(axis, x.ndim), keepdims=bool(keep_dims)))


def any(input, axis=None, keep_dims=False):
    """True when some element along ``axis`` is true."""
    x = _as_tensor(input)
    return _wrap(call("any", _bool(x), axis=_axes(axis, x.ndim), keepdims=bool(keep_dims)))


def std(input, axis=None, ddof=0, keepdims=False):
    """Standard deviation over ``axis`` with ``ddof`` delta degrees of freedom."""
    return sqrt(var(input, axis, ddof, keepdims))


def _acc(t):
    """``t`` in the dtype norms accumulate in: float64 stays, anything else is float32."""
    return t if t.dtype is mdt.float64 else cast(t, mdt.float32)


def _norm_of(t, norm_type):
    if norm_type == math.inf:
        return amax(abs(t))
    if norm_type == -math.inf:
        return amin(abs(t))
    return pow(sum(pow(abs(t), float(norm_type))), 1.0 / float(norm_type))


def clip_by_norm(x, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale ``x`` (a Tensor or a tuple/list of them) so that its total ``norm_type``-norm
    is at most ``max_norm``; returns the same structure."""
    single = isinstance(x, Tensor)
    ts = [x] if single else list(x)
    if not ts or not builtins.all(isinstance(t, Tensor) for t in ts):
        raise TypeError("x: expected a Tensor or a tuple/list of Tensors")
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real):
        raise TypeError(f"norm_type: expected a number, got {type(norm_type).__name__}")
    norms = [_norm_of(_acc(t), norm_type) for t in ts]
    if len(norms) == 1:
        total = norms[0]
    elif norm_type in (math.inf,):
        total = amax(stack(norms))
    elif norm_type == -math.inf:
        total = amin(stack(norms))
    else:
        total = _norm_of(stack(norms), norm_type)
    if error_if_nonfinite and not bool(isfinite(total).asnumpy()):
        raise RuntimeError(f"clip_by_norm: the total norm of order {norm_type} is "
                           f"non-finite")
    coef = div(max_norm, add(total, 1e-6))
    coef = minimum(coef, 1.0)
    out = [mul(t, cast(coef, t.dtype)) for t in ts]
    return out[0] if single else tuple(out)


def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    """Scale every Tensor of the tuple ``x`` by ``clip_norm / max(global_norm,
    clip_norm)``, where the global norm is the 2-norm of all of them together."""
    if use_norm is not None:
        raise ValueError("use_norm: only None is supported (as in MindSpore 2.10)")
    single = isinstance(x, Tensor)
    ts = [x] if single else list(x) if isinstance(x, (tuple, list)) else None
    if not ts or not builtins.all(isinstance(t, Tensor) for t in ts):
        raise TypeError("x: expected a Tensor or a tuple of Tensors")
    squares = [sum(square(_acc(t))) for t in ts]
    work = squares[0].dtype
    if isinstance(clip_norm, Tensor):
        clip = cast(clip_norm, work)
    else:
        if isinstance(clip_norm, bool) or not isinstance(clip_norm, numbers.Real) or \
                clip_norm <= 0:
            raise ValueError(f"clip_norm: expected a positive number, got {clip_norm!r}")
        clip = full((), float(clip_norm), work)
    total = squares[0]
    for s in squares[1:]:
        total = add(total, s)
    global_norm = sqrt(total)
    coef = div(clip, maximum(global_norm, clip))
    out = [mul(t, cast(coef, t.dtype)) for t in ts]
    return out[0] if single else tuple(out)


class _Reduce(Primitive):
    """``Reduce*(keep_dims=False)(x, axis=())``: ``axis`` () or None reduces every axis."""

    def __init__(self, keep_dims=False):
        super().__init__()
        self.keep_dims = check_bool(keep_dims, "keep_dims", type(self).__name__)

    def compute(self, x, axis=()):
        return self._reduce(x, None if axis in ((), [], None) else axis, self.keep_dims)


class ReduceMax(_Reduce):
    """``ReduceMax(keep_dims=False)(x, axis=())``."""

    @staticmethod
    def _reduce(x, axis, keep):
        return amax(x, axis, keep)


class ReduceMin(_Reduce):
    """``ReduceMin(keep_dims=False)(x, axis=())``."""

    @staticmethod
    def _reduce(x, axis, keep):
        return amin(x, axis, keep)


class ReduceAll(_Reduce):
    """``ReduceAll(keep_dims=False)(x, axis=None)``: logical and."""

    def compute(self, input, axis=None):
        return _Reduce.compute(self, input, axis)

    @staticmethod
    def _reduce(x, axis, keep):
        return all(x, axis, keep)


class ReduceAny(_Reduce):
    """``ReduceAny(keep_dims=False)(x, axis=())``: logical or."""

    @staticmethod
    def _reduce(x, axis, keep):
        return any(x, axis, keep)


class _ArgWithValue(Primitive):
    _value, _index = None, None

    def __init__(self, axis=0, keep_dims=False):
        super().__init__()
        prim = type(self).__name__
        self.axis = check_int(axis, "axis", prim)
        self.keep_dims = check_bool(keep_dims, "keep_dims", prim)

    def compute(self, input):
        index = type(self)._index(input, self.axis, self.keep_dims)
        value = type(self)._value(input, self.axis, self.keep_dims)
        return index, value


class ArgMaxWithValue(_ArgWithValue):
    """``ArgMaxWithValue(axis=0, keep_dims=False)(x)`` returns ``(indices, values)``."""

    _value = staticmethod(amax)
    _index = staticmethod(argmax)


def _argmin64(x, axis, keep):
    return cast(argmin(x, axis, keep), mdt.int64)


class ArgMinWithValue(_ArgWithValue):
    """``ArgMinWithValue(axis=0, keep_dims=False)(x)`` returns ``(indices, values)``."""

    _value = staticmethod(amin)
    _index = staticmethod(_argmin64)


class Argmax(Primitive):
    """``Argmax(axis=-1, output_type=ms.int32)(x)``: indices of the maxima."""

    _fn = staticmethod(argmax)

    def __init__(self, axis=-1, output_type=mdt.int32):
        super().__init__()
        prim = type(self).__name__
        self.axis = check_int(axis, "axis", prim)
        output_type = mdt.as_dtype(output_type, "output_type")
        if output_type not in (mdt.int32, mdt.int64):
            raise ValueError(f"{prim}: output_type must be int32 or int64, got "
                             f"{output_type}")
        self.output_type = output_type

    def compute(self, input_x):
        return cast(type(self)._fn(input_x, self.axis), self.output_type)


class Argmin(Argmax):
    """``Argmin(axis=-1, output_type=ms.int32)(x)``: indices of the minima."""

    _fn = staticmethod(argmin)

    def compute(self, x):
        return cast(type(self)._fn(x, self.axis), self.output_type)


class ReduceSum(_Reduce):
    """``ReduceSum(keep_dims=False)(x, axis=())``; ``skip_mode=True`` (an empty ``axis``
    meaning no reduction) is not supported."""

    def __init__(self, keep_dims=False, skip_mode=False):
        super().__init__(keep_dims)
        if skip_mode is not False:
            raise NotImplementedError("ReduceSum: skip_mode=True is not supported")

    @staticmethod
    def _reduce(x, axis, keep):
        return sum(x, axis, keep)


class ReduceMean(_Reduce):
    """``ReduceMean(keep_dims=False)(x, axis=())``."""

    @staticmethod
    def _reduce(x, axis, keep):
        return mean(x, axis, keep)


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
