"""MindSpore's math functions beyond :mod:`mscore.ops.functional` (``ops.addn``,
``ops.cumsum``, ``ops.isclose``, ``ops.std``, the comparison aliases, ...), composed from
the functional ops, so every backend computes and differentiates them."""
from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops import functional as F

# -- aliases MindSpore 2.x has --------------------------------------------------------------------
eq = F.equal
ne = F.not_equal
gt = F.greater
ge = F.greater_equal
lt = F.less
le = F.less_equal
multiply = F.mul
negative = F.neg
absolute = F.abs
divide = F.div


def floor_mod(x, y):
    """The remainder of floor division (the divisor's sign)."""
    return F.remainder(x, y)


def mm(input, mat2):  # noqa: A002
    """The matrix product of two 2-d Tensors."""
    return F.matmul(input, mat2)


def assign_add(variable, value):
    """``variable += value`` for a Parameter; returns the variable."""
    return F.assign(variable, F.add(variable, value))


def assign_sub(variable, value):
    """``variable -= value`` for a Parameter; returns the variable."""
    return F.assign(variable, F.sub(variable, value))


def floor_div(x, y):
    """``x // y`` rounded toward minus infinity (MindSpore's ``ops.floor_div``)."""
    return F.floor_divide(x, y)


def true_divide(dividend, divisor):
    """True division (integers give float32)."""
    return F.div(dividend, divisor)


def subtract(input, other, *, alpha=1):  # noqa: A002
    """``input - alpha * other``."""
    return F.sub(input, other if alpha == 1 else F.mul(other, alpha))


def addn(x):
    """The elementwise sum of a tuple or list of Tensors of one shape."""
    if not isinstance(x, (tuple, list)) or not x:
        raise TypeError(f"x: expected a non-empty tuple or list of Tensors, got "
                        f"{type(x).__name__}")
    total = F._check_tensor(x[0], "x")
    for t in x[1:]:
        t = F._check_tensor(t, "x")
        if t.shape != total.shape:
            raise ValueError(f"x: every Tensor needs shape {total.shape}, got {t.shape}")
        total = F.add(total, t)
    return total


def expm1(input):  # noqa: A002
    """``exp(x) - 1``."""
    return F.sub(F.exp(input), 1.0)


def logical_xor(input, other):  # noqa: A002
    """Elementwise exclusive or (inputs cast to bool)."""
    a, b = F._bool(input), F._bool(other)
    return F._wrap(F.call("not_equal", a, b))


def logaddexp(input, other):  # noqa: A002
    """``log(exp(input) + exp(other))`` computed stably."""
    m = F.maximum(input, other)
    return F.add(m, F.log1p(F.exp(F.neg(F.abs(F.sub(input, other))))))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities count
    as close; nans only with ``equal_nan``)."""
    x = F._check_tensor(input, "input")
    y = F._as_tensor(other, "other")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or v < 0:
            raise ValueError(f"{name}: expected a non-negative number, got {v!r}")
    if not isinstance(equal_nan, bool):
        raise TypeError(f"equal_nan: expected a bool, got {type(equal_nan).__name__}")
    if not x.dtype.is_floating:
        x = F.cast(x, mdt.float32)
    y = F.cast(y, x.dtype)
    same = F.equal(x, y)
    finite = F.logical_and(F.isfinite(x), F.isfinite(y))
    # infinities and nans are settled by `same`/`equal_nan`; zero them before subtracting
    fx, fy = F.where(finite, x, 0.0), F.where(finite, y, 0.0)
    near = F.less_equal(F.abs(F.sub(fx, fy)), F.add(F.mul(F.abs(fy), float(rtol)),
                                                     float(atol)))
    out = F.logical_or(same, F.logical_and(finite, near))
    if equal_nan:
        out = F.logical_or(out, F.logical_and(F.isnan(x), F.isnan(y)))
    return out


def std(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """Standard deviation over ``axis`` with ``ddof`` delta degrees of freedom."""
    return F.sqrt(F.var(input, axis, ddof, keepdims))


def _cumsum_axis(x, axis):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis: expected an int, got {type(axis).__name__}")
    return F._axis1(axis, x.ndim)


def cumulative_sum(x, axis, exclusive=False, reverse=False):
    """Running sums along ``axis`` as one matrix product with a triangular mask (so it
    differentiates and compiles on every backend); integer inputs keep their dtype."""
    x = F._check_tensor(x, "x")
    ax = _cumsum_axis(x, axis)
    n = x.shape[ax] if x.ndim else 1
    rows = F.call("reshape", F.call("arange", 0, n, 1, mdt.int64), (n, 1))
    cols = F.call("reshape", F.call("arange", 0, n, 1, mdt.int64), (1, n))
    # mask[i, j]: input element i contributes to output j
    if reverse:
        keep = F.call("greater", rows, cols) if exclusive else F.call("greater_equal", rows,
                                                                      cols)
    else:
        keep = F.call("less", rows, cols) if exclusive else F.call("less_equal", rows, cols)
    work = x.dtype if x.dtype.is_floating else mdt.float64
    mask = F._wrap(F.call("cast", keep, work))
    data = x if x.dtype is work else F.cast(x, work)
    moved = F.swapaxes(data, ax, -1) if x.ndim > 1 else F.reshape(data, (1, n))
    out = F.matmul(moved, mask)
    out = F.swapaxes(out, ax, -1) if x.ndim > 1 else F.reshape(out, x.shape)
    return out if work is x.dtype else F.cast(out, x.dtype)


def cumsum(x, axis, dtype=None):
    """Running sums of ``x`` along ``axis`` (``dtype`` casts the input first)."""
    x = F._check_tensor(x, "x")
    if dtype is not None:
        x = F.cast(x, dtype)
    return cumulative_sum(x, axis)


def numel(input):  # noqa: A002
    """The number of elements of ``input``."""
    return F._check_tensor(input, "input").size


def size(input_x):
    """The number of elements of ``input_x`` (a Python int)."""
    if not isinstance(input_x, Tensor):
        raise TypeError(f"input_x: expected a Tensor, got {type(input_x).__name__}")
    return input_x.size


def rank(input_x):
    """The number of dimensions of ``input_x`` (a Python int)."""
    if not isinstance(input_x, Tensor):
        raise TypeError(f"input_x: expected a Tensor, got {type(input_x).__name__}")
    return input_x.ndim


def shape(input_x):
    """The shape of ``input_x`` as a tuple of ints."""
    return F._check_tensor(input_x, "input_x").shape


def dtype(x):
    """The dtype of Tensor ``x``."""
    return F._check_tensor(x, "x").dtype


def is_tensor(obj):
    """True when ``obj`` is an mscore Tensor (or Parameter)."""
    return isinstance(obj, Tensor)


def from_numpy(array):
    """A Tensor holding numpy ``array``'s values and dtype."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy array, got {type(array).__name__}")
    return Tensor.from_numpy(array) if hasattr(Tensor, "from_numpy") else Tensor(array)


def scalar_to_tensor(input_x, dtype=mdt.float32):
    """A 0-d Tensor of Python number ``input_x`` (float32 unless ``dtype``)."""
    if isinstance(input_x, bool) or not isinstance(input_x, numbers.Number):
        raise TypeError(f"input_x: expected an int or float, got {type(input_x).__name__}")
    return F.full((), input_x, dtype)


def tuple_to_array(input_x):
    """A 1-d Tensor of a tuple of numbers: int32 for ints, float32 otherwise."""
    if not isinstance(input_x, (tuple, list)) or not input_x or not builtins.all(
            isinstance(v, numbers.Number) and not isinstance(v, bool) for v in input_x):
        raise TypeError(f"input_x: expected a non-empty tuple of numbers, got {input_x!r}")
    ints = builtins.all(isinstance(v, numbers.Integral) for v in input_x)
    return Tensor(np.asarray(input_x, np.int32 if ints else np.float32))


def linspace(start, end, steps):
    """``steps`` evenly spaced float32 values from ``start`` to ``end`` inclusive."""
    if isinstance(steps, Tensor):
        steps = int(steps)  # a 1-element Tensor too, as MindSpore accepts
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"steps: expected an int, got {type(steps).__name__}")
    if steps <= 0:
        raise ValueError(f"steps: expected a positive int, got {steps}")
    lo = start if isinstance(start, Tensor) else F.full((), float(start), mdt.float32)
    hi = end if isinstance(end, Tensor) else F.full((), float(end), mdt.float32)
    lo, hi = F.cast(lo, mdt.float32), F.cast(hi, mdt.float32)
    if steps == 1:
        return F.reshape(lo, (1,))
    k = F.arange(0, steps, 1, mdt.float32)
    return F.add(lo, F.mul(k, F.div(F.sub(hi, lo), float(steps - 1))))


def full_like(input, fill_value, *, dtype=None):  # noqa: A002
    """A Tensor shaped like ``input`` filled with ``fill_value`` (``input``'s dtype unless
    ``dtype``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"input: expected a Tensor, got {type(input).__name__}")
    return F.full(input.shape, fill_value, dtype if dtype is not None else input.dtype)


def _acc(t):
    """``t`` in the dtype norms accumulate in: float64 stays, anything else is float32."""
    return t if t.dtype is mdt.float64 else F.cast(t, mdt.float32)


def _norm_of(t, norm_type):
    if norm_type == math.inf:
        return F.amax(F.abs(t))
    if norm_type == -math.inf:
        return F.amin(F.abs(t))
    return F.pow(F.sum(F.pow(F.abs(t), float(norm_type))), 1.0 / float(norm_type))


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
        total = F.amax(F.stack(norms))
    elif norm_type == -math.inf:
        total = F.amin(F.stack(norms))
    else:
        total = _norm_of(F.stack(norms), norm_type)
    if error_if_nonfinite and not bool(F.isfinite(total).asnumpy()):
        raise RuntimeError(f"clip_by_norm: the total norm of order {norm_type} is "
                           f"non-finite")
    coef = F.div(max_norm, F.add(total, 1e-6))
    coef = F.minimum(coef, 1.0)
    out = [F.mul(t, F.cast(coef, t.dtype)) for t in ts]
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
    squares = [F.sum(F.square(_acc(t))) for t in ts]
    work = squares[0].dtype
    if isinstance(clip_norm, Tensor):
        clip = F.cast(clip_norm, work)
    else:
        if isinstance(clip_norm, bool) or not isinstance(clip_norm, numbers.Real) or \
                clip_norm <= 0:
            raise ValueError(f"clip_norm: expected a positive number, got {clip_norm!r}")
        clip = F.full((), float(clip_norm), work)
    total = squares[0]
    for s in squares[1:]:
        total = F.add(total, s)
    global_norm = F.sqrt(total)
    coef = F.div(clip, F.maximum(global_norm, clip))
    out = [F.mul(t, F.cast(coef, t.dtype)) for t in ts]
    return out[0] if single else tuple(out)


__all__ = ["eq", "ne", "gt", "ge", "lt", "le", "multiply", "negative", "absolute", "divide",
           "floor_mod", "mm", "assign_add", "assign_sub", "floor_div", "true_divide", "subtract", "addn", "expm1",
           "logical_xor", "logaddexp", "isclose", "std", "cumsum", "numel", "size", "rank",
           "shape", "dtype", "is_tensor", "scalar_to_tensor", "tuple_to_array", "linspace",
           "full_like", "clip_by_norm", "clip_by_global_norm"]
