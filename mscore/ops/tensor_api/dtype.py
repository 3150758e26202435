"""MindSpore 2.10's Tensor methods that convert or ask about the dtype: ``astype``, ``to``,
``type``, ``type_as``, the converters ``int()``, ``float()``, ``half()`` ... and
``is_floating_point``/``is_signed``/``is_complex``; attached by :mod:`mscore.ops.tensor_api`.
"""
from __future__ import annotations

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
method = METHODS.method


# -- dtype ---------------------------------------------------------------------------------------
def _converter(name, dtype):
    def convert(self):
        return ops.cast(self, dtype)
    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"Converted to {dtype}."
    return method(convert)


for _name, _dtype in (("int", mdt.int32), ("long", mdt.int64), ("short", mdt.int16),
                      ("byte", mdt.uint8), ("bool", mdt.bool_), ("double", mdt.float64),
                      ("float", mdt.float32), ("half", mdt.float16),
                      ("bfloat16", mdt.bfloat16)):
    _converter(_name, _dtype)


@method
def astype(self, dtype, copy=True):
    """Converted to ``dtype`` (``ms.float16``, ``"float32"``, ``np.int32`` ...)."""
    return ops.cast(self, mdt.as_dtype(dtype))


@method
def to(self, dtype=None, non_blocking=False, copy=False, *, device=None, other=None):
    """Converted to ``dtype`` (or to ``other``'s dtype when a Tensor is given)."""
    if isinstance(dtype, Tensor):
        dtype = dtype.dtype
    if other is not None:
        dtype = other.dtype
    if dtype is None:
        return self
    return ops.cast(self, mdt.as_dtype(dtype))


@method
def type(self, dtype=None):
    """Without ``dtype``: the dtype's name (``'Float32'``); with it: converted."""
    if dtype is None:
        return str(self.dtype).capitalize().replace("Bfloat", "BFloat")
    return ops.cast(self, mdt.as_dtype(dtype))


@method
def type_as(self, other):
    """Converted to ``other``'s dtype."""
    return ops.cast(self, other.dtype)


@method
def is_floating_point(self):
    """True for a floating dtype."""
    return bool(self.dtype.is_floating)


@method
def is_signed(self):
    """True for a signed dtype (floats and signed integers)."""
    dt = self.dtype
    return dt.is_floating or (dt.is_integer and not dt.is_unsigned)


@method
def is_complex(self):
    """False: mscore has no complex dtypes."""
    return False
