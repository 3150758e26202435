"""The torch backend's autodiff: torch autograd for ``value_and_grad`` (``torch.func.grad``
while ``torch.compile`` traces) and a ``torch.autograd.Function`` for ``grad_boundary``."""
from __future__ import annotations

import torch


class TorchAutodiff:
    """``value_and_grad`` and ``grad_boundary``."""

    def value_and_grad(self, fn, primals, has_aux):
        """``((value, aux), grads)`` of ``fn(*primals)`` by torch autograd.

        Each primal becomes a detached leaf (``requires_grad`` for floating dtypes); ``fn``
        runs under ``torch.enable_grad()``; ``torch.autograd.grad`` gives the gradients, zeros
        for primals the value does not depend on. ``value`` and ``aux`` come back detached.
        """
        if torch.compiler.is_compiling():
            return _func_value_and_grad(fn, primals, has_aux)
        leaves = []
        for p in primals:
            leaf = p.detach()
            if leaf.is_floating_point():
                leaf.requires_grad_(True)
            leaves.append(leaf)
        with torch.enable_grad():
            out = fn(*leaves)
            value, aux = out if has_aux else (out, None)
            wanted = [leaf for leaf in leaves if leaf.requires_grad]
            if wanted and isinstance(value, torch.Tensor) and value.requires_grad:
                found = iter(torch.autograd.grad(value, wanted, allow_unused=True))
            else:
                found = iter([None] * len(wanted))
        grads = []
        for leaf in leaves:
            g = next(found) if leaf.requires_grad else None
            grads.append(torch.zeros_like(leaf, requires_grad=False) if g is None else g)
        if isinstance(value, torch.Tensor):
            value = value.detach()
        return (value, _detach_tree(aux)), grads

    def grad_boundary(self, arrays, vjp):
        """``arrays`` unchanged; on the backward pass ``vjp(cotangents, needed)`` maps the
        outputs' cotangents to the inputs' (a ``torch.autograd.Function``; cells' backward
        hooks use it)."""
        return _GradBoundary.apply(vjp, *arrays)


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
            grads[i] = g
    else:
        value, (_, aux) = inner()
    return (value.detach() if isinstance(value, torch.Tensor) else value,
            _detach_tree(aux)), grads


def _detach_tree(x):
    if isinstance(x, torch.Tensor):
        return x.detach()
    if isinstance(x, (list, tuple)):
        return type(x)(_detach_tree(v) for v in x)
    return x
