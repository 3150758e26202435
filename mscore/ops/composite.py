"""``mindspore.ops.composite`` (``from mscore.ops import composite as C``):
``GradOperation``, ``HyperMap``, ``Map``, ``MultitypeFuncGraph`` and the composite helpers
training code reaches through ``C``.

``MultitypeFuncGraph`` dispatches on the types of its arguments, ``HyperMap`` applies a
function leaf by leaf over (nested) tuples and lists: together they are MindSpore's idiom for
per-gradient work (the ``clip_grad`` and ``_grad_scale`` patterns of model-zoo code)::

    grad_scale = C.MultitypeFuncGraph("grad_scale")

    @grad_scale.register("Tensor", "Tensor")
    def _scale(scale, grad):
        return grad * ops.cast(ops.Reciprocal()(scale), grad.dtype)

    grads = C.HyperMap()(F.partial(grad_scale, scale), grads)
"""
from __future__ import annotations

import functools
import numbers

import numpy as np

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.ops import functional as F
from mscore.ops.grad import GradOperation
from mscore.ops.linalg.products import mm
from mscore.ops.random.draws import normal

uniform = F.uniform


def matmul(x1, x2, dtype=None):
    """The matrix product (numpy semantics), cast to ``dtype`` when given."""
    out = F.matmul(x1, x2)
    return out if dtype is None else F.cast(out, dtype)

# The type names ``register`` accepts and what each matches.
_TYPE_TESTS = {
    "Tensor": lambda v: isinstance(v, Tensor),
    "Parameter": lambda v: isinstance(v, Parameter),
    "Number": lambda v: isinstance(v, (numbers.Number, np.number)) and
    not isinstance(v, Tensor),
    "Bool": lambda v: isinstance(v, (bool, np.bool_)),
    "Int": lambda v: isinstance(v, (numbers.Integral, np.integer)) and
    not isinstance(v, (bool, np.bool_)),
    "Float": lambda v: isinstance(v, (float, np.floating)),
    "String": lambda v: isinstance(v, str),
    "Tuple": lambda v: isinstance(v, tuple),
    "List": lambda v: isinstance(v, list),
    "Dict": lambda v: isinstance(v, dict),
    "None": lambda v: v is None,
    "Function": callable,
}
# More specific names win over general ones when several registrations match.
_SPECIFICITY = {"Parameter": 2, "Bool": 2, "Int": 1, "Float": 1, "Function": 0}


class MultitypeFuncGraph:
    """A function with one implementation per combination of argument types.

    ``register(*type_names)`` decorates an implementation; type names are 'Tensor',
    'Number', 'Bool', 'Int', 'Float', 'String', 'Tuple', 'List', 'Dict', 'None',
    'Function', 'Parameter' (or Python classes). A call runs the implementation whose
    types match the arguments (the most specific when several do)."""

    def __init__(self, name, read_value=False):
        if not isinstance(name, str):
            raise TypeError(f"MultitypeFuncGraph: name must be a str, got "
                            f"{type(name).__name__}")
        self.name = name
        self.read_value = read_value
        self.entries = []

    def register(self, *type_names):
        """Decorator: register ``fn`` for arguments of ``type_names``."""
        tests, rank = [], 0
        for t in type_names:
            if isinstance(t, str) and t in _TYPE_TESTS:
                tests.append(_TYPE_TESTS[t])
                rank += _SPECIFICITY.get(t, 1)
            elif isinstance(t, type):
                tests.append(functools.partial(_is_instance, cls=t))
                rank += 2
            else:
                raise TypeError(f"MultitypeFuncGraph {self.name!r}: register() takes type "
                                f"names from {sorted(_TYPE_TESTS)} or classes, got {t!r}")

        def decorate(fn):
            self.entries.append((tuple(type_names), tuple(tests), rank, fn))
            return fn

        return decorate

    def __call__(self, *args):
        best = None
        for _names, tests, rank, fn in self.entries:
            if len(tests) == len(args) and all(test(a) for test, a in zip(tests, args)):
                if best is None or rank > best[0]:
                    best = (rank, fn)
        if best is None:
            got = ", ".join(type(a).__name__ for a in args)
            known = "; ".join(", ".join(map(str, e[0])) for e in self.entries) or "none"
            raise TypeError(f"MultitypeFuncGraph {self.name!r}: no implementation for "
                            f"arguments ({got}); registered: {known}")
        return best[1](*args)

    def __repr__(self):
        return f"MultitypeFuncGraph({self.name!r})"


def _is_instance(value, cls):
    return isinstance(value, cls)


def _is_sequence(v):
    return isinstance(v, (tuple, list))


class HyperMap:
    """``HyperMap(ops=None, reverse=False)``: apply ``ops`` (or, when None, the first call
    argument) leaf by leaf over tuples and lists of the same structure, nested at any
    depth; non-sequence arguments are leaves. ``reverse`` applies from the last element
    back (the results keep their order)."""

    def __init__(self, ops=None, reverse=False):
        if ops is not None and not callable(ops):
            raise TypeError(f"HyperMap: ops must be callable, got {type(ops).__name__}")
        self.ops = ops
        self.reverse = bool(reverse)

    def __call__(self, *args):
        if self.ops is None:
            if not args or not callable(args[0]):
                raise TypeError("HyperMap: without ops, the first input must be the "
                                "function to map")
            fn, args = args[0], args[1:]
        else:
            fn = self.ops
        return self._map(fn, args)

    def _map(self, fn, args):
        seqs = [a for a in args if _is_sequence(a)]
        if not seqs:
            return fn(*args)
        n = len(seqs[0])
        for a in seqs:
            if len(a) != n:
                raise ValueError(f"HyperMap: sequences of different lengths ({n} and "
                                 f"{len(a)})")
        for a in args:
            if not _is_sequence(a):
                raise TypeError(f"HyperMap: a {type(a).__name__} meets a sequence; every "
                                f"argument must have the same structure")
        order = range(n - 1, -1, -1) if self.reverse else range(n)
        out = [None] * n
        for i in order:
            out[i] = self._map(fn, [a[i] for a in args])
        return type(seqs[0])(out)


class Map(HyperMap):
    """``Map(ops=None, reverse=False)``: like :class:`HyperMap` but one level deep (the
    elements of the sequences are passed to the function as they are)."""

    def _map(self, fn, args):
        seqs = [a for a in args if _is_sequence(a)]
        if not seqs:
            return fn(*args)
        n = len(seqs[0])
        if any(len(a) != n for a in seqs) or len(seqs) != len(args):
            raise ValueError("Map: every argument must be a sequence of the same length")
        order = range(n - 1, -1, -1) if self.reverse else range(n)
        out = [None] * n
        for i in order:
            out[i] = fn(*[a[i] for a in args])
        return type(seqs[0])(out)


def _tree(fn, x):
    if _is_sequence(x):
        return type(x)(_tree(fn, v) for v in x)
    return fn(x)


def zeros_like(x):
    """Zeros shaped like ``x`` (a Tensor, or tuples/lists of them)."""
    return _tree(F.zeros_like, x)


def ones_like(x):
    """Ones shaped like ``x`` (a Tensor, or tuples/lists of them)."""
    return _tree(F.ones_like, x)


__all__ = ["GradOperation", "HyperMap", "Map", "MultitypeFuncGraph", "zeros_like",
           "ones_like", "matmul", "mm", "normal", "uniform"]
