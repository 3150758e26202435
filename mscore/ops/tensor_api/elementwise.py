"""MindSpore 2.10's elementwise Tensor methods: unary functions, binary arithmetic and
comparisons, their in-place variants (``add_``, ``clamp_``, ``exp_`` ...), the fused
``addcmul``/``addmm`` family and closeness tests; each a thin binding to the functional op
in :mod:`mscore.ops` (attached by :mod:`mscore.ops.tensor_api`)."""
from __future__ import annotations

import inspect

from mscore import ops
from mscore.ops.math import arithmetic, special
from mscore.ops.tensor_api.helpers import dim_alias, store
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
method = METHODS.method


# -- elementwise, unary ---------------------------------------------------------------------
_UNARY = {
    "absolute": (ops.abs, "Absolute value, elementwise."),
    "ceil": (ops.ceil, "Rounded up, elementwise."),
    "cos": (ops.cos, "Cosine, elementwise."),
    "cosh": (ops.cosh, "Hyperbolic cosine, elementwise."),
    "sin": (ops.sin, "Sine, elementwise."),
    "sinh": (ops.sinh, "Hyperbolic sine, elementwise."),
    "tan": (ops.tan, "Tangent, elementwise."),
    "tanh": (ops.tanh, "Hyperbolic tangent, elementwise."),
    "sigmoid": (ops.sigmoid, "Logistic sigmoid, elementwise."),
    "erf": (ops.erf, "Error function, elementwise."),
    "erfc": (special.erfc, "Complementary error function, elementwise."),
    "expm1": (ops.expm1, "``exp(x) - 1``, elementwise."),
    "floor": (ops.floor, "Rounded down, elementwise."),
    "log1p": (ops.log1p, "``log(1 + x)``, elementwise."),
    "log2": (arithmetic.log2, "Base-2 logarithm, elementwise."),
    "log10": (arithmetic.log10, "Base-10 logarithm, elementwise."),
    "neg": (ops.neg, "Negation, elementwise."),
    "negative": (ops.neg, "Negation, elementwise."),
    "reciprocal": (ops.reciprocal, "``1 / x``, elementwise."),
    "rsqrt": (ops.rsqrt, "``1 / sqrt(x)``, elementwise."),
    "sign": (ops.sign, "Sign (-1, 0 or 1), elementwise."),
    "sgn": (arithmetic.sgn, "Sign (-1, 0 or 1), elementwise."),
    "trunc": (arithmetic.trunc, "Rounded toward zero, elementwise."),
    "frac": (arithmetic.frac, "Fractional part, elementwise."),
    "deg2rad": (ops.deg2rad, "Degrees to radians, elementwise."),
    "rad2deg": (ops.rad2deg, "Radians to degrees, elementwise."),
    "digamma": (ops.digamma, "Digamma function, elementwise."),
    "lgamma": (ops.lgamma, "Log-gamma function, elementwise."),
    "logical_not": (ops.logical_not, "Logical NOT, elementwise."),
    "isfinite": (ops.isfinite, "True where finite."),
    "isinf": (ops.isinf, "True where infinite."),
    "isnan": (ops.isnan, "True where NaN."),
    "isneginf": (arithmetic.isneginf, "True where -inf."),
    "isposinf": (arithmetic.isposinf, "True where +inf."),
    "isreal": (ops.isreal, "True everywhere (real dtypes only)."),
    "signbit": (arithmetic.signbit, "True where negative."),
    "sinc": (ops.sinc, "Normalised sinc, elementwise."),
    "positive": (arithmetic.positive, "The tensor itself (unary plus)."),
    "exp": (ops.exp, "Exponential, elementwise."),
    "exp2": (arithmetic.exp2, "``2 ** x``, elementwise."),
    "atan": (ops.atan, "Arctangent, elementwise."),
    "arctan": (ops.atan, "Arctangent, elementwise."),
    "asin": (ops.asin, "Arcsine, elementwise."),
    "arcsin": (ops.asin, "Arcsine, elementwise."),
    "acos": (ops.acos, "Arccosine, elementwise."),
    "arccos": (ops.acos, "Arccosine, elementwise."),
    "asinh": (ops.asinh, "Inverse hyperbolic sine, elementwise."),
    "arcsinh": (ops.asinh, "Inverse hyperbolic sine, elementwise."),
    "acosh": (ops.acosh, "Inverse hyperbolic cosine, elementwise."),
    "arccosh": (ops.acosh, "Inverse hyperbolic cosine, elementwise."),
    "atanh": (ops.atanh, "Inverse hyperbolic tangent, elementwise."),
    "arctanh": (ops.atanh, "Inverse hyperbolic tangent, elementwise."),
    "log": (ops.log, "Natural logarithm, elementwise."),
    "sqrt": (ops.sqrt, "Square root, elementwise."),
    "square": (ops.square, "Square, elementwise."),
    "abs": (ops.abs, "Absolute value, elementwise."),
}
for _name, (_op, _doc) in _UNARY.items():
    METHODS.bind(_name, _op, _doc)


def _inplace_unary(name, op):
    def bound(self):
        return store(self, op(self))
    bound.__name__ = bound.__qualname__ = name
    bound.__doc__ = f"In place: :meth:`{name[:-1]}`; returns the tensor."
    return method(bound)


for _name in ("exp_", "floor_", "log_", "sigmoid_", "sign_", "tanh_", "neg_", "abs_",
              "sqrt_", "square_", "ceil_", "trunc_", "sin_", "cos_", "reciprocal_"):
    _inplace_unary(_name, _UNARY[_name[:-1]][0])


@method
def round(self, decimals=0):
    """Rounded half to even to ``decimals`` places."""
    return arithmetic.round(self, decimals)


@method
def logit(self, eps=None):
    """``log(p / (1 - p))`` (``p`` clamped to ``[eps, 1 - eps]`` when given)."""
    return arithmetic.logit(self, eps)


@method
def hardshrink(self, lambd=0.5):
    """0 where ``|x| <= lambd``, else ``x``."""
    return ops.hardshrink(self, lambd)


@method
def soft_shrink(self, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    return ops.softshrink(self, lambd)


@method
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    """NaN and infinities replaced by finite numbers."""
    return arithmetic.nan_to_num(self, nan, posinf, neginf)


@method
def softmax(self, axis, dtype=None):
    """Softmax along ``axis``."""
    return ops.softmax(self, axis, dtype=dtype)


# -- elementwise, binary ----------------------------------------------------------------------
def _binary(name, op, doc, param="other"):
    def bound(self, other):
        return op(self, other)
    bound.__name__ = bound.__qualname__ = name
    bound.__doc__ = doc
    if param != "other":
        bound.__signature__ = _signature(param)
    return method(bound)


def _signature(*params):
    P = inspect.Parameter
    return inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD)] +
                             [P(p, P.POSITIONAL_OR_KEYWORD) for p in params])


_BINARY = {
    "mul": (ops.mul, "Product, elementwise (broadcast)."),
    "multiply": (ops.mul, "Product, elementwise (broadcast).", "value"),
    "true_divide": (ops.div, "True division, elementwise."),
    "floor_divide": (ops.floor_divide, "Division rounded down, elementwise."),
    "fmod": (arithmetic.fmod, "Remainder with the dividend's sign, elementwise."),
    "pow": (ops.pow, "``self ** exponent``, elementwise.", "exponent"),
    "float_power": (arithmetic.float_power, "``self ** other`` in floating point."),
    "maximum": (ops.maximum, "Larger of the two, elementwise."),
    "minimum": (ops.minimum, "Smaller of the two, elementwise."),
    "fmax": (arithmetic.fmax, "Larger of the two, ignoring NaN."),
    "fmin": (arithmetic.fmin, "Smaller of the two, ignoring NaN."),
    "eq": (ops.equal, "True where equal."),
    "equal": (ops.equal, "True where equal."),
    "ne": (ops.not_equal, "True where different."),
    "not_equal": (ops.not_equal, "True where different."),
    "lt": (ops.less, "True where less."),
    "less": (ops.less, "True where less."),
    "le": (ops.less_equal, "True where less or equal."),
    "less_equal": (ops.less_equal, "True where less or equal."),
    "gt": (ops.greater, "True where greater."),
    "greater": (ops.greater, "True where greater."),
    "ge": (ops.greater_equal, "True where greater or equal."),
    "greater_equal": (ops.greater_equal, "True where greater or equal."),
    "logical_and": (ops.logical_and, "Logical AND, elementwise."),
    "logical_or": (ops.logical_or, "Logical OR, elementwise."),
    "logical_xor": (ops.logical_xor, "Logical XOR, elementwise."),
    "logaddexp": (ops.logaddexp, "``log(exp(self) + exp(other))``, stably."),
    "logaddexp2": (arithmetic.logaddexp2, "``log2(2**self + 2**other)``, stably."),
    "hypot": (ops.hypot, "``sqrt(self**2 + other**2)``."),
    "atan2": (ops.atan2, "Angle of the point ``(other, self)``, elementwise."),
    "arctan2": (ops.atan2, "Angle of the point ``(other, self)``, elementwise."),
    "xlogy": (arithmetic.xlogy, "``self * log(other)``, 0 where self is 0."),
    "xdivy": (arithmetic.xdivy, "``self / y``, 0 where self is 0.", "y"),
    "copysign": (arithmetic.copysign, "``|self|`` with ``other``'s sign."),
    "heaviside": (arithmetic.heaviside, "Heaviside step with ``values`` at 0.", "values"),
    "igamma": (ops.igamma, "Regularised lower incomplete gamma."),
    "igammac": (ops.igammac, "Regularised upper incomplete gamma."),
    "matmul": (ops.matmul, "Matrix product.", "tensor2"),
    "mm": (ops.mm, "Matrix product of 2-d tensors.", "mat2"),
    "bmm": (ops.bmm, "Batched matrix product.", "mat2"),
    "dot": (ops.dot, "Dot product of 1-d tensors."),
    "inner": (ops.inner, "Sum of products over the last axes."),
    "outer": (ops.outer, "Outer product of 1-d tensors.", "vec2"),
    "ger": (ops.ger, "Outer product of 1-d tensors.", "vec2"),
}
for _name, (_op, _doc, *_param) in _BINARY.items():
    _binary(_name, _op, _doc, *_param)


def _scaled(other, alpha):
    return other if alpha == 1 else ops.mul(other, alpha)


@method
def add(self, other, *, alpha=1):
    """``self + alpha * other``."""
    return ops.add(self, _scaled(other, alpha))


@method
def sub(self, other, *, alpha=1):
    """``self - alpha * other``."""
    return ops.sub(self, _scaled(other, alpha))


@method
def subtract(self, other, *, alpha=1):
    """``self - alpha * other``."""
    return ops.sub(self, _scaled(other, alpha))


@method
def div(self, other, *, rounding_mode=None):
    """``self / other`` (``rounding_mode`` 'floor' or 'trunc' rounds the quotient)."""
    return ops.div(self, other, rounding_mode=rounding_mode)


@method
def divide(self, other, *, rounding_mode=None):
    """``self / other`` (``rounding_mode`` 'floor' or 'trunc' rounds the quotient)."""
    return ops.div(self, other, rounding_mode=rounding_mode)


@method
def add_(self, other, *, alpha=1):
    """In place: ``self + alpha * other``; returns the tensor."""
    return store(self, add(self, other, alpha=alpha))


@method
def sub_(self, other, *, alpha=1):
    """In place: ``self - alpha * other``; returns the tensor."""
    return store(self, sub(self, other, alpha=alpha))


@method
def mul_(self, other):
    """In place: ``self * other``; returns the tensor."""
    return store(self, ops.mul(self, other))


@method
def div_(self, other, *, rounding_mode=None):
    """In place: ``self / other``; returns the tensor."""
    return store(self, ops.div(self, other, rounding_mode=rounding_mode))


@method
def floor_divide_(self, other):
    """In place: ``self // other``; returns the tensor."""
    return store(self, ops.floor_divide(self, other))


@method
def remainder_(self, other):
    """In place: ``self % other``; returns the tensor."""
    return store(self, ops.remainder(self, other))


@method
def pow_(self, exponent):
    """In place: ``self ** exponent``; returns the tensor."""
    return store(self, ops.pow(self, exponent))


@method
def remainder(self, other=None, *, divisor=None):
    """Remainder with the divisor's sign, elementwise (``divisor`` is the other overload's
    name)."""
    return ops.remainder(self, dim_alias(other, "other", "divisor", divisor, None))


@method
def clamp(self, min=None, max=None):
    """Values limited to ``[min, max]``."""
    return ops.clamp(self, min, max)


@method
def clip(self, min=None, max=None):
    """Values limited to ``[min, max]``."""
    return ops.clamp(self, min, max)


@method
def clamp_(self, min=None, max=None):
    """In place: :meth:`clamp`; returns the tensor."""
    return store(self, ops.clamp(self, min, max))


@method
def lerp(self, end, weight):
    """``self + weight * (end - self)``."""
    return arithmetic.lerp(self, end, weight)


@method
def addcmul(self, tensor1, tensor2, value=1):
    """``self + value * tensor1 * tensor2``."""
    return ops.addcmul(self, tensor1, tensor2, value)


@method
def addcdiv(self, tensor1, tensor2, *, value=1):
    """``self + value * tensor1 / tensor2``."""
    return arithmetic.addcdiv(self, tensor1, tensor2, value)


@method
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)``."""
    return ops.addmm(self, mat1, mat2, beta, alpha)


@method
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """In place: :meth:`addmm`; returns the tensor."""
    return store(self, ops.addmm(self, mat1, mat2, beta, alpha))


@method
def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """``beta * self + alpha * sum_b(batch1[b] @ batch2[b])``."""
    return ops.addbmm(self, batch1, batch2, beta, alpha)


@method
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """``beta * self + alpha * (batch1 @ batch2)`` per batch."""
    return ops.baddbmm(self, batch1, batch2, beta, alpha)


@method
def addmv(self, mat, vec, *, beta=1, alpha=1):
    """``beta * self + alpha * (mat @ vec)``."""
    return ops.addmv(self, mat, vec, beta, alpha)


@method
def addr(self, vec1, vec2, beta=1, alpha=1):
    """``beta * self + alpha * outer(vec1, vec2)``."""
    return ops.addr(self, vec1, vec2, beta, alpha)


@method
def cross(self, other, dim=None):
    """Cross product of 3-vectors along ``dim``."""
    return ops.cross(self, other, dim)


@method
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where ``|self - other| <= atol + rtol * |other|``."""
    return ops.isclose(self, other, rtol, atol, equal_nan)


@method
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when :meth:`isclose` holds everywhere (a Python bool)."""
    return bool(ops.all(ops.isclose(self, other, rtol, atol, equal_nan)).item())


@method
def approximate_equal(self, other, tolerance=1e-05):
    """True where ``|self - other| < tolerance``."""
    return ops.less(ops.abs(ops.sub(self, other)), tolerance)
