"""Elementwise arithmetic, comparison, logic and math functions (``add``, ``div``, ``exp``,
``where``, ``clamp``, ...) and their Primitives, including the in-place updates
(``assign_add``, ``ApplyMomentum``).
"""
from __future__ import annotations

import builtins
import numbers
from functools import partial

import numpy as np

from mscore import dispatch
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _as_tensor, _bool, _check_broadcast, _check_tensor, _operands
from mscore.ops.control import assign, cast
from mscore.ops.primitive_base import Primitive, _Elementwise, _elementwise, check_bool, check_float
from mscore.plugin.rules import floor_divide_by_zero

_wrap = Tensor._wrap


def _binary(name, a, b):
    ra, rb = _operands(a, b)
    try:
        return _wrap(call(name, ra, rb))
    except Exception:
        _check_broadcast(name, ra, rb)
        raise


def add(input, other): return _binary("add", input, other)
def sub(input, other): return _binary("sub", input, other)
def mul(input, other): return _binary("mul", input, other)
def maximum(input, other): return _binary("maximum", input, other)
def minimum(input, other): return _binary("minimum", input, other)
def equal(input, other): return _binary("equal", input, other)
def not_equal(input, other): return _binary("not_equal", input, other)
def less(input, other): return _binary("less", input, other)
def less_equal(input, other): return _binary("less_equal", input, other)
def greater(input, other): return _binary("greater", input, other)
def greater_equal(input, other): return _binary("greater_equal", input, other)


def div(input, other, *, rounding_mode=None):
    """True division; integer inputs give a float32 result, as in MindSpore's ``ops.div``.
    ``rounding_mode`` 'floor' rounds the quotient down, 'trunc' toward zero (both keep an
    integer input's dtype; integer 'trunc' is the backend's exact integer ``div``, so
    ``x / 0`` is 0 and ``MIN / -1`` is MIN)."""
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        ra, rb = _operands(input, other)
        dt = dispatch.dtype(ra)
        if not dt.is_floating:
            return _wrap(call("div", ra, rb))
        return toward_zero(_wrap(call("div", ra, rb)))
    if rounding_mode is not None:
        raise ValueError(f"rounding_mode: expected None, 'floor' or 'trunc', got "
                         f"{rounding_mode!r}")
    ra, rb = _operands(input, other)
    if not dispatch.dtype(ra).is_floating:
        ra, rb = call("cast", ra, mdt.float32), call("cast", rb, mdt.float32)
    return _wrap(call("div", ra, rb))


# -- integer floor division and remainders ---------------------------------------------------
# Computed in the operands' own integer dtype from the backend's integer ``div`` (the
# contract: truncation toward zero, ``x / 0 == 0``, ``MIN / -1 == MIN``; see
# ``mscore.plugin.rules.divide_toward_zero``), so they are exact over the whole range: a
# detour through float64 loses int64/uint64 bits above 2**53. bool computes in int8.

def _int_truncated(ra, rb):
    """Quotient truncated toward zero and its remainder ``a - q * b`` (wrapping), of integer
    natives of one dtype; the remainder is ``a`` where ``b`` is 0."""
    q = call("div", ra, rb)
    return q, call("sub", ra, call("mul", q, rb))


def _int_floor_step(r, rb, dt):
    """Where floor division is one below truncation: a nonzero truncated remainder whose sign
    differs from the divisor's (never for an unsigned dtype); a bool native, or None."""
    if dt.is_unsigned or dt.is_bool:
        return None
    zero = call("full", (), 0, dt)
    return call("logical_and", call("not_equal", r, zero),
                call("not_equal", call("less", r, zero), call("less", rb, zero)))


def _back(native, dt):
    """A Tensor of ``native`` (computed in int8 for bool operands) in the operands' ``dt``."""
    return _wrap(call("cast", native, dt) if dt.is_bool else native)


def _saturated_by_zero(q, ra, rb):
    """The integer quotient ``q`` of ``ra / rb`` with MindSpore's ``x / 0`` (its float
    quotient's +-inf cast to the integer range, ``rules.floor_divide_by_zero``): MAX for
    ``x > 0``, MIN for ``x < 0``, 0 for 0; MindSpore's ``FloorDiv`` and ``TruncateDiv``
    kernels both divide by zero this way."""
    dt = dispatch.dtype(ra)
    info = np.iinfo(dt.np_dtype)
    zero = call("full", (), 0, dt)
    by_zero = floor_divide_by_zero(
        ra, zero, call("full", (), int(info.min), dt), call("full", (), int(info.max), dt),
        where=partial(call, "where"), greater=partial(call, "greater"),
        less=partial(call, "less"))
    return call("where", call("equal", rb, zero), by_zero, q)


def _int_floor_divide(ra, rb):
    """Floor division of integer natives of one dtype (not bool); ``x // 0`` saturates
    (:func:`_saturated_by_zero`). The backend's fused ``int_floor_divide`` when it has one,
    else the composite from ``div``."""
    fused = dispatch.fused("int_floor_divide")
    if fused is not None:
        return fused(ra, rb)
    dt = dispatch.dtype(ra)
    q, r = _int_truncated(ra, rb)
    step = _int_floor_step(r, rb, dt)
    if step is not None:
        q = call("sub", q, call("cast", step, dt))
    return _saturated_by_zero(q, ra, rb)


def int_truncate_divide(input, other):
    """Division truncated toward zero of integer Tensors of one dtype, exact in it, with
    ``x / 0`` saturated as MindSpore's ``TruncateDiv`` (:func:`_saturated_by_zero`;
    ``div(rounding_mode='trunc')`` keeps the backend's ``x / 0 == 0``) and ``MIN / -1``
    wrapping to MIN."""
    ra, rb = _operands(input, other)
    return _wrap(_saturated_by_zero(call("div", ra, rb), ra, rb))


def _int_floor_remainder(ra, rb):
    """``a - floor(a / b) * b`` of integer natives (the divisor's sign; ``a`` where ``b`` is
    0, as MindSpore's ``ops.remainder``)."""
    dt = dispatch.dtype(ra)
    _, r = _int_truncated(ra, rb)
    step = _int_floor_step(r, rb, dt)
    if step is None:
        return r
    return call("add", r, call("mul", call("cast", step, dt), rb))


def _zero_where_divisor_zero(r, rb):
    """``r`` with 0 where the divisor ``rb`` is 0 (MindSpore's ``FloorMod`` and
    ``mindspore.numpy``'s remainders for integers)."""
    zero = call("full", (), 0, dispatch.dtype(r))
    return call("where", call("equal", rb, zero), zero, r)


def floor_divide(input, other):
    """Division rounded toward minus infinity. Integers stay exact in their own dtype
    (``x // 0`` is MAX, MIN or 0 by the sign of ``x``; ``MIN // -1`` wraps to MIN)."""
    ra, rb = _operands(input, other)
    dt = dispatch.dtype(ra)
    if dt.is_floating:
        return _wrap(call("floor", call("div", ra, rb)))
    if dt.is_bool:
        return _back(_int_floor_divide(call("cast", ra, mdt.int8), call("cast", rb, mdt.int8)),
                     dt)
    return _wrap(_int_floor_divide(ra, rb))


def remainder(input, other):
    """``input - floor_divide(input, other) * other`` (sign of the divisor); for integers
    ``input`` where ``other`` is 0, as MindSpore's ``ops.remainder``."""
    ra, rb = _operands(input, other)
    dt = dispatch.dtype(ra)
    if dt.is_floating:
        return _wrap(_float_floor_remainder(ra, rb))
    if dt.is_bool:
        ra, rb = call("cast", ra, mdt.int8), call("cast", rb, mdt.int8)
    return _back(_int_floor_remainder(ra, rb), dt)


def _float_floor_remainder(ra, rb):
    return call("sub", ra, call("mul", call("floor", call("div", ra, rb)), rb))


def floor_mod(x, y):
    """The remainder of floor division (the divisor's sign), MindSpore's ``FloorMod`` (the
    ``%`` operator): for integers 0 where ``y`` is 0; bool is a TypeError."""
    ra, rb = _operands(x, y)
    dt = dispatch.dtype(ra)
    if dt.is_floating:
        return _wrap(_float_floor_remainder(ra, rb))
    if dt.is_bool:
        raise TypeError("floor_mod: expected integer or floating tensors, got bool")
    return _wrap(_zero_where_divisor_zero(_int_floor_remainder(ra, rb), rb))


def int_fmod(input, other, *, zero_by_zero=False):
    """``input - trunc(input / other) * other`` of integer (or bool) operands, exact in their
    dtype (the dividend's sign); ``input`` where ``other`` is 0 (MindSpore's ``ops.fmod``),
    or 0 with ``zero_by_zero`` (``mindspore.numpy.fmod``). None for floating operands, which
    keep the caller's float formula."""
    ra, rb = _operands(input, other)
    dt = dispatch.dtype(ra)
    if dt.is_floating:
        return None
    if dt.is_bool:
        ra, rb = call("cast", ra, mdt.int8), call("cast", rb, mdt.int8)
    _, r = _int_truncated(ra, rb)
    if zero_by_zero:
        r = _zero_where_divisor_zero(r, rb)
    return _back(r, dt)


def pow(input, exponent):
    """``input ** exponent`` elementwise."""
    return _binary("pow", input, exponent)


def _unary(name, x, argname="input"):
    x = _check_tensor(x, argname)
    return _wrap(call(name, x._data))


def neg(input): return _unary("neg", input)
def abs(input): return _unary("abs", input)
def sign(input): return _unary("sign", input)
def floor(input): return _unary("floor", input)
def ceil(input): return _unary("ceil", input)
def logical_not(input): return _unary("logical_not", input)
def isfinite(input): return _unary("isfinite", input)


def _float_unary(name, x):
    x = _check_tensor(x, "input")
    data = x._data
    if not x.dtype.is_floating:
        data = call("cast", data, mdt.float32)
    return _wrap(call(name, data))


def exp(input): return _float_unary("exp", input)
def log(input): return _float_unary("log", input)
def sqrt(x): return _float_unary("sqrt", x)
def sin(input): return _float_unary("sin", input)
def cos(input): return _float_unary("cos", input)
def tanh(input): return _float_unary("tanh", input)
def erf(input): return _float_unary("erf", input)


def logical_and(input, other):
    """Elementwise and (inputs cast to bool)."""
    return _wrap(call("logical_and", _bool(input), _bool(other)))


def logical_or(input, other):
    """Elementwise or (inputs cast to bool)."""
    return _wrap(call("logical_or", _bool(input), _bool(other)))


def isnan(input):
    """True where ``input`` is nan."""
    x = _check_tensor(input, "input")
    return _wrap(call("not_equal", x._data, x._data))


def isinf(input):
    """True where ``input`` is +inf or -inf."""
    x = _check_tensor(input, "input")
    return _wrap(call("logical_and", call("logical_not", call("isfinite", x._data)),
                      call("equal", x._data, x._data)))


def rsqrt(input): return div(1.0, sqrt(input))
def square(input): return mul(input, input)
def reciprocal(input): return div(1.0, input)
def log1p(input): return log(add(input, 1.0))


def native_addcmul(a, b, c):
    """``a + b * c`` on native arrays of one dtype, through the backend's fused ``addcmul``
    when it has one (one pass over memory instead of two; the optimizers' updates)."""
    fused = dispatch.fused("addcmul")
    if fused is not None:
        return fused(a, b, c)
    return call("add", a, call("mul", b, c))


def addcmul(input, tensor1, tensor2, value=1):
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


def toward_zero(x):
    """Float Tensor ``x`` rounded toward zero, the sign of a zero result kept as MindSpore
    keeps it (-0.4 gives -0.0)."""
    return where(less(x, 0.0), ceil(x), floor(x))


def where(condition, input, other):
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


def clamp(input, min=None, max=None):
    """``input`` limited to [min, max] elementwise (either bound may be None)."""
    if min is None and max is None:
        raise ValueError("clamp: give min, max or both")
    return clip_by_value(input, min, max)


clip = clamp

eq = equal
ne = not_equal
gt = greater
ge = greater_equal
lt = less
le = less_equal
multiply = mul
negative = neg
absolute = abs
divide = div


def assign_add(variable, value):
    """``variable += value`` for a Parameter; returns the variable."""
    return assign(variable, add(variable, value))


def assign_sub(variable, value):
    """``variable -= value`` for a Parameter; returns the variable."""
    return assign(variable, sub(variable, value))


def floor_div(x, y):
    """``x // y`` rounded toward minus infinity (MindSpore's ``ops.floor_div``)."""
    return floor_divide(x, y)


def true_divide(dividend, divisor):
    """True division (integers give float32)."""
    return div(dividend, divisor)


def subtract(input, other, *, alpha=1):
    """``input - alpha * other``."""
    return sub(input, other if alpha == 1 else mul(other, alpha))


def addn(x):
    """The elementwise sum of a tuple or list of Tensors of one shape."""
    if not isinstance(x, (tuple, list)) or not x:
        raise TypeError(f"x: expected a non-empty tuple or list of Tensors, got "
                        f"{type(x).__name__}")
    total = _check_tensor(x[0], "x")
    for t in x[1:]:
        t = _check_tensor(t, "x")
        if t.shape != total.shape:
            raise ValueError(f"x: every Tensor needs shape {total.shape}, got {t.shape}")
        total = add(total, t)
    return total


def expm1(input):
    """``exp(x) - 1``."""
    return sub(exp(input), 1.0)


def logical_xor(input, other):
    """Elementwise exclusive or (inputs cast to bool)."""
    a, b = _bool(input), _bool(other)
    return _wrap(call("not_equal", a, b))


def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` computed stably."""
    m = maximum(input, other)
    return add(m, log1p(exp(neg(abs(sub(input, other))))))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities count
    as close; nans only with ``equal_nan``)."""
    x = _check_tensor(input, "input")
    y = _as_tensor(other, "other")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or v < 0:
            raise ValueError(f"{name}: expected a non-negative number, got {v!r}")
    if not isinstance(equal_nan, bool):
        raise TypeError(f"equal_nan: expected a bool, got {type(equal_nan).__name__}")
    if not x.dtype.is_floating:
        x = cast(x, mdt.float32)
    y = cast(y, x.dtype)
    same = equal(x, y)
    finite = logical_and(isfinite(x), isfinite(y))
    # infinities and nans are settled by `same`/`equal_nan`; zero them before subtracting
    fx, fy = where(finite, x, 0.0), where(finite, y, 0.0)
    near = less_equal(abs(sub(fx, fy)), add(mul(abs(fy), float(rtol)),
                                            float(atol)))
    out = logical_or(same, logical_and(finite, near))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(x), isnan(y)))
    return out


def _div_no_nan(x, y):
    zero = equal(y, 0)
    safe = where(zero, 1, y)
    return where(zero, 0, div(x, safe))


def _squared_difference(x, y):
    d = sub(x, y)
    return mul(d, d)


Pow = _elementwise("Pow", pow, "``Pow()(input, exponent)``.")
FloorDiv = _elementwise("FloorDiv", floor_divide, "Division rounded toward -inf.")
FloorMod = _elementwise("FloorMod", floor_mod, "Remainder with the divisor's sign.")
DivNoNan = _elementwise("DivNoNan", _div_no_nan, "``x / y``, 0 where ``y`` is 0.")
SquaredDifference = _elementwise("SquaredDifference", _squared_difference, "``(x - y)^2``.")
Reciprocal = _elementwise("Reciprocal", reciprocal, "``1 / x``.")
Rsqrt = _elementwise("Rsqrt", rsqrt, "``1 / sqrt(x)``.")
Expm1 = _elementwise("Expm1", expm1, "``exp(x) - 1``.")
Log1p = _elementwise("Log1p", log1p, "``log(1 + x)``.")
Sin = _elementwise("Sin", sin, "Elementwise sine.")
Cos = _elementwise("Cos", cos, "Elementwise cosine.")
Erf = _elementwise("Erf", erf, "Elementwise error function.")
Floor = _elementwise("Floor", floor, "Elementwise floor.")
Ceil = _elementwise("Ceil", ceil, "Elementwise ceiling.")
Sign = _elementwise("Sign", sign, "Elementwise sign.")
Equal = _elementwise("Equal", equal, "``x == y``.")
NotEqual = _elementwise("NotEqual", not_equal, "``x != y``.")
Greater = _elementwise("Greater", greater, "``x > y``.")
GreaterEqual = _elementwise("GreaterEqual", greater_equal, "``x >= y``.")
Less = _elementwise("Less", less, "``x < y``.")
LessEqual = _elementwise("LessEqual", less_equal, "``x <= y``.")
LogicalAnd = _elementwise("LogicalAnd", logical_and, "Elementwise and.")
LogicalOr = _elementwise("LogicalOr", logical_or, "Elementwise or.")
LogicalNot = _elementwise("LogicalNot", logical_not, "Elementwise not.")
LogicalXor = _elementwise("LogicalXor", logical_xor, "Elementwise exclusive or.")
IsNan = _elementwise("IsNan", isnan, "True where nan.")
IsInf = _elementwise("IsInf", isinf, "True where +-inf.")


class Addcmul(Primitive):
    """``Addcmul()(input, tensor1, tensor2, value)``: ``input + value * tensor1 *
    tensor2``."""

    def compute(self, input, tensor1, tensor2, value):
        return addcmul(input, tensor1, tensor2, value)


class IsClose(Primitive):
    """``IsClose(rtol=1e-05, atol=1e-08, equal_nan=False)(input, other)``."""

    def __init__(self, rtol=1e-05, atol=1e-08, equal_nan=False):
        super().__init__()
        self.rtol, self.atol = rtol, atol
        self.equal_nan = check_bool(equal_nan, "equal_nan", "IsClose")

    def compute(self, input, other):
        return isclose(input, other, self.rtol, self.atol, self.equal_nan)


class TensorAdd(_Elementwise):
    """The 1.x name of ``Add``."""

    _fn = staticmethod(add)


class AddN(Primitive):
    """``AddN()(inputs)``: the elementwise sum of a tuple or list of Tensors."""

    def compute(self, inputs):
        return addn(inputs)


class ApplyMomentum(Primitive):
    """``ApplyMomentum(use_nesterov=False, use_locking=False, gradient_scale=1.0)(variable,
    accumulation, learning_rate, gradient, momentum)``: ``accumulation = accumulation *
    momentum + gradient * gradient_scale``, then ``variable -= learning_rate *
    accumulation`` (Nesterov: ``learning_rate * (gradient * gradient_scale + accumulation
    * momentum)``); both Parameters change in place and ``variable`` is returned."""

    def __init__(self, use_nesterov=False, use_locking=False, gradient_scale=1.0):
        super().__init__()
        self.use_nesterov = check_bool(use_nesterov, "use_nesterov", "ApplyMomentum")
        self.use_locking = check_bool(use_locking, "use_locking", "ApplyMomentum")
        self.gradient_scale = check_float(gradient_scale, "gradient_scale", "ApplyMomentum")

    def compute(self, variable, accumulation, learning_rate, gradient, momentum):
        for name, p in (("variable", variable), ("accumulation", accumulation)):
            if not isinstance(p, Parameter):
                raise TypeError(f"ApplyMomentum: {name} must be a Parameter, got "
                                f"{type(p).__name__}")
        g = gradient if self.gradient_scale == 1.0 else mul(gradient, self.gradient_scale)
        acc = add(mul(accumulation, momentum), g)
        accumulation.assign_value(acc)
        step = add(g, mul(acc, momentum)) if self.use_nesterov else acc
        variable.assign_value(sub(variable, mul(step, learning_rate)))
        return variable


class AssignAdd(Primitive):
    """``AssignAdd()(variable, value)``: ``variable += value``; returns the variable."""

    def compute(self, variable, value):
        return assign(variable, add(variable, value))


class AssignSub(Primitive):
    """``AssignSub()(variable, value)``: ``variable -= value``; returns the variable."""

    def compute(self, variable, value):
        return assign(variable, sub(variable, value))


Add = _elementwise("Add", add, "Elementwise sum.")
Sub = _elementwise("Sub", sub, "Elementwise difference.")
Mul = _elementwise("Mul", mul, "Elementwise product.")
Div = _elementwise("Div", div, "Elementwise quotient.")
RealDiv = Div
Exp = _elementwise("Exp", exp, "Elementwise exp.")
Log = _elementwise("Log", log, "Elementwise log.")
Sqrt = _elementwise("Sqrt", sqrt, "Elementwise sqrt.")
Square = _elementwise("Square", square, "Elementwise square.")
Tanh = _elementwise("Tanh", tanh, "Elementwise tanh.")

Abs = _elementwise("Abs", abs, "Elementwise absolute value.")
Neg = _elementwise("Neg", neg, "Elementwise negation.")
Maximum = _elementwise("Maximum", maximum, "Elementwise maximum.")
Minimum = _elementwise("Minimum", minimum, "Elementwise minimum.")

Select = _elementwise("Select", where, "``Select()(cond, x, y)``.")

IsFinite = _elementwise("IsFinite", isfinite, "True where finite.")
