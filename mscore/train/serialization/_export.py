"""``export``: write a network as ONNX, traced through the op layer on any backend.

While the network runs once on the example inputs, a recording stand-in replaces the active
backend (``mscore.context._active``): every primitive call is forwarded to the real backend and
recorded with its inputs, attributes and output. Values that depend on an input or a Parameter
become ONNX nodes; everything else (``full`` scalars, index arrays, Tensors held by layers) is
folded to a constant. Parameters become initializers under their ``Parameter.name``. The
network runs in inference mode (``set_train(False)``) and eagerly (PYNATIVE), and shapes are
those of the example inputs (the ONNX graph has static shapes).

Fused ``softmax``/``log_softmax`` become ONNX ``Softmax``/``LogSoftmax``; the other fused ops
are traced through the core's composites (so BatchNorm is arithmetic, ReLU a ``Where``).
``MINDIR`` and ``AIR`` are not implemented.
"""
from __future__ import annotations

import inspect
import os

import numpy as np

from mscore import context as _context
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.plugin.backend import Backend, FUSED_OPS, PRIMITIVE_OPS

OPSET = 18
_IR_VERSION = 8
_INT64_MIN = -(2 ** 63)
FILE_FORMATS = ("AIR", "ONNX", "MINDIR")

# Primitive ops that only read metadata or move data out: forwarded, never recorded.
_PASSTHROUGH = {"shape", "dtype", "to_numpy", "synchronize", "memory_stats", "all_finite"}
_RANDOM = {"random_uniform", "random_normal"}

_UNARY = {"neg": "Neg", "abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin",
          "cos": "Cos", "tanh": "Tanh", "erf": "Erf", "sign": "Sign", "floor": "Floor",
          "ceil": "Ceil", "logical_not": "Not"}
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min", "equal": "Equal", "less": "Less",
           "less_equal": "LessOrEqual", "greater": "Greater", "greater_equal": "GreaterOrEqual",
           "logical_and": "And", "logical_or": "Or", "matmul": "MatMul"}
_REDUCE = {"sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin"}


def _onnx_type(dtype):
    from onnx import TensorProto
    return {mdt.float16: TensorProto.FLOAT16, mdt.bfloat16: TensorProto.BFLOAT16,
            mdt.float32: TensorProto.FLOAT, mdt.float64: TensorProto.DOUBLE,
            mdt.int8: TensorProto.INT8, mdt.int16: TensorProto.INT16,
            mdt.int32: TensorProto.INT32, mdt.int64: TensorProto.INT64,
            mdt.uint8: TensorProto.UINT8, mdt.bool_: TensorProto.BOOL}[dtype]


def _signature(name):
    if name in ("softmax", "log_softmax"):
        return inspect.Signature([inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                                  inspect.Parameter("axis", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    sig = inspect.signature(getattr(Backend, name))
    params = list(sig.parameters.values())[1:]  # drop self
    return sig.replace(parameters=params)


def _is_index_array(item):
    return not (item is None or item is Ellipsis or isinstance(item, (slice, int, np.integer)))


class _Graph:
    """The ONNX graph under construction, keyed by the identity of native arrays."""

    def __init__(self, real, params):
        from onnx import helper
        self.helper = helper
        self.real = real
        self.names = {}         # id(native) -> ONNX value name (values that depend on inputs)
        self.consts = {}        # id(native) -> numpy value (folded constants)
        self.const_names = {}   # id(native) -> initializer name
        self.params = {id(p._data): p for p in params}
        self.keep = []          # every native seen, so no id is reused during the trace
        self.nodes, self.initializers, self.used_names = [], [], set()
        self.counter = 0

    # -- names and values ------------------------------------------------------------------------
    def fresh(self, hint):
        self.counter += 1
        name = f"{hint}_{self.counter}"
        while name in self.used_names:
            self.counter += 1
            name = f"{hint}_{self.counter}"
        self.used_names.add(name)
        return name

    def is_dynamic(self, x):
        return id(x) in self.names or id(x) in self.params

    def initializer(self, value, hint):
        from onnx import numpy_helper
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(value, order="C"), name))
        return name

    def const(self, value, hint="const"):
        """An initializer holding the numpy ``value``."""
        return self.initializer(np.asarray(value), hint)

    def v(self, x):
        """The ONNX name of native ``x`` (a parameter becomes its initializer on first use)."""
        key = id(x)
        if key in self.names:
            return self.names[key]
        if key in self.params:
            p = self.params[key]
            from onnx import numpy_helper
            name = p.name if p.name not in self.used_names else self.fresh(p.name)
            self.used_names.add(name)
            self.initializers.append(numpy_helper.from_array(
                np.asarray(self.real.to_numpy(x), order="C"), name))
            self.names[key] = name
            return name
        if key not in self.const_names:
            value = self.consts.get(key)
            if value is None:  # a native made outside the trace (a Tensor a layer holds)
                self.keep.append(x)
                value = np.asarray(self.real.to_numpy(x))
            self.const_names[key] = self.const(value)
        return self.const_names[key]

    def node(self, op_type, inputs, out=None, **attrs):
        out = out or self.fresh(op_type.lower())
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [out],
                                                name=self.fresh("node"), **attrs))
        return out

    def shape(self, x):
        return tuple(int(s) for s in self.real.shape(x))

    def dtype(self, x):
        return self.real.dtype(x)

    def i64(self, values):
        return self.const(np.asarray(values, dtype=np.int64), "shape")

    # -- recording -------------------------------------------------------------------------------
    def record(self, name, args, attrs, out):
        bound = _signature(name).bind(*args, **attrs)
        bound.apply_defaults()
        ba = dict(bound.arguments)
        arrays = _array_args(name, ba)
        self.keep.extend(arrays)
        self.keep.append(out)
        if name in _RANDOM:
            raise NotImplementedError(
                f"export: the network draws random numbers ({name}) in inference mode; ONNX "
                f"export supports deterministic networks only")
        if not any(self.is_dynamic(a) for a in arrays):
            self.consts[id(out)] = np.asarray(self.real.to_numpy(out))
            return
        if any(out is a for a in arrays):  # the op returned an input unchanged (a no-op cast)
            self.v(out)
            return
        convert = _CONVERTERS.get(name)
        if convert is None:
            raise NotImplementedError(f"export: primitive {name!r} has no ONNX mapping yet")
        self.names[id(out)] = convert(self, ba, out)


def _array_args(name, ba):
    if name in ("full", "arange", "from_numpy", "rng_state"):
        return []
    if name == "concat":
        return list(ba["arrays"])
    if name in ("getitem", "scatter_add"):
        extra = [i for i in ba["index"] if _is_index_array(i)]
        return [ba["a"]] + extra + ([ba["updates"]] if name == "scatter_add" else [])
    if name in ("where",):
        return [ba["cond"], ba["x"], ba["y"]]
    if name in ("conv", "conv_transpose"):
        return [ba["x"], ba["w"]]
    if name in ("max_pool", "avg_pool", "softmax", "log_softmax"):
        return [ba["x"]]
    if name in _BINARY or name in ("not_equal",):
        return [ba["a"], ba["b"]]
    if name in _RANDOM:
        return [ba["state"]]
    return [ba["a"]]


# -- converters: (graph, bound arguments, native output) -> ONNX output name ---------------------------
def _conv_unary(op):
    return lambda g, ba, out: g.node(op, [g.v(ba["a"])])


def _conv_binary(op):
    return lambda g, ba, out: g.node(op, [g.v(ba["a"]), g.v(ba["b"])])


def _not_equal(g, ba, out):
    return g.node("Not", [g.node("Equal", [g.v(ba["a"]), g.v(ba["b"])])])


def _isfinite(g, ba, out):
    a = ba["a"]
    name = g.v(a)
    if not g.dtype(a).is_floating:
        return g.node("Equal", [name, name])
    zero = g.const(np.zeros((), g.dtype(a).np_dtype))
    # x - x is 0 for finite x and nan for inf or nan.
    return g.node("Equal", [g.node("Sub", [name, name]), zero])


def _where(g, ba, out):
    return g.node("Where", [g.v(ba["cond"]), g.v(ba["x"]), g.v(ba["y"])])


def _cast(g, ba, out):
    return g.node("Cast", [g.v(ba["a"])], to=_onnx_type(ba["dtype"]))


def _identity(g, ba, out):
    return g.node("Identity", [g.v(ba["a"])])


def _reduce(op):
    def convert(g, ba, out):
        inputs = [g.v(ba["a"])]
        if ba["axis"] is not None:
            axes = ba["axis"] if isinstance(ba["axis"], (tuple, list)) else (ba["axis"],)
            inputs.append(g.i64(list(axes)))
        return g.node(op, inputs, keepdims=int(bool(ba["keepdims"])))
    return convert


def _all_any(op):
    def convert(g, ba, out):
        from onnx import TensorProto
        as_int = g.node("Cast", [g.v(ba["a"])], to=TensorProto.INT32)
        inputs = [as_int]
        if ba["axis"] is not None:
            axes = ba["axis"] if isinstance(ba["axis"], (tuple, list)) else (ba["axis"],)
            inputs.append(g.i64(list(axes)))
        red = g.node(op, inputs, keepdims=int(bool(ba["keepdims"])))
        return g.node("Cast", [red], to=TensorProto.BOOL)
    return convert


def _arg(op):
    return lambda g, ba, out: g.node(op, [g.v(ba["a"])], axis=int(ba["axis"]), keepdims=0)


def _reshape(g, ba, out):
    return g.node("Reshape", [g.v(ba["a"]), g.i64(list(g.shape(out)))])


def _transpose(g, ba, out):
    return g.node("Transpose", [g.v(ba["a"])], perm=[int(p) for p in ba["perm"]])


def _broadcast_to(g, ba, out):
    return g.node("Expand", [g.v(ba["a"]), g.i64(list(g.shape(out)))])


def _concat(g, ba, out):
    return g.node("Concat", [g.v(a) for a in ba["arrays"]], axis=int(ba["axis"]))


def _pad(g, ba, out):
    a = ba["a"]
    widths = [(int(lo), int(hi)) for lo, hi in ba["pad_width"]]
    pads = g.i64([lo for lo, _ in widths] + [hi for _, hi in widths])
    value = g.const(np.asarray(ba["value"]).astype(g.dtype(a).np_dtype))
    return g.node("Pad", [g.v(a), pads, value], mode="constant")


def _getitem(g, ba, out):
    a, index = ba["a"], tuple(ba["index"])
    shape = list(g.shape(a))
    arrays = [i for i in index if _is_index_array(i)]
    ints = [i for i in index if isinstance(i, (int, np.integer))]
    if arrays and (len(arrays) > 1 or ints):
        raise NotImplementedError("export: indexing with several integer arrays, or integer "
                                  "arrays mixed with ints, has no ONNX mapping yet")
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    expanded = []
    for item in index:
        if item is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - n_real))
        else:
            expanded.append(item)
    cur, axis = g.v(a), 0
    for item in expanded:
        if item is None:
            cur = g.node("Unsqueeze", [cur, g.i64([axis])])
            shape.insert(axis, 1)
            axis += 1
        elif isinstance(item, slice):
            dim = shape[axis]
            start, stop, step = item.indices(dim)
            if (start, stop, step) != (0, dim, 1):
                length = len(range(start, stop, step))
                if step < 0 and stop < 0:
                    stop = _INT64_MIN  # "before the first element" for a backward slice
                cur = g.node("Slice", [cur, g.i64([start]), g.i64([stop]), g.i64([axis]),
                                       g.i64([step])])
                shape[axis] = length
            axis += 1
        elif isinstance(item, (int, np.integer)):
            idx = int(item) + (shape[axis] if item < 0 else 0)
            cur = g.node("Gather", [cur, g.const(np.asarray(idx, np.int64))], axis=axis)
            shape.pop(axis)
        else:
            idx_shape = list(g.shape(item))
            idx_name = g.v(item)
            if g.dtype(item) is not mdt.int64:
                from onnx import TensorProto
                idx_name = g.node("Cast", [idx_name], to=TensorProto.INT64)
            cur = g.node("Gather", [cur, idx_name], axis=axis)
            shape[axis:axis + 1] = idx_shape
            axis += len(idx_shape)
    if cur == g.v(a):
        return g.node("Identity", [cur])
    return cur


def _pads(padding):
    pairs = [(int(lo), int(hi)) for lo, hi in padding]
    return [lo for lo, _ in pairs] + [hi for _, hi in pairs]


def _conv(g, ba, out):
    w = ba["w"]
    return g.node("Conv", [g.v(ba["x"]), g.v(w)], kernel_shape=list(g.shape(w)[2:]),
                  strides=[int(s) for s in ba["stride"]], pads=_pads(ba["padding"]),
                  dilations=[int(d) for d in ba["dilation"]], group=int(ba["groups"]))


def _conv_transpose(g, ba, out):
    w = ba["w"]
    return g.node("ConvTranspose", [g.v(ba["x"]), g.v(w)], kernel_shape=list(g.shape(w)[2:]),
                  strides=[int(s) for s in ba["stride"]], pads=_pads(ba["padding"]),
                  output_padding=[int(p) for p in ba["output_padding"]],
                  dilations=[int(d) for d in ba["dilation"]], group=int(ba["groups"]))


def _max_pool(g, ba, out):
    return g.node("MaxPool", [g.v(ba["x"])], kernel_shape=[int(k) for k in ba["kernel"]],
                  strides=[int(s) for s in ba["stride"]], pads=_pads(ba["padding"]))


def _avg_pool(g, ba, out):
    return g.node("AveragePool", [g.v(ba["x"])], kernel_shape=[int(k) for k in ba["kernel"]],
                  strides=[int(s) for s in ba["stride"]], pads=_pads(ba["padding"]),
                  count_include_pad=int(bool(ba["count_include_pad"])))


def _softmax(op):
    return lambda g, ba, out: g.node(op, [g.v(ba["x"])], axis=int(ba["axis"]))


_CONVERTERS = {name: _conv_unary(op) for name, op in _UNARY.items()}
_CONVERTERS.update({name: _conv_binary(op) for name, op in _BINARY.items()})
_CONVERTERS.update({name: _reduce(op) for name, op in _REDUCE.items()})
_CONVERTERS.update({
    "not_equal": _not_equal, "isfinite": _isfinite, "where": _where, "cast": _cast,
    "stop_gradient": _identity, "all": _all_any("ReduceMin"), "any": _all_any("ReduceMax"),
    "argmax": _arg("ArgMax"), "argmin": _arg("ArgMin"), "reshape": _reshape,
    "transpose": _transpose, "broadcast_to": _broadcast_to, "concat": _concat, "pad": _pad,
    "getitem": _getitem, "conv": _conv, "conv_transpose": _conv_transpose,
    "max_pool": _max_pool, "avg_pool": _avg_pool, "softmax": _softmax("Softmax"),
    "log_softmax": _softmax("LogSoftmax"),
})


class _Recorder:
    """Stands in for the active backend during export: forwards every primitive to the real
    backend and records it in the graph."""

    value_and_grad = None
    compile = None

    def __init__(self, real, graph):
        self._real = real
        self._graph = graph
        self.name = real.name
        self.capabilities = getattr(real, "capabilities", frozenset())
        self.device = getattr(real, "device", "CPU")
        for fused in FUSED_OPS:  # traced through the core's composites...
            setattr(self, fused, None)
        self.softmax = lambda x, axis: self._softmax(x, axis, False)  # ...except these two
        self.log_softmax = lambda x, axis: self._softmax(x, axis, True)

    def __getattr__(self, name):
        attr = getattr(self._real, name)
        if name in PRIMITIVE_OPS and name not in _PASSTHROUGH:
            def recorded(*args, **attrs):
                out = attr(*args, **attrs)
                self._graph.record(name, args, attrs, out)
                return out
            return recorded
        return attr

    def _softmax(self, x, axis, log):
        b = self._real
        fused = getattr(b, "log_softmax" if log else "softmax", None)
        if fused is not None:
            out = fused(x, axis=axis)
        else:
            shifted = b.sub(x, b.max(x, (axis,), True))
            e = b.exp(shifted)
            total = b.sum(e, (axis,), True)
            out = b.sub(shifted, b.log(total)) if log else b.div(e, total)
        self._graph.record("log_softmax" if log else "softmax", (x,), {"axis": axis}, out)
        return out


def _flatten_outputs(out, what="output"):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        leaves = []
        for o in out:
            leaves.extend(_flatten_outputs(o, what))
        return leaves
    raise TypeError(f"export: the network's {what} must be Tensors (or tuples of them), got "
                    f"{type(out).__name__}")


def build_onnx_model(net, *inputs):
    """Trace ``net(*inputs)`` through the op layer and return the ``onnx.ModelProto``."""
    import onnx
    from onnx import helper
    from mscore.nn.cell import Cell
    if not isinstance(net, Cell):
        raise TypeError(f"net: expected a Cell, got {type(net).__name__}")
    if not inputs:
        raise ValueError("inputs: export needs at least one example input Tensor")
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"inputs[{i}]: expected a Tensor, got {type(x).__name__}")
    real = _context.current_backend()
    params = [p for _, p in net.parameters_and_names()]
    graph = _Graph(real, params)
    graph_inputs = []
    for i, x in enumerate(inputs):
        name = f"input_{i}"
        graph.used_names.add(name)
        graph.names[id(x._data)] = name
        graph.keep.append(x._data)
        graph_inputs.append(helper.make_tensor_value_info(name, _onnx_type(x.dtype),
                                                          list(x.shape)))
    modes = [(cell, cell.training) for _, cell in net.cells_and_names()]
    old_mode = _context._context["mode"]
    recorder = _Recorder(real, graph)
    net.set_train(False)
    _context._context["mode"] = _context.PYNATIVE_MODE
    _context._active = recorder
    try:
        out = net(*inputs)
    finally:
        _context._active = real
        _context._context["mode"] = old_mode
        for cell, training in modes:
            object.__setattr__(cell, "training", training)
    leaves = _flatten_outputs(out)
    graph_outputs = []
    for i, t in enumerate(leaves):
        native = t._data
        if not graph.is_dynamic(native):
            raise ValueError(f"export: output {i} does not depend on the inputs through the op "
                             f"layer (a layer bypassed mscore's dispatch?)")
        name = f"output_{i}"
        graph.used_names.add(name)
        graph.node("Identity", [graph.v(native)], out=name)
        graph_outputs.append(helper.make_tensor_value_info(
            name, _onnx_type(real.dtype(native)), [int(s) for s in real.shape(native)]))
    onnx_graph = helper.make_graph(graph.nodes, type(net).__name__, graph_inputs, graph_outputs,
                                   initializer=graph.initializers)
    model = helper.make_model(onnx_graph, producer_name="mscore",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = _IR_VERSION
    onnx.checker.check_model(model)
    return model


def export(net, *inputs, file_name, file_format):
    """Export ``net`` run on the example ``inputs`` to ``file_name`` in ``file_format``.

    ``"ONNX"`` writes an ONNX model (opset 18; ``.onnx`` is appended to the name when
    missing) through the ``onnx`` package; ``"MINDIR"`` and ``"AIR"`` raise
    ``NotImplementedError``. The file is written atomically.
    """
    from mscore.train.serialization._atomic import atomic_write
    from mscore.train.serialization._checkpoint import _check_path
    path = _check_path(file_name, "file_name")
    if not isinstance(file_format, str):
        raise TypeError(f"file_format: expected a str, got {type(file_format).__name__}")
    if file_format not in FILE_FORMATS:
        raise ValueError(f"file_format: expected one of {FILE_FORMATS}, got {file_format!r}")
    if file_format != "ONNX":
        raise NotImplementedError(f"export: file_format {file_format!r} is not implemented in "
                                  f"mscore yet; use 'ONNX'")
    try:
        import onnx  # noqa: F401
    except ImportError as exc:
        raise ImportError("export: ONNX export needs the 'onnx' package (pip install "
                          "'mscore[onnx]')") from exc
    model = build_onnx_model(net, *inputs)
    if not path.endswith(".onnx"):
        path += ".onnx"
    if os.path.isdir(path):
        raise ValueError(f"file_name: {path!r} is a directory")
    data = model.SerializeToString()
    atomic_write(path, lambda f: f.write(data))
