"""Reference reverse-mode autodiff for backends without native autodiff (numpy, CuPy)."""
# The VJP rules load lazily on the first backward pass (they import the ops layer).

from .tracer import Tracer, backward, unwrap


def reference_value_and_grad(fn, primals, has_aux):
    """``((value, aux), grads)`` of ``fn(*primals) -> (value, aux)`` by tracing primitives.

    The contract of ``Backend.value_and_grad``, implemented over any backend's op set.
    """
    from mscore import dispatch
    from mscore._per_thread import state as thread

    leaves = [Tracer(p) for p in primals]
    thread.tracing_depth += 1  # ops of this thread now look for tracers
    try:
        value, aux = fn(*leaves)
    finally:
        thread.tracing_depth -= 1
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


__all__ = ["Tracer", "backward", "unwrap", "reference_value_and_grad"]
