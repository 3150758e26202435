"""Casts, assignment and gradient control (``cast``, ``stop_gradient``, ``depend``, ``assign``),
with their Primitives and ``Partial``/``Print``.
"""
from __future__ import annotations

import functools
import numbers

import numpy as np

from mscore._state import in_compiled
from mscore._state import process as _process
from mscore.autodiff.tracer import unwrap
from mscore.common import dtype as mdt
from mscore.common import printing, tensor_text
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.context import current_backend, get_context
from mscore.dispatch import call
from mscore.ops._args import _check_tensor
from mscore.ops.primitive_base import Primitive

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
    """``Print()(*inputs)``: print strings, numbers and Tensors (tuples and lists of them are
    flattened) to stdout, one per line; returns None. In PyNative mode a Tensor prints as its
    ``repr``; inside a compiled program (GRAPH_MODE, ``jit``) the values print each time the
    program runs, in MindSpore's graph-mode text (:func:`mscore.common.tensor_text.graph_text`).
    With ``set_context(print_file_path=...)`` they go to that file instead, in MindSpore's
    print-file format (``parse_print`` reads it).

    The values reach the host through the backend's optional ``host_callback`` (a callback
    from inside a compiled or differentiated program: ``jax.debug.callback``), or directly
    where it has none."""

    def __call__(self, *args):
        items = _print_items(args)
        arrays = [unwrap(v._data) for v in items if isinstance(v, Tensor)]
        # The Tensors' places hold None (no input is None): the callback keeps no traced value.
        template = tuple(None if isinstance(v, Tensor) else v for v in items)
        emit = functools.partial(_emit, template, in_compiled())
        backend = _process.backend or current_backend()
        callback = getattr(backend, "host_callback", None)
        if callback is None:
            emit(*[backend.to_numpy(a) for a in arrays])
        else:
            callback(emit, arrays)


def _print_items(args):
    """``args`` with tuples and lists flattened; anything but text, numbers and Tensors is
    ``TypeError``."""
    out = []
    for a in args:
        if isinstance(a, (tuple, list)):
            out.extend(_print_items(a))
        elif isinstance(a, (str, Tensor, numbers.Number)):
            out.append(a)
        else:
            raise TypeError(f"Print: inputs must be strings, numbers or Tensors, got "
                            f"{type(a).__name__}")
    return out


def _emit(template, graph, *host_arrays):
    """Print ``template`` with the Tensors' host values ``host_arrays`` (numpy, in order) in
    its None places: to the print file when ``print_file_path`` is set, else to stdout, as a
    compiled program's ``Print`` does when ``graph``, else as PyNative's."""
    it = iter(host_arrays)
    values = [next(it) if v is None else v for v in template]
    path = get_context("print_file_path")
    if path:
        printing.append_print_record(path, values)
    elif graph:
        print(tensor_text.graph_text(values), flush=True)
    else:
        # PyNative's Print shows a Tensor as its repr
        print(*[repr(Tensor(v)) if isinstance(v, np.ndarray) else v for v in values],
              sep="\n", flush=True)


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
