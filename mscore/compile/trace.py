"""Tracing a network through the op layer, for the exporters (ONNX, MINDIR) and boost's graphs.

While the network runs once on the example inputs, a recording stand-in replaces the active backend
(``mscore._state.process.backend``): every primitive call is forwarded to the real backend and
recorded with its inputs, attributes and output. Values that depend on an input or a Parameter
become graph nodes; everything else (``full`` scalars, index arrays, Tensors held by layers) is
folded to a constant. The network runs in inference mode (``set_train(False)``) and eagerly
(PYNATIVE); shapes are those of the example inputs.

A format chooses which fused ops it records as one node (``FUSED_RECORDERS``); the other fused
ops are traced through the core's composites. Each format subclasses :class:`TraceGraph` and
turns one recorded op into its own nodes in :meth:`TraceGraph.convert`.
"""
from __future__ import annotations

import numpy as np

from mscore import context as _context
from mscore import fused_reference
from mscore._state import process as _process
from mscore._state import thread as _thread
from mscore.common import cast_cache
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.plugin.backend import FUSED_OPS, PRIMITIVE_OPS
from mscore.plugin.optional import OPTIONAL_MEMBERS
from mscore.plugin.optional import signature as optional_signature
from mscore.plugin.required import signature as required_signature

# Primitive ops that only read metadata or move data out: forwarded, never recorded.
_PASSTHROUGH = {"shape", "dtype", "to_numpy", "synchronize", "memory_stats", "all_finite"}
RANDOM_OPS = {"random_uniform", "random_normal"}



def _signature(name):
    if name in OPTIONAL_MEMBERS:
        return optional_signature(name)
    return required_signature(name)


def is_index_array(item):
    """True for a native integer array inside a ``getitem`` index."""
    return not (item is None or item is Ellipsis or isinstance(item, (slice, int, np.integer)))


def array_args(name, ba):
    """The native arrays among the bound arguments ``ba`` of op ``name``."""
    if name in ("full", "arange", "from_numpy", "rng_state"):
        return []
    if name == "concat":
        return list(ba["arrays"])
    if name in ("getitem", "scatter_add"):
        extra = [i for i in ba["index"] if is_index_array(i)]
        return [ba["a"]] + extra + ([ba["updates"]] if name == "scatter_add" else [])
    if name == "where":
        return [ba["cond"], ba["x"], ba["y"]]
    if name in ("conv", "conv_transpose"):
        return [ba["x"], ba["w"]]
    if name in ("max_pool", "avg_pool", "softmax", "log_softmax", "relu"):
        return [ba["x"]]
    if name == "dense":
        return [a for a in (ba["x"], ba["w"], ba["b"]) if a is not None]
    if name == "batch_norm":
        return [a for a in (ba["x"], ba["running_mean"], ba["running_var"], ba["weight"],
                            ba["bias"]) if a is not None]
    if name in RANDOM_OPS:
        return [ba["state"]]
    if "b" in ba:
        return [ba["a"], ba["b"]]
    return [ba["a"]]


class TraceGraph:
    """The graph under construction, keyed by the identity of native arrays.

    ``names`` maps the id of a native array that depends on an input or a Parameter to the
    format's handle for it (a value name); ``consts`` holds the numpy value of every other
    native the trace produced. Subclasses implement :meth:`convert` and :meth:`v`.
    """

    format_name = "export"

    def __init__(self, real, params):
        self.real = real
        self.names = {}
        self.consts = {}
        self.params = {id(p._data): p for p in params}
        self.keep = []  # every native seen, so that no id is reused during the trace

    def is_dynamic(self, x):
        """True when native ``x`` depends on an input or a Parameter."""
        return id(x) in self.names or id(x) in self.params

    def shape(self, x):
        """The shape of native ``x`` as a tuple of ints."""
        return tuple(int(s) for s in self.real.shape(x))

    def dtype(self, x):
        """The mscore dtype of native ``x``."""
        return self.real.dtype(x)

    def constant_value(self, x):
        """The numpy value of a native that does not depend on the inputs."""
        value = self.consts.get(id(x))
        if value is None:  # a native made outside the trace (a Tensor a layer holds)
            self.keep.append(x)
            value = np.asarray(self.real.to_numpy(x))
            self.consts[id(x)] = value
        return value

    def add_input(self, x, handle):
        """Register the example input Tensor ``x`` under the format's ``handle``."""
        self.names[id(x._data)] = handle
        self.keep.append(x._data)

    def v(self, x):
        """The format's handle for native ``x`` (a Parameter or constant on first use)."""
        raise NotImplementedError

    def convert(self, name, ba, out):
        """Emit the nodes of op ``name`` (bound arguments ``ba``, native output ``out``);
        return the handle of its output."""
        raise NotImplementedError

    def bind_and_keep(self, name, args, attrs, out):
        """``(bound arguments, array arguments)`` of one call of op ``name``; its arrays and
        ``out`` are kept alive for the graph's lifetime (their ids name graph values)."""
        bound = _signature(name).bind(*args, **attrs)
        bound.apply_defaults()
        ba = dict(bound.arguments)
        arrays = array_args(name, ba)
        self.keep.extend(arrays)
        self.keep.append(out)
        return ba, arrays

    def record(self, name, args, attrs, out):
        """Record one call of op ``name`` that produced native ``out``."""
        ba, arrays = self.bind_and_keep(name, args, attrs, out)
        if name in RANDOM_OPS:
            raise NotImplementedError(
                f"export: the network draws random numbers ({name}) in inference mode; "
                f"{self.format_name} export supports deterministic networks only")
        if not any(self.is_dynamic(a) for a in arrays):
            self.consts[id(out)] = np.asarray(self.real.to_numpy(out))
            return
        if any(out is a for a in arrays):  # the op returned an input unchanged (a no-op cast)
            self.v(out)
            return
        self.names[id(out)] = self.convert(name, ba, out)


# -- fused ops recorded as one node: computed with the real backend (its fused op or the
# composite from its primitives, unrecorded), then recorded under the fused name -------------
def _relu(real, x):
    fused = getattr(real, "relu", None)
    if fused is not None:
        return fused(x)
    zero = real.full((), 0, real.dtype(x))
    return real.where(real.greater(x, zero), x, zero)


def _softmax(real, x, axis, log=False):
    fused = getattr(real, "log_softmax" if log else "softmax", None)
    if fused is not None:
        return fused(x, axis=axis)
    shifted = real.sub(x, real.max(x, (axis,), True))
    e = real.exp(shifted)
    total = real.sum(e, (axis,), True)
    return real.sub(shifted, real.log(total)) if log else real.div(e, total)


def _dense(real, x, w, b):
    fused = getattr(real, "dense", None)
    if fused is not None:
        return fused(x, w, b)
    out = real.matmul(x, real.transpose(w, (1, 0)))
    return out if b is None else real.add(out, b)


def _batch_norm(real, x, running_mean, running_var, weight, bias, training, momentum, eps):
    if training or running_mean is None:
        raise NotImplementedError("export: BatchNorm with batch statistics "
                                  "(use_batch_statistics=True) cannot be exported; inference "
                                  "uses the moving statistics")
    fused = getattr(real, "batch_norm", None)
    if fused is not None:
        return fused(x, running_mean, running_var, weight, bias, training, momentum, eps)[0]
    # the one eval forward (and half-precision rule), run on the real backend (active here)
    return fused_reference.batch_norm(x, running_mean, running_var, weight, bias, False,
                                      momentum, eps)[0]


FUSED_RECORDERS = {
    "softmax": lambda real, x, axis: _softmax(real, x, axis),
    "log_softmax": lambda real, x, axis: _softmax(real, x, axis, log=True),
    "relu": _relu, "dense": _dense, "batch_norm": _batch_norm,
}


class Recorder:
    """Stands in for the active backend during export: forwards every primitive to the real
    backend and records it in the graph; the fused ops named in ``fused`` are recorded as
    one op each, the others are traced through the core's composites."""

    value_and_grad = None
    compile = None
    float_caster = None   # amp's casts must reach the recorded cast, not the library directly

    def __init__(self, real, graph, fused=("softmax", "log_softmax")):
        self._real = real
        self._graph = graph
        self.name = real.name
        self.capabilities = getattr(real, "capabilities", frozenset())
        self.device = getattr(real, "device", "CPU")
        for name in FUSED_OPS:
            setattr(self, name, None)
        for name in fused:
            setattr(self, name, self._fused(name))

    def _fused(self, name):
        compute = FUSED_RECORDERS[name]

        def recorded(*args, **attrs):
            bound = _signature(name).bind(*args, **attrs)
            _process.backend = self._real   # computed by the real backend, recorded as one op
            try:
                out = compute(self._real, *bound.args, **bound.kwargs)
            finally:
                _process.backend = self
            self._graph.record(name, args, attrs, out)
            if name == "batch_norm":  # the layer expects (out, new_mean, new_var)
                return out, None, None
            return out
        return recorded

    def __getattr__(self, name):
        attr = getattr(self._real, name)
        if name in PRIMITIVE_OPS and name not in _PASSTHROUGH:
            def recorded(*args, **attrs):
                out = attr(*args, **attrs)
                self._graph.record(name, args, attrs, out)
                return out
            return recorded
        return attr


def flatten_outputs(out, what="output"):
    """The Tensors of a network's output (a Tensor or nested tuples of them), in order."""
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        leaves = []
        for o in out:
            leaves.extend(flatten_outputs(o, what))
        return leaves
    raise TypeError(f"export: the network's {what} must be Tensors (or tuples of them), got "
                    f"{type(out).__name__}")


def check_net_and_inputs(net, inputs):
    """Validate export's ``net`` and example ``inputs`` arguments."""
    if not isinstance(net, Cell):
        raise TypeError(f"net: expected a Cell, got {type(net).__name__}")
    if not inputs:
        raise ValueError("inputs: export needs at least one example input Tensor")
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"inputs[{i}]: expected a Tensor, got {type(x).__name__}")
    check_parameter_names(net)


def check_parameter_names(net):
    """An exported file finds a Parameter by its name: two Parameters sharing one (or an
    empty one) would be written as one value, and the file would compute something else."""
    owners = {}
    for path, param in net.parameters_and_names():
        if not param.name:
            raise ValueError(f"export: the Parameter at {path!r} has an empty name; give it "
                             f"one (Parameter(..., name=...))")
        if param.name in owners:
            raise ValueError(f"export: the Parameters at {owners[param.name]!r} and {path!r} "
                             f"share the name {param.name!r}; an exported file could not tell "
                             f"them apart (rename one, as save_checkpoint requires)")
        owners[param.name] = path


def trace(net, inputs, graph, fused=("softmax", "log_softmax")):
    """Run ``net(*inputs)`` in inference mode with ``graph`` recording every op; the inputs
    must already be registered with :meth:`TraceGraph.add_input`. Returns the output Tensors
    (flattened); the training flags and the execution mode are restored afterwards."""
    real = graph.real
    modes = [(cell, cell.training) for _, cell in net.cells_and_names()]
    old_mode = _context._context["mode"]
    recorder = Recorder(real, graph, fused)
    net.set_train(False)
    _context._context["mode"] = _context.PYNATIVE_MODE
    _process.backend = recorder
    was_exporting, _thread.exporting = _thread.exporting, True
    try:
        with cast_cache.scoped_copies():   # casts are recorded, not taken from eager copies
            out = net(*inputs)
    finally:
        _thread.exporting = was_exporting
        _process.backend = real
        _context._context["mode"] = old_mode
        for cell, training in modes:
            object.__setattr__(cell, "training", training)
    leaves = flatten_outputs(out)
    for i, t in enumerate(leaves):
        if not graph.is_dynamic(t._data):
            raise ValueError(f"export: output {i} does not depend on the inputs through the op "
                             f"layer (a layer bypassed mscore's dispatch?)")
    return out, leaves
