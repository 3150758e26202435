"""Fused kernels of the reference autodiff: optional backend methods its fused nodes call.

On a backend without native autodiff (numpy, CuPy) the nodes of :mod:`mscore.autodiff.fused`
spend most of a train step's kernel launches. Where the backend has a method named below (the
CuPy backend: one elementwise kernel each), a node calls it instead of several primitives;
otherwise the node keeps its composite. Each function here *is* the method's definition:
the backend's method when there is one, else the composite from primitives, which the
conformance kit's fused level compares the backend's method with.

- ``relu_backward(g, out)`` -> ``where(out > 0, g, 0)``: relu's input gradient read from its
  output (with the backend's fused ``relu`` forward: one kernel each way).
- ``sparse_nll_rows(sh, s, target, ignore_index)`` -> ``(loss, valid)``: for shifted logits
  ``sh`` (M, C), ``s = sum(exp(sh), 1)`` (M, 1) and class indices ``target`` (M,), per row
  ``loss_i = log(s_i) - sh[i, target_i]`` and ``valid_i = 1`` where ``target_i !=
  ignore_index``, both 0 elsewhere (``valid`` in ``sh``'s dtype); a target outside [0, C)
  picks no logit (0).
- ``sparse_xent_grad(e, s, target, valid, scale)`` -> ``(e / s - onehot(target)) * valid *
  scale``: the logits' gradient of softmax cross-entropy, ``e = exp(sh)`` (M, C), ``valid``
  (M, 1), ``scale`` 0-d or (M, 1); a target outside [0, C) has an all-zero one-hot row.
"""
from __future__ import annotations

from mscore.dispatch import backend, call
from mscore.dispatch import dtype as dtype_of
from mscore.dispatch import shape as shape_of
from mscore.fused_reference import cached_constant, const

from .tracer import has_tracer

KERNELS = ("relu_backward", "sparse_nll_rows", "sparse_xent_grad")


def backend_kernel(name, *args):
    """The active backend's kernel ``name``, or None: the backend has none, or an argument
    is traced (a kernel has no VJP of its own; higher-order gradients take the composite)."""
    if has_tracer(args):
        return None
    return getattr(backend(), name, None)


def has_kernels(*names):
    """True when the active backend provides every kernel of ``names``."""
    b = backend()
    return all(getattr(b, n, None) is not None for n in names)


def _one_hot(target, m, c):
    """(M, C) bool: column ``target_i`` of row i (no column for a target outside [0, C))."""
    tdt = dtype_of(target)
    cols = cached_constant(("class_columns", c, tdt.name),
                           lambda: call("reshape", call("arange", 0, c, 1, tdt), (1, c)))
    return call("equal", call("reshape", target, (m, 1)), cols)


def relu_backward(g, out):
    """``where(out > 0, g, 0)``."""
    kernel = backend_kernel("relu_backward", g, out)
    if kernel is not None:
        return kernel(g, out)
    return call("where", call("greater", out, const(0, dtype_of(out))), g,
                const(0, dtype_of(g)))


def sparse_nll_rows(sh, s, target, ignore_index):
    """``(loss, valid)`` per row: ``log(s_i) - sh[i, target_i]`` and 1 where ``target_i !=
    ignore_index``, both 0 elsewhere."""
    kernel = backend_kernel("sparse_nll_rows", sh, s, target)
    if kernel is not None:
        return kernel(sh, s, target, int(ignore_index))
    m, c = shape_of(sh)
    dt = dtype_of(sh)
    zero = const(0, dt)
    picked = call("sum", call("where", _one_hot(target, m, c), sh, zero), axis=(1,),
                  keepdims=False)
    nll = call("sub", call("reshape", call("log", s), (m,)), picked)
    valid = call("not_equal", target, const(int(ignore_index), dtype_of(target)))
    return call("where", valid, nll, zero), call("cast", valid, dt)


def sparse_xent_grad(e, s, target, valid, scale):
    """``(e / s - onehot(target)) * valid * scale``."""
    kernel = backend_kernel("sparse_xent_grad", e, s, target, valid, scale)
    if kernel is not None:
        return kernel(e, s, target, valid, scale)
    m, c = shape_of(e)
    hot = call("cast", _one_hot(target, m, c), dtype_of(e))
    return call("mul", call("sub", call("div", e, s), hot), call("mul", valid, scale))


__all__ = ["KERNELS", "backend_kernel", "has_kernels", "relu_backward", "sparse_nll_rows",
           "sparse_xent_grad"]
