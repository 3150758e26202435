"""Tensor creation: ``full``, ``zeros``, ``ones``, ``arange``, ``eye``, ``linspace``, the
triangular masks ``tril``/``triu``, conversions from numpy and Python values, with their
Primitives.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _check_tensor, _int, _shape_arg
from mscore.ops.array.manipulation import reshape
from mscore.ops.control import cast
from mscore.ops.math.elementwise import add, div, mul, sub, where
from mscore.ops.primitive_base import Primitive, _elementwise, check_int

_wrap = Tensor._wrap


def full(size, fill_value, dtype=None):
    """A tensor of ``size`` filled with ``fill_value``."""
    if dtype is None:
        dtype = mdt.float32 if isinstance(fill_value, float) else (
            mdt.bool_ if isinstance(fill_value, bool) else mdt.int64)
    return _wrap(call("full", _shape_arg(size), fill_value, mdt.as_dtype(dtype)))


def zeros(size, dtype=None):
    """Zeros of ``size`` (float32 by default)."""
    return _wrap(call("full", _shape_arg(size), 0, mdt.as_dtype(dtype or mdt.float32)))


def ones(shape, dtype=None):
    """Ones of ``shape`` (float32 by default)."""
    return _wrap(call("full", _shape_arg(shape, "shape"), 1,
                      mdt.as_dtype(dtype or mdt.float32)))


def fill(type, shape, value):
    """MindSpore's ``ops.fill(type, shape, value)``."""
    return full(shape, value, type)


def zeros_like(input, *, dtype=None):
    """Zeros with the shape (and dtype) of ``input``."""
    x = _check_tensor(input, "input")
    return _wrap(call("full", x.shape, 0, mdt.as_dtype(dtype) if dtype else x.dtype))


def ones_like(input, *, dtype=None):
    """Ones with the shape (and dtype) of ``input``."""
    x = _check_tensor(input, "input")
    return _wrap(call("full", x.shape, 1, mdt.as_dtype(dtype) if dtype else x.dtype))


def arange(start=0, end=None, step=1, dtype=None):
    """``start, start+step, ...`` below ``end``; int64 for int arguments, else float32."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("step: must not be zero")
    if dtype is None:
        ints = builtins.all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = mdt.int64 if ints else mdt.float32
    return _wrap(call("arange", start, end, step, mdt.as_dtype(dtype)))


def eye(n, m=None, dtype=None):
    """The ``n`` x ``m`` identity matrix (float32 unless ``dtype``)."""
    m = n if m is None else m
    dtype = mdt.float32 if dtype is None else dtype
    rows = call("arange", 0, n, 1, mdt.int64)
    cols = call("arange", 0, m, 1, mdt.int64)
    hit = call("equal", call("reshape", rows, (n, 1)), call("reshape", cols, (1, m)))
    return _wrap(call("cast", hit, mdt.as_dtype(dtype)))


def is_tensor(obj):
    """True when ``obj`` is an mscore Tensor (or Parameter)."""
    return isinstance(obj, Tensor)


def from_numpy(array):
    """A Tensor holding numpy ``array``'s values and dtype."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy array, got {type(array).__name__}")
    return Tensor.from_numpy(array) if hasattr(Tensor, "from_numpy") else Tensor(array)


def scalar_to_tensor(input_x, dtype=mdt.float32):
    """A 0-d Tensor of Python number ``input_x`` (float32 unless ``dtype``)."""
    if isinstance(input_x, bool) or not isinstance(input_x, numbers.Number):
        raise TypeError(f"input_x: expected an int or float, got {type(input_x).__name__}")
    return full((), input_x, dtype)


def tuple_to_array(input_x):
    """A 1-d Tensor of a tuple of numbers: int32 for ints, float32 otherwise."""
    if not isinstance(input_x, (tuple, list)) or not input_x or not builtins.all(
            isinstance(v, numbers.Number) and not isinstance(v, bool) for v in input_x):
        raise TypeError(f"input_x: expected a non-empty tuple of numbers, got {input_x!r}")
    ints = builtins.all(isinstance(v, numbers.Integral) for v in input_x)
    return Tensor(np.asarray(input_x, np.int32 if ints else np.float32))


def linspace(start, end, steps):
    """``steps`` evenly spaced float32 values from ``start`` to ``end`` inclusive."""
    if isinstance(steps, Tensor):
        steps = int(steps)  # a 1-element Tensor too, as MindSpore accepts
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"steps: expected an int, got {type(steps).__name__}")
    if steps <= 0:
        raise ValueError(f"steps: expected a positive int, got {steps}")
    lo = start if isinstance(start, Tensor) else full((), float(start), mdt.float32)
    hi = end if isinstance(end, Tensor) else full((), float(end), mdt.float32)
    lo, hi = cast(lo, mdt.float32), cast(hi, mdt.float32)
    if steps == 1:
        return reshape(lo, (1,))
    k = arange(0, steps, 1, mdt.float32)
    return add(lo, mul(k, div(sub(hi, lo), float(steps - 1))))


def full_like(input, fill_value, *, dtype=None):
    """A Tensor shaped like ``input`` filled with ``fill_value`` (``input``'s dtype unless
    ``dtype``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"input: expected a Tensor, got {type(input).__name__}")
    return full(input.shape, fill_value, dtype if dtype is not None else input.dtype)


def _triangle(x, diagonal, lower):
    x = _check_tensor(x, "input")
    diagonal = _int(diagonal, "diagonal")
    if x.ndim < 2:
        raise ValueError(f"input: expected at least 2 dimensions, got shape {x.shape}")
    rows, cols = x.shape[-2], x.shape[-1]
    r = np.arange(rows).reshape(rows, 1)
    c = np.arange(cols).reshape(1, cols)
    keep = (c - r <= diagonal) if lower else (c - r >= diagonal)
    return where(Tensor(keep), x, zeros_like(x))


def tril(input, diagonal=0):
    """The lower triangle of the last two axes (above ``diagonal`` zeroed)."""
    return _triangle(input, diagonal, True)


def triu(input, diagonal=0):
    """The upper triangle of the last two axes (below ``diagonal`` zeroed)."""
    return _triangle(input, diagonal, False)


class _Triangle(Primitive):
    _fn = None

    def __init__(self, diagonal=0):
        super().__init__()
        self.diagonal = check_int(diagonal, "diagonal", type(self).__name__)

    def compute(self, input):
        return type(self)._fn(input, self.diagonal)


class Tril(_Triangle):
    """``Tril(diagonal=0)(x)``: the lower triangle."""

    _fn = staticmethod(tril)


class Triu(_Triangle):
    """``Triu(diagonal=0)(x)``: the upper triangle."""

    _fn = staticmethod(triu)


class Range(Primitive):
    """``Range(maxlen=1000000)(start, end, step)``: ``start, start + step, ...`` below
    ``end`` (at most ``maxlen`` values)."""

    def __init__(self, maxlen=1000000):
        super().__init__()
        self.maxlen = check_int(maxlen, "maxlen", "Range")
        if self.maxlen <= 0:
            raise ValueError(f"Range: maxlen must be positive, got {maxlen}")

    def compute(self, start, end, step):
        vals = [v.asnumpy().item() if hasattr(v, "asnumpy") else v for v in (start, end, step)]
        ints = all(isinstance(v, int) for v in vals)
        out = arange(*vals, dtype=mdt.int64 if ints else mdt.float32)
        if out.shape[0] > self.maxlen:
            raise ValueError(f"Range: {out.shape[0]} values exceed maxlen {self.maxlen}")
        return out


class Eye(Primitive):
    """``Eye()(n, m, dtype)``: the ``n`` x ``m`` identity matrix."""

    def compute(self, n, m, dtype):
        return eye(n, m, dtype)


class LinSpace(Primitive):
    """``LinSpace()(start, stop, num)``: ``num`` evenly spaced values."""

    def compute(self, start, stop, num):
        return linspace(start, stop, num)


class Fill(Primitive):
    """``Fill()(dtype, dims, value)``."""

    def compute(self, dtype, dims, x):
        return full(dims, x, dtype)


class Ones(Primitive):
    """``Ones()(shape, dtype=None)``."""

    def compute(self, shape, dtype=None):
        return ones(shape, dtype)


class Zeros(Primitive):
    """``Zeros()(size, dtype=None)``."""

    def compute(self, size, dtype=None):
        return zeros(size, dtype)


OnesLike = _elementwise("OnesLike", ones_like, "Ones shaped like x.")
ZerosLike = _elementwise("ZerosLike", zeros_like, "Zeros shaped like x.")
