"""``export``: write a network as ONNX or MINDIR, traced through the op layer on any backend.

The tracing is shared (:mod:`mscore.compile.trace`): values that depend on an input or a Parameter
become graph nodes, everything else is folded to a constant, Parameters become initializers under
their ``Parameter.name``, and shapes are those of the example inputs (static shapes).

ONNX: fused ``softmax``/``log_softmax`` become ONNX ``Softmax``/``LogSoftmax``; the other fused
ops are traced through the core's composites (so BatchNorm is arithmetic, ReLU a ``Where``).
MINDIR is written by ``_mindir_export``; ``AIR`` is not implemented.
"""
from __future__ import annotations

import io
import os
import warnings

import numpy as np

from mscore import context as _context
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.compile.trace import TraceGraph, check_net_and_inputs, is_index_array, trace
from mscore.train.serialization import _crypto
from mscore.train.serialization._atomic import atomic_write
from mscore.train.serialization._checkpoint import _check_path
from mscore.train.serialization._mindir_export import build_mindir_model
from mscore.train.serialization._onnx_batch import with_dynamic_batch

OPSET = 18
_IR_VERSION = 8
_INT64_MIN = -(2 ** 63)
FILE_FORMATS = ("AIR", "ONNX", "MINDIR")

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


class _OnnxGraph(TraceGraph):
    """The ONNX graph under construction."""

    format_name = "ONNX"

    def __init__(self, real, params):
        from onnx import helper
        super().__init__(real, params)
        self.helper = helper
        self.const_names = {}   # id(native) -> initializer name
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
            self.const_names[key] = self.const(self.constant_value(x))
        return self.const_names[key]

    def node(self, op_type, inputs, out=None, **attrs):
        out = out or self.fresh(op_type.lower())
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [out],
                                                name=self.fresh("node"), **attrs))
        return out

    def i64(self, values):
        return self.const(np.asarray(values, dtype=np.int64), "shape")

    def convert(self, name, ba, out):
        converter = _CONVERTERS.get(name)
        if converter is None:
            raise NotImplementedError(f"export: primitive {name!r} has no ONNX mapping yet")
        return converter(self, ba, out)


# -- converters: (graph, bound arguments, native output) -> ONNX output name -----------------------
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
    arrays = [i for i in index if is_index_array(i)]
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


def build_onnx_model(net, *inputs, dynamic_batch=False):
    """Trace ``net(*inputs)`` through the op layer and return the ``onnx.ModelProto``; with
    ``dynamic_batch`` the leading axis of the inputs and outputs is ``"batch"`` (see
    :mod:`~mscore.train.serialization._onnx_batch`)."""
    import onnx
    check_net_and_inputs(net, inputs)
    model = _traced_onnx_model(net, inputs)
    if dynamic_batch and all(len(x.shape) for x in inputs):
        batch = inputs[0].shape[0]
        if all(x.shape[0] == batch for x in inputs):
            one_more = [Tensor(np.concatenate([x.asnumpy(), x.asnumpy()[:1]]), x.dtype)
                        for x in inputs]
            model_b = _trace_at_another_batch(net, one_more, batch)
            if model_b is not None:
                model = with_dynamic_batch(model, model_b, batch)
    onnx.checker.check_model(model)
    return model


def _trace_at_another_batch(net, inputs, batch):
    """The ONNX model of ``net(*inputs)`` (inputs one row longer than the example's), or None
    with a warning when the network does not run at that batch size: the batch axis is then
    left at the example's size, the export still succeeds."""
    try:
        return _traced_onnx_model(net, inputs)
    except Exception as exc:  # any failure of the user's network at another batch size
        first = str(exc).splitlines()[0] if str(exc) else ""
        warnings.warn(f"export: the network does not run at batch {batch + 1} "
                      f"({type(exc).__name__}: {first}); it is exported for batch {batch} "
                      f"only", RuntimeWarning, stacklevel=5)
        return None


def _traced_onnx_model(net, inputs):
    """The ONNX model of one trace of ``net(*inputs)`` (static shapes)."""
    from onnx import helper
    real = _context.current_backend()
    params = [p for _, p in net.parameters_and_names()]
    graph = _OnnxGraph(real, params)
    graph_inputs = []
    for i, x in enumerate(inputs):
        name = f"input_{i}"
        graph.used_names.add(name)
        graph.add_input(x, name)
        graph_inputs.append(helper.make_tensor_value_info(name, _onnx_type(x.dtype),
                                                          list(x.shape)))
    _, leaves = trace(net, inputs, graph)
    graph_outputs = []
    for i, t in enumerate(leaves):
        native = t._data
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
    return model


def _onnx_bytes(net, inputs, dynamic_batch=True):
    try:
        import onnx  # noqa: F401
    except ImportError as exc:
        raise ImportError("export: ONNX export needs the 'onnx' package (pip install "
                          "'mscore[onnx]')") from exc
    return build_onnx_model(net, *inputs, dynamic_batch=dynamic_batch).SerializeToString()


def _mindir_bytes(net, inputs, custom_func=None):
    model = build_mindir_model(net, *inputs)
    if custom_func is not None:
        custom_func(model)   # edits the ModelProto in place (producer_name, user_info, ...)
    return model.SerializeToString(deterministic=True)


_WRITERS = {"ONNX": (".onnx", _onnx_bytes), "MINDIR": (".mindir", _mindir_bytes)}


def export(net, *inputs, file_name, file_format, **kwargs):
    """Export ``net`` run on the example ``inputs`` to ``file_name`` in ``file_format``.

    ``"ONNX"`` writes an ONNX model (opset 18) through the ``onnx`` package, whose leading
    input and output axis is the symbolic ``"batch"`` (any batch size runs) unless
    ``dynamic_batch=False`` (an option of mscore's) keeps the example's; ``"MINDIR"``
    writes a MindIR model that MindSpore's ``load`` and ``nn.GraphCell`` run (and
    :func:`mscore.load` reads back). The format's suffix (``.onnx``, ``.mindir``) is appended
    to ``file_name`` when missing. ``"AIR"`` (Ascend only) raises ``NotImplementedError``, as
    do MindSpore's options ``dataset`` and ``obf_config`` (and ``enc_key`` of ONNX);
    ``enc_key``/``enc_mode`` encrypt a MINDIR file as MindSpore does ('AES-GCM', 'AES-CBC',
    'SM4-CBC' or a function ``enc_mode(data, enc_key)``); ``custom_func``
    (MINDIR) is called with the MindIR ``ModelProto`` before it is written, to edit it
    (``producer_name``, ``user_info``, ...). The file is written atomically.
    """
    path = _check_path(file_name, "file_name")
    if not isinstance(file_format, str):
        raise TypeError(f"file_format: expected a str, got {type(file_format).__name__}")
    if file_format not in FILE_FORMATS:
        raise ValueError(f"file_format: expected one of {FILE_FORMATS}, got {file_format!r}")
    if file_format not in _WRITERS:
        raise NotImplementedError(f"export: file_format {file_format!r} is not implemented in "
                                  f"mscore (it needs Ascend's graph engine); use 'MINDIR' or "
                                  f"'ONNX'")
    dynamic_batch = kwargs.pop("dynamic_batch", True)
    if not isinstance(dynamic_batch, bool):
        raise TypeError(f"dynamic_batch: expected a bool, got {type(dynamic_batch).__name__}")
    if file_format != "ONNX" and not dynamic_batch:
        raise ValueError(f"dynamic_batch: an option of ONNX export, not of {file_format}")
    custom_func = kwargs.pop("custom_func", None) if file_format == "MINDIR" else None
    if custom_func is not None and not callable(custom_func):
        raise TypeError(f"custom_func: expected a callable, got {type(custom_func).__name__}")
    encrypt = _mindir_encryption(kwargs) if file_format == "MINDIR" else None
    _check_export_options(file_format, kwargs)
    suffix, writer = _WRITERS[file_format]
    data = writer(net, inputs, dynamic_batch) if file_format == "ONNX" else \
        writer(net, inputs, custom_func)
    if encrypt is not None:
        data = encrypt(data)
    if not path.endswith(suffix):
        path += suffix
    if os.path.isdir(path):
        raise ValueError(f"file_name: {path!r} is a directory")
    atomic_write(path, lambda f: f.write(data))


def _mindir_encryption(kwargs):
    """The function encrypting a MINDIR file's bytes for the ``enc_key``/``enc_mode`` that
    ``kwargs`` holds (taken out of it), or None without ``enc_key``. MindSpore's checks and
    words; a str mode is MindSpore's block layout (:mod:`._crypto`, the checkpoints' layout),
    a callable one is called as ``enc_mode(data, enc_key)``."""
    if "enc_key" not in kwargs:
        kwargs.pop("enc_mode", None)
        return None
    key = kwargs.pop("enc_key")
    if not isinstance(key, bytes):
        raise ValueError(f"The parameter 'enc_key' must be isinstance of {bytes}, but got "
                         f"{key}.")
    mode = kwargs.pop("enc_mode", "AES-GCM")
    if callable(mode):
        return lambda data: mode(data, key)
    if not isinstance(mode, str):
        raise ValueError(f"The parameter 'enc_mode' must be isinstance of {str}, but got "
                         f"{mode}.")
    if mode not in _crypto.MODES:
        raise ValueError(f"MindIR only support AES-GCM/AES-CBC/SM4-CBC encryption, but got "
                         f"{mode}")
    _crypto.check_key_and_mode(key, mode, "enc_key", "enc_mode", "export")

    def encrypt(data):
        out = io.BytesIO()
        writer = _crypto.EncryptingWriter(out, key, mode)
        writer.write(data)
        writer.close()
        return out.getvalue()
    return encrypt


# MindSpore's export options that mscore does not implement (each raises, naming itself).
_UNSUPPORTED_OPTIONS = ("enc_key", "enc_mode", "dataset", "obf_config", "custom_func",
                        "incremental")


def _check_export_options(file_format, kwargs):
    for key, value in kwargs.items():
        if key not in _UNSUPPORTED_OPTIONS:
            raise TypeError(f"export() got an unexpected keyword argument {key!r}")
        if key == "enc_mode":  # only read together with enc_key
            continue
        if value is not None and value is not False:
            raise NotImplementedError(f"export: the option {key!r} is not implemented in "
                                      f"mscore ({file_format})")
