"""Gradient boundaries: identity on the forward pass, a Python function on the backward pass.

:func:`grad_boundary` is how the core expresses a cell's backward hooks on every backend: the
arrays come out unchanged, and when a gradient flows back through them ``vjp(cotangents,
needed)`` receives one cotangent per output (zeros for an output nothing used) and a flag per
input saying whether that input needs a gradient, and returns one cotangent per input (None
where not needed). Backends with native autodiff implement it as ``Backend.grad_boundary``
(a ``torch.autograd.Function``, a ``jax.custom_vjp``); the reference autodiff records one
multi-output node whose rule is ``vjp``.

A :func:`hook_session` is open while ``value_and_grad`` differentiates: boundaries are only
built inside one (a forward pass outside differentiation costs nothing), and the session
remembers the hooked cell calls whose input side the backward pass never reached (no input
needed a gradient), so that their hooks still run, with ``None`` input gradients, as
MindSpore's do.
"""
from __future__ import annotations

import weakref

from mscore import dispatch
from mscore._state import thread as _thread
from mscore.autodiff.tracer import Node, Tracer, unwrap


class hook_session:
    """Open while a ``value_and_grad`` runs its function and the backward pass. ``calls``
    collects objects with a ``finish()`` method, called after the backward pass in reverse
    order of creation (latest call first, as a backward pass visits them)."""

    def __init__(self):
        self.calls = []

    def __enter__(self):
        _thread.hook_sessions.append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        _thread.hook_sessions.remove(self)
        if exc_type is None:
            for call in reversed(self.calls):
                call.finish()
        return False


def current_session():
    """The innermost open :class:`hook_session` of this thread, or None."""
    stack = _thread.hook_sessions
    return stack[-1] if stack else None


def grad_boundary(arrays, vjp):
    """``arrays`` (a list of native arrays or tracers) unchanged, as a new list whose
    backward pass calls ``vjp(cotangents, needed) -> input cotangents``."""
    backend = dispatch.backend()
    if backend.value_and_grad is None:
        return _reference_boundary(arrays, vjp)
    native = getattr(backend, "grad_boundary", None)
    if native is None:
        raise NotImplementedError(
            f"backward hooks: backend {backend.name!r} differentiates natively but provides "
            f"no grad_boundary (see docs/backend-authors.md)")
    return list(native(list(arrays), vjp))


class _Group:
    """One reference boundary: its inputs, its outputs (weakly) and its ``vjp``."""

    __slots__ = ("parents", "values", "outputs", "vjp", "done")

    def __init__(self, arrays, vjp):
        self.parents = [a if isinstance(a, Tracer) else None for a in arrays]
        self.values = [unwrap(a) for a in arrays]
        self.outputs = []
        self.vjp = vjp
        self.done = False


def _reference_boundary(arrays, vjp):
    if not _thread.tracing_depth:
        return list(arrays)
    group = _Group(arrays, vjp)
    out, index = [], None
    for slot, (parent, value) in enumerate(zip(group.parents, group.values)):
        node = Node("grad_boundary", [parent], [value], {"group": group, "slot": slot}, None)
        if index is None:
            index = node.index
        node.index = index  # one node in the walk's order: every output is ready together
        t = Tracer(value, node)
        group.outputs.append(weakref.ref(t))
        out.append(t)
    return out


def group_cotangents(node, grads):
    """For the backward walk: pop the cotangents of every output of ``node``'s boundary and,
    when any arrived, run its ``vjp``; returns ``[(parent tracer, cotangent)]``."""
    group = node.attrs["group"]
    if group.done:
        return []
    group.done = True
    found = []
    for ref in group.outputs:
        t = ref()
        found.append(grads.pop(id(t), None) if t is not None else None)
    if all(g is None for g in found):
        return []
    cotangents = [dispatch.call("full", dispatch.shape(v), 0.0, dispatch.dtype(v))
                  if g is None else g for g, v in zip(found, group.values)]
    results = group.vjp(cotangents, [p is not None for p in group.parents])
    return [(p, g) for p, g in zip(group.parents, results) if p is not None and g is not None]
