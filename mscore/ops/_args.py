"""Argument checks and conversions the ops share: Tensor checks, Python scalars and arrays
turned into arrays of the right dtype (a scalar takes the other operand's dtype, as in
MindSpore), axis and tuple normalisation.
"""
from __future__ import annotations

import builtins
import numbers
import sys

import numpy as np

from mscore import dispatch
from mscore.common import dtype as mdt
from mscore.common._errors import is_numpy_array, numpy_op_argument_error
from mscore.common.tensor import Tensor
from mscore.dispatch import call


def _calling_op():
    """The name of the op whose argument check failed, for its message: a Primitive's class
    name (MindSpore's ``Add``) when one called it, else the innermost public function of
    mscore.ops on the way (``relu``). Runs on the error path only."""
    frame, found = sys._getframe(2), None
    while frame is not None and frame.f_globals.get("__name__", "").startswith("mscore.ops"):
        code_name = frame.f_code.co_name
        owner = frame.f_locals.get("self")
        if code_name in ("__call__", "compute") and hasattr(owner, "add_prim_attr"):
            return type(owner).__name__
        if found is None and not code_name.startswith(("_", "<")):
            found = code_name
        frame = frame.f_back
    return found or "op"


def _not_a_tensor(x, name, expected="a Tensor"):
    """The TypeError for ``x`` given as op argument ``name``: MindSpore's own for a numpy
    array (refused as in MindSpore, not converted), else one naming the argument."""
    if is_numpy_array(x):
        return numpy_op_argument_error(_calling_op(), name)
    return TypeError(f"{name}: expected {expected}, got {type(x).__name__}")


def _check_tensor(x, name):
    if not isinstance(x, Tensor):
        raise _not_a_tensor(x, name)
    return x


def _as_tensor(x, name="input"):
    """``x`` as a Tensor: a Tensor, a number, a numpy scalar, or a list/tuple of numbers
    (a numpy array is refused, as MindSpore's ops refuse it)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.generic, list, tuple, numbers.Number)):
        return Tensor(x)
    raise _not_a_tensor(x, name, "a Tensor or number")


def _scalar_array(value, like_dtype):
    if type(value) is float:  # the common case first (the ABC checks below are slow)
        return call("full", (), value, like_dtype if like_dtype.is_floating else mdt.float32)
    if isinstance(value, bool):
        dt = like_dtype if like_dtype.is_bool or like_dtype.is_floating else like_dtype
    elif isinstance(value, numbers.Integral):
        dt = like_dtype if not like_dtype.is_bool else mdt.int64
    elif isinstance(value, numbers.Real):
        dt = like_dtype if like_dtype.is_floating else mdt.float32
    else:
        raise TypeError(f"expected a Tensor or number, got {type(value).__name__}")
    return call("full", (), value, dt)


_PY_SCALARS = (float, int)  # checked by type first: isinstance on numbers.Number is slow


def _with_scalar(tensor_data, value):
    """The tensor's array and a 0-d array of ``value``, in one dtype: the tensor's, or
    float32 when a float meets an integer tensor (MindSpore's scalar promotion)."""
    dt = dispatch.dtype(tensor_data)
    scalar = _scalar_array(value, dt)
    if dt.is_floating:  # a number always takes a floating tensor's dtype
        return tensor_data, scalar
    scalar_dt = dispatch.dtype(scalar)
    if scalar_dt is not dt:
        tensor_data = call("cast", tensor_data, scalar_dt)
    return tensor_data, scalar


def _operands(a, b):
    """Native arrays of ``a`` and ``b`` with one common dtype."""
    if isinstance(a, Tensor):
        ra = a._data
        if isinstance(b, Tensor):
            rb = b._data
        elif type(b) in _PY_SCALARS or isinstance(b, numbers.Number):
            return _with_scalar(ra, b)
        else:
            rb = _as_tensor(b, "other")._data
    elif isinstance(b, Tensor):
        rb = b._data
        if type(a) in _PY_SCALARS or isinstance(a, numbers.Number):
            rb, ra = _with_scalar(rb, a)
            return ra, rb
        ra = _as_tensor(a, "input")._data
    else:
        ra, rb = _as_tensor(a, "input")._data, _as_tensor(b, "other")._data
    if not dispatch.same_dtype(ra, rb):
        da, db = dispatch.dtype(ra), dispatch.dtype(rb)
        target = mdt.promote(da, db)
        if da is not target:
            ra = call("cast", ra, target)
        if db is not target:
            rb = call("cast", rb, target)
    return ra, rb


def _check_broadcast(name, *arrays):
    """ValueError naming the shapes when native ``arrays`` do not broadcast: the backends'
    own errors for that differ in type (ValueError, RuntimeError, TypeError)."""
    shapes = [tuple(dispatch.shape(a)) for a in arrays]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{name}: shapes {', '.join(map(str, shapes))} do not "
                         f"broadcast") from None


def _check_window(op, spatial, kernel, pads, dilation):
    """ValueError when a (dilated) kernel does not fit the padded input on some axis."""
    for i, (size, k, (lo, hi), d) in enumerate(zip(spatial, kernel, pads, dilation)):
        if size + lo + hi < d * (k - 1) + 1:
            raise ValueError(f"{op}: the kernel {tuple(kernel)} (dilation {tuple(dilation)}) "
                             f"does not fit the input's spatial shape {tuple(spatial)} padded "
                             f"by {tuple(pads)} (axis {i})")


def _axes(axis, ndim, name="axis"):
    """None (all axes) or a sorted tuple of non-negative axes."""
    if axis is None or axis == ():
        return None
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axis = (int(axis),)
    if not isinstance(axis, (tuple, list)):
        raise TypeError(f"{name}: expected an int, a tuple of ints or None, got "
                        f"{type(axis).__name__}")
    out = []
    for a in axis:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{name}: expected ints, got {a!r}")
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise ValueError(f"{name}: {a} is out of range for a {ndim}-d tensor")
        out.append(int(a) % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {tuple(axis)}")
    return tuple(sorted(out))


def _axis1(axis, ndim, name="axis"):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: expected an int, got {type(axis).__name__}")
    if not -builtins.max(ndim, 1) <= axis < builtins.max(ndim, 1):
        raise ValueError(f"{name}: {axis} is out of range for a {ndim}-d tensor")
    return int(axis) % builtins.max(ndim, 1)


def _float_input(x, name="input"):
    if not isinstance(x, Tensor):   # _check_tensor and Tensor.dtype inlined: every op
        raise _not_a_tensor(x, name)
    if not dispatch.dtype(x._data).is_floating:
        raise TypeError(f"{name}: expected a floating-point Tensor, got {x.dtype}")
    return x


def _tuple(value, n, name):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    if isinstance(value, (tuple, list)) and len(value) == n and \
            builtins.all(isinstance(v, (int, np.integer)) for v in value):
        return tuple(int(v) for v in value)
    raise ValueError(f"{name}: expected an int or a tuple of {n} ints, got {value!r}")


def _shape_arg(size, name="size"):
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (int(size),)
    if isinstance(size, Tensor):
        size = tuple(int(v) for v in size.asnumpy().reshape(-1))
    if not isinstance(size, (tuple, list)) or not builtins.all(
            isinstance(s, (int, np.integer)) and s >= 0 for s in size):
        raise ValueError(f"{name}: expected a tuple of non-negative ints, got {size!r}")
    return tuple(int(s) for s in size)


def _bool(x):
    x = _as_tensor(x)
    return x._data if x.dtype is mdt.bool_ else call("cast", x._data, mdt.bool_)


def _int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    return int(value)


def _float_tensor(x, name, cls):
    if not isinstance(x, Tensor):
        if is_numpy_array(x):
            raise numpy_op_argument_error(cls, name)
        raise TypeError(f"For '{cls}', '{name}' must be a Tensor, got {type(x).__name__}")
    if not x.dtype.is_floating:
        raise TypeError(f"For '{cls}', '{name}' must be a floating-point Tensor, got {x.dtype}")
    return x


def _tensor(x, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    return x


def _axis(axis, ndim, name="axis"):
    """``axis`` as a non-negative int in ``[0, ndim)`` (a 0-d tensor has axis 0 and -1)."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {type(axis).__name__}")
    n = builtins.max(ndim, 1)
    if not -n <= axis < n:
        raise ValueError(f"{name}: {axis} is out of range [{-n}, {n})")
    return int(axis) % n


def _host(x):
    """``x`` (a Tensor, or an array-like) as a host numpy array."""
    return x.asnumpy() if isinstance(x, Tensor) else np.asarray(x)
