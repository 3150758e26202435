"""The JAX backend's autodiff: ``jax.value_and_grad`` and a ``jax.custom_vjp`` boundary."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero as _SymbolicZero


class JaxAutodiff:
    """``value_and_grad`` and ``grad_boundary``."""

    # -- native autodiff and compilation -------------------------------------------------------
    def value_and_grad(self, fn, primals, has_aux=True):
        """``jax.value_and_grad`` of ``fn(*primals) -> (value, aux)`` over every floating
        primal; integer/bool primals get zero gradients of their own dtype."""
        primals = list(primals)
        if not has_aux:
            inner = fn
            fn = lambda *p: (inner(*p), None)  # noqa: E731
        diff = [i for i, p in enumerate(primals) if jnp.issubdtype(p.dtype, jnp.inexact)]
        if not diff:
            value, aux = fn(*primals)
            return (value, aux), [jnp.zeros_like(p) for p in primals]
        if len(diff) == len(primals):
            (value, aux), grads = jax.value_and_grad(
                fn, argnums=tuple(range(len(primals))), has_aux=True)(*primals)
            return ((value, aux) if has_aux else (value, None)), list(grads)

        def partial_fn(*diff_vals):
            full = list(primals)
            for i, val in zip(diff, diff_vals):
                full[i] = val
            return fn(*full)

        (value, aux), dgrads = jax.value_and_grad(
            partial_fn, argnums=tuple(range(len(diff))), has_aux=True)(*(primals[i] for i in diff))
        grads = [jnp.zeros_like(p) for p in primals]
        for i, g in zip(diff, dgrads):
            grads[i] = g
        return (value, aux), grads

    def grad_boundary(self, arrays, vjp):
        """``arrays`` unchanged; on the backward pass ``vjp(cotangents, needed)`` maps the
        outputs' cotangents to the inputs' (a ``jax.custom_vjp`` whose forward notes which
        inputs are differentiated; cells' backward hooks use it)."""
        needed = []

        @jax.custom_vjp
        def boundary(*xs):
            return tuple(xs)

        def forward(*xs):
            needed[:] = [x.perturbed for x in xs]
            return tuple(x.value for x in xs), None

        def backward(_, cotangents):
            cotangents = [jnp.zeros(c.shape, c.dtype) if isinstance(c, _SymbolicZero) else c
                          for c in cotangents]
            grads = vjp(cotangents, list(needed))
            return tuple(g if n else None for g, n in zip(grads, needed))

        boundary.defvjp(forward, backward, symbolic_zeros=True)
        return list(boundary(*arrays))
