"""The torch backend's autodiff: torch autograd for ``value_and_grad`` (``torch.func.grad``
while ``torch.compile`` traces) and a ``torch.autograd.Function`` for ``grad_boundary``."""
from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable
from functools import partial
from itertools import repeat
from operator import attrgetter

import torch

_refs = getattr(sys, "getrefcount", lambda _: 1 << 30)
# sys.getrefcount of a primal, mapped over value_and_grad's primals, when only its Parameter
# and the core's list of primals hold it (plus getrefcount's argument). More holders (another
# Parameter sharing the array, a caller's list) and the primal is detached instead of marked
# in place: marking would make every holder's uses differentiable.
_PRIMAL_REFS = 3

_wants_grad = attrgetter("requires_grad")
_floating = torch.Tensor.is_floating_point
_mark = torch.Tensor.requires_grad_
_consume: Callable = partial(deque, maxlen=0)   # runs an iterator to its end, keeping nothing

# The autograd engine's entry that ``torch.autograd.grad`` and ``Tensor.backward`` both end in
# (private; absent in another torch, where the public call is used). Called directly for a
# real scalar value, it skips ``grad``'s Python checks of every input (two per parameter
# per step): here the inputs are always plain leaves the core made.
try:
    from torch.autograd.graph import _engine_run_backward
except ImportError:   # pragma: no cover - a torch without it
    _engine_run_backward = None  # type: ignore[assignment]
_PRESERVE = torch.preserve_format


class TorchAutodiff:
    """``value_and_grad`` and ``grad_boundary``."""

    # Everything value_and_grad returns is already cut from the autograd graph: the core
    # does not stop_gradient it again (mscore.ops.grad).
    value_and_grad_detached = True

    def value_and_grad(self, fn, primals, has_aux):
        """``((value, aux), grads)`` of ``fn(*primals)`` by torch autograd.

        Each floating primal becomes a leaf that requires grad: a primal outside any graph
        and held by nothing but its Parameter is marked in place for the call (and unmarked
        after; no copy per parameter per step, as torch's own parameters are leaves), one
        already in a graph, given twice or held elsewhere too is detached first; ``fn`` runs under
        ``torch.enable_grad()``; ``torch.autograd.grad``
        gives the gradients, zeros for primals the value does not depend on. ``value`` and
        ``aux`` come back detached.
        """
        if torch.compiler.is_compiling():
            return _func_value_and_grad(fn, primals, has_aux)
        leaves, marked = _leaves(primals)
        try:
            with torch.enable_grad():
                out = fn(*leaves)
                value, aux = out if has_aux else (out, None)
                wants = [leaf.requires_grad for leaf in leaves]
                every = all(wants)   # the usual case: floating parameters only
                wanted = leaves if every else [leaf for leaf, w in zip(leaves, wants) if w]
                if wanted and isinstance(value, torch.Tensor) and value.requires_grad:
                    found = _grad(value, wanted)
                else:
                    found = [None] * len(wanted)
        finally:
            _consume(map(_mark, marked, repeat(False)))
        if not every:
            it = iter(found)
            found = [next(it) if w else None for w in wants]
        grads = [torch.zeros_like(leaf, requires_grad=False) if g is None else g
                 for leaf, g in zip(leaves, found)]
        if isinstance(value, torch.Tensor):
            value = value.detach()
        return (value, _cut_tree(aux)), grads

    def grad_boundary(self, arrays, vjp):
        """``arrays`` unchanged; on the backward pass ``vjp(cotangents, needed)`` maps the
        outputs' cotangents to the inputs' (a ``torch.autograd.Function``; cells' backward
        hooks use it)."""
        return _GradBoundary.apply(vjp, *arrays)


def _grad(value, inputs):
    """``torch.autograd.grad(value, inputs, allow_unused=True)``: the engine called directly
    for a real scalar ``value`` (the seed is ``grad``'s own, ``ones_like``), the public call
    for anything else (its errors are the user's)."""
    if _engine_run_backward is None or value.numel() != 1 or not value.is_floating_point() \
            or torch.overrides.has_torch_function((value,)):
        return torch.autograd.grad(value, inputs, allow_unused=True)
    return _engine_run_backward((value,), (torch.ones_like(value, memory_format=_PRESERVE),),
                                False, False, tuple(inputs), True, accumulate_grad=False)


class _GradBoundary(torch.autograd.Function):
    """Identity forward; backward calls the Python ``vjp`` given as the first input."""

    @staticmethod
    def forward(vjp, *arrays):
        return tuple(a.view_as(a) for a in arrays)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.vjp = inputs[0]

    @staticmethod
    def backward(ctx, *cotangents):
        needed = list(ctx.needs_input_grad[1:])
        grads = ctx.vjp(list(cotangents), needed)
        return (None, *[g if n else None for g, n in zip(grads, needed)])


def _leaves(primals):
    """``(leaves, marked)``: the primals as autograd leaves and those marked in place (see
    :meth:`TorchAutodiff.value_and_grad`). The usual call (distinct floating parameters
    outside any graph, held only by their Parameters) is checked and marked by C loops."""
    refs = list(map(_refs, primals))
    if not any(map(_wants_grad, primals)) and all(map(_floating, primals)) and \
            len(set(map(id, primals))) == len(primals) and \
            max(refs, default=0) <= _PRIMAL_REFS:
        _consume(map(_mark, primals))
        return primals, primals
    leaves, marked, seen = [], [], set()
    for p, n in zip(primals, refs):
        if p.requires_grad or id(p) in seen or n > _PRIMAL_REFS:
            leaf = p.detach()
            if leaf.is_floating_point():
                leaf.requires_grad_(True)
        else:
            leaf = p
            if p.is_floating_point():
                p.requires_grad_(True)
                marked.append(p)
        seen.add(id(p))
        leaves.append(leaf)
    return leaves, marked


def _func_value_and_grad(fn, primals, has_aux):
    """:meth:`TorchBackend.value_and_grad` through ``torch.func.grad`` while ``torch.compile``
    traces: dynamo traces it into the step's graph, where ``torch.autograd.grad`` would
    break the graph in two."""
    diff = [i for i, p in enumerate(primals) if p.is_floating_point()]

    def inner(*values):
        args = list(primals)
        for i, v in zip(diff, values):
            args[i] = v
        out = fn(*args)
        value, aux = out if has_aux else (out, None)
        return value, (value, aux)

    grads = [torch.zeros_like(p) for p in primals]
    if diff:
        found, (value, aux) = torch.func.grad(inner, argnums=tuple(range(len(diff))),
                                              has_aux=True)(*(primals[i] for i in diff))
        for i, g in zip(diff, found):
            grads[i] = g.detach()
    else:
        value, (_, aux) = inner()
    return (value.detach() if isinstance(value, torch.Tensor) else value,
            _detach_tree(aux)), grads


def _detach_tree(x, detach=torch.Tensor.detach):
    if isinstance(x, torch.Tensor):
        return detach(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_detach_tree(v, detach) for v in x)
    return x


def _cut_tree(x):
    """``x`` with every tensor in it cut from the autograd graph (:func:`_cut`); a list or
    tuple of tensors none of which is in a graph comes back as it is (checked by C maps)."""
    if isinstance(x, torch.Tensor):
        return _cut(x)
    if isinstance(x, (list, tuple)):
        if all(map(isinstance, x, repeat(torch.Tensor))) and not any(map(_wants_grad, x)):
            return x
        return type(x)(map(_cut_tree, x))
    return x


def _cut(t):
    """``t`` cut from the autograd graph: itself when it is in none (eagerly, a tensor that
    does not require grad is outside every graph; an updated BatchNorm statistic is)."""
    return t.detach() if t.requires_grad else t
