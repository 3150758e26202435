"""Reverse-mode autodiff over the primitive op set, for backends without their own.

While :func:`value_and_grad` runs, the differentiable inputs are wrapped in :class:`Tracer`
objects. The op dispatcher (:func:`mscore.dispatch.call`) sees a tracer among an op's
arguments and calls :func:`record`, which runs the op on the plain values and returns a new
tracer remembering how it was made. The backward pass walks these nodes newest first and
applies the VJP rules of :mod:`mscore.autodiff.rules`, which are themselves written in
primitive ops, so every backend (numpy, CuPy, a third party's) reuses them unchanged.
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
    """How a tracer was computed: op name, parent tracers, input values, attributes."""

    __slots__ = ("op", "parents", "inputs", "attrs", "index", "list_arity")

    def __init__(self, op, parents, inputs, attrs, list_arity):
        self.op = op
        self.parents = parents
        self.inputs = inputs
        self.attrs = attrs
        self.index = next(_counter)
        self.list_arity = list_arity


class Tracer:
    """A native array being differentiated: ``value`` plus the :class:`Node` that made it."""

    __slots__ = ("value", "node", "__weakref__")

    def __init__(self, value, node=None):
        self.value = value
        self.node = node

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


def backward(root, seed):
    """Gradients ``{id(leaf tracer): grad}`` of ``root`` (a Tracer) given the cotangent
    ``seed`` (a native array of root's shape)."""
    from .rules import VJP_RULES

    grads = {id(root): seed}
    keep = {id(root): root}
    # Every tracer reachable from root, newest node first (a valid reverse topological order).
    reachable = []
    stack, seen = [root], {id(root)}
    while stack:
        t = stack.pop()
        if t.node is None:
            continue
        reachable.append(t)
        for p in t.node.parents:
            if p is not None and id(p) not in seen:
                seen.add(id(p))
                stack.append(p)
    reachable.sort(key=lambda t: t.node.index, reverse=True)
    for t in reachable:
        node = t.node
        if node.op == "grad_boundary":  # a cell's backward hooks (mscore.autodiff.boundary)
            from .boundary import group_cotangents
            pairs = group_cotangents(node, grads)
        else:
            g = grads.pop(id(t), None)
            if g is None:
                continue
            rule = VJP_RULES.get(node.op)
            if rule is None:
                raise NotImplementedError(f"autodiff: no VJP rule for primitive {node.op!r}")
            pairs = zip(node.parents, rule(g, t.value, *node.inputs, **node.attrs))
        for parent, ig in pairs:
            if parent is None or ig is None:
                continue
            key = id(parent)
            if key in grads:
                from mscore import dispatch
                grads[key] = dispatch.call("add", grads[key], ig)
            else:
                grads[key] = ig
                keep[key] = parent
    return grads
