"""Functional ops over Tensors (``mscore.ops.add``, ``ops.matmul``, ``ops.conv2d``, ...).

Each op validates its arguments, turns Python scalars and numpy arrays into arrays of the
right dtype (a scalar takes the other operand's dtype, as in MindSpore), promotes mixed dtypes
once, and calls one primitive through :mod:`mscore.ops.dispatch`. Fused ops use the backend's
implementation when it has one and the composite from primitives otherwise.
"""
from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore import dispatch, fused_reference
from mscore._per_thread import state as _thread
from mscore.autodiff.tracer import unwrap
from mscore.dispatch import call

_wrap = Tensor._wrap


# -- argument helpers --------------------------------------------------------------------------
def _check_tensor(x, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    return x


def _as_tensor(x, name="input"):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic, list, tuple, numbers.Number)):
        return Tensor(x)
    raise TypeError(f"{name}: expected a Tensor or number, got {type(x).__name__}")


def _scalar_array(value, like_dtype):
    if type(value) is float:  # the common case first (the ABC checks below are slow)
        return call("full", (), value, like_dtype if like_dtype.is_floating else mdt.float32)
    if isinstance(value, bool):
        dt = like_dtype if like_dtype.is_bool or like_dtype.is_floating else like_dtype
    elif isinstance(value, numbers.Integral):
        dt = like_dtype if not like_dtype.is_bool else mdt.int64
    elif isinstance(value, numbers.Real):
        dt = like_dtype if like_dtype.is_floating else mdt.float32
    else:
        raise TypeError(f"expected a Tensor or number, got {type(value).__name__}")
    return call("full", (), value, dt)


_PY_SCALARS = (float, int)  # checked by type first: isinstance on numbers.Number is slow


def _with_scalar(tensor_data, value):
    """The tensor's array and a 0-d array of ``value``, in one dtype: the tensor's, or
    float32 when a float meets an integer tensor (MindSpore's scalar promotion)."""
    dt = dispatch.dtype(tensor_data)
    scalar = _scalar_array(value, dt)
    if dt.is_floating:  # a number always takes a floating tensor's dtype
        return tensor_data, scalar
    scalar_dt = dispatch.dtype(scalar)
    if scalar_dt is not dt:
        tensor_data = call("cast", tensor_data, scalar_dt)
    return tensor_data, scalar


def _operands(a, b):
    """Native arrays of ``a`` and ``b`` with one common dtype."""
    if isinstance(a, Tensor):
        ra = a._data
        if isinstance(b, Tensor):
            rb = b._data
        elif type(b) in _PY_SCALARS or isinstance(b, numbers.Number):
            return _with_scalar(ra, b)
        else:
            rb = _as_tensor(b, "other")._data
    elif isinstance(b, Tensor):
        rb = b._data
        if type(a) in _PY_SCALARS or isinstance(a, numbers.Number):
            rb, ra = _with_scalar(rb, a)
            return ra, rb
        ra = _as_tensor(a, "input")._data
    else:
        ra, rb = _as_tensor(a, "input")._data, _as_tensor(b, "other")._data
    da, db = dispatch.dtype(ra), dispatch.dtype(rb)
    if da is not db:
        target = mdt.promote(da, db)
        if da is not target:
            ra = call("cast", ra, target)
        if db is not target:
            rb = call("cast", rb, target)
    return ra, rb


def _binary(name, a, b):
    ra, rb = _operands(a, b)
    try:
        return _wrap(call(name, ra, rb))
    except Exception:
        _check_broadcast(name, ra, rb)
        raise


def _check_broadcast(name, *arrays):
    """ValueError naming the shapes when native ``arrays`` do not broadcast: the backends'
    own errors for that differ in type (ValueError, RuntimeError, TypeError)."""
    shapes = [tuple(dispatch.shape(a)) for a in arrays]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{name}: shapes {', '.join(map(str, shapes))} do not "
                         f"broadcast") from None


def _check_window(op, spatial, kernel, pads, dilation):
    """ValueError when a (dilated) kernel does not fit the padded input on some axis."""
    for i, (size, k, (lo, hi), d) in enumerate(zip(spatial, kernel, pads, dilation)):
        if size + lo + hi < d * (k - 1) + 1:
            raise ValueError(f"{op}: the kernel {tuple(kernel)} (dilation {tuple(dilation)}) "
                             f"does not fit the input's spatial shape {tuple(spatial)} padded "
                             f"by {tuple(pads)} (axis {i})")


def _axes(axis, ndim, name="axis"):
    """None (all axes) or a sorted tuple of non-negative axes."""
    if axis is None or axis == ():
        return None
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axis = (int(axis),)
    if not isinstance(axis, (tuple, list)):
        raise TypeError(f"{name}: expected an int, a tuple of ints or None, got "
                        f"{type(axis).__name__}")
    out = []
    for a in axis:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{name}: expected ints, got {a!r}")
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise ValueError(f"{name}: {a} is out of range for a {ndim}-d tensor")
        out.append(int(a) % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {tuple(axis)}")
    return tuple(sorted(out))


def _axis1(axis, ndim, name="axis"):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: expected an int, got {type(axis).__name__}")
    if not -builtins.max(ndim, 1) <= axis < builtins.max(ndim, 1):
        raise ValueError(f"{name}: {axis} is out of range for a {ndim}-d tensor")
    return int(axis) % builtins.max(ndim, 1)


def _float_input(x, name="input"):
    x = _check_tensor(x, name)
    if not x.dtype.is_floating:
        raise TypeError(f"{name}: expected a floating-point Tensor, got {x.dtype}")
    return x


def _tuple(value, n, name):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    if isinstance(value, (tuple, list)) and len(value) == n and \
            builtins.all(isinstance(v, (int, np.integer)) for v in value):
        return tuple(int(v) for v in value)
    raise ValueError(f"{name}: expected an int or a tuple of {n} ints, got {value!r}")


# -- creation ---------------------------------------------------------------------------------
def _shape_arg(size, name="size"):
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (int(size),)
    if isinstance(size, Tensor):
        size = tuple(int(v) for v in size.asnumpy().reshape(-1))
    if not isinstance(size, (tuple, list)) or not builtins.all(
            isinstance(s, (int, np.integer)) and s >= 0 for s in size):
        raise ValueError(f"{name}: expected a tuple of non-negative ints, got {size!r}")
    return tuple(int(s) for s in size)


def full(size, fill_value, dtype=None):
    """A tensor of ``size`` filled with ``fill_value``."""
    if dtype is None:
        dtype = mdt.float32 if isinstance(fill_value, float) else (
            mdt.bool_ if isinstance(fill_value, bool) else mdt.int64)
    return _wrap(call("full", _shape_arg(size), fill_value, mdt.as_dtype(dtype)))


def zeros(size, dtype=None):
    """Zeros of ``size`` (float32 by default)."""
    return _wrap(call("full", _shape_arg(size), 0, mdt.as_dtype(dtype or mdt.float32)))


def ones(shape, dtype=None):
    """Ones of ``shape`` (float32 by default)."""
    return _wrap(call("full", _shape_arg(shape, "shape"), 1,
                      mdt.as_dtype(dtype or mdt.float32)))


def fill(type, shape, value):  # noqa: A002  (MindSpore's argument name)
    """MindSpore's ``ops.fill(type, shape, value)``."""
    return full(shape, value, type)


def zeros_like(input, *, dtype=None):  # noqa: A002
    """Zeros with the shape (and dtype) of ``input``."""
    x = _check_tensor(input, "input")
    return _wrap(call("full", x.shape, 0, mdt.as_dtype(dtype) if dtype else x.dtype))


def ones_like(input, *, dtype=None):  # noqa: A002
    """Ones with the shape (and dtype) of ``input``."""
    x = _check_tensor(input, "input")
    return _wrap(call("full", x.shape, 1, mdt.as_dtype(dtype) if dtype else x.dtype))


def arange(start=0, end=None, step=1, dtype=None):
    """``start, start+step, ...`` below ``end``; int64 for int arguments, else float32."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("step: must not be zero")
    if dtype is None:
        ints = builtins.all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = mdt.int64 if ints else mdt.float32
    return _wrap(call("arange", start, end, step, mdt.as_dtype(dtype)))


def eye(n, m=None, dtype=None):
    """The ``n`` x ``m`` identity matrix (float32 unless ``dtype``)."""
    m = n if m is None else m
    dtype = mdt.float32 if dtype is None else dtype
    rows = call("arange", 0, n, 1, mdt.int64)
    cols = call("arange", 0, m, 1, mdt.int64)
    hit = call("equal", call("reshape", rows, (n, 1)), call("reshape", cols, (1, m)))
    return _wrap(call("cast", hit, mdt.as_dtype(dtype)))


# -- casts and gradient control ---------------------------------------------------------------
def cast(input, dtype):  # noqa: A002
    """``input`` converted to ``dtype``; differentiable for float targets."""
    x = _check_tensor(input, "input")
    return _wrap(call("cast", x._data, mdt.as_dtype(dtype)))


def stop_gradient(value):
    """``value`` with no gradient flowing back through it (a Python number is returned as
    it is, as in MindSpore)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    x = _check_tensor(value, "value")
    return _wrap(call("stop_gradient", unwrap(x._data)))


def depend(value, expr):
    """``value`` (MindSpore orders side effects with it; eager execution already does)."""
    return value


def assign(variable, value):
    """Assign ``value`` to Parameter ``variable``; returns the variable."""
    from mscore.common.parameter import Parameter
    if not isinstance(variable, Parameter):
        raise TypeError(f"variable: expected a Parameter, got {type(variable).__name__}")
    return variable.assign_value(value)


# -- elementwise --------------------------------------------------------------------------------
def add(input, other): return _binary("add", input, other)             # noqa: A002,E704
def sub(input, other): return _binary("sub", input, other)             # noqa: A002,E704
def mul(input, other): return _binary("mul", input, other)             # noqa: A002,E704
def maximum(input, other): return _binary("maximum", input, other)     # noqa: A002,E704
def minimum(input, other): return _binary("minimum", input, other)     # noqa: A002,E704
def equal(input, other): return _binary("equal", input, other)         # noqa: A002,E704
def not_equal(input, other): return _binary("not_equal", input, other)  # noqa: A002,E704
def less(input, other): return _binary("less", input, other)           # noqa: A002,E704
def less_equal(input, other): return _binary("less_equal", input, other)  # noqa: A002,E704
def greater(input, other): return _binary("greater", input, other)     # noqa: A002,E704
def greater_equal(input, other): return _binary("greater_equal", input, other)  # noqa: A002,E704


def div(input, other, *, rounding_mode=None):  # noqa: A002
    """True division; integer inputs give a float32 result, as in MindSpore's ``ops.div``.
    ``rounding_mode`` 'floor' rounds the quotient down, 'trunc' toward zero (both keep an
    integer input's dtype)."""
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        ra, rb = _operands(input, other)
        dt = dispatch.dtype(ra)
        work = dt if dt.is_floating else mdt.float64
        q = call("div", call("cast", ra, work), call("cast", rb, work))
        q = call("mul", call("sign", q), call("floor", call("abs", q)))
        return _wrap(q if work is dt else call("cast", q, dt))
    if rounding_mode is not None:
        raise ValueError(f"rounding_mode: expected None, 'floor' or 'trunc', got "
                         f"{rounding_mode!r}")
    ra, rb = _operands(input, other)
    if not dispatch.dtype(ra).is_floating:
        ra, rb = call("cast", ra, mdt.float32), call("cast", rb, mdt.float32)
    return _wrap(call("div", ra, rb))


def floor_divide(input, other):  # noqa: A002
    """Division rounded toward minus infinity."""
    ra, rb = _operands(input, other)
    dt = dispatch.dtype(ra)
    if dt.is_floating:
        return _wrap(call("floor", call("div", ra, rb)))
    q = call("floor", call("div", call("cast", ra, mdt.float64), call("cast", rb, mdt.float64)))
    return _wrap(call("cast", q, dt))


def remainder(input, other):  # noqa: A002
    """``input - floor_divide(input, other) * other`` (sign of the divisor)."""
    q = floor_divide(input, other)
    return sub(input, mul(q, other))


def pow(input, exponent):  # noqa: A001,A002
    """``input ** exponent`` elementwise."""
    return _binary("pow", input, exponent)


def _unary(name, x, argname="input"):
    x = _check_tensor(x, argname)
    return _wrap(call(name, x._data))


def neg(input): return _unary("neg", input)                  # noqa: A002,E704
def abs(input): return _unary("abs", input)                  # noqa: A001,A002,E704
def sign(input): return _unary("sign", input)                # noqa: A002,E704
def floor(input): return _unary("floor", input)              # noqa: A002,E704
def ceil(input): return _unary("ceil", input)                # noqa: A002,E704
def logical_not(input): return _unary("logical_not", input)  # noqa: A002,E704
def isfinite(input): return _unary("isfinite", input)        # noqa: A002,E704


def _float_unary(name, x):
    x = _check_tensor(x, "input")
    data = x._data
    if not x.dtype.is_floating:
        data = call("cast", data, mdt.float32)
    return _wrap(call(name, data))


def exp(input): return _float_unary("exp", input)    # noqa: A002,E704
def log(input): return _float_unary("log", input)    # noqa: A002,E704
def sqrt(x): return _float_unary("sqrt", x)          # noqa: E704
def sin(input): return _float_unary("sin", input)    # noqa: A002,E704
def cos(input): return _float_unary("cos", input)    # noqa: A002,E704
def tanh(input): return _float_unary("tanh", input)  # noqa: A002,E704
def erf(input): return _float_unary("erf", input)    # noqa: A002,E704


def logical_and(input, other):  # noqa: A002
    """Elementwise and (inputs cast to bool)."""
    return _wrap(call("logical_and", _bool(input), _bool(other)))


def logical_or(input, other):  # noqa: A002
    """Elementwise or (inputs cast to bool)."""
    return _wrap(call("logical_or", _bool(input), _bool(other)))


def _bool(x):
    x = _as_tensor(x)
    return x._data if x.dtype is mdt.bool_ else call("cast", x._data, mdt.bool_)


def isnan(input):  # noqa: A002
    """True where ``input`` is nan."""
    x = _check_tensor(input, "input")
    return _wrap(call("not_equal", x._data, x._data))


def isinf(input):  # noqa: A002
    """True where ``input`` is +inf or -inf."""
    x = _check_tensor(input, "input")
    return _wrap(call("logical_and", call("logical_not", call("isfinite", x._data)),
                      call("equal", x._data, x._data)))


def rsqrt(input): return div(1.0, sqrt(input))               # noqa: A002,E704
def square(input): return mul(input, input)                  # noqa: A002,E704
def reciprocal(input): return div(1.0, input)                # noqa: A002,E704
def log1p(input): return log(add(input, 1.0))                # noqa: A002,E704


def native_addcmul(a, b, c):
    """``a + b * c`` on native arrays of one dtype, through the backend's fused ``addcmul``
    when it has one (one pass over memory instead of two; the optimizers' updates)."""
    fused = dispatch.fused("addcmul")
    if fused is not None:
        return fused(a, b, c)
    return call("add", a, call("mul", b, c))


def addcmul(input, tensor1, tensor2, value=1):  # noqa: A002
    """``input + value * tensor1 * tensor2`` elementwise (MindSpore's ``ops.addcmul``)."""
    x = _check_tensor(input, "input")
    t1 = _check_tensor(tensor1, "tensor1")
    t2 = _check_tensor(tensor2, "tensor2")
    if isinstance(value, bool) or not isinstance(value, (numbers.Number, Tensor)):
        raise TypeError(f"value: expected a number or a Tensor, got {type(value).__name__}")
    if not (isinstance(value, numbers.Number) and value == 1):
        t2 = mul(t2, value)
    target = mdt.promote(mdt.promote(x.dtype, t1.dtype), t2.dtype)
    raw = [t._data if t.dtype is target else call("cast", t._data, target) for t in (x, t1, t2)]
    return _wrap(native_addcmul(*raw))


def where(condition, input, other):  # noqa: A002
    """``input`` where ``condition`` else ``other`` (numbers take the other operand's
    dtype)."""
    cond = _bool(condition)
    rx, ry = _operands(input, other)
    try:
        return _wrap(call("where", cond, rx, ry))
    except Exception:
        _check_broadcast("where", cond, rx, ry)
        raise


select = where


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """``x`` limited to [min, max] elementwise (either bound may be None); a list or tuple
    of Tensors gives a tuple of the clipped Tensors, as in MindSpore."""
    if isinstance(x, (list, tuple)):
        if not x or not builtins.all(isinstance(t, Tensor) for t in x):
            raise TypeError("x: expected a Tensor or a list/tuple of Tensors, got "
                            f"{type(x).__name__} of "
                            f"{sorted({type(t).__name__ for t in x}) or 'nothing'}")
        return tuple(clip_by_value(t, clip_value_min, clip_value_max) for t in x)
    x = _check_tensor(x, "x")
    if clip_value_min is None and clip_value_max is None:
        raise ValueError("clip_by_value: give clip_value_min, clip_value_max or both")
    if clip_value_min is not None:
        x = maximum(x, clip_value_min)
    if clip_value_max is not None:
        x = minimum(x, clip_value_max)
    return x


def clamp(input, min=None, max=None):  # noqa: A001,A002
    """``input`` limited to [min, max] elementwise (either bound may be None)."""
    if min is None and max is None:
        raise ValueError("clamp: give min, max or both")
    return clip_by_value(input, min, max)


clip = clamp


# -- activations -----------------------------------------------------------------------------------
def relu(input, inplace=False):  # noqa: A002
    """max(x, 0); the gradient at 0 is 0, as in MindSpore and torch. ``inplace`` writes the
    result into ``input`` and returns it."""
    x = _check_tensor(input, "input")
    fused = dispatch.fused("relu")
    if fused is not None:
        out = _wrap(fused(x._data))
    else:
        zero = call("full", (), 0, x.dtype)
        out = _wrap(call("where", call("greater", x._data, zero), x._data, zero))
    return x.assign_value(out) if inplace else out


def relu6(x):
    """min(max(x, 0), 6)."""
    return minimum(relu(x), 6.0)


def leaky_relu(input, alpha=0.2):  # noqa: A002
    """x where x > 0 else alpha * x."""
    x = _check_tensor(input, "input")
    return where(greater(x, 0.0), x, mul(x, alpha))


def sigmoid(input):  # noqa: A002
    """1 / (1 + exp(-x)), computed as (tanh(x/2) + 1) / 2 to stay finite for large |x|."""
    x = _float_input(input)
    return mul(add(tanh(mul(x, 0.5)), 1.0), 0.5)


def silu(input):  # noqa: A002
    """x * sigmoid(x)."""
    return mul(input, sigmoid(input))


def softplus(input, beta=1, threshold=20):  # noqa: A002
    """log(1 + exp(beta x)) / beta, linear above ``threshold``."""
    x = _float_input(input)
    bx = mul(x, float(beta))
    safe = minimum(bx, float(threshold))
    soft = div(log(add(exp(safe), 1.0)), float(beta))
    return where(greater(bx, float(threshold)), x, soft)


def gelu(input, approximate="none"):  # noqa: A002
    """Gaussian error linear unit; ``approximate`` is 'none' (erf) or 'tanh'."""
    x = _float_input(input, "input")
    fused = dispatch.fused("gelu") if approximate in ("none", "tanh") else None
    if fused is not None:
        return _wrap(fused(x._data, approximate))
    if approximate == "none":
        return mul(mul(x, 0.5), add(erf(mul(x, 1.0 / math.sqrt(2.0))), 1.0))
    if approximate == "tanh":
        inner = mul(add(x, mul(pow(x, 3.0), 0.044715)), math.sqrt(2.0 / math.pi))
        return mul(mul(x, 0.5), add(tanh(inner), 1.0))
    raise ValueError(f"approximate: expected 'none' or 'tanh', got {approximate!r}")


def prelu(input, weight):  # noqa: A002
    """x where x > 0 else weight * x (weight broadcast over the channel axis 1)."""
    x = _check_tensor(input, "input")
    weight = _check_tensor(weight, "weight")
    if x.ndim >= 2 and weight.ndim == 1 and weight.shape[0] > 1:
        weight = reshape(weight, (1, weight.shape[0]) + (1,) * (x.ndim - 2))
    return where(greater(x, 0.0), x, mul(x, weight))


def softmax(input, axis=-1, *, dtype=None):  # noqa: A002
    """exp(x) / sum(exp(x)) along ``axis`` (of ``input`` cast to ``dtype`` when given)."""
    x = _float_input(input if dtype is None else cast(input, dtype), "input")
    ax = _axis1(axis, x.ndim)
    fused = dispatch.fused("softmax")
    if fused is not None:
        return _wrap(fused(x._data, axis=ax))
    shifted = sub(x, stop_gradient(amax(x, ax, True)))
    e = exp(shifted)
    return div(e, sum(e, ax, True))


def log_softmax(logits, axis=-1):
    """log(softmax(x)) along ``axis``, computed stably."""
    x = _float_input(logits, "logits")
    ax = _axis1(axis, x.ndim)
    fused = dispatch.fused("log_softmax")
    if fused is not None:
        return _wrap(fused(x._data, axis=ax))
    shifted = sub(x, stop_gradient(amax(x, ax, True)))
    return sub(shifted, log(sum(exp(shifted), ax, True)))


def logsumexp(input, dim, keepdim=False):  # noqa: A002
    """log(sum(exp(x))) along ``dim``, computed stably."""
    x = _float_input(input)
    m = stop_gradient(amax(x, dim, True))
    out = add(log(sum(exp(sub(x, m)), dim, True)), m)
    return out if keepdim else squeeze(out, _axes(dim, x.ndim))


# -- reductions --------------------------------------------------------------------------------------
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001,A002
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


def var(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
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


def _reduce_extreme(op, input, axis, keepdims, initial, where):  # noqa: A002
    x = _check_tensor(input, "input")
    x = _masked_extreme(x, where, initial)
    out = _wrap(call(op, x._data, axis=_axes(axis, x.ndim), keepdims=bool(keepdims)))
    if initial is not None:
        out = (maximum if op == "max" else minimum)(out, initial)
    return out


def amax(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A002
    """Largest value over ``axis``; ``initial`` takes part in the comparison and
    ``where`` (a mask) limits it to the selected elements."""
    return _reduce_extreme("max", input, axis, keepdims, initial, where)


def amin(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A002
    """Smallest value over ``axis`` (``initial``/``where`` as in :func:`amax`)."""
    return _reduce_extreme("min", input, axis, keepdims, initial, where)


def max(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A001,A002
    """MindSpore 2.x ``ops.max``: ``(values, indices)`` along ``axis``; when ``axis`` is
    None the overall maximum and, as MindSpore 2.10 returns it, index 0."""
    x = _masked_extreme(_check_tensor(input, "input"), where, initial)
    if axis is None:
        flat = reshape(x, (-1,))
        return amax(flat, 0, False, initial=initial), zeros((), mdt.int64)
    return amax(x, axis, keepdims, initial=initial), argmax(x, axis, keepdims)


def min(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A001,A002
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


def argmax(input, dim=None, keepdim=False):  # noqa: A002
    """Index of the first maximum along ``dim`` (of the flattened input when None)."""
    return _arg_extreme("argmax", _check_tensor(input, "input"), dim, keepdim, "dim")


def argmin(input, axis=None, keepdims=False):  # noqa: A002
    """Index (int32, as in MindSpore) of the first minimum along ``axis`` (of the
    flattened input when None)."""
    out = _arg_extreme("argmin", _check_tensor(input, "input"), axis, keepdims, "axis")
    return cast(out, mdt.int32)


def all(input, axis=None, keep_dims=False):  # noqa: A001,A002
    """True when every element along ``axis`` is true."""
    x = _as_tensor(input)
    return _wrap(call("all", _bool(x), axis=_axes(axis, x.ndim), keepdims=bool(keep_dims)))


def any(input, axis=None, keep_dims=False):  # noqa: A001,A002
    """True when some element along ``axis`` is true."""
    x = _as_tensor(input)
    return _wrap(call("any", _bool(x), axis=_axes(axis, x.ndim), keepdims=bool(keep_dims)))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002,N803
    """The 2-norm (Frobenius) over ``dim``; ``ord`` other than None/2/'fro' is ValueError.
    ``dtype`` casts the input first."""
    if ord not in (None, 2, "fro"):
        raise ValueError(f"ord: only the 2-norm is supported, got {ord!r}")
    x = _float_input(A if dtype is None else cast(A, dtype), "A")
    return sqrt(sum(mul(x, x), dim, keepdim))


# -- shape -------------------------------------------------------------------------------------------
def reshape(input, shape):  # noqa: A002
    """Same values in ``shape`` (one entry may be -1)."""
    x = _check_tensor(input, "input")
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape: expected a tuple of ints, got {type(shape).__name__}")
    shape = tuple(int(s) for s in shape)
    size = x.size
    if shape.count(-1) > 1 or builtins.any(s < -1 for s in shape):
        raise ValueError(f"shape: at most one -1 and no other negative sizes, got {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape {x.shape} into {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ValueError(f"reshape: cannot reshape {x.shape} ({size} elements) into {shape}")
    if shape == x.shape:
        return x
    return _wrap(call("reshape", x._data, shape))


def transpose(input, dims):  # noqa: A002
    """Axes permuted by ``dims``."""
    x = _check_tensor(input, "input")
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"dims: expected a tuple of ints, got {type(dims).__name__}")
    perm = tuple(int(p) % builtins.max(x.ndim, 1) for p in dims)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"dims: expected a permutation of {x.ndim} axes, got "
                         f"{tuple(dims)}")
    return _wrap(call("transpose", x._data, perm))


def permute(input, axis):  # noqa: A002
    """Axes permuted by ``axis`` (MindSpore's name for the permutation here)."""
    return transpose(input, axis)


def swapaxes(input, axis0, axis1):  # noqa: A002
    """Two axes exchanged."""
    x = _check_tensor(input, "input")
    perm = list(range(x.ndim))
    a, b = _axis1(axis0, x.ndim, "axis0"), _axis1(axis1, x.ndim, "axis1")
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def broadcast_to(input, shape):  # noqa: A002
    """``input`` broadcast to ``shape`` (-1 keeps the input's size)."""
    x = _check_tensor(input, "input")
    shape = tuple(shape)
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ValueError(f"broadcast_to: cannot broadcast {x.shape} to {shape}")
    shape = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
    for s, t in zip(x.shape, shape[lead:]):
        if s != t and s != 1:
            raise ValueError(f"broadcast_to: cannot broadcast {x.shape} to {shape}")
    return _wrap(call("broadcast_to", x._data, shape))


def expand_dims(input_x, axis):
    """A new axis of size 1 at ``axis``."""
    x = _check_tensor(input_x, "input_x")
    ax = _axis1(axis, x.ndim + 1)
    shape = x.shape
    return _wrap(call("reshape", x._data, shape[:ax] + (1,) + shape[ax:]))


def squeeze(input, axis=None):  # noqa: A002
    """Axes of size 1 removed (only ``axis`` when given; a larger one is ValueError)."""
    x = _check_tensor(input, "input")
    shape = x.shape
    axes = _axes(axis, x.ndim)
    if axes is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    for a in axes:
        if shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {shape[a]}, expected 1")
    new = tuple(s for i, s in enumerate(shape) if i not in axes)
    return _wrap(call("reshape", x._data, new))


def flatten_dims(x, start_dim=0, end_dim=-1):
    """Axes ``start_dim``..``end_dim`` merged into one."""
    x = _check_tensor(x, "input")
    if x.ndim == 0:
        return reshape(x, (1,))
    s, e = _axis1(start_dim, x.ndim, "start_dim"), _axis1(end_dim, x.ndim, "end_dim")
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} is after end_dim {end_dim}")
    shape = x.shape
    return reshape(x, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def flatten(input, order="C", *, start_dim=1, end_dim=-1):  # noqa: A002
    """MindSpore 2.x ``ops.flatten``: axes from ``start_dim`` (default 1) merged."""
    if order not in ("C", "F"):
        raise ValueError(f"order: expected 'C' or 'F', got {order!r}")
    x = _check_tensor(input, "input")
    if order == "F":
        x = transpose(x, tuple(reversed(range(x.ndim))))
    return flatten_dims(x, start_dim, end_dim)


def concat(tensors, axis=0):
    """Tensors joined along ``axis`` (dtypes promoted to a common one)."""
    if not isinstance(tensors, (tuple, list)) or not tensors:
        raise TypeError("tensors: expected a non-empty tuple or list of Tensors")
    ts = [_check_tensor(t, "tensors") for t in tensors]
    ndim = ts[0].ndim
    ax = _axis1(axis, ndim)
    target = ts[0].dtype
    for t in ts[1:]:
        target = mdt.promote(target, t.dtype)
        if t.ndim != ndim:
            raise ValueError(f"concat: all tensors need {ndim} dims, got {t.ndim}")
        if t.shape[:ax] + t.shape[ax + 1:] != ts[0].shape[:ax] + ts[0].shape[ax + 1:]:
            raise ValueError(f"concat: shapes must match except along axis {ax}, got "
                             f"{ts[0].shape} and {t.shape}")
    data = [t._data if t.dtype is target else call("cast", t._data, target) for t in ts]
    return _wrap(call("concat", data, axis=ax))


cat = concat


def stack(tensors, axis=0):
    """Tensors of one shape joined along a new ``axis``."""
    if not isinstance(tensors, (tuple, list)) or not tensors:
        raise TypeError("tensors: expected a non-empty tuple or list of Tensors")
    ts = [_check_tensor(t, "tensors") for t in tensors]
    shape = ts[0].shape
    for t in ts:
        if t.shape != shape:
            raise ValueError(f"stack: all tensors need shape {shape}, got {t.shape}")
    ax = _axis1(axis, len(shape) + 1)
    return concat([expand_dims(t, ax) for t in ts], ax)


def split(tensor, split_size_or_sections, axis=0):
    """Pieces of ``tensor`` along ``axis``: equal ``int`` sizes or a list of sizes."""
    x = _check_tensor(tensor, "tensor")
    ax = _axis1(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(split_size_or_sections, int):
        if split_size_or_sections <= 0:
            raise ValueError("split_size_or_sections: must be positive")
        sizes = [split_size_or_sections] * (n // split_size_or_sections)
        if n % split_size_or_sections:
            sizes.append(n % split_size_or_sections)
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise ValueError(f"split_size_or_sections: sizes {sizes} do not add up to {n}")
    out, start = [], 0
    for s in sizes:
        index = tuple(slice(start, start + s) if i == ax else slice(None)
                      for i in range(x.ndim))
        out.append(getitem(x, index))
        start += s
    return tuple(out)


def tile(input, dims):  # noqa: A002
    """``input`` repeated ``dims[i]`` times along axis i (leading axes added as needed)."""
    x = _check_tensor(input, "input")
    if not isinstance(dims, (tuple, list)) or not builtins.all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
            for d in dims):
        raise ValueError(f"dims: expected a tuple of non-negative ints, got {dims!r}")
    multiples = tuple(int(d) for d in dims)
    if len(multiples) < x.ndim:
        multiples = (1,) * (x.ndim - len(multiples)) + multiples
    x = reshape(x, (1,) * (len(multiples) - x.ndim) + x.shape)
    shape = x.shape
    expanded = reshape(x, tuple(v for s in shape for v in (1, s)))
    target = tuple(v for m, s in zip(multiples, shape) for v in (m, s))
    return reshape(broadcast_to(expanded, target),
                   tuple(m * s for m, s in zip(multiples, shape)))


def pad(input_x, padding, mode="constant", value=None):
    """Pad the last ``len(padding) // 2`` axes, torch-style ``padding`` (last axis first:
    (left, right, top, ...)). ``mode``: 'constant' (``value``, default 0; negative widths
    crop), 'reflect', 'replicate' or 'circular' (these pad the last 1-3 axes of a 3-5-d
    input, as MindSpore's PadV3 does)."""
    from mscore.ops import pad_func
    x = _check_tensor(input_x, "input_x")
    if isinstance(padding, Tensor):
        padding = tuple(int(v) for v in padding.asnumpy().reshape(-1))
    if not isinstance(padding, (tuple, list)) or not builtins.all(
            isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in padding):
        raise TypeError(f"For 'pad', 'padding' must be a tuple or list of ints, got {padding!r}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ValueError(f"For 'pad', 'mode' must be one of 'constant', 'reflect', "
                         f"'replicate', 'circular', got {mode!r}")
    if len(padding) % 2:
        raise ValueError(f"For 'pad', the size of padding must be divisible by 2, got "
                         f"{len(padding)}")
    n = len(padding) // 2
    if n > x.ndim:
        raise ValueError(f"For 'pad', padding {tuple(padding)} covers {n} axes but the input "
                         f"has {x.ndim}")
    if mode != "constant":
        if value is not None:
            raise ValueError(f"For 'pad', 'value' is only used in 'constant' mode, got mode "
                             f"{mode!r}")
        if n > 3 or x.ndim != n + 2:
            raise ValueError(f"For 'pad', mode {mode!r} pads the last 1-3 axes of a 3-5-d "
                             f"input (padding of {2 * n} values needs a {n + 2}-d input), "
                             f"got a {x.ndim}-d input")
    widths = pad_func.torch_style_widths(padding, x.ndim)
    return pad_func.pad_axes(x, widths, mode, value, "pad")


def _index_arg(item):
    if isinstance(item, Tensor):
        if item.dtype.is_bool:
            raise TypeError("index: boolean mask indexing is not supported; use ops.where "
                            "or ops.masked_select")
        return call("cast", item._data, mdt.int64)
    if isinstance(item, (list, np.ndarray)):
        arr = np.asarray(item)
        if arr.dtype == np.bool_:
            raise TypeError("index: boolean mask indexing is not supported")
        return dispatch.backend().from_numpy(arr.astype(np.int64))
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        return int(item)
    if item is None or item is Ellipsis or isinstance(item, slice):
        return item
    raise TypeError(f"index: unsupported index element {item!r}")


def getitem(input, index):  # noqa: A002
    """numpy-style indexing with ints, slices, None, Ellipsis and integer tensors."""
    x = _check_tensor(input, "input")
    if not isinstance(index, tuple):
        index = (index,)
    return _wrap(call("getitem", x._data, tuple(_index_arg(i) for i in index)))


def setitem(input, index, value):  # noqa: A002
    """A copy of ``input`` with ``input[index] = value`` (functional, differentiable)."""
    x = _check_tensor(input, "input")
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(_index_arg(i) for i in index)
    current = call("getitem", x._data, index)
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value),
                                                            dtype=x.dtype)
    target_shape = dispatch.shape(current)
    update = call("broadcast_to", call("cast", value._data, x.dtype), target_shape)
    delta = call("sub", update, current)
    return _wrap(call("scatter_add", x._data, index, delta))


def gather(input_params, input_indices, axis, batch_dims=0):
    """Slices of ``input_params`` along ``axis`` picked by ``input_indices``."""
    x = _check_tensor(input_params, "input_params")
    ax = _axis1(axis, x.ndim)
    if batch_dims == 0:
        return getitem(x, (slice(None),) * ax + (input_indices,))
    return _batched_gather(x, _check_tensor(input_indices, "input_indices"), ax, batch_dims)


def _batched_gather(x, idx, ax, batch_dims):
    """``gather`` with ``batch_dims`` leading dimensions shared by the params and the
    indices: ``out[b..., i..., r...] = x[b..., idx[b..., i...], r...]`` (the dimensions of
    ``x`` between the batch and ``ax`` stay in front of the index dimensions)."""
    if not isinstance(batch_dims, int) or isinstance(batch_dims, bool):
        raise TypeError(f"batch_dims: expected an int, got {type(batch_dims).__name__}")
    b = batch_dims + idx.ndim if batch_dims < 0 else batch_dims
    if not 0 <= b <= builtins.min(ax, idx.ndim) or x.shape[:b] != idx.shape[:b]:
        raise ValueError(f"batch_dims: expected at most axis ({ax}) and the rank of the "
                         f"indices ({idx.ndim}), with the same leading shape in both, got "
                         f"{batch_dims} for shapes {x.shape} and {idx.shape}")
    middle = list(range(b, ax))  # dimensions of x between the batch and the gather axis
    order = list(range(b)) + [ax] + middle + list(range(ax + 1, x.ndim))
    moved = transpose(x, tuple(order)) if middle else x
    iotas = tuple(reshape(arange(0, n, 1, mdt.int64),
                          (1,) * k + (n,) + (1,) * (idx.ndim - k - 1))
                  for k, n in enumerate(idx.shape[:b]))
    out = getitem(moved, iotas + (idx,))  # batch + index dims + middle + rest
    if not middle:
        return out
    n_idx = idx.ndim - b
    perm = (list(range(b)) + list(range(b + n_idx, b + n_idx + len(middle)))
            + list(range(b, b + n_idx)) + list(range(b + n_idx + len(middle), out.ndim)))
    return transpose(out, tuple(perm))


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1):
    """One-hot encoding of integer ``indices`` with ``depth`` classes."""
    idx = _check_tensor(indices, "indices")
    if idx.dtype.is_floating:
        raise TypeError(f"indices: expected an integer Tensor, got {idx.dtype}")
    if not isinstance(depth, int) or depth < 0:
        raise ValueError(f"depth: expected a non-negative int, got {depth!r}")
    on = on_value if isinstance(on_value, Tensor) else Tensor(float(on_value))
    off = off_value if isinstance(off_value, Tensor) else Tensor(float(off_value))
    classes = call("arange", 0, depth, 1, mdt.int64)
    ax = _axis1(axis, idx.ndim + 1)
    expanded = call("reshape", call("cast", idx._data, mdt.int64),
                    idx.shape[:ax] + (1,) + idx.shape[ax:])
    cshape = [1] * (idx.ndim + 1)
    cshape[ax] = depth
    hit = call("equal", expanded, call("reshape", classes, tuple(cshape)))
    return where(_wrap(hit), on, off)


# -- linear algebra ------------------------------------------------------------------------------
def matmul(input, other):  # noqa: A002
    """Matrix product with numpy semantics (1-d operands are promoted and squeezed)."""
    a, b = _as_tensor(input, "input"), _as_tensor(other, "other")
    ra, rb = _operands(a, b)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must be at least 1-d")
    if a_vec:
        ra = call("reshape", ra, (1,) + a.shape)
    if b_vec:
        rb = call("reshape", rb, b.shape + (1,))
    ka = dispatch.shape(ra)[-1]
    kb = dispatch.shape(rb)[-2]
    if ka != kb:
        raise ValueError(f"matmul: inner sizes differ: {a.shape} @ {b.shape}")
    if a.dtype.is_bool and b.dtype.is_bool:
        raise TypeError("matmul: expected numeric Tensors, got bool and bool")
    try:
        out = call("matmul", ra, rb)
    except Exception:
        sa, sb = dispatch.shape(ra), dispatch.shape(rb)
        try:
            np.broadcast_shapes(sa[:-2], sb[:-2])
        except ValueError:
            raise ValueError(f"matmul: batch shapes {sa[:-2]} and {sb[:-2]} do not "
                             f"broadcast ({a.shape} @ {b.shape})") from None
        raise
    if a_vec or b_vec:
        shape = dispatch.shape(out)
        shape = shape[:-2] + ((shape[-2],) if not a_vec else ()) + \
            ((shape[-1],) if not b_vec else ())
        out = call("reshape", out, shape)
    return _wrap(out)


def bmm(input_x, mat2):
    """Batched matrix product of two 3-d (or more) tensors."""
    return matmul(input_x, mat2)


batch_matmul = bmm


def dense(input, weight, bias=None):  # noqa: A002
    """``input @ weight.T + bias`` (weight is (out, in))."""
    x = _check_tensor(input, "input")
    w = _check_tensor(weight, "weight")
    fused = dispatch.fused("dense")
    if fused is not None and w.ndim == 2 and x.ndim >= 1 and x.dtype is w.dtype and \
            x.shape[-1] == w.shape[1] and (bias is None or (
                isinstance(bias, Tensor) and bias.dtype is x.dtype and
                bias.shape == (w.shape[0],))):
        return _wrap(fused(x._data, w._data, None if bias is None else bias._data))
    out = matmul(x, transpose(w, (1, 0)))
    return out if bias is None else add(out, bias)


def ger(input, vec2):  # noqa: A002
    """Outer product of two vectors."""
    a, b = _check_tensor(input, "input"), _check_tensor(vec2, "vec2")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("ger: expected two 1-d tensors")
    return mul(reshape(a, (-1, 1)), reshape(b, (1, -1)))


outer = ger


# -- convolution and pooling -------------------------------------------------------------------
def conv_padding_pairs(pad_mode, padding, nd, in_spatial, kernel, stride, dilation):
    """``(before, after)`` pairs from MindSpore's pad_mode/padding arguments."""
    if pad_mode not in ("same", "valid", "pad"):
        raise ValueError(f"pad_mode: expected 'same', 'valid' or 'pad', got {pad_mode!r}")
    if pad_mode == "valid":
        if padding not in (0, (0,) * nd, (0,) * (2 * nd)):
            raise ValueError("padding: must be 0 unless pad_mode is 'pad'")
        return ((0, 0),) * nd
    if pad_mode == "same":
        pairs = []
        for s, k, st, d in zip(in_spatial, kernel, stride, dilation):
            out = -(-s // st)
            total = builtins.max((out - 1) * st + d * (k - 1) + 1 - s, 0)
            pairs.append((total // 2, total - total // 2))
        return tuple(pairs)
    if isinstance(padding, int):
        return ((padding, padding),) * nd
    padding = tuple(padding)
    if len(padding) == nd:
        return tuple((int(p), int(p)) for p in padding)
    if len(padding) == 2 * nd:
        return tuple((int(padding[2 * i]), int(padding[2 * i + 1])) for i in range(nd))
    raise ValueError(f"padding: expected an int, {nd} ints or {2 * nd} ints, got {padding}")


def conv_transpose_same_padding(kernel, stride, dilation):
    """``(before, after)`` pairs that make a transposed convolution give ``in * stride``
    outputs per spatial axis (pad_mode 'same')."""
    pairs = []
    for k, st, d in zip(kernel, stride, dilation):
        total = builtins.max(d * (k - 1) + 1 - st, 0)
        pairs.append((total // 2, total - total // 2))
    return tuple(pairs)


def conv(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
         groups=1):
    """N-d convolution (cross-correlation), channels first; the spatial rank comes from
    ``weight``. ``pad_mode`` is 'valid', 'same' or 'pad' (then ``padding`` applies)."""
    x = _check_tensor(input, "input")
    w = _check_tensor(weight, "weight")
    nd = w.ndim - 2
    if x.ndim != nd + 2:
        raise ValueError(f"conv: input must be {nd + 2}-d for a {w.ndim}-d weight, got "
                         f"shape {x.shape}")
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    if not isinstance(groups, int) or groups < 1 or x.shape[1] % groups or w.shape[0] % groups:
        raise ValueError(f"groups: {groups!r} must be a positive int dividing in_channels "
                         f"{x.shape[1]} and out_channels {w.shape[0]}")
    if w.shape[1] * groups != x.shape[1]:
        raise ValueError(f"conv: weight expects {w.shape[1] * groups} input channels, "
                         f"input has {x.shape[1]}")
    pads = conv_padding_pairs(pad_mode, padding, nd, x.shape[2:], w.shape[2:], stride, dilation)
    _check_window("conv", x.shape[2:], w.shape[2:], pads, dilation)
    _check_floating("conv", x, w)
    rx, rw = _operands(x, w)
    fused = dispatch.fused("conv_bias") if isinstance(bias, Tensor) else None
    if fused is not None and bias.dtype is dispatch.dtype(rx) and bias.shape == w.shape[:1]:
        return _wrap(fused(rx, rw, bias._data, stride, pads, dilation, groups))
    out = _wrap(call("conv", rx, rw, stride=stride, padding=pads, dilation=dilation,
                     groups=groups))
    if bias is not None:
        out = add(out, reshape(bias, (1, -1) + (1,) * nd))
    return out


def _check_floating(op, x, w):
    """TypeError unless input and weight compute in a floating dtype (the contract's domain
    of convolution)."""
    if not mdt.promote(x.dtype, w.dtype).is_floating:
        raise TypeError(f"{op}: expected floating-point input and weight, got {x.dtype} and "
                        f"{w.dtype}")


def conv1d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """1-d convolution."""
    return conv(input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """2-d convolution."""
    return conv(input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """3-d convolution."""
    return conv(input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv_transpose(input, weight, bias=None, stride=1, pad_mode="valid", padding=0,
                   output_padding=0, dilation=1, groups=1):
    """N-d transposed convolution; ``weight`` is (in, out // groups, *kernel).

    'same' gives ``in * stride`` outputs, 'valid' ``(in - 1) * stride + dilation*(k-1) + 1``.
    """
    x = _check_tensor(input, "input")
    w = _check_tensor(weight, "weight")
    nd = w.ndim - 2
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    output_padding = _tuple(output_padding, nd, "output_padding")
    if x.shape[1] != w.shape[0]:
        raise ValueError(f"conv_transpose: weight expects {w.shape[0]} input channels, input "
                         f"has {x.shape[1]}")
    _check_floating("conv_transpose", x, w)
    if pad_mode == "same":
        pads = conv_transpose_same_padding(w.shape[2:], stride, dilation)
    else:
        pads = conv_padding_pairs(pad_mode, padding, nd, x.shape[2:], w.shape[2:], stride, dilation)
    rx, rw = _operands(x, w)
    out = _wrap(call("conv_transpose", rx, rw, stride=stride, padding=pads,
                     output_padding=output_padding, dilation=dilation, groups=groups))
    if bias is not None:
        out = add(out, reshape(bias, (1, -1) + (1,) * nd))
    return out


def _pool_args(x, kernel_size, stride, padding, nd):
    kernel = _tuple(kernel_size, nd, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, nd, "stride")
    if isinstance(padding, int):
        pads = ((padding, padding),) * nd
    else:
        padding = tuple(padding)
        pads = tuple((int(p), int(p)) for p in padding) if len(padding) == nd else \
            tuple((int(padding[2 * i]), int(padding[2 * i + 1])) for i in range(nd))
    if x.ndim != nd + 2:
        raise ValueError(f"pool: expected a {nd + 2}-d input (N, C, ...), got shape {x.shape}")
    for k, (lo, hi) in zip(kernel, pads):
        if lo > k // 2 or hi > k // 2:
            raise ValueError(f"padding: must be at most half the kernel size, got {pads}")
    _check_window("pool", x.shape[2:], kernel, pads, (1,) * nd)
    return kernel, stride, pads


def max_pool(x, kernel_size, stride=None, padding=0, nd=2):
    """N-d max pooling over the last ``nd`` axes."""
    x = _check_tensor(x, "x")
    kernel, stride, pads = _pool_args(x, kernel_size, stride, padding, nd)
    return _wrap(call("max_pool", x._data, kernel=kernel, stride=stride, padding=pads))


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
               ceil_mode=False):
    """2-d max pooling (dilation 1, floor mode)."""
    if dilation != 1 or return_indices or ceil_mode:
        raise ValueError("max_pool2d: dilation, return_indices and ceil_mode are not supported")
    return max_pool(x, kernel_size, stride, padding, 2)


def avg_pool(x, kernel_size, stride=None, padding=0, count_include_pad=True, nd=2):
    """N-d average pooling over the last ``nd`` axes."""
    x = _float_input(x, "x")
    kernel, stride, pads = _pool_args(x, kernel_size, stride, padding, nd)
    return _wrap(call("avg_pool", x._data, kernel=kernel, stride=stride, padding=pads,
                      count_include_pad=bool(count_include_pad)))


def avg_pool2d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=0):
    """2-d average pooling."""
    if ceil_mode or divisor_override:
        raise ValueError("avg_pool2d: ceil_mode and divisor_override are not supported")
    return avg_pool(input_x, kernel_size, stride, padding, count_include_pad, 2)


# -- normalisation and regularisation -------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalise over the trailing ``normalized_shape`` axes, then scale and shift.
    Half-precision inputs are normalised in float32 and the output rounded once to their
    dtype (MindSpore's rule, see :mod:`mscore.fused_reference`)."""
    x = _float_input(input)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    nd = len(normalized_shape)
    if tuple(x.shape[x.ndim - nd:]) != normalized_shape:
        raise ValueError(f"normalized_shape: {normalized_shape} does not match the "
                         f"trailing axes of {x.shape}")
    w = None if weight is None else _as_tensor(weight, "weight")._data
    b = None if bias is None else _as_tensor(bias, "bias")._data
    fused = dispatch.fused("layer_norm")
    if fused is not None:
        return _wrap(fused(x._data, normalized_shape, w, b, float(eps)))
    return _wrap(fused_reference.layer_norm(x._data, normalized_shape, w, b, float(eps))[0])


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1,
               eps=1e-5):
    """Batch normalisation over axis 1. In training the batch statistics normalise and the
    running ones are updated in place: ``running = (1 - momentum) * running + momentum *
    batch`` (unbiased variance), as in MindSpore's functional op. Half-precision inputs are
    normalised in float32 and the output rounded once to their dtype (MindSpore's rule, see
    :mod:`mscore.fused_reference`). Returns the output."""
    x = _float_input(input_x, "input_x")
    if x.ndim < 2:
        raise ValueError(f"input_x: expected at least 2-d (N, C, ...), got shape {x.shape}")
    raw = [None if t is None else t._data for t in (running_mean, running_var, weight, bias)]
    fused = dispatch.fused("batch_norm")
    if fused is not None:
        # The backend's op is functional: (out, new_mean, new_var), news None in eval.
        out, new_mean, new_var = fused(x._data, *raw, bool(training), float(momentum),
                                       float(eps))
    else:
        out, new_mean, new_var, _ = fused_reference.batch_norm(
            x._data, *raw, bool(training), float(momentum), float(eps))
    if new_mean is not None:
        running_mean._assign(unwrap(new_mean))
        running_var._assign(unwrap(new_var))
    return _wrap(out)


def dropout(input, p=0.5, training=True, seed=None):  # noqa: A002
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p)."""
    x = _float_input(input)
    if not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"p: expected a probability in [0, 1], got {p!r}")
    if not training or p == 0:
        return x
    if p == 1:
        return zeros_like(x)
    from mscore.ops.random import draw
    u = draw("uniform", x.shape, x.dtype if x.dtype is not mdt.bfloat16 else mdt.float32, seed)
    keep = call("greater_equal", u, call("full", (), p, dispatch.dtype(u)))
    scaled = mul(x, 1.0 / (1.0 - p))
    return where(_wrap(keep), scaled, 0.0)


def uniform(shape, minval=0.0, maxval=1.0, seed=None, dtype=mdt.float32):
    """Uniform values in [minval, maxval) from the global stream (or ``seed``), as in
    MindSpore: Tensor bounds broadcast with ``shape`` (the result has the broadcast shape),
    and an integer ``dtype`` gives integers in [minval, maxval)."""
    from mscore.ops.random import draw
    dtype = mdt.as_dtype(dtype, "dtype")
    low = minval if isinstance(minval, Tensor) else float(minval)
    high = maxval if isinstance(maxval, Tensor) else float(maxval)
    out_shape = np.broadcast_shapes(_shape_arg(shape, "shape"),
                                    *(b.shape for b in (low, high) if isinstance(b, Tensor)))
    work = dtype if dtype.is_floating else mdt.float32
    low, high = (cast(b, work) if isinstance(b, Tensor) else b for b in (low, high))
    span = high - low if isinstance(high, float) and isinstance(low, float) else sub(high, low)
    u = _wrap(draw("uniform", out_shape, work, seed))
    if dtype.is_floating:
        return add(mul(u, span), low)
    return cast(add(floor(mul(u, span)), low), dtype)


def standard_normal(shape, seed=None, dtype=mdt.float32):
    """Standard normal values from the global stream (or ``seed``)."""
    from mscore.ops.random import draw
    return _wrap(draw("normal", _shape_arg(shape, "shape"), mdt.as_dtype(dtype), seed))


def rand(*size, dtype=None, seed=None):
    """Uniform [0, 1) values of ``size``."""
    size = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return uniform(size, 0.0, 1.0, seed, dtype or mdt.float32)


def randn(*size, dtype=None, seed=None):
    """Standard normal values of ``size``."""
    size = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return standard_normal(size, seed, dtype or mdt.float32)


# -- losses ---------------------------------------------------------------------------------------
def _reduce(loss, reduction):
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"reduction: expected 'mean', 'sum' or 'none', got {reduction!r}")


def _check_class_labels(target, classes, ignore_index=None):
    """Every class index of ``target`` must lie in ``[0, classes)`` or equal
    ``ignore_index`` (None: no exception); otherwise ``ValueError``, the same on every backend
    (one backend would return nan, another a number, a third raise its own error).

    This reads the labels on the host, so it runs where their values exist: in PYNATIVE
    mode, not inside a compiled (GRAPH_MODE) program or a function the array library traces
    itself (``jax.jit``), whose values are symbolic."""
    if _thread.compiled_depth:
        return
    try:  # the labels themselves, not a flag computed on the device: one read, no array ops
        labels = target.asnumpy()
    except Exception:  # noqa: BLE001 - symbolic labels (traced by the library's own jit)
        return
    mask = (labels < 0) | (labels >= classes)
    if ignore_index is not None:
        mask &= labels != ignore_index
    if not mask.any():
        return
    values = np.unique(labels[mask])
    shown = ", ".join(str(v) for v in values[:5]) + (", ..." if values.size > 5 else "")
    allowed = f"[0, {classes})" + ("" if ignore_index is None
                                    else f" or equal ignore_index={ignore_index}")
    raise ValueError(f"labels: class indices must be in {allowed} for logits with {classes} "
                     f"classes; got {shown} at {int(mask.sum())} of {mask.size} positions")


def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean",
             label_smoothing=0.0):
    """Negative log-likelihood of class indices ``target`` under log-probabilities
    ``inputs`` (N, C, ...); the mean is weighted by ``weight[target]`` as in torch. A class
    index outside ``[0, C)`` other than ``ignore_index`` is a ``ValueError`` (PYNATIVE)."""
    logp = _float_input(inputs, "inputs")
    t = _check_tensor(target, "target")
    if t.dtype.is_floating:
        raise TypeError(f"target: expected integer class indices, got {t.dtype}")
    _check_class_labels(t, logp.shape[1], ignore_index)
    return _nll_loss(logp, t, weight, ignore_index, reduction, label_smoothing)


def _nll_loss(logp, t, weight, ignore_index, reduction, label_smoothing):
    c = logp.shape[1]
    if logp.ndim > 2:  # move classes last: (N, d1.., C)
        perm = (0,) + tuple(range(2, logp.ndim)) + (1,)
        logp = transpose(logp, perm)
    valid = not_equal(t, ignore_index)
    safe_t = where(valid, t, 0)
    hot = one_hot(safe_t, c, 1.0, 0.0)
    hot = cast(hot, logp.dtype)
    w = ones((c,), logp.dtype) if weight is None else cast(weight, logp.dtype)
    sample_w = mul(sum(mul(hot, w), -1), cast(valid, logp.dtype))
    picked = neg(sum(mul(hot, logp), -1))
    loss = mul(picked, sample_w)
    if label_smoothing:
        smooth = neg(mean(mul(logp, w), -1))
        smooth = mul(smooth, cast(valid, logp.dtype))
        loss = add(mul(loss, 1.0 - label_smoothing), mul(smooth, label_smoothing))
    if reduction == "mean":
        return div(sum(loss), sum(sample_w))
    return _reduce(loss, reduction)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",  # noqa: A002
                  label_smoothing=0.0):
    """Cross entropy of logits ``input`` (N, C, ...) against class indices or class
    probabilities ``target`` (same shape as input). A class index outside ``[0, C)`` other
    than ``ignore_index`` is a ``ValueError`` (PYNATIVE)."""
    x = _float_input(input)
    t = _check_tensor(target, "target")
    if not t.dtype.is_floating:
        _check_class_labels(t, x.shape[1], ignore_index)
    return _cross_entropy(x, t, weight, ignore_index, reduction, label_smoothing)


def _cross_entropy(x, t, weight, ignore_index, reduction, label_smoothing):
    """:func:`cross_entropy` once the labels are checked."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing: expected a value in [0, 1], got {label_smoothing}")
    fused = dispatch.fused("cross_entropy")
    if fused is not None and weight is None and not t.dtype.is_floating and x.ndim == 2:
        return _wrap(fused(x._data, t._data, ignore_index=int(ignore_index),
                           reduction=reduction, label_smoothing=float(label_smoothing)))
    if t.dtype.is_floating and t.shape != x.shape:
        raise ValueError(f"target: probabilities must have the input's shape {x.shape}, "
                         f"got {t.shape}")
    general = dispatch.fused("softmax_cross_entropy")  # the reference autodiff's, if tracing
    if general is not None and reduction in ("mean", "sum", "none") and x.ndim >= 2 and (
            t.dtype.is_floating or t.shape == x.shape[:1] + x.shape[2:]) and (
            weight is None or (isinstance(weight, Tensor) and weight.shape == x.shape[1:2])):
        return _wrap(general(x._data, t._data, None if weight is None else weight._data,
                             int(ignore_index), reduction, float(label_smoothing)))
    logp = log_softmax(x, 1)
    if not t.dtype.is_floating:
        return _nll_loss(logp, t, weight, ignore_index, reduction, label_smoothing)
    c = x.shape[1]
    if label_smoothing:
        t = add(mul(t, 1.0 - label_smoothing), label_smoothing / c)
    per_class = mul(logp, cast(t, logp.dtype))
    if weight is not None:
        per_class = mul(per_class, reshape(weight, (1, c) + (1,) * (x.ndim - 2)))
    loss = neg(sum(per_class, 1))
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,  # noqa: A002
                                     reduction="mean"):
    """Sigmoid cross entropy, computed as max(x,0) - x*y + log(1 + exp(-|x|))."""
    x = _float_input(input, "input")
    y = cast(_check_tensor(target, "target"), x.dtype)
    if x.shape != y.shape:
        raise ValueError(f"target: expected shape {x.shape}, got {y.shape}")
    log_term = log(add(exp(neg(abs(x))), 1.0))
    if pos_weight is not None:
        lw = add(mul(sub(pos_weight, 1.0), y), 1.0)
        loss = add(mul(sub(1.0, y), x), mul(lw, add(log_term, relu(neg(x)))))
    else:
        loss = add(sub(relu(x), mul(x, y)), log_term)
    if weight is not None:
        loss = mul(loss, weight)
    return _reduce(loss, reduction)


def mse_loss(input, target, reduction="mean"):  # noqa: A002
    """Mean squared error."""
    d = sub(_float_input(input), target)
    return _reduce(mul(d, d), reduction)


def l1_loss(input, target, reduction="mean"):  # noqa: A002
    """Mean absolute error."""
    return _reduce(abs(sub(_float_input(input), target)), reduction)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    """softmax(q k^T * scale + mask) v over the last two axes."""
    q, k, v = (_float_input(t, n) for t, n in ((query, "query"), (key, "key"),
                                               (value, "value")))
    fused = dispatch.fused("attention")
    if fused is not None and dropout_p == 0.0:
        return _wrap(fused(q._data, k._data, v._data,
                           None if attn_mask is None else attn_mask._data, bool(is_causal),
                           scale))
    d = q.shape[-1]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    scores = mul(matmul(q, swapaxes(k, -1, -2)), scale)
    if is_causal:
        lq, lk = q.shape[-2], k.shape[-2]
        causal = _wrap(call("greater_equal",
                            call("reshape", call("arange", 0, lq, 1, mdt.int64), (lq, 1)),
                            call("reshape", call("arange", 0, lk, 1, mdt.int64), (1, lk))))
        scores = where(causal, scores, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype.is_bool:
            scores = where(attn_mask, scores, -math.inf)
        else:
            scores = add(scores, attn_mask)
    weights = softmax(scores, -1)
    if dropout_p:
        weights = dropout(weights, dropout_p)
    return matmul(weights, v)

__all__ = [
    "full",
    "zeros",
    "ones",
    "fill",
    "zeros_like",
    "ones_like",
    "arange",
    "eye",
    "cast",
    "stop_gradient",
    "depend",
    "assign",
    "add",
    "sub",
    "mul",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "div",
    "floor_divide",
    "remainder",
    "pow",
    "neg",
    "abs",
    "sign",
    "floor",
    "ceil",
    "logical_not",
    "isfinite",
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tanh",
    "erf",
    "logical_and",
    "logical_or",
    "isnan",
    "isinf",
    "rsqrt",
    "square",
    "reciprocal",
    "log1p",
    "addcmul",
    "where",
    "select",
    "clip_by_value",
    "clamp",
    "clip",
    "relu",
    "relu6",
    "leaky_relu",
    "sigmoid",
    "silu",
    "softplus",
    "gelu",
    "prelu",
    "softmax",
    "log_softmax",
    "logsumexp",
    "sum",
    "reduce_sum",
    "mean",
    "reduce_mean",
    "var",
    "amax",
    "amin",
    "max",
    "min",
    "argmax",
    "argmin",
    "all",
    "any",
    "norm",
    "reshape",
    "transpose",
    "permute",
    "swapaxes",
    "broadcast_to",
    "expand_dims",
    "squeeze",
    "flatten_dims",
    "flatten",
    "concat",
    "cat",
    "stack",
    "split",
    "tile",
    "pad",
    "getitem",
    "setitem",
    "gather",
    "one_hot",
    "matmul",
    "bmm",
    "batch_matmul",
    "dense",
    "ger",
    "outer",
    "conv",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose",
    "max_pool",
    "max_pool2d",
    "avg_pool",
    "avg_pool2d",
    "layer_norm",
    "batch_norm",
    "dropout",
    "uniform",
    "standard_normal",
    "rand",
    "randn",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy_with_logits",
    "mse_loss",
    "l1_loss",
    "scaled_dot_product_attention",
]


# MindSpore's ``ops.functional`` also holds the functions of the modules below and the
# Primitive instances of ``functional_extra``; they are looked up on first use (those
# modules build on this one).
_EXTRA_MODULES = ("mscore.ops.math_func", "mscore.ops.array_func", "mscore.ops.nn_func",
                  "mscore.ops.functional_extra", "mscore.ops.grad", "mscore.ops.loss_func",
                  "mscore.ops.ctc_func")
_GRAD_NAMES = ("grad", "value_and_grad", "vjp", "get_grad")


def __getattr__(name):
    import importlib
    for module_name in _EXTRA_MODULES:
        module = importlib.import_module(module_name)
        names = _GRAD_NAMES if module_name == "mscore.ops.grad" else module.__all__
        if name in names:
            return getattr(module, name)
    raise AttributeError(f"module 'mscore.ops.functional' has no attribute {name!r}")
