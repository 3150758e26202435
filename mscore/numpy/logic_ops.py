"""``mindspore.numpy``'s comparison and logic functions, thin over :mod:`mscore.ops`."""
from __future__ import annotations

import inspect
import numbers

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.numpy._convert import asarray, with_dtype

__all__ = []


def _binary(name, op):
    def fn(x1, x2, dtype=None):
        return with_dtype(op(asarray(x1), asarray(x2)), dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}`` of ``x1`` and ``x2``, elementwise with broadcasting."
    globals()[name] = fn
    __all__.append(name)


for _name, _op in (("equal", ops.equal), ("not_equal", ops.not_equal), ("less", ops.less),
                   ("less_equal", ops.less_equal), ("greater", ops.greater),
                   ("greater_equal", ops.greater_equal), ("logical_and", ops.logical_and),
                   ("logical_or", ops.logical_or), ("logical_xor", ops.logical_xor)):
    _binary(_name, _op)


def _unary(name, op, param="x"):
    def fn(x, dtype=None):
        return with_dtype(op(asarray(x)), dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}`` of the input, elementwise."
    if param != "x":

        P = inspect.Parameter
        fn.__signature__ = inspect.Signature([P(param, P.POSITIONAL_OR_KEYWORD),
                                              P("dtype", P.POSITIONAL_OR_KEYWORD,
                                                default=None)])
    globals()[name] = fn
    __all__.append(name)


for _name, _op in (("isfinite", ops.isfinite), ("isinf", ops.isinf), ("isnan", ops.isnan)):
    _unary(_name, _op)
_unary("logical_not", ops.logical_not, "a")


def isneginf(x):
    """True where -inf."""
    return ops.isneginf(asarray(x))


def isposinf(x):
    """True where +inf."""
    return ops.isposinf(asarray(x))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where ``|a - b| <= atol + rtol * |b|``."""
    return ops.isclose(asarray(a), asarray(b), rtol, atol, equal_nan)


def array_equal(a1, a2, equal_nan=False):
    """True when the shapes and the values agree."""
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return False
    same = ops.equal(a1, a2)
    if equal_nan and a1.dtype.is_floating:
        same = ops.logical_or(same, ops.logical_and(ops.isnan(a1), ops.isnan(a2)))
    return bool(ops.all(same).item())


def array_equiv(a1, a2):
    """True when the inputs broadcast together and agree everywhere."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool(ops.all(ops.equal(a1, a2)).item())


def in1d(ar1, ar2, invert=False):
    """For each entry of the flattened ``ar1``: is it in ``ar2``?"""
    out = np.isin(asarray(ar1).asnumpy().reshape(-1), asarray(ar2).asnumpy(), invert=invert)
    return Tensor(out)


def isin(element, test_elements, invert=False):
    """For each entry of ``element``: is it in ``test_elements``?"""
    out = np.isin(asarray(element).asnumpy(), asarray(test_elements).asnumpy(), invert=invert)
    return Tensor(out)


def isscalar(element):
    """True for a Python or numpy scalar (not a Tensor)."""
    return isinstance(element, (numbers.Number, str, bytes, np.generic))


def sometrue(a, axis=None, keepdims=False):
    """True where some entry over ``axis`` is non-zero."""
    return ops.any(ops.cast(asarray(a), mdt.bool_), axis, keepdims)


__all__ += ["isneginf", "isposinf", "isclose", "array_equal", "array_equiv", "in1d", "isin",
            "isscalar", "sometrue"]
