"""The reference autodiff's backward pass and :func:`reference_value_and_grad`, the
``Backend.value_and_grad`` contract implemented over any backend's op set."""
from __future__ import annotations

from mscore import dispatch
from mscore._state import thread as _thread
from mscore.autodiff.boundary import group_cotangents
from mscore.autodiff.fused import reference_op
from mscore.autodiff.rules import NEEDS_AWARE, VJP_RULES
from mscore.autodiff.tracer import Tracer, unwrap

# While this thread traces, dispatch.fused() answers with the autodiff's own fused ops.
dispatch.set_reference_fused(reference_op)


def reference_value_and_grad(fn, primals, has_aux):
    """``((value, aux), grads)`` of ``fn(*primals) -> (value, aux)`` by tracing primitives.

    The contract of ``Backend.value_and_grad``, implemented over any backend's op set.
    """
    leaves = [Tracer(p) for p in primals]
    _thread.tracing_depth += 1  # ops of this thread now look for tracers
    try:
        value, aux = fn(*leaves)
    finally:
        _thread.tracing_depth -= 1
    if not isinstance(value, Tracer):  # the value does not depend on any primal
        grads = [dispatch.call("full", dispatch.shape(p), 0.0, dispatch.dtype(p))
                 for p in primals]
        return (value, aux), grads
    seed = dispatch.call("full", dispatch.shape(value), 1.0, dispatch.dtype(value))
    table = backward(value, seed)
    grads = []
    for leaf, p in zip(leaves, primals):
        g = table.get(id(leaf))
        if g is None:
            g = dispatch.call("full", dispatch.shape(p), 0.0, dispatch.dtype(p))
        grads.append(g)
    return (unwrap(value), aux), grads


def backward(root, seed):
    """Gradients ``{id(leaf tracer): grad}`` of ``root`` (a Tracer) given the cotangent
    ``seed`` (a native array of root's shape)."""
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
            pairs = group_cotangents(node, grads)
        else:
            g = grads.pop(id(t), None)
            if g is None:
                continue
            pairs = zip(node.parents, _input_grads(node, g, t.value, VJP_RULES, NEEDS_AWARE))
        for parent, ig in pairs:
            if parent is None or ig is None:
                continue
            key = id(parent)
            if key in grads:
                grads[key] = dispatch.call("add", grads[key], ig)
            else:
                grads[key] = ig
                keep[key] = parent
    return grads


def _input_grads(node, g, out, vjp_rules, needs_aware):
    """The gradients of ``node``'s inputs given its output's cotangent ``g``; a fused op's
    rule (and a needs-aware primitive rule) computes only those of traced inputs."""
    rule = node.rule
    if rule is not None:  # a fused op: its rule computes only the grads asked for
        return rule(g, out, *node.inputs, needs=tuple(p is not None for p in node.parents),
                    **node.attrs)
    rule = vjp_rules.get(node.op)
    if rule is None:
        raise NotImplementedError(f"autodiff: no VJP rule for primitive {node.op!r}")
    if node.op in needs_aware:  # skip the input grads nobody reads
        return rule(g, out, *node.inputs, needs=tuple(p is not None for p in node.parents),
                    **node.attrs)
    return rule(g, out, *node.inputs, **node.attrs)


__all__ = ["backward", "reference_value_and_grad"]
