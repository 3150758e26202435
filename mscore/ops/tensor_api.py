"""MindSpore 2.10's Tensor methods, each a thin binding to the functional op in
:mod:`mscore.ops` (so one implementation serves ``ops.f(x)`` and ``x.f()``).

A method has the signature of MindSpore's first documented overload; the other overloads'
spellings are accepted too (``x.sum(axis=0, keepdims=True)`` beside ``x.sum(dim=0,
keepdim=True)``; ``x.max(1)`` returns ``(values, indices)`` while ``x.max(axis=1)`` returns
the values, as in MindSpore). In-place variants (``add_``, ``clamp_``, ``fill_``, ``zero_``,
``copy_`` ...) compute the out-of-place result with the same op, store it in the tensor (in
the tensor's own dtype) and return the tensor itself.

:func:`attach` puts the methods on :class:`mscore.Tensor`; ``mscore.ops`` calls it once.
The methods for shapes, selection and creation live in :mod:`mscore.ops.tensor_api_shape`,
the less common ones (random draws, bit functions, quantiles, segment reductions) in
:mod:`mscore.ops.tensor_api_misc`, the matrix, special-function and device ones in
:mod:`mscore.ops.tensor_api_linalg`, ``register_hook`` in :mod:`mscore.ops.tensor_api_hooks`.
"""
from __future__ import annotations

import inspect
import numbers

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore import ops
from mscore.ops import array_extra_func as arr
from mscore.ops import elementwise_extra_func as elt
from mscore.ops import tensor_api_hooks, tensor_api_linalg, tensor_api_misc, tensor_api_shape
from mscore.ops.tensor_api_shape import store

_METHODS = {}


def method(fn):
    """Registers ``fn`` as the Tensor method of its name (``_``-suffixed names included)."""
    _METHODS[fn.__name__] = fn
    return fn


def attach(cls=Tensor):
    """Puts every registered method on ``cls`` (the shape module's too)."""
    for name, fn in {**tensor_api_misc.METHODS, **tensor_api_shape.METHODS,
                     **tensor_api_linalg.METHODS, **tensor_api_hooks.METHODS,
                     **_METHODS}.items():
        setattr(cls, name, fn)
    for name, prop in {**tensor_api_shape.PROPERTIES, **tensor_api_linalg.PROPERTIES}.items():
        setattr(cls, name, prop)


def _alias(primary, name, alias, alias_value, default):
    """The value of a parameter MindSpore spells two ways (``dim``/``axis``): the one given,
    or ``default``; both given is TypeError."""
    if alias_value is None:
        return primary
    if primary is not default:
        raise TypeError(f"got values for both '{name}' and '{alias}'")
    return alias_value


# -- elementwise, unary ---------------------------------------------------------------------
def _unary(name, op, doc):
    def bound(self):
        return op(self)
    bound.__name__ = bound.__qualname__ = name
    bound.__doc__ = doc
    return method(bound)


_UNARY = {
    "absolute": (ops.abs, "Absolute value, elementwise."),
    "ceil": (ops.ceil, "Rounded up, elementwise."),
    "cos": (ops.cos, "Cosine, elementwise."),
    "cosh": (elt.cosh, "Hyperbolic cosine, elementwise."),
    "sin": (ops.sin, "Sine, elementwise."),
    "sinh": (elt.sinh, "Hyperbolic sine, elementwise."),
    "tan": (elt.tan, "Tangent, elementwise."),
    "tanh": (ops.tanh, "Hyperbolic tangent, elementwise."),
    "sigmoid": (ops.sigmoid, "Logistic sigmoid, elementwise."),
    "erf": (ops.erf, "Error function, elementwise."),
    "erfc": (elt.erfc, "Complementary error function, elementwise."),
    "expm1": (ops.expm1, "``exp(x) - 1``, elementwise."),
    "floor": (ops.floor, "Rounded down, elementwise."),
    "log1p": (ops.log1p, "``log(1 + x)``, elementwise."),
    "log2": (elt.log2, "Base-2 logarithm, elementwise."),
    "log10": (elt.log10, "Base-10 logarithm, elementwise."),
    "neg": (ops.neg, "Negation, elementwise."),
    "negative": (ops.neg, "Negation, elementwise."),
    "reciprocal": (ops.reciprocal, "``1 / x``, elementwise."),
    "rsqrt": (ops.rsqrt, "``1 / sqrt(x)``, elementwise."),
    "sign": (ops.sign, "Sign (-1, 0 or 1), elementwise."),
    "sgn": (elt.sgn, "Sign (-1, 0 or 1), elementwise."),
    "trunc": (elt.trunc, "Rounded toward zero, elementwise."),
    "frac": (elt.frac, "Fractional part, elementwise."),
    "deg2rad": (elt.deg2rad, "Degrees to radians, elementwise."),
    "rad2deg": (elt.rad2deg, "Radians to degrees, elementwise."),
    "digamma": (ops.digamma, "Digamma function, elementwise."),
    "lgamma": (ops.lgamma, "Log-gamma function, elementwise."),
    "logical_not": (ops.logical_not, "Logical NOT, elementwise."),
    "isfinite": (ops.isfinite, "True where finite."),
    "isinf": (ops.isinf, "True where infinite."),
    "isnan": (ops.isnan, "True where NaN."),
    "isneginf": (elt.isneginf, "True where -inf."),
    "isposinf": (elt.isposinf, "True where +inf."),
    "isreal": (elt.isreal, "True everywhere (real dtypes only)."),
    "signbit": (elt.signbit, "True where negative."),
    "sinc": (elt.sinc, "Normalised sinc, elementwise."),
    "positive": (elt.positive, "The tensor itself (unary plus)."),
    "exp": (ops.exp, "Exponential, elementwise."),
    "exp2": (elt.exp2, "``2 ** x``, elementwise."),
    "atan": (elt.atan, "Arctangent, elementwise."),
    "arctan": (elt.atan, "Arctangent, elementwise."),
    "asin": (elt.asin, "Arcsine, elementwise."),
    "arcsin": (elt.asin, "Arcsine, elementwise."),
    "acos": (elt.acos, "Arccosine, elementwise."),
    "arccos": (elt.acos, "Arccosine, elementwise."),
    "asinh": (elt.asinh, "Inverse hyperbolic sine, elementwise."),
    "arcsinh": (elt.asinh, "Inverse hyperbolic sine, elementwise."),
    "acosh": (elt.acosh, "Inverse hyperbolic cosine, elementwise."),
    "arccosh": (elt.acosh, "Inverse hyperbolic cosine, elementwise."),
    "atanh": (elt.atanh, "Inverse hyperbolic tangent, elementwise."),
    "arctanh": (elt.atanh, "Inverse hyperbolic tangent, elementwise."),
    "log": (ops.log, "Natural logarithm, elementwise."),
    "sqrt": (ops.sqrt, "Square root, elementwise."),
    "square": (ops.square, "Square, elementwise."),
    "abs": (ops.abs, "Absolute value, elementwise."),
}
for _name, (_op, _doc) in _UNARY.items():
    _unary(_name, _op, _doc)


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
    return elt.round(self, decimals)


@method
def logit(self, eps=None):
    """``log(p / (1 - p))`` (``p`` clamped to ``[eps, 1 - eps]`` when given)."""
    return elt.logit(self, eps)


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
    return elt.nan_to_num(self, nan, posinf, neginf)


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
    "fmod": (elt.fmod, "Remainder with the dividend's sign, elementwise."),
    "pow": (ops.pow, "``self ** exponent``, elementwise.", "exponent"),
    "float_power": (elt.float_power, "``self ** other`` in floating point."),
    "maximum": (ops.maximum, "Larger of the two, elementwise."),
    "minimum": (ops.minimum, "Smaller of the two, elementwise."),
    "fmax": (elt.fmax, "Larger of the two, ignoring NaN."),
    "fmin": (elt.fmin, "Smaller of the two, ignoring NaN."),
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
    "logaddexp2": (elt.logaddexp2, "``log2(2**self + 2**other)``, stably."),
    "hypot": (elt.hypot, "``sqrt(self**2 + other**2)``."),
    "atan2": (elt.atan2, "Angle of the point ``(other, self)``, elementwise."),
    "arctan2": (elt.atan2, "Angle of the point ``(other, self)``, elementwise."),
    "xlogy": (elt.xlogy, "``self * log(other)``, 0 where self is 0."),
    "xdivy": (elt.xdivy, "``self / y``, 0 where self is 0.", "y"),
    "copysign": (elt.copysign, "``|self|`` with ``other``'s sign."),
    "heaviside": (elt.heaviside, "Heaviside step with ``values`` at 0.", "values"),
    "igamma": (ops.igamma, "Regularised lower incomplete gamma."),
    "igammac": (ops.igammac, "Regularised upper incomplete gamma."),
    "matmul": (ops.matmul, "Matrix product.", "tensor2"),
    "mm": (ops.mm, "Matrix product of 2-d tensors.", "mat2"),
    "bmm": (ops.bmm, "Batched matrix product.", "mat2"),
    "dot": (elt.dot, "Dot product of 1-d tensors."),
    "inner": (elt.inner, "Sum of products over the last axes."),
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
    return ops.remainder(self, _alias(other, "other", "divisor", divisor, None))


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
    return elt.lerp(self, end, weight)


@method
def addcmul(self, tensor1, tensor2, value=1):
    """``self + value * tensor1 * tensor2``."""
    return ops.addcmul(self, tensor1, tensor2, value)


@method
def addcdiv(self, tensor1, tensor2, *, value=1):
    """``self + value * tensor1 / tensor2``."""
    return elt.addcdiv(self, tensor1, tensor2, value)


@method
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)``."""
    return elt.addmm(self, mat1, mat2, beta, alpha)


@method
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """In place: :meth:`addmm`; returns the tensor."""
    return store(self, elt.addmm(self, mat1, mat2, beta, alpha))


@method
def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """``beta * self + alpha * sum_b(batch1[b] @ batch2[b])``."""
    return elt.addbmm(self, batch1, batch2, beta, alpha)


@method
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """``beta * self + alpha * (batch1 @ batch2)`` per batch."""
    return elt.baddbmm(self, batch1, batch2, beta, alpha)


@method
def addmv(self, mat, vec, *, beta=1, alpha=1):
    """``beta * self + alpha * (mat @ vec)``."""
    return elt.addmv(self, mat, vec, beta, alpha)


@method
def addr(self, vec1, vec2, beta=1, alpha=1):
    """``beta * self + alpha * outer(vec1, vec2)``."""
    return elt.addr(self, vec1, vec2, beta, alpha)


@method
def cross(self, other, dim=None):
    """Cross product of 3-vectors along ``dim``."""
    return arr.cross(self, other, dim)


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


# -- reductions -------------------------------------------------------------------------------
@method
def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None,
        initial=None):
    """Sum over ``dim`` (every axis when None); ``axis``/``keepdims``/``initial`` are the
    NumPy-style overload's spellings."""
    if isinstance(keepdim, mdt.DType):  # sum(axis, dtype) positionally (the other overload)
        keepdim, dtype = False, keepdim
    dim = _alias(dim, "dim", "axis", axis, None)
    keepdim = keepdims if keepdims is not None else keepdim
    out = ops.sum(self, dim, keepdim, dtype=dtype)
    return out if initial is None else ops.add(out, initial)


@method
def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None, keep_dims=None):
    """Mean over ``dim`` (every axis when None)."""
    dim = _alias(dim, "dim", "axis", axis, None)
    keepdim = keep_dims if keep_dims is not None else keepdim
    x = self if dtype is None else ops.cast(self, dtype)
    return ops.mean(x, dim, keepdim)


@method
def prod(self, dim=None, keepdim=False, dtype=None, *, axis=None, keep_dims=None):
    """Product over ``dim`` (every axis when None)."""
    dim = _alias(dim, "dim", "axis", axis, None)
    keepdim = keep_dims if keep_dims is not None else keepdim
    return arr.prod(self, dim, keepdim, dtype)


@method
def nansum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    """Sum over ``dim`` with NaN counted as 0."""
    dim = _alias(dim, "dim", "axis", axis, None)
    keepdim = keepdims if keepdims is not None else keepdim
    return arr.nansum(self, dim, keepdim, dtype)


@method
def nanmean(self, axis=None, keepdims=False, *, dtype=None):
    """Mean over ``axis`` of the entries that are not NaN."""
    return arr.nanmean(self, axis, keepdims, dtype)


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
    return arr.aminmax(self, axis, keepdims)


@method
def ptp(self, axis=None, keepdims=False):
    """Range (maximum minus minimum) over ``axis``."""
    return ops.sub(ops.amax(self, axis, keepdims), ops.amin(self, axis, keepdims))


@method
def argmax(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
    """Index of the largest value over ``axis`` (the flattened tensor when None)."""
    axis = _alias(axis, "axis", "dim", dim, None)
    keepdims = keepdim if keepdim is not None else keepdims
    return ops.argmax(self, axis, keepdims)


@method
def argmin(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
    """Index of the smallest value over ``axis`` (the flattened tensor when None)."""
    axis = _alias(axis, "axis", "dim", dim, None)
    keepdims = keepdim if keepdim is not None else keepdims
    return ops.argmin(self, axis, keepdims)


@method
def argmax_with_value(self, axis=0, keep_dims=False):
    """``(index, value)`` of the maximum along ``axis``."""
    return arr.argmax_with_value(self, axis, keep_dims)


@method
def argmin_with_value(self, axis=0, keep_dims=False):
    """``(index, value)`` of the minimum along ``axis``."""
    return arr.argmin_with_value(self, axis, keep_dims)


@method
def all(self, axis=None, keep_dims=False, *, dim=None, keepdim=None):
    """True where every entry over ``axis`` is true."""
    axis = _alias(axis, "axis", "dim", dim, None)
    keep_dims = keepdim if keepdim is not None else keep_dims
    return ops.all(self, axis, keep_dims)


@method
def any(self, axis=None, keep_dims=False, *, dim=None, keepdim=None):
    """True where some entry over ``axis`` is true."""
    axis = _alias(axis, "axis", "dim", dim, None)
    keep_dims = keepdim if keepdim is not None else keep_dims
    return ops.any(self, axis, keep_dims)


def _moment(self, op, axis, ddof, keepdims, dim, correction, keepdim):
    axis = _alias(axis, "axis", "dim", dim, None)
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
    dim = _alias(dim, "dim", "axis", axis, None)
    return arr.count_nonzero(self, () if dim is None else dim, keep_dims,
                             dtype or mdt.int64)


@method
def cumsum(self, dim=None, *, dtype=None, axis=None):
    """Running sums along ``dim``."""
    dim = _alias(dim, "dim", "axis", axis, None)
    if dim is None:
        return ops.cumsum(ops.reshape(self, (-1,)), 0, dtype)
    return ops.cumsum(self, dim, dtype)


@method
def cumprod(self, dim, dtype=None):
    """Running products along ``dim``."""
    return arr.cumprod(self, dim, dtype)


@method
def cummax(self, axis=None, *, dim=None):
    """``(values, indices)`` of the running maximum along ``axis``."""
    return arr.cummax(self, _alias(axis, "axis", "dim", dim, None))


@method
def cummin(self, axis=None, *, dim=None):
    """``(values, indices)`` of the running minimum along ``axis``."""
    return arr.cummin(self, _alias(axis, "axis", "dim", dim, None))


@method
def logcumsumexp(self, axis):
    """``log(cumsum(exp(self)))`` along ``axis``, stably."""
    return arr.logcumsumexp(self, axis)


@method
def trace(self, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum of the diagonal."""
    return arr.trace(self, offset, axis1, axis2, dtype)


# -- orders ------------------------------------------------------------------------------------
@method
def sort(self, dim=-1, descending=False, stable=False, *, axis=None):
    """``(values, indices)`` sorted along ``dim``."""
    return arr.sort(self, _alias(dim, "dim", "axis", axis, -1), descending)


@method
def argsort(self, axis=-1, descending=False, *, dim=None, stable=False):
    """Indices that sort the tensor along ``axis``."""
    return arr.argsort(self, _alias(axis, "axis", "dim", dim, -1), descending)


@method
def msort(self):
    """Sorted along the first axis."""
    return arr.msort(self)


@method
def topk(self, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (smallest) entries along ``dim``."""
    return arr.topk(self, k, dim, largest, sorted)


@method
def top_k(self, k, sorted=True):
    """``(values, indices)`` of the ``k`` largest entries along the last axis."""
    return arr.topk(self, k, -1, True, sorted)


@method
def median(self, axis=-1, keepdims=False, *, dim=None, keepdim=None):
    """``(values, indices)`` of the lower median along ``axis``."""
    axis = _alias(axis, "axis", "dim", dim, -1)
    keepdims = keepdim if keepdim is not None else keepdims
    return arr.median(self, axis, keepdims)


@method
def kthvalue(self, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest entry along ``dim``."""
    return arr.kthvalue(self, k, dim, keepdim)


@method
def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values, with the inverse indices and counts on request."""
    return arr.unique_values(self, sorted, return_inverse, return_counts, dim)


@method
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """Runs of equal consecutive values collapsed to one."""
    return arr.unique_consecutive(self, return_inverse, return_counts, dim)


@method
def nonzero(self, *, as_tuple=False):
    """Indices of the non-zero entries."""
    return arr.nonzero(self, as_tuple)


@method
def argwhere(self):
    """``(n, ndim)`` indices of the non-zero entries."""
    return arr.argwhere(self)


@method
def masked_select(self, mask):
    """The entries where ``mask`` is true, as 1-d."""
    return arr.masked_select(self, mask)


@method
def searchsorted(self, v, side="left", sorter=None):
    """Where ``v`` would be inserted to keep the last axis sorted."""
    return arr.searchsorted(self, v, side=side, sorter=sorter)


@method
def bincount(self, weights=None, minlength=0):
    """Counts of each non-negative integer value."""
    return arr.bincount(self, weights, minlength)
