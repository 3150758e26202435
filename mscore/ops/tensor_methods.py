"""Tensor's operator and math methods, attached to :class:`mscore.Tensor` by the ops layer.

``Tensor`` (a foundation type) holds data, dtype and shape; every method that computes is an
op, so it is written here, above both, and attached once when ``mscore.ops`` loads. To add
methods, write them as functions of ``self`` and pass a table to :func:`attach_methods`
(``{name: function or property}``).
"""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops import functional as F


def attach_methods(table, cls=Tensor):
    """Set each ``name: method`` of ``table`` on ``cls`` (Tensor, so Parameter too)."""
    for name, method in table.items():
        setattr(cls, name, method)


# -- conversion --------------------------------------------------------------------------------
def astype(self, dtype):
    """A copy converted to ``dtype`` (``ms.float16``, ``"float32"``, ...)."""
    return F.cast(self, dtype)


def to(self, dtype):
    """Alias of :meth:`astype`."""
    return F.cast(self, dtype)


def to_float(self):
    """Converted to float32."""
    return F.cast(self, mdt.float32)


def to_half(self):
    """Converted to float16."""
    return F.cast(self, mdt.float16)


def set_dtype(self, dtype):
    """Convert in place to ``dtype`` (MindSpore's ``Tensor.set_dtype``)."""
    self._data = F.cast(self, dtype)._data
    return self


# -- indexing ----------------------------------------------------------------------------------
def getitem(self, index):
    """``self[index]``."""
    return F.getitem(self, index)


def setitem(self, index, value):
    """``self[index] = value``, in place."""
    self._data = F.setitem(self, index, value)._data


# -- shape -------------------------------------------------------------------------------------
def transposed(self):
    """The transpose (axes reversed)."""
    return F.transpose(self, tuple(reversed(range(self.ndim))))


def reshape(self, *shape):
    """Same values in a new shape (one -1 is inferred)."""
    return F.reshape(self, shape[0] if len(shape) == 1 and
                     isinstance(shape[0], (tuple, list)) else shape)


def transpose(self, *axes):
    """Axes permuted (reversed when none are given)."""
    if not axes:
        axes = tuple(reversed(range(self.ndim)))
    elif len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return F.transpose(self, axes)


def flatten(self, order="C", *, start_dim=0, end_dim=-1):
    """Flattened to 1-d (or the axes start_dim..end_dim merged)."""
    return F.flatten_dims(self, start_dim, end_dim)


def squeeze(self, axis=None):
    """Size-1 axes removed (all of them, or ``axis``)."""
    return F.squeeze(self, axis)


def expand_dims(self, axis):
    """A size-1 axis inserted at ``axis``."""
    return F.expand_dims(self, axis)


def broadcast_to(self, shape):
    """Broadcast to ``shape``."""
    return F.broadcast_to(self, shape)


# -- reductions and math -----------------------------------------------------------------------
def reduce_sum(self, axis=None, keepdims=False, dtype=None):
    """The sum over ``axis`` (all axes when None)."""
    return F.sum(self, axis, keepdims, dtype=dtype)


def reduce_mean(self, axis=None, keep_dims=False):
    """The mean over ``axis`` (all axes when None)."""
    return F.mean(self, axis, keep_dims)


def reduce_max(self, axis=None, keepdims=False):
    """The maximum over ``axis`` (all axes when None)."""
    return F.amax(self, axis, keepdims)


def reduce_min(self, axis=None, keepdims=False):
    """The minimum over ``axis`` (all axes when None)."""
    return F.amin(self, axis, keepdims)


def argmax(self, axis=None):
    """The index of the maximum (over the flattened tensor when ``axis`` is None)."""
    return F.argmax(self, axis)


def argmin(self, axis=None):
    """The index of the minimum (over the flattened tensor when ``axis`` is None)."""
    return F.argmin(self, axis)


def reduce_all(self, axis=None, keep_dims=False):
    """Whether every element over ``axis`` is true."""
    return F.all(self, axis, keep_dims)


def reduce_any(self, axis=None, keep_dims=False):
    """Whether any element over ``axis`` is true."""
    return F.any(self, axis, keep_dims)


def clip(self, xmin, xmax):
    """Values clipped to ``[xmin, xmax]``."""
    return F.clip_by_value(self, xmin, xmax)


def var(self, axis=None, ddof=0, keepdims=False):
    """The variance over ``axis`` with ``ddof`` delta degrees of freedom."""
    return F.var(self, axis, ddof, keepdims)


def std(self, axis=None, ddof=0, keepdims=False):
    """The standard deviation over ``axis`` with ``ddof`` delta degrees of freedom."""
    return F.sqrt(F.var(self, axis, ddof, keepdims))


def _unary(op):
    def method(self):
        return op(self)
    method.__doc__ = f"``ops.{op.__name__}`` of the tensor."
    return method


def _binary(op):
    def method(self, other):
        return op(self, other)
    method.__doc__ = f"``ops.{op.__name__}(self, other)``."
    return method


def _reflected(op):
    def method(self, other):
        return op(other, self)
    method.__doc__ = f"``ops.{op.__name__}(other, self)``."
    return method


def positive(self):
    """``+self``: the tensor itself."""
    return self


OPERATORS = {
    # the hottest three are the functions themselves (``add(input, other)``): no frame
    "__add__": F.add, "__radd__": _reflected(F.add),
    "__sub__": F.sub, "__rsub__": _reflected(F.sub),
    "__mul__": F.mul, "__rmul__": _reflected(F.mul),
    "__truediv__": _binary(F.div), "__rtruediv__": _reflected(F.div),
    "__floordiv__": _binary(F.floor_divide), "__rfloordiv__": _reflected(F.floor_divide),
    "__mod__": _binary(F.floor_mod), "__rmod__": _reflected(F.floor_mod),
    "__pow__": _binary(F.pow), "__rpow__": _reflected(F.pow),
    "__matmul__": _binary(F.matmul), "__rmatmul__": _reflected(F.matmul),
    "__neg__": _unary(F.neg), "__pos__": positive, "__abs__": _unary(F.abs),
    "__invert__": _unary(F.logical_not),
    "__and__": _binary(F.logical_and), "__or__": _binary(F.logical_or),
    "__eq__": _binary(F.equal), "__ne__": _binary(F.not_equal),
    "__lt__": _binary(F.less), "__le__": _binary(F.less_equal),
    "__gt__": _binary(F.greater), "__ge__": _binary(F.greater_equal),
    "__getitem__": getitem, "__setitem__": setitem,
}

METHODS = {
    "astype": astype, "to": to, "float": to_float, "half": to_half, "set_dtype": set_dtype,
    "T": property(transposed), "reshape": reshape, "view": reshape, "transpose": transpose,
    "flatten": flatten, "squeeze": squeeze, "expand_dims": expand_dims,
    "unsqueeze": expand_dims, "broadcast_to": broadcast_to,
    "sum": reduce_sum, "mean": reduce_mean, "max": reduce_max, "min": reduce_min,
    "argmax": argmax, "argmin": argmin, "all": reduce_all, "any": reduce_any,
    "abs": _unary(F.abs), "exp": _unary(F.exp), "log": _unary(F.log),
    "sqrt": _unary(F.sqrt), "square": _unary(F.square),
    "clip": clip, "var": var, "std": std,
}

attach_methods(OPERATORS)
attach_methods(METHODS)
