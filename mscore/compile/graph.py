"""GRAPH_MODE: run a top-level Cell as one compiled program on backends that can compile.

``Cell.__call__`` reaches this module through :data:`mscore.nn.cell.Cell.graph_runner`, which
:mod:`mscore.compile` sets when it is imported (nn sits below compile and never imports it).

The cell's call is made a pure function of native arrays with
:func:`~mscore.common.parameter.stateless_call`: every Parameter it can reach (network,
optimizer state, loss scale) and the global random state go in as values and come out
updated. The backend's ``compile`` (``jax.jit``, ...) builds that function once per *program
key*; later calls only move arrays in and out.

Program key: the backend, ``cell.training``, the cell's compute dtype, the active autocast
policy, and the argument signature (shape and dtype of every Tensor argument, type and value
of every Python scalar; tuples and lists of them are flattened). As in MindSpore, Python
attributes that ``construct`` reads and the set of Parameters the cell reaches are constants
of the compiled program: after changing the network's structure or such attributes, call
:func:`clear_cache` (``set_train`` needs nothing: the training flag is part of the key).

Donation. When the backend declares the ``donation`` capability, the Parameter values are
donated to the program (their buffers are reused for the updated values). A value that
anything besides its Parameter still references (a Tensor from ``param.value()``, a
checkpoint dict, two Parameters sharing one array, an open ``MutationScope``) is copied
first, so donation never invalidates an array someone can still read; in steady-state
training nothing is copied.

Per-step work after the first call is: one dict lookup, one list of values, one call of the
compiled function, one write-back loop. ``trace_count`` (read live from the process state,
:func:`mscore._state.count_trace`) counts the traces; the benches report it.
"""
from __future__ import annotations

import sys
import threading

from mscore import _state
from mscore import context as _context
from mscore._state import process as _process
from mscore._state import thread as _thread
from mscore.common.parameter import Parameter, stateless_call
from mscore.common.tensor import Tensor, copier
from mscore.nn.cell import Cell
from mscore.ops import _sharded_ops, _sharding
from mscore.ops.grad import _flatten
from mscore.ops.random import draws as _random

_getrefcount = getattr(sys, "getrefcount", None)
_active_thread_count = threading.active_count
# sys.getrefcount(param._data) when only the Parameter holds the array: its slot plus the
# argument reference of the call itself.
_SOLE_OWNER_REFS = 2
_SCALARS = (bool, int, float, str, type(None))
_class_jit_disabled = _process.class_jit_disabled   # Cell class -> its jit_disabled flag


in_compiled = _state.in_compiled


def __getattr__(name):
    # ``trace_count``: the GRAPH_MODE programs traced since import (or the last
    # ``_state.reset()``), read live from its one home.
    if name == "trace_count":
        return _process.trace_count
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def should_compile(cell):
    """True when ``cell`` should run compiled: the backend compiles, we are not already
    inside a compiled program, and the cell does not opt out (``cell.jit_disabled``)."""
    if _thread.compiled_depth:
        return False
    flag = cell.__dict__.get("jit_disabled")
    if flag is None:
        cls = type(cell)
        flag = _class_jit_disabled.get(cls)
        if flag is None:
            flag = _class_jit_disabled[cls] = bool(getattr(cls, "jit_disabled", False))
    if flag:
        return False
    backend = _process.backend or _context.current_backend()
    return backend.compile is not None


def clear_cache(cell=None):
    """Drop the compiled programs of ``cell`` (of every cell compiled so far when None), so
    the next call traces again and sees a changed structure or changed attributes."""
    if cell is None:
        _state.drop_compiled_programs()
        return
    if not isinstance(cell, Cell):
        raise TypeError(f"cell: expected a Cell or None, got {type(cell).__name__}")
    cell.__dict__.pop("_graph_cache", None)


def cache_size(cell):
    """The number of compiled programs ``cell`` holds (one per program key)."""
    return len(cell.__dict__.get("_graph_cache", ()))


class _Program:
    """One compiled program of a cell: the compiled function, the Parameters it threads, and
    how to rebuild the output structure from its flat leaves."""

    __slots__ = ("compiled", "plain", "pure", "params", "rng_index", "rng_param", "donate",
                 "leaf_kinds",
                 "python_leaves", "rebuild", "copy", "side_params", "single",
                 "__weakref__")

    def __init__(self, compiled, params, rng_index, donate, copy):
        self.compiled = compiled
        self.plain = None            # the same program without donation (built on demand)
        self.pure = None
        self.params = params
        self.rng_index = rng_index
        self.rng_param = params[rng_index] if rng_index is not None else None
        self.donate = donate
        self.copy = copy
        self.leaf_kinds = self.python_leaves = self.rebuild = None
        self.side_params = ()
        self.single = False          # construct returned one Tensor (the fast path)


def _flatten_arg(a, label, backend, raw, sig):
    """Append the Tensor leaves of argument ``a`` to ``raw`` and its signature to ``sig``."""
    if isinstance(a, Tensor):
        d = a._data
        raw.append(d)
        sig.append(backend.shape(d))
        sig.append(backend.dtype(d))
    elif isinstance(a, _SCALARS):
        sig.append((type(a), a))
    elif isinstance(a, (tuple, list)):
        sig.append((type(a), len(a)))
        for k, item in enumerate(a):
            _flatten_arg(item, f"{label}[{k}]", backend, raw, sig)
    else:
        raise TypeError(f"GRAPH_MODE: {label} of a compiled Cell call must be a Tensor, a "
                        f"Python scalar or a tuple/list of them, got {type(a).__name__}")


def _rebuild_args(template, it):
    out = []
    for a in template:
        if isinstance(a, Tensor):
            out.append(Tensor._wrap(next(it)))
        elif isinstance(a, (tuple, list)):
            out.append(type(a)(_rebuild_args(a, it)))
        else:
            out.append(a)
    return out


def compiled_call(cell, args, kwargs):
    """Run ``cell(*args, **kwargs)`` through the backend's compiled program for this program
    key (keyword arguments are part of the key by name, and their values as arguments are)."""
    if _sharding.strategies_apply():
        with _sharding.batch_entry(args) as whole:
            return _compiled_call(cell, whole, kwargs)
    return _compiled_call(cell, args, kwargs)


def _compiled_call(cell, args, kwargs):
    backend = _process.backend or _context.current_backend()
    # The program key, built flat: (backend, flags..., then per Tensor argument its shape
    # and dtype; other arguments go through _flatten_arg). This runs on every step.
    raw = []
    sig = [backend, cell.training, cell._compute_dtype, _thread.autocast_policy]
    if kwargs:
        names = tuple(sorted(kwargs))
        sig.append(names)
        args = (*args, *(kwargs[k] for k in names))
    else:
        names = ()
    shape_of, dtype_of = backend.shape, backend.dtype
    for pos, a in enumerate(args):
        if isinstance(a, Tensor):
            d = a._data
            raw.append(d)
            sig.append(shape_of(d))
            sig.append(dtype_of(d))
        else:
            _flatten_arg(a, f"argument {pos}", backend, raw, sig)
    key = tuple(sig)
    cache = cell.__dict__.get("_graph_cache")
    if cache is None:
        cache = cell.__dict__["_graph_cache"] = {}
        _process.compiled_cells.add(cell)
    program = cache.get(key)
    if program is None:
        program = cache[key] = _build(cell, args, names, backend)
    params = program.params
    if program.rng_index is not None:
        holder = _process.random_stream
        rng = holder["param"]
        if rng is not program.rng_param or holder["backend"] is not backend:
            # set_seed made a new stream (or none exists yet): thread the current one.
            rng = _current_rng_param()
            params[program.rng_index] = program.rng_param = rng
    scopes = _thread.mutation_scopes
    compiled = program.compiled
    if scopes:
        # Inside value_and_grad / stateless_call: the enclosing scope keeps the current
        # values to restore them, so nothing may be donated (the values may be tracers).
        for scope in scopes:
            for p in params:
                scope.note(p)
        if program.donate:
            compiled = program.plain
            if compiled is None:
                compiled = program.plain = backend.compile(program.pure, donate_argnums=())
        values = [p._data for p in params]
    elif program.donate and _getrefcount is not None:
        copy, refs = program.copy, _getrefcount
        values = [p._data if refs(p._data) <= _SOLE_OWNER_REFS else copy(p._data)
                  for p in params]
        rng_index = program.rng_index
        if rng_index is not None and _active_thread_count() > 1 \
                and values[rng_index] is params[rng_index]._data:
            # The random stream is process-wide: another thread may read it while this
            # program consumes (donates) its buffer, so donate a copy of it instead.
            values[rng_index] = copy(values[rng_index])
    else:
        values = [p._data for p in params]
    _thread.compiled_depth += 1
    try:
        new_values, raw_leaves = compiled(values, raw)
    finally:
        _thread.compiled_depth -= 1
    del values
    if scopes:
        for p, v in zip(params, new_values):
            p._assign(v)
    else:
        for p, v in zip(params, new_values):
            p._data = v
    if program.side_params:
        # Side-output Parameters (summary operators) come back after the output leaves.
        n = len(raw_leaves) - len(program.side_params)
        for p, v in zip(program.side_params, raw_leaves[n:]):
            p._assign(v)
        raw_leaves = raw_leaves[:n]
    if _sharded_ops.has_pending() and _sharded_ops.can_settle():
        _sharded_ops.settle()   # the first step of shard strategies: keep the slices now
    kinds = program.leaf_kinds
    if kinds is None:
        raise RuntimeError("GRAPH_MODE: the compiled program returned without being traced "
                           "by this process; call mscore.compile.graph.clear_cache(cell)")
    if program.single:
        return Tensor._wrap(raw_leaves[0])
    it = iter(raw_leaves)
    return program.rebuild([Tensor._wrap(next(it)) if is_t else py
                            for is_t, py in zip(kinds, program.python_leaves)])


def _current_rng_param():
    return _random.global_state_parameter()


def _state_params(cell):
    """Every distinct Parameter ``cell`` reaches, then the global random state."""
    params = list(cell.get_parameters())
    rng = _current_rng_param()
    for i, p in enumerate(params):
        if p is rng:
            return params, i
    params.append(rng)
    return params, len(params) - 1


def _build(cell, args, kwarg_names, backend):
    """The program of ``cell`` called with ``args``, whose last ``len(kwarg_names)`` values
    are the keyword arguments of those names."""
    params, rng_index = _state_params(cell)
    template = list(args)
    n_positional = len(template) - len(kwarg_names)
    donate = "donation" in getattr(backend, "capabilities", ())
    program = _Program(None, params, rng_index, donate, copier(backend))
    name = type(cell).__name__

    def pure(values, raw_args):
        _state.count_trace()
        call_args = _rebuild_args(template, iter(raw_args))
        call_kwargs = dict(zip(kwarg_names, call_args[n_positional:]))
        call_args = call_args[:n_positional]
        traced = list(program.params)
        if program.rng_index is not None:
            # Trace with a private stand-in for the process-wide random stream: another
            # thread may read the shared one while this trace holds symbolic values.
            traced[program.rng_index] = _thread.traced_random_stream = \
                _random.traced_stand_in(program.params[program.rng_index])
        try:
            out, new_values, others = stateless_call(
                lambda: cell._run(tuple(call_args), call_kwargs), traced, values)
        except Exception as exc:
            _annotate(exc, name)
            raise
        finally:
            _thread.traced_random_stream = None
        # Parameters marked _side_output are written by the program but never read by it:
        # their values leave as extra outputs instead of being refused.
        # Parameters marked _step_scratch live only inside one step (written before they
        # are read, their values of no use after it): their writes are dropped.
        others = [(p, v) for p, v in others if not getattr(p, "_step_scratch", False)]
        side = [(p, v) for p, v in others if getattr(p, "_side_output", False)]
        others = [(p, v) for p, v in others if not getattr(p, "_side_output", False)]
        program.side_params = tuple(p for p, _ in side)
        if others:
            names = ", ".join(sorted({p.name for p, _ in others}))
            raise RuntimeError(f"GRAPH_MODE: {name} assigned Parameters it does not reach "
                               f"({names}); make them attributes of the cell (or of a "
                               f"sub-cell) so the compiled program can thread them, or "
                               f"call clear_cache(cell) if they were added after the first "
                               f"call")
        # MindSpore's compiled programs return plain tuples: a ParameterTuple (an optimizer
        # returning the parameters it assigned) or another sequence type comes back as one.
        out = _plain_sequences(out)
        leaves, rebuild = _flatten(out)
        # A Parameter returned by the program is its value after the program's assignments
        # (stateless_call put the values from before back into the Parameter itself).
        updated = {id(p): v for p, v in zip(traced, new_values)}
        leaves = [Tensor._wrap(updated[id(x)]) if isinstance(x, Parameter)
                  and id(x) in updated else x for x in leaves]
        program.single = isinstance(out, Tensor)
        program.rebuild = rebuild
        program.leaf_kinds = [isinstance(x, Tensor) for x in leaves]
        program.python_leaves = [None if isinstance(x, Tensor) else x for x in leaves]
        for x in program.python_leaves:
            if x is not None and not isinstance(x, _SCALARS):
                raise TypeError(f"GRAPH_MODE: {name}.construct returned a "
                                f"{type(x).__name__}; a compiled cell may return Tensors, "
                                f"Python scalars and tuples/lists of them")
        # The updated state first, in the order of the inputs: a backend that donates pairs
        # each donated input with the first free output of its shape and dtype, so this
        # order makes every state buffer alias its own input (a Parameter the step does not
        # change costs nothing). Outputs first would pair a scalar state with the loss.
        return new_values, ([x._data for x in leaves if isinstance(x, Tensor)] +
                            [v for _, v in side])

    program.pure = pure
    program.compiled = backend.compile(pure, donate_argnums=(0,) if donate else ())
    return program


def _plain_sequences(out):
    """``out`` with every tuple or list subclass made a plain tuple (lists stay lists)."""
    if isinstance(out, (tuple, list)):
        kind = list if type(out) is list else tuple
        return kind(_plain_sequences(v) for v in out)
    return out


_HINT = ("mscore GRAPH_MODE: raised while {name} was traced into one compiled program. "
         "Inside it tensor values are symbolic: if this comes from Python control flow on a "
         "Tensor (if/while) or from bool()/float()/int()/item()/asnumpy() of one, use "
         "ops.where/ops.select instead, or run the cell eagerly (ms.PYNATIVE_MODE, or "
         "cell.jit_disabled = True).")


def _annotate(exc, name):
    """Add a note to an exception raised while tracing (its type stays the same)."""
    add_note = getattr(exc, "add_note", None)
    note = _HINT.format(name=name)
    if add_note is not None and note not in getattr(exc, "__notes__", ()):
        add_note(note)
