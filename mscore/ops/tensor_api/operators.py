"""Tensor's operators (``+``, ``@``, ``[]``, comparisons ...), ``set_dtype`` and ``T``.

``Tensor`` (a foundation type) holds data, dtype and shape; every method that computes is an
op, so it is written in this package, above both, and :func:`mscore.ops.tensor_api.attach`
puts it on the class when ``mscore.ops`` loads.
"""
from __future__ import annotations

from mscore.ops import functional as F


# -- conversion --------------------------------------------------------------------------------
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


METHODS = {
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
    "set_dtype": set_dtype,
}
PROPERTIES = {"T": property(transposed)}
