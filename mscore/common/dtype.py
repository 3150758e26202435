"""Data types of mscore: ``ms.float16``, ``ms.bfloat16``, ``ms.float32``, ... .

A :class:`DType` is backend-neutral; each backend maps it to its native dtype. NumPy
equivalents come from numpy itself and, for bfloat16, from ``ml_dtypes``.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np


class DType:
    """A backend-neutral data type, compared by identity (one object per type)."""

    __slots__ = ("name", "np_dtype", "is_floating", "is_integer", "is_unsigned", "is_bool",
                 "itemsize", "tensor_type")

    def __init__(self, name, np_dtype, tensor_type):
        self.name = name
        self.np_dtype = np.dtype(np_dtype)
        self.itemsize = self.np_dtype.itemsize
        self.is_bool = name == "bool"
        self.is_floating = name in ("float16", "bfloat16", "float32", "float64")
        self.is_integer = not (self.is_bool or self.is_floating)
        self.is_unsigned = self.is_integer and self.np_dtype.kind == "u"
        # MindSpore's checkpoint spelling of this type ("Float32", "Int64", ...).
        self.tensor_type = tensor_type

    def __repr__(self):
        return self.name

    def __reduce__(self):
        return (get_dtype, (self.name,))


float16 = DType("float16", np.float16, "Float16")
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, "BFloat16")
float32 = DType("float32", np.float32, "Float32")
float64 = DType("float64", np.float64, "Float64")
int8 = DType("int8", np.int8, "Int8")
int16 = DType("int16", np.int16, "Int16")
int32 = DType("int32", np.int32, "Int32")
int64 = DType("int64", np.int64, "Int64")
uint8 = DType("uint8", np.uint8, "UInt8")
uint16 = DType("uint16", np.uint16, "UInt16")
uint32 = DType("uint32", np.uint32, "UInt32")
uint64 = DType("uint64", np.uint64, "UInt64")
bool_ = DType("bool", np.bool_, "Bool")

# MindSpore aliases.
float_ = float32
half = float16
double = float64
int_ = int64
single = float32
short = int16
intc = int32
long = int64
intp = int64
byte = int8
ubyte = uint8
uint = uint32
uintc = uint32
uintp = uint64

ALL_DTYPES = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16,
              uint32, uint64, bool_)
FLOAT_DTYPES = (float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"bool_": bool_, "float": float32, "half": float16, "double": float64})
_BY_NP = {d.np_dtype: d for d in ALL_DTYPES}
_BY_TENSOR_TYPE = {d.tensor_type: d for d in ALL_DTYPES}


def get_dtype(name):
    """Return the :class:`DType` called ``name`` ("float32", "bfloat16", ...)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"dtype: unknown dtype name {name!r}; expected one of "
                         f"{sorted(d.name for d in ALL_DTYPES)}") from None


def from_numpy_dtype(np_dtype):
    """Map a numpy dtype (ml_dtypes bfloat16 included) to a :class:`DType`."""
    np_dtype = np.dtype(np_dtype)
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        raise TypeError(f"dtype: numpy dtype {np_dtype} has no mscore equivalent") from None


def from_tensor_type(tensor_type):
    """Map MindSpore's checkpoint type string ("Float32") to a :class:`DType`."""
    try:
        return _BY_TENSOR_TYPE[tensor_type]
    except KeyError:
        raise ValueError(f"tensor_type: unknown checkpoint tensor type {tensor_type!r}") from None


def as_dtype(value, arg_name="dtype"):
    """Accept a DType, a dtype name, a numpy dtype or a Python type; return a DType."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        return get_dtype(value)
    if value is float:
        return float32
    if value is int:
        return int64
    if value is bool:
        return bool_
    try:
        return from_numpy_dtype(value)
    except TypeError:
        raise TypeError(f"{arg_name}: expected an mscore dtype such as ms.float32, "
                        f"got {value!r}") from None


def dtype_to_nptype(type_):
    """The numpy scalar type of mscore dtype ``type_`` (``np.float32``, ml_dtypes'
    ``bfloat16``, ...); anything else is ``KeyError``, as in MindSpore."""
    if not isinstance(type_, DType):
        raise KeyError(type_)
    return type_.np_dtype.type


def pytype_to_dtype(obj):
    """The mscore dtype of Python or numpy type ``obj``: ``int`` -> int64, ``float`` ->
    float64, ``bool`` -> bool, ``np.float16`` -> float16, ... (MindSpore's mapping)."""
    if isinstance(obj, np.dtype):
        return from_numpy_dtype(obj)
    if not isinstance(obj, type):
        raise TypeError(f"pytype_to_dtype: obj must be a Python type such as int or float, "
                        f"got {type(obj).__name__}")
    if obj is bool:
        return bool_
    if obj is int:
        return int64
    if obj is float:
        return float64
    try:
        return from_numpy_dtype(obj)
    except TypeError:
        raise TypeError(f"pytype_to_dtype: {obj.__name__} has no mscore dtype") from None


_FLOAT_RANK = {float16: 1, bfloat16: 1, float32: 2, float64: 3}
_INT_RANK = {bool_: 0, uint8: 1, int8: 1, uint16: 2, int16: 2, uint32: 3, int32: 3,
             uint64: 4, int64: 4}
_SIGNED_BY_RANK = {1: int8, 2: int16, 3: int32, 4: int64}


def promote(a: DType, b: DType) -> DType:
    """The result dtype of a binary op on ``a`` and ``b`` (MindSpore's implicit promotion).

    float beats int beats bool; the wider float wins; float16 with bfloat16 gives float32;
    the wider integer wins; an unsigned integer with a signed one no wider than it gives the
    signed type one step wider (uint8 with int8 gives int16, uint16 with int8 int32; uint64
    with a signed type gives int64).
    """
    if a is b:
        return a
    if a.is_floating or b.is_floating:
        if not b.is_floating:
            return a
        if not a.is_floating:
            return b
        ra, rb = _FLOAT_RANK[a], _FLOAT_RANK[b]
        if ra == rb:  # float16 vs bfloat16
            return float32
        return a if ra > rb else b
    ra, rb = _INT_RANK[a], _INT_RANK[b]
    unsigned = [d for d in (a, b) if d.is_unsigned]
    if len(unsigned) == 1 and bool_ not in (a, b):
        wide = max(ra, rb)
        signed_rank = rb if unsigned[0] is a else ra
        return _SIGNED_BY_RANK[wide if signed_rank == wide and signed_rank > _INT_RANK[
            unsigned[0]] else min(_INT_RANK[unsigned[0]] + 1, 4)]
    return a if ra >= rb else b


def finfo(dtype: DType):
    """Floating-point limits of ``dtype`` (``ml_dtypes.finfo`` covers bfloat16)."""
    return ml_dtypes.finfo(dtype.np_dtype)


__all__ = ["DType", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
           "int64", "uint8", "uint16", "uint32", "uint64", "uint", "uintc", "uintp", "bool_",
           "float_", "half", "double", "int_", "single", "short", "intc", "long", "intp", "byte",
           "ubyte", "get_dtype", "as_dtype", "promote", "finfo", "dtype_to_nptype",
           "pytype_to_dtype"]
