"""Casts, assignment and gradient control (``cast``, ``stop_gradient``, ``depend``, ``assign``),
with their Primitives and ``Partial``/``Print``.
"""
from __future__ import annotations

import functools
import numbers

from mscore.autodiff.tracer import unwrap
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _check_tensor
from mscore.ops.primitive_base import Primitive
from mscore.common.parameter import Parameter
from mscore.context import get_context

_wrap = Tensor._wrap


def cast(input, dtype):
    """``input`` converted to ``dtype``; differentiable for float targets."""
    x = _check_tensor(input, "input")
    return _wrap(call("cast", x._data, mdt.as_dtype(dtype)))


def stop_gradient(value):
    """``value`` with no gradient flowing back through it (a Python number is returned as
    it is, as in MindSpore)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    x = _check_tensor(value, "value")
    return _wrap(call("stop_gradient", unwrap(x._data)))


def depend(value, expr):
    """``value`` (MindSpore orders side effects with it; eager execution already does)."""
    return value


def assign(variable, value):
    """Assign ``value`` to Parameter ``variable``; returns the variable."""
    if not isinstance(variable, Parameter):
        raise TypeError(f"variable: expected a Parameter, got {type(variable).__name__}")
    return variable.assign_value(value)


class Partial(Primitive):
    """``Partial()(fn, *args)``: ``fn`` with its first arguments bound."""

    def __call__(self, *args):
        if not args or not callable(args[0]):
            raise TypeError("Partial: the first input must be a callable")
        return functools.partial(args[0], *args[1:])


class Print(Primitive):
    """``Print()(*inputs)``: print strings and Tensors to stdout (as MindSpore's PyNative
    mode does); returns None. With ``set_context(print_file_path=...)`` they go to that file
    instead, in MindSpore's print-file format (``parse_print`` reads it)."""

    def __call__(self, *args):
        for a in args:
            if not isinstance(a, (str, Tensor, numbers.Number, bool, tuple, list)):
                raise TypeError(f"Print: inputs must be strings, numbers or Tensors, got "
                                f"{type(a).__name__}")
        path = get_context("print_file_path")
        if path:
            from mscore.train.serialization._print import append_print_record
            append_print_record(path, args)
            return
        print(*args, sep="\n", flush=True)


class Cast(Primitive):
    """``Cast()(x, dtype)``."""

    def __call__(self, input_x, dtype):
        return cast(input_x, dtype)


class Assign(Primitive):
    """``Assign()(variable, value)``."""

    def compute(self, variable, value):
        return assign(variable, value)


class StopGradient(Primitive):
    """``StopGradient()(x)``."""

    def compute(self, x):
        return stop_gradient(x)


class Depend(Primitive):
    """``Depend()(value, expr)`` returns value."""

    def compute(self, value, expr):
        return value
