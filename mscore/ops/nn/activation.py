"""Activation functions (``relu``, ``gelu``, ``sigmoid``, ``softmax``, ``elu``, ``hardswish``,
``rrelu``, ...) and their Primitives.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore import dispatch, fused_reference
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _axis1, _check_tensor, _float_input, _float_tensor
from mscore.ops.array.indexing import split
from mscore.ops.array.manipulation import reshape
from mscore.ops.control import cast
from mscore.ops.math.elementwise import (
    abs,
    add,
    clip_by_value,
    div,
    erf,
    exp,
    greater,
    less,
    log,
    log1p,
    maximum,
    minimum,
    mul,
    neg,
    pow,
    sub,
    tanh,
    where,
)
from mscore.ops.primitive_base import Primitive, _elementwise, check_axes, check_float
from mscore.ops.random.draws import uniform

_wrap = Tensor._wrap


def relu(input, inplace=False):
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


def leaky_relu(input, alpha=0.2):
    """x where x > 0 else alpha * x."""
    x = _check_tensor(input, "input")
    return where(greater(x, 0.0), x, mul(x, alpha))


def sigmoid(input):
    """1 / (1 + exp(-x)), computed as (tanh(x/2) + 1) / 2 to stay finite for large |x|."""
    x = _float_input(input)
    return mul(add(tanh(mul(x, 0.5)), 1.0), 0.5)


def silu(input):
    """x * sigmoid(x)."""
    return mul(input, sigmoid(input))


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``."""
    x = _float_input(input)
    bx = mul(x, float(beta))
    safe = minimum(bx, float(threshold))
    soft = div(log(add(exp(safe), 1.0)), float(beta))
    return where(greater(bx, float(threshold)), x, soft)


def gelu(input, approximate="none"):
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


def prelu(input, weight):
    """x where x > 0 else weight * x (weight broadcast over the channel axis 1)."""
    x = _check_tensor(input, "input")
    weight = _check_tensor(weight, "weight")
    if x.ndim >= 2 and weight.ndim == 1 and weight.shape[0] > 1:
        weight = reshape(weight, (1, weight.shape[0]) + (1,) * (x.ndim - 2))
    return where(greater(x, 0.0), x, mul(x, weight))


def softmax(input, axis=-1, *, dtype=None):
    """exp(x) / sum(exp(x)) along ``axis`` (of ``input`` cast to ``dtype`` when given)."""
    x = _float_input(input if dtype is None else cast(input, dtype), "input")
    ax = _axis1(axis, x.ndim)
    fused = dispatch.fused("softmax")
    if fused is not None:
        return _wrap(fused(x._data, axis=ax))
    return _wrap(fused_reference.softmax(x._data, ax))


def log_softmax(logits, axis=-1):
    """log(softmax(x)) along ``axis``, computed stably."""
    x = _float_input(logits, "logits")
    ax = _axis1(axis, x.ndim)
    fused = dispatch.fused("log_softmax")
    if fused is not None:
        return _wrap(fused(x._data, axis=ax))
    return _wrap(fused_reference.log_softmax(x._data, ax))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _number(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a float, got {type(value).__name__}")
    return float(value)


def _elu_core(x, alpha):
    """alpha * (exp(x) - 1) below 0, x above, with exp evaluated on min(x, 0) only so the
    unused branch never overflows."""
    neg = mul(sub(exp(minimum(x, 0.0)), 1.0), alpha)
    return where(greater(x, 0.0), x, neg)


def elu(input_x, alpha=1.0):
    """Exponential linear unit; MindSpore supports ``alpha`` 1.0 only."""
    x = _float_input(input_x, "input_x")
    if _number(alpha, "alpha") != 1.0:
        raise ValueError(f"alpha: only 1.0 is supported, got {alpha!r}")
    return _elu_core(x, 1.0)


def celu(x, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``; ``alpha`` must not be 0."""
    x = _float_input(x, "x")
    alpha = _number(alpha, "alpha")
    if alpha == 0:
        raise ValueError("alpha: must not be 0")
    neg = mul(sub(exp(div(minimum(x, 0.0), alpha)), 1.0), alpha)
    return where(greater(x, 0.0), x, neg)


def selu(input_x):
    """Scaled ELU with the self-normalising constants."""
    x = _float_input(input_x, "input_x")
    return mul(_elu_core(x, _SELU_ALPHA), _SELU_SCALE)


def softsign(x):
    """``x / (1 + |x|)``."""
    x = _float_input(x, "x")
    return div(x, add(abs(x), 1.0))


def logsigmoid(x):
    """``log(sigmoid(x))`` computed stably: ``-softplus(-x)``."""
    x = _float_input(x, "x")
    return neg(_softplus(neg(x)))


def _softplus(x):
    """``log(1 + exp(x))`` without overflow: ``max(x, 0) + log1p(exp(-|x|))``."""
    return add(maximum(x, 0.0), log1p(exp(neg(abs(x)))))


def mish(x):
    """``x * tanh(softplus(x))``."""
    x = _float_input(x, "x")
    return mul(x, tanh(_softplus(x)))


def hardsigmoid(input):
    """``relu6(x + 3) / 6``."""
    x = _float_input(input)
    return div(relu6(add(x, 3.0)), 6.0)


def hardswish(input):
    """``x * relu6(x + 3) / 6``."""
    x = _float_input(input)
    return mul(x, hardsigmoid(x))


def hardtanh(input, min_val=-1.0, max_val=1.0):
    """``input`` limited to [min_val, max_val]."""
    x = _float_input(input)
    lo, hi = _number(min_val, "min_val"), _number(max_val, "max_val")
    if lo > hi:
        raise ValueError(f"hardtanh: min_val {lo} is larger than max_val {hi}")
    return clip_by_value(x, lo, hi)


def glu(x, axis=-1):
    """Gated linear unit: the first half of ``x`` along ``axis`` times the sigmoid of the
    second half (the size along ``axis`` must be even)."""
    x = _float_input(x, "x")
    ax = _axis1(axis, x.ndim)
    n = x.shape[ax]
    if n % 2:
        raise ValueError(f"x: the size {n} of axis {ax} must be even")
    a, b = split(x, n // 2, ax)
    return mul(a, sigmoid(b))


def fast_gelu(x):
    """MindSpore's FastGeLU: ``x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))``."""
    x = _float_input(x, "x")
    ax = abs(x)
    return mul(div(x, add(exp(mul(ax, -1.702)), 1.0)),
               exp(mul(sub(x, ax), 0.851)))


def _real(value, name, cls):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{cls}', the type of '{name}' must be float or int, got "
                        f"{type(value).__name__}")
    return float(value)


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, 0 elsewhere."""
    x = _float_tensor(input, "input", "hardshrink")
    lambd = _real(lambd, "lambd", "hardshrink")
    return where(greater(abs(x), lambd), x, 0.0)


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between
    (``lambd`` >= 0; MindSpore's kernel raises RuntimeError otherwise)."""
    x = _float_tensor(input, "input", "softshrink")
    lambd = _real(lambd, "lambd", "softshrink")
    if lambd < 0:
        raise RuntimeError(f"For 'SoftShrink', the values for lambd should be greater or "
                           f"equal to 0, but found to be [{lambd:g}]")
    return where(greater(x, lambd), sub(x, lambd),
                 where(less(x, -lambd), add(x, lambd), 0.0))


def tanhshrink(input):
    """``x - tanh(x)`` (integer inputs compute in float32)."""
    x = _check_tensor(input, "input")
    if not x.dtype.is_floating:
        x = cast(x, mdt.float32)
    return sub(x, tanh(x))


def threshold(input, thr, value):
    """``x`` where ``x > thr``, ``value`` elsewhere (in the input's dtype)."""
    x = _check_tensor(input, "input")
    thr = _real(thr, "thr", "threshold")
    value = _real(value, "value", "threshold")
    if not x.dtype.is_floating:
        value = int(value)
    return where(greater(x, thr), x, value)


def softmin(x, axis=-1, *, dtype=None):
    """``softmax(-x)`` along ``axis``."""
    _check_tensor(x, "x")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer, tuple)):
        raise TypeError(f"For 'Softmax', the type of 'axis' must be an int or a tuple of "
                        f"ints, got {type(axis).__name__}")
    if dtype is not None:
        x = cast(x, dtype)
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError(f"For 'softmin', 'axis' must hold one axis, got {axis}")
        axis = axis[0]
    return softmax(neg(x), int(axis))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=True):
    """Randomized leaky ReLU: negative values scaled by a slope drawn uniformly from
    [lower, upper) per element (``training``), by (lower + upper) / 2 otherwise."""
    upper = _real(upper, "upper", "rrelu")
    lower = _real(lower, "lower", "rrelu")
    if lower > upper:
        raise ValueError(f"For 'rrelu', the value of 'upper' must be greater than or equal to "
                         f"'lower', got upper: {upper}, lower: {lower}")
    x = _check_tensor(input, "input")
    if training:
        slope = cast(uniform(x.shape, lower, upper), x.dtype)
    else:
        slope = (lower + upper) / 2
    return where(less(x, 0), mul(x, slope), x)


def _gelu_tanh(x):
    return gelu(x, "tanh")


ReLU6 = _elementwise("ReLU6", relu6, "``min(max(x, 0), 6)``.")
SeLU = _elementwise("SeLU", selu, "Scaled exponential linear unit.")
HSwish = _elementwise("HSwish", hardswish, "``x * relu6(x + 3) / 6``.")
HSigmoid = _elementwise("HSigmoid", hardsigmoid, "``relu6(x + 3) / 6``.")
Softplus = _elementwise("Softplus", softplus, "``log(1 + exp(x))``.")
Softsign = _elementwise("Softsign", softsign, "``x / (1 + |x|)``.")
Mish = _elementwise("Mish", mish, "``x * tanh(softplus(x))``.")

GeLU = _elementwise("GeLU", _gelu_tanh, "GeLU with the tanh approximation (as MindSpore's "
                                        "primitive computes it).")

FastGeLU = _elementwise("FastGeLU", fast_gelu,
                        "``x / (1 + exp(-1.702|x|)) * exp(0.851 (x - |x|))``.")


class Elu(Primitive):
    """``Elu(alpha=1.0)(x)``: exponential linear unit."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = check_float(alpha, "alpha", "Elu")

    def compute(self, input_x):
        return _elu_core(_float_input(input_x, "input_x"), self.alpha)


class CeLU(Primitive):
    """``CeLU(alpha=1.0)(x)``: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = check_float(alpha, "alpha", "CeLU")

    def compute(self, x):
        return celu(x, self.alpha)


class ReLU(Primitive):
    """max(x, 0)."""

    def compute(self, x):
        return relu(x)


class PReLU(Primitive):
    """``PReLU()(x, weight)``: x where positive, weight * x elsewhere."""

    def compute(self, x, weight):
        return prelu(x, weight)


Sigmoid = _elementwise("Sigmoid", sigmoid, "Elementwise sigmoid.")


class Softmax(Primitive):
    """``Softmax(axis=-1)(x)``."""

    def __init__(self, axis=-1):
        super().__init__()
        axis = check_axes(axis, "axis", type(self).__name__)
        self.axis = axis[0] if isinstance(axis, tuple) else axis

    def compute(self, x):
        return softmax(x, self.axis)


class LogSoftmax(Softmax):
    """``LogSoftmax(axis=-1)(x)``."""

    def compute(self, x):
        return log_softmax(x, self.axis)
