"""The argument checks of the Tensor methods that take a shape, axes, a size or a dtype
(``reshape``, ``view``, ``permute``, ``new_zeros``/``new_ones``/..., ``set_const_arg``), with
MindSpore 2.10's exception types and wording (recorded in
``tests/data/tensor_argument_oracle.json``). The checks of the values themselves (sizes that
do not fit, repeated axes) are the functional ops' (``ops.reshape``, ``ops.transpose``)."""
from __future__ import annotations

import numbers

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor


def _is_int(value):
    return isinstance(value, (numbers.Integral, Tensor)) and not isinstance(value, bool)


def _int(value):
    return int(value.item()) if isinstance(value, Tensor) else int(value)


def type_name(value):
    """A value's type as MindSpore's argument parser names it (``string``, ``None``)."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _unpacked(method, name, seq):
    """The ints of sequence ``seq`` given as argument ``name`` of ``method``; TypeError at the
    first other entry."""
    out = []
    for pos, value in enumerate(seq):
        if not _is_int(value):
            raise TypeError(f"{method}(): argument '{name}'(position 0) should be tuple of int, "
                            f"but unpack failed at pos {pos} (got {type_name(value)}).")
        out.append(_int(value))
    return tuple(out)


def reshape_shape(args):
    """The shape of ``Tensor.reshape(*args)``: ``reshape(2, 3)``, ``reshape((2, 3))`` or
    ``reshape([2, 3])`` (as MindSpore, a first tuple or list is the shape and later
    arguments are ignored)."""
    if not args:
        raise TypeError("reshape() missing 1 required positional argument: shape.")
    if args[0] is None:
        raise TypeError("reshape(): missing 1 required positional argument: shape.")
    if isinstance(args[0], (tuple, list)):
        return _unpacked("reshape", "shape", args[0])
    for pos, value in enumerate(args):
        if not _is_int(value):
            raise TypeError(f"reshape(): argument 'shape' (position 1) must be tuple of int but "
                            f"found type of {type(value).__name__} at pos {pos}.")
    return tuple(_int(v) for v in args)


def _no_overload(method, args):
    types = ", ".join(type_name(a) for a in args)
    return TypeError(f'Failed calling {method} with "{method}({types})".')


def view_target(args):
    """What ``Tensor.view(*args)`` asks for: an mscore dtype (``view(ms.int32)``), or a
    shape (``view(2, 3)``, ``view((2, 3))``)."""
    if len(args) == 1 and isinstance(args[0], mdt.DType):
        return args[0]
    if args and isinstance(args[0], (tuple, list)):
        return _unpacked("view", "shape", args[0])
    if not args or not _is_int(args[0]):
        raise _no_overload("view", args)
    return _unpacked("view", "shape", args)


def permute_dims(args, ndim):
    """The permutation of ``Tensor.permute(*args)``: ``permute(1, 0)``, ``permute((1, 0))``
    or ``permute([1, 0])`` (a first tuple or list is the permutation); none (or None)
    reverses the axes."""
    if not args or (len(args) == 1 and args[0] is None):
        return tuple(reversed(range(ndim)))
    if isinstance(args[0], (tuple, list)):
        args = args[0]
    if not all(_is_int(a) for a in args):
        raise _no_overload("permute", args)
    return tuple(_int(a) for a in args)


def new_size(method, size, primitive):
    """The shape of ``Tensor.<method>(size)`` (``new_zeros``, ``new_ones``, ...): an int or a
    tuple or list of ints, none negative (``primitive``: the name MindSpore's check of the
    sizes gives, ``Zeros`` or ``Ones``)."""
    if size is None:
        raise TypeError(f"{method}(): missing 1 required positional argument: size.")
    if isinstance(size, (tuple, list)):
        shape = _unpacked(method, "size", size)
    elif _is_int(size):
        shape = (_int(size),)
    else:
        raise TypeError(f"{method}(): argument 'size' (position 1) must be tuple of int, not "
                        f"{type(size).__name__}.")
    # "the the" is MindSpore's wording for Zeros (its Ones says "the" once)
    article = "the the" if primitive == "Zeros" else "the"
    for axis, n in enumerate(shape):
        if n < 0:
            raise ValueError(f"For primitive[{primitive}], {article} {axis}th dimension of "
                             f"input shape must be greater than or equal to 0, but got {n}.")
    return shape


def new_dtype(method, dtype, default):
    """The dtype of ``Tensor.<method>(..., dtype=dtype)``: an mscore dtype, or ``default``
    for None."""
    if dtype is None:
        return default
    if not isinstance(dtype, mdt.DType):
        raise TypeError(f"{method}(): argument 'dtype' must be mstype but got "
                        f"{type(dtype).__name__}.")
    return dtype


def check_const_arg(const_arg):
    """TypeError (MindSpore's wording) unless ``const_arg`` is a bool."""
    if not isinstance(const_arg, bool):
        raise TypeError(f"For 'set_const_arg', the type of 'const_arg' should be 'bool', but "
                        f"got type '{type(const_arg).__name__}'.")
