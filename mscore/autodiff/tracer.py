"""The reference autodiff's data types: :class:`Tracer`, :class:`Node`, and recording.

While :func:`mscore.autodiff.reference.reference_value_and_grad` runs, the differentiable inputs are
wrapped in :class:`Tracer` objects. The op dispatcher (:func:`mscore.dispatch.call`) sees a tracer
among an op's arguments and calls :func:`record`, which runs the op on the plain values and returns
a new tracer remembering how it was made. The backward pass (:mod:`mscore.autodiff.reference`) walks
these nodes newest first and applies the VJP rules of :mod:`mscore.autodiff.rules`, which are
themselves written in primitive ops, so every backend (numpy, CuPy, a third party's) reuses them
unchanged. This module sits below :mod:`mscore.dispatch`; the backward pass, above it.
"""
from __future__ import annotations

import itertools

# Ops whose outputs carry no gradient (integer/bool results, random streams, metadata).
NON_DIFFERENTIABLE = frozenset({
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_not", "isfinite", "argmax", "argmin", "all", "any", "sign",
    "floor", "ceil", "rng_state", "random_uniform", "random_normal", "arange", "full",
    "from_numpy", "stop_gradient",
})

_counter = itertools.count()


class Node:
    """How a tracer was computed: op name, parent tracers, input values, attributes, and
    the VJP rule when it is not the primitive's (a fused op's, see :func:`record_fused`)."""

    __slots__ = ("op", "parents", "inputs", "attrs", "index", "list_arity", "rule")

    def __init__(self, op, parents, inputs, attrs, list_arity, rule=None):
        self.op = op
        self.parents = parents
        self.inputs = inputs
        self.attrs = attrs
        self.index = next(_counter)
        self.list_arity = list_arity
        self.rule = rule


class Tracer:
    """A native array being differentiated: ``value`` plus the :class:`Node` that made it."""

    __slots__ = ("value", "node", "__weakref__")

    def __init__(self, value, node=None):
        self.value = value
        self.node = node

    @property
    def dtype(self):
        """The library dtype of the value (what :func:`mscore.dispatch.dtype` looks up)."""
        return self.value.dtype

    def __repr__(self):
        return f"Tracer({self.value!r})"


def unwrap(a):
    """The plain native array behind ``a`` (itself when ``a`` is not a tracer)."""
    return a.value if isinstance(a, Tracer) else a


def has_tracer(args):
    """True when any argument (or element of a list argument) is a :class:`Tracer`."""
    for a in args:
        if isinstance(a, Tracer):
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tracer) for x in a):
            return True
    return False


def record(backend, name, args, attrs):
    """Run op ``name`` on plain values and return a tracer of its result."""
    list_arity = None
    flat = []
    values = []
    for a in args:
        if isinstance(a, list):  # concat takes a list of arrays
            list_arity = len(a)
            flat.extend(a)
            values.append([unwrap(x) for x in a])
        else:
            flat.append(a)
            values.append(unwrap(a))
    out = getattr(backend, name)(*values, **attrs)
    if name in NON_DIFFERENTIABLE:
        return out
    parents = [a if isinstance(a, Tracer) else None for a in flat]
    inputs = [unwrap(a) for a in flat]
    return Tracer(out, Node(name, parents, inputs, attrs, list_arity))


def record_fused(name, args, out, rule, saved):
    """A tracer of ``out``, computed from ``args`` (native arrays, tracers or None) by a
    fused op whose VJP is ``rule(g, out, *inputs, needs=..., **saved)``; ``out`` itself
    when no argument is traced."""
    if not any(isinstance(a, Tracer) for a in args):
        return out
    parents = [a if isinstance(a, Tracer) else None for a in args]
    inputs = [unwrap(a) for a in args]
    return Tracer(out, Node(name, parents, inputs, saved, None, rule))
