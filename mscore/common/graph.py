"""GRAPH_MODE: run a top-level Cell as one compiled program on backends that can compile.

The cell's call is made a pure function of native arrays with
:func:`~mscore.common.parameter.stateless_call`: every Parameter it can reach (network,
optimizer state, loss scale) and the random state go in as values and come out updated. The
backend's ``compile`` (``jax.jit``, ...) builds it once per input signature; later calls
only move arrays in and out.
"""
from __future__ import annotations

from mscore.common.parameter import stateless_call
from mscore.common.tensor import Tensor
from mscore import dispatch

_depth = 0          # > 0 while a compiled program is being traced or run eagerly inside one
trace_count = 0     # programs traced since import (the benches report it)


def should_compile(cell):
    """True when ``cell`` should run compiled: the backend compiles, we are not already
    inside a compiled program, and the cell does not opt out (``cell.jit_disabled``)."""
    if _depth:
        return False
    if getattr(cell, "jit_disabled", False):
        return False
    return dispatch.backend().compile is not None


def _signature(args):
    sig = []
    for a in args:
        if isinstance(a, Tensor):
            sig.append(("T", a.shape, a.dtype.name))
        elif isinstance(a, (int, float, bool, str, type(None))):
            sig.append(("P", a))
        else:
            raise TypeError(f"GRAPH_MODE: inputs must be Tensors or Python scalars, got "
                            f"{type(a).__name__}")
    return tuple(sig)


def _state_params(cell):
    from mscore.ops.random import global_state_parameter
    params = list(cell.get_parameters())
    rng = global_state_parameter()
    if all(p is not rng for p in params):
        params.append(rng)
    return params


def compiled_call(cell, args, kwargs):
    """Run ``cell(*args)`` through the backend's compiled program for this signature."""
    if kwargs:
        raise TypeError("GRAPH_MODE: keyword arguments are not supported in a compiled call")
    backend = dispatch.backend()
    params = _state_params(cell)
    key = (backend.name, cell.training, _signature(args), tuple(id(p) for p in params))
    cache = cell.__dict__.setdefault("_graph_cache", {})
    entry = cache.get(key)
    if entry is None:
        entry = _build(cell, args, params, backend)
        cache[key] = entry
    compiled, side = entry
    raw_args = [a._data for a in args if isinstance(a, Tensor)]
    global _depth
    _depth += 1
    try:
        raw_leaves, new_values = compiled([p._data for p in params], raw_args)
    finally:
        _depth -= 1
    for p, v in zip(params, new_values):
        p._data = v
    it = iter(raw_leaves)
    values = [Tensor._wrap(next(it)) if is_t else py
              for is_t, py in zip(side["leaf_kinds"], side["python_leaves"])]
    return side["rebuild"](values)


def _build(cell, args, params, backend):
    from mscore.ops.grad import _flatten
    side = {}
    template = list(args)

    def pure(values, raw_args):
        global trace_count
        trace_count += 1
        it = iter(raw_args)
        call_args = [Tensor._wrap(next(it)) if isinstance(a, Tensor) else a for a in template]
        out, new_values, others = stateless_call(lambda: cell._run(tuple(call_args), {}),
                                                 params, values)
        if others:
            names = ", ".join(p.name for p, _ in others)
            raise RuntimeError(f"GRAPH_MODE: the cell assigned Parameters it does not own "
                               f"({names}); make them attributes of the cell")
        leaves, rebuild = _flatten(out)
        side["rebuild"] = rebuild
        side["leaf_kinds"] = [isinstance(x, Tensor) for x in leaves]
        side["python_leaves"] = [None if isinstance(x, Tensor) else x for x in leaves]
        return [x._data for x in leaves if isinstance(x, Tensor)], new_values

    return backend.compile(pure, donate_argnums=(0,)), side
