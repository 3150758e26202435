"""``mindspore.numpy``'s math functions, thin over :mod:`mscore.ops`."""
from __future__ import annotations

import builtins
import inspect
import math

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.numpy._convert import asarray, float_input, with_dtype
from mscore.ops.math import bitwise
from mscore.ops.math.elementwise import int_fmod

__all__ = []


def _export(fn):
    __all__.append(fn.__name__)
    return fn


def _make(name, op, doc, params, prepare):
    """A function ``name(*params, dtype=None)`` applying ``op`` to the prepared inputs and
    casting to ``dtype``."""
    def fn(*args, dtype=None):
        return with_dtype(op(*[prepare(a) for a in args]), dtype)
    P = inspect.Parameter
    fn.__signature__ = inspect.Signature(
        [P(p, P.POSITIONAL_OR_KEYWORD) for p in params] +
        [P("dtype", P.POSITIONAL_OR_KEYWORD, default=None)])
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__module__ = __name__
    globals()[name] = _export(fn)


_UNARY = {
    "absolute": (ops.abs, asarray), "abs": (ops.abs, asarray),
    "fabs": (ops.abs, float_input), "negative": (ops.neg, asarray),
    "positive": (lambda x: x, asarray), "sign": (ops.sign, asarray),
    "ceil": (ops.ceil, float_input), "floor": (ops.floor, float_input),
    "trunc": (ops.trunc, float_input), "rint": (ops.round, float_input),
    "exp": (ops.exp, float_input), "exp2": (ops.exp2, float_input),
    "expm1": (ops.expm1, float_input), "log": (ops.log, float_input),
    "log2": (ops.log2, float_input), "log10": (ops.log10, float_input),
    "log1p": (ops.log1p, float_input), "sqrt": (ops.sqrt, float_input),
    "square": (ops.square, asarray), "reciprocal": (ops.reciprocal, float_input),
    "sin": (ops.sin, float_input), "cos": (ops.cos, float_input),
    "tan": (ops.tan, float_input), "sinh": (ops.sinh, float_input),
    "cosh": (ops.cosh, float_input), "tanh": (ops.tanh, float_input),
    "deg2rad": (ops.deg2rad, float_input), "radians": (ops.deg2rad, float_input),
    "rad2deg": (ops.rad2deg, float_input), "signbit": (ops.signbit, asarray),
    "arcsin": (ops.asin, float_input), "arccos": (ops.acos, float_input),
    "arctan": (ops.atan, float_input), "arcsinh": (ops.asinh, float_input),
    "arccosh": (ops.acosh, float_input), "arctanh": (ops.atanh, float_input),
    "invert": (bitwise.bitwise_not, asarray),
    "bitwise_not": (bitwise.bitwise_not, asarray),
    "cbrt": (lambda x: ops.mul(ops.sign(x), ops.pow(ops.abs(x), 1.0 / 3.0)), float_input),
}
for _name, (_op, _prep) in _UNARY.items():
    _make(_name, _op, f"``{_name}`` of the input, elementwise (``dtype`` casts the result).",
          ("a",) if _name in ("negative", "positive") else
          ("input",) if _name == "arccos" else ("x",), _prep)


def _fmod(x1, x2):
    """``fmod``; integers exact in their dtype with 0 where ``x2`` is 0 (as
    ``mindspore.numpy.fmod``, where ``ops.fmod`` gives ``x1``)."""
    exact = int_fmod(x1, x2, zero_by_zero=True)
    return ops.fmod(x1, x2) if exact is None else exact


_BINARY = {
    "add": ops.add, "subtract": ops.sub, "multiply": ops.mul, "divide": ops.div,
    "true_divide": ops.div, "floor_divide": ops.floor_divide, "remainder": ops.floor_mod,
    "mod": ops.floor_mod, "fmod": _fmod, "power": ops.pow, "float_power": ops.float_power,
    "maximum": ops.maximum, "minimum": ops.minimum, "hypot": ops.hypot,
    "logaddexp": ops.logaddexp, "logaddexp2": ops.logaddexp2, "copysign": ops.copysign,
    "heaviside": ops.heaviside, "matmul": ops.matmul, "arctan2": ops.atan2,
    "bitwise_and": ops.bitwise_and, "bitwise_or": ops.bitwise_or,
    "bitwise_xor": ops.bitwise_xor,
}


def _division_input(name):
    return float_input if name in ("divide", "true_divide", "hypot", "logaddexp",
                                   "logaddexp2", "float_power", "arctan2") else asarray


for _name, _op in _BINARY.items():
    _make(_name, _op, f"``{_name}`` of ``x1`` and ``x2``, elementwise with broadcasting "
          f"(``dtype`` casts the result).", ("x1", "x2"), _division_input(_name))


@_export
def divmod(x1, x2, dtype=None):
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    return (globals()["floor_divide"](x1, x2, dtype=dtype),
            globals()["remainder"](x1, x2, dtype=dtype))


# -- reductions -----------------------------------------------------------------------------
@_export
def sum(a, axis=None, dtype=None, keepdims=False, initial=None):
    """Sum over ``axis`` (``initial`` added)."""
    out = ops.sum(asarray(a), axis, keepdims, dtype=dtype)
    return out if initial is None else ops.add(out, initial)


@_export
def mean(a, axis=None, keepdims=False, dtype=None):
    """Mean over ``axis``."""
    a = asarray(a)
    out = ops.mean(a if a.dtype.is_floating else ops.cast(a, mdt.float32), axis, keepdims)
    return with_dtype(out, dtype if dtype is not None else
                      (None if a.dtype.is_floating else a.dtype))


@_export
def amax(a, axis=None, keepdims=False, initial=None, where=True):
    """Largest values over ``axis``."""
    return ops.amax(asarray(a), axis, keepdims, initial=initial,
                    where=None if where is True else where)


@_export
def amin(a, axis=None, keepdims=False, initial=None, where=True):
    """Smallest values over ``axis``."""
    return ops.amin(asarray(a), axis, keepdims, initial=initial,
                    where=None if where is True else where)


max = amax
min = amin
__all__ += ["max", "min"]


@_export
def ptp(x, axis=None, keepdims=False):
    """Range (maximum minus minimum) over ``axis``."""
    x = asarray(x)
    return ops.sub(ops.amax(x, axis, keepdims), ops.amin(x, axis, keepdims))


@_export
def std(x, axis=None, ddof=0, keepdims=False):
    """Standard deviation over ``axis``."""
    return ops.std(float_input(x), axis, ddof, keepdims)


@_export
def var(x, axis=None, ddof=0, keepdims=False):
    """Variance over ``axis``."""
    return ops.var(float_input(x), axis, ddof, keepdims)


@_export
def average(x, axis=None, weights=None, returned=False):
    """Weighted mean over ``axis`` (``returned``: with the sum of the weights)."""
    x = float_input(x)
    if weights is None:
        avg = ops.mean(x, axis)
        count = ops.full_like(avg, x.size // builtins.max(avg.size, 1))
        return (avg, count) if returned else avg
    w = ops.broadcast_to(float_input(weights), x.shape) if axis is None or \
        asarray(weights).ndim == x.ndim else _weights_along(float_input(weights), x, axis)
    total = ops.sum(w, axis)
    avg = ops.div(ops.sum(ops.mul(x, w), axis), total)
    return (avg, total) if returned else avg


def _weights_along(w, x, axis):
    shape = [1] * x.ndim
    shape[axis] = w.shape[0]
    return ops.broadcast_to(ops.reshape(w, tuple(shape)), x.shape)


def _nan_reduce(name, op, fill):
    def fn(a, axis=None, dtype=None, keepdims=False):
        a = asarray(a)
        clean = ops.where(ops.isnan(a), ops.full_like(a, fill), a) if a.dtype.is_floating \
            else a
        return with_dtype(op(clean, axis, keepdims), dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name[3:]}`` over ``axis`` ignoring NaN."
    globals()[name] = _export(fn)


_nan_reduce("nansum", lambda a, ax, k: ops.sum(a, ax, k), 0.0)
_nan_reduce("nanmax", lambda a, ax, k: ops.amax(a, ax, k), -math.inf)
_nan_reduce("nanmin", lambda a, ax, k: ops.amin(a, ax, k), math.inf)


@_export
def nanmean(a, axis=None, dtype=None, keepdims=False):
    """Mean over ``axis`` ignoring NaN."""
    return with_dtype(ops.nanmean(float_input(a), axis, keepdims), dtype)


@_export
def nanvar(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """Variance over ``axis`` ignoring NaN."""
    a = float_input(a)
    valid = ops.logical_not(ops.isnan(a))
    n = ops.sum(ops.cast(valid, a.dtype), axis, True)
    mu = ops.div(ops.nansum(a, axis, True), n)
    sq = ops.where(valid, ops.square(ops.sub(a, mu)), ops.zeros_like(a))
    out = ops.div(ops.sum(sq, axis, keepdims), ops.sub(n if keepdims else
                                                       ops.squeeze(n) if axis is None else
                                                       ops.squeeze(n, axis), ddof))
    return with_dtype(out, dtype)


@_export
def nanstd(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """Standard deviation over ``axis`` ignoring NaN."""
    return ops.sqrt(nanvar(a, axis, dtype, ddof, keepdims))


@_export
def cumsum(a, axis=None, dtype=None):
    """Running sums along ``axis`` (the flattened array when None)."""
    a = asarray(a)
    if axis is None:
        a, axis = ops.reshape(a, (-1,)), 0
    return ops.cumsum(a, axis, dtype)


@_export
def nancumsum(a, axis=None, dtype=None):
    """Running sums along ``axis`` with NaN counted as 0."""
    a = asarray(a)
    if a.dtype.is_floating:
        a = ops.where(ops.isnan(a), ops.zeros_like(a), a)
    return cumsum(a, axis, dtype)


@_export
def cumprod(a, axis=None, dtype=None):
    """Running products along ``axis`` (the flattened array when None)."""
    a = asarray(a)
    if axis is None:
        a, axis = ops.reshape(a, (-1,)), 0
    return ops.cumprod(a, axis, dtype)


@_export
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``."""
    return ops.diff(asarray(a), n, axis, prepend, append)


@_export
def dot(a, b):
    """Dot product: sums over the last axis of ``a`` and the second-to-last of ``b``."""
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return ops.mul(a, b)
    if b.ndim == 1:
        return ops.sum(ops.mul(a, b), -1)
    return tensordot(a, b, ((a.ndim - 1,), (b.ndim - 2,)))


@_export
def inner(a, b):
    """Sum of products over the last axes."""
    return ops.inner(asarray(a), asarray(b))


@_export
def outer(a, b):
    """Outer product of the flattened inputs."""
    return ops.outer(ops.reshape(asarray(a), (-1,)), ops.reshape(asarray(b), (-1,)))


@_export
def tensordot(a, b, axes=2):
    """Sum of products over ``axes`` (an int: the last ``axes`` of ``a`` with the first of
    ``b``; or two sequences of axes)."""
    a, b = asarray(a), asarray(b)
    if isinstance(axes, int):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                          [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    axes_a = [x % a.ndim for x in axes_a]
    axes_b = [x % b.ndim for x in axes_b]
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    k = 1
    for i in axes_a:
        k *= a.shape[i]
    at = ops.reshape(ops.transpose(a, tuple(free_a + axes_a)), (-1, k))
    bt = ops.reshape(ops.transpose(b, tuple(axes_b + free_b)), (k, -1))
    shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
    return ops.reshape(ops.matmul(at, bt), shape)


@_export
def multi_dot(arrays):
    """The chained matrix product of ``arrays``."""
    out = asarray(arrays[0])
    for m in arrays[1:]:
        out = ops.matmul(out, asarray(m))
    return out


@_export
def kron(a, b):
    """Kronecker product."""
    a, b = asarray(a), asarray(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = ops.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = ops.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    inter = []
    for i in range(nd):
        inter += [a.shape[i], 1]
    big = ops.reshape(a, tuple(inter))
    inter_b = []
    for i in range(nd):
        inter_b += [1, b.shape[i]]
    out = ops.mul(big, ops.reshape(b, tuple(inter_b)))
    return ops.reshape(out, tuple(a.shape[i] * b.shape[i] for i in range(nd)))


@_export
def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum of the diagonal."""
    return ops.trace(asarray(a), offset, axis1, axis2, dtype)


@_export
def clip(x, xmin, xmax, dtype=None):
    """Values limited to ``[xmin, xmax]``."""
    return with_dtype(ops.clamp(asarray(x), xmin, xmax), dtype)


@_export
def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm over ``axis``."""
    return ops.norm(float_input(x), ord, axis, keepdims)


@_export
def count_nonzero(x, axis=None, keepdims=False):
    """Number of non-zero entries over ``axis``."""
    return ops.count_nonzero(asarray(x), () if axis is None else axis, keepdims)


@_export
def gcd(x1, x2, dtype=None):
    """Greatest common divisor, elementwise (integers; computed on the host)."""
    return with_dtype(ops.gcd(asarray(x1), asarray(x2)), dtype)


@_export
def lcm(x1, x2, dtype=None):
    """Least common multiple, elementwise (integers; computed on the host)."""
    return with_dtype(ops.lcm(asarray(x1), asarray(x2)), dtype)


@_export
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the variables (rows when ``rowvar``) over the observations."""
    x = float_input(m)
    if x.ndim == 1:
        x = ops.reshape(x, (1, -1))
    if not rowvar:
        x = ops.transpose(x, (1, 0))
    if y is not None:
        other = float_input(y)
        other = ops.reshape(other, (1, -1)) if other.ndim == 1 else other
        x = ops.concat((x, other if rowvar else ops.transpose(other, (1, 0))), 0)
    correction = ddof if ddof is not None else (0 if bias else 1)
    out = ops.cov(x, correction=correction,
                  fweights=None if fweights is None else asarray(fweights),
                  aweights=None if aweights is None else float_input(aweights))
    return with_dtype(out, dtype)


@_export
def interp(x, xp, fp, left=None, right=None):
    """Piecewise-linear interpolation of ``(xp, fp)`` at ``x`` (computed on the host)."""

    return asarray(np.interp(asarray(x).asnumpy(), asarray(xp).asnumpy(),
                             asarray(fp).asnumpy(), left, right).astype(np.float32))
