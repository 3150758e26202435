"""Primitive classes for math: elementwise ops, comparisons, reductions, arg-reductions and
running sums (``P.Pow()``, ``P.ReduceMax(keep_dims)``, ``P.ArgMaxWithValue(axis)``,
``P.CumSum(exclusive, reverse)``, ...), with MindSpore's constructor arguments and checks."""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.ops import functional as F
from mscore.ops import math_func
from mscore.ops.primitives import (
    Primitive, _Elementwise, _Reduce, _elementwise, check_bool, check_int)


def _div_no_nan(x, y):
    zero = F.equal(y, 0)
    safe = F.where(zero, 1, y)
    return F.where(zero, 0, F.div(x, safe))


def _squared_difference(x, y):
    d = F.sub(x, y)
    return F.mul(d, d)


Pow = _elementwise("Pow", F.pow, "``Pow()(input, exponent)``.")
FloorDiv = _elementwise("FloorDiv", F.floor_divide, "Division rounded toward -inf.")
FloorMod = _elementwise("FloorMod", F.remainder, "Remainder with the divisor's sign.")
DivNoNan = _elementwise("DivNoNan", _div_no_nan, "``x / y``, 0 where ``y`` is 0.")
SquaredDifference = _elementwise("SquaredDifference", _squared_difference, "``(x - y)^2``.")
Reciprocal = _elementwise("Reciprocal", F.reciprocal, "``1 / x``.")
Rsqrt = _elementwise("Rsqrt", F.rsqrt, "``1 / sqrt(x)``.")
Expm1 = _elementwise("Expm1", math_func.expm1, "``exp(x) - 1``.")
Log1p = _elementwise("Log1p", F.log1p, "``log(1 + x)``.")
Sin = _elementwise("Sin", F.sin, "Elementwise sine.")
Cos = _elementwise("Cos", F.cos, "Elementwise cosine.")
Erf = _elementwise("Erf", F.erf, "Elementwise error function.")
Floor = _elementwise("Floor", F.floor, "Elementwise floor.")
Ceil = _elementwise("Ceil", F.ceil, "Elementwise ceiling.")
Sign = _elementwise("Sign", F.sign, "Elementwise sign.")
Equal = _elementwise("Equal", F.equal, "``x == y``.")
NotEqual = _elementwise("NotEqual", F.not_equal, "``x != y``.")
Greater = _elementwise("Greater", F.greater, "``x > y``.")
GreaterEqual = _elementwise("GreaterEqual", F.greater_equal, "``x >= y``.")
Less = _elementwise("Less", F.less, "``x < y``.")
LessEqual = _elementwise("LessEqual", F.less_equal, "``x <= y``.")
LogicalAnd = _elementwise("LogicalAnd", F.logical_and, "Elementwise and.")
LogicalOr = _elementwise("LogicalOr", F.logical_or, "Elementwise or.")
LogicalNot = _elementwise("LogicalNot", F.logical_not, "Elementwise not.")
LogicalXor = _elementwise("LogicalXor", math_func.logical_xor, "Elementwise exclusive or.")
IsNan = _elementwise("IsNan", F.isnan, "True where nan.")
IsInf = _elementwise("IsInf", F.isinf, "True where +-inf.")


class Addcmul(Primitive):
    """``Addcmul()(input, tensor1, tensor2, value)``: ``input + value * tensor1 *
    tensor2``."""

    def compute(self, input, tensor1, tensor2, value):  # noqa: A002
        return F.addcmul(input, tensor1, tensor2, value)


class IsClose(Primitive):
    """``IsClose(rtol=1e-05, atol=1e-08, equal_nan=False)(input, other)``."""

    def __init__(self, rtol=1e-05, atol=1e-08, equal_nan=False):
        super().__init__()
        self.rtol, self.atol = rtol, atol
        self.equal_nan = check_bool(equal_nan, "equal_nan", "IsClose")

    def compute(self, input, other):  # noqa: A002
        return math_func.isclose(input, other, self.rtol, self.atol, self.equal_nan)


class TensorAdd(_Elementwise):
    """The 1.x name of ``Add``."""

    _fn = staticmethod(F.add)


class AddN(Primitive):
    """``AddN()(inputs)``: the elementwise sum of a tuple or list of Tensors."""

    def compute(self, inputs):
        return math_func.addn(inputs)


class ReduceMax(_Reduce):
    """``ReduceMax(keep_dims=False)(x, axis=())``."""

    @staticmethod
    def _reduce(x, axis, keep):
        return F.amax(x, axis, keep)


class ReduceMin(_Reduce):
    """``ReduceMin(keep_dims=False)(x, axis=())``."""

    @staticmethod
    def _reduce(x, axis, keep):
        return F.amin(x, axis, keep)


class ReduceAll(_Reduce):
    """``ReduceAll(keep_dims=False)(x, axis=None)``: logical and."""

    def compute(self, input, axis=None):  # noqa: A002
        return _Reduce.compute(self, input, axis)

    @staticmethod
    def _reduce(x, axis, keep):
        return F.all(x, axis, keep)


class ReduceAny(_Reduce):
    """``ReduceAny(keep_dims=False)(x, axis=())``: logical or."""

    @staticmethod
    def _reduce(x, axis, keep):
        return F.any(x, axis, keep)


class _ArgWithValue(Primitive):
    _value, _index = None, None

    def __init__(self, axis=0, keep_dims=False):
        super().__init__()
        prim = type(self).__name__
        self.axis = check_int(axis, "axis", prim)
        self.keep_dims = check_bool(keep_dims, "keep_dims", prim)

    def compute(self, input):  # noqa: A002
        index = type(self)._index(input, self.axis, self.keep_dims)
        value = type(self)._value(input, self.axis, self.keep_dims)
        return index, value


class ArgMaxWithValue(_ArgWithValue):
    """``ArgMaxWithValue(axis=0, keep_dims=False)(x)`` returns ``(indices, values)``."""

    _value = staticmethod(F.amax)
    _index = staticmethod(F.argmax)


def _argmin64(x, axis, keep):
    return F.cast(F.argmin(x, axis, keep), mdt.int64)


class ArgMinWithValue(_ArgWithValue):
    """``ArgMinWithValue(axis=0, keep_dims=False)(x)`` returns ``(indices, values)``."""

    _value = staticmethod(F.amin)
    _index = staticmethod(_argmin64)


class Argmax(Primitive):
    """``Argmax(axis=-1, output_type=ms.int32)(x)``: indices of the maxima."""

    _fn = staticmethod(F.argmax)

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
        return F.cast(type(self)._fn(input_x, self.axis), self.output_type)


class Argmin(Argmax):
    """``Argmin(axis=-1, output_type=ms.int32)(x)``: indices of the minima."""

    _fn = staticmethod(F.argmin)

    def compute(self, x):
        return F.cast(type(self)._fn(x, self.axis), self.output_type)


class CumSum(Primitive):
    """``CumSum(exclusive=False, reverse=False)(input, axis)``: running sums."""

    def __init__(self, exclusive=False, reverse=False):
        super().__init__()
        self.exclusive = check_bool(exclusive, "exclusive", "CumSum")
        self.reverse = check_bool(reverse, "reverse", "CumSum")

    def compute(self, input, axis):  # noqa: A002
        return math_func.cumulative_sum(input, axis, self.exclusive, self.reverse)


__all__ = ["Pow", "FloorDiv", "FloorMod", "DivNoNan", "SquaredDifference", "Reciprocal",
           "Rsqrt", "Expm1", "Log1p", "Sin", "Cos", "Erf", "Floor", "Ceil", "Sign", "Equal",
           "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "LogicalAnd",
           "LogicalOr", "LogicalNot", "LogicalXor", "IsNan", "IsInf", "TensorAdd", "AddN",
           "Addcmul", "IsClose",
           "ReduceMax", "ReduceMin", "ReduceAll", "ReduceAny", "ArgMaxWithValue",
           "ArgMinWithValue", "Argmax", "Argmin", "CumSum"]
