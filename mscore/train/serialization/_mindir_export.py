"""MINDIR export: a network traced through the op layer, written as MindSpore's MindIR.

The file is one serialized ``ModelProto`` of ``mind_ir.proto`` laid out as MindSpore 2.10
writes it (``mind_ir_version`` 3): one graph whose nodes call primitives by reference
(``op_type "REF::MatMul:3"`` names a ``PrimitiveProto`` listed in ``ModelProto.primitives``),
operands that MindSpore 2.10 takes as inputs (``MatMul``'s transpose flags, ``Cast``'s type id,
``Reshape``'s shape) passed as ``Constant`` nodes, Parameters as ``GraphProto.parameter``
tensors named ``"<graph>:<name>"`` with ``ref_key`` the Parameter's name, and a ``shape``
annotation (dims and data type) on every node.

Fused ops are recorded whole, so the layers become MindSpore's own primitives: ``nn.Dense`` is
``MatMul`` (transpose_b) and ``BiasAdd``, ``nn.ReLU`` is ``ReLU``, ``nn.BatchNorm*`` in
inference is ``BatchNorm`` and ``TupleGetItem``, ``nn.Conv2d`` is ``Conv2D`` (and ``BiasAdd``),
``nn.MaxPool2d`` is ``MaxPool``, ``nn.Flatten`` is ``Flatten``; amp's casts are ``Cast``. The
other primitives map one to one (``add`` -> ``Add``, ``where`` -> ``Select``, ...). What
MindSpore adds for side effects (``Load``/``UpdateState``/``Depend``) is left out: an
inference graph has none, and MindSpore loads the file without them.

:func:`build_mindir_model` returns the ``ModelProto``; :func:`export_mindir` writes it (the
entry point for other exporters, such as quantization's).
"""
from __future__ import annotations

import inspect
import math
import os

from mscore import context as _context
from mscore.compile.trace import check_net_and_inputs, trace
from mscore.nn.graph.mindir_types import FORMAT_NCHW, PAD_MODES, TYPE_IDS, same_pad_pairs
from mscore.train.serialization._atomic import atomic_write
from mscore.train.serialization._checkpoint import _check_path
from mscore.train.serialization._mindir_graph import PRIMITIVE, MindIRGraph, check_data_type


# -- converters: (graph, bound arguments, native output) -> handle --------------------------------
def _unary(op):
    return lambda g, ba, out: g.like(op, [g.v(ba["a"])], out)


def _binary(op):
    return lambda g, ba, out: g.like(op, [g.v(ba["a"]), g.v(ba["b"])], out)


def _add(g, ba, out):
    """``Add``, or ``BiasAdd`` for a convolution's bias (a 1-d value reshaped to
    (1, C, 1, ...) and added to an (N, C, ...) value), as MindSpore's layers write it."""
    a, b = ba["a"], ba["b"]
    ha, hb = g.v(a), g.v(b)
    source = g.reshaped.get(hb)
    shape = g.shape(a)
    if (source is not None and len(g.meta[source][0]) == 1 and len(shape) >= 2
            and g.shape(b) == (1, shape[1]) + (1,) * (len(shape) - 2)
            and g.dtype(a) is g.dtype(b) and g.shape(out) == shape):
        return g.like("BiasAdd", [ha, source, g.const(FORMAT_NCHW)], out, instance="bias_add")
    return g.like("Add", [ha, hb], out)


def _broadcast(g, x, shape):
    """The handle of native ``x`` broadcast to ``shape`` (unchanged when it has it)."""
    handle = g.v(x)
    if g.shape(x) == tuple(shape):
        return handle
    return g.node("BroadcastTo", [handle, g.const(tuple(shape))], shape, g.dtype(x))


def _where(g, ba, out):
    shape = g.shape(out)
    inputs = [_broadcast(g, ba[k], shape) for k in ("cond", "x", "y")]
    return g.like("Select", inputs, out)


def _cast(g, ba, out):
    return g.like("Cast", [g.v(ba["a"]), g.const(TYPE_IDS[ba["dtype"]])], out,
                  attrs=(("output_names", ["output"]), ("input_names", ["x", "dst_type"])))


def _stop_gradient(g, ba, out):
    return g.v(ba["a"])  # an inference graph has no gradient to stop


def _axes(g, a, axis):
    if axis is None:
        return tuple(range(len(g.shape(a))))
    return tuple(int(x) for x in (axis if isinstance(axis, (tuple, list)) else (axis,)))


def _reduce(op, extra=()):
    def convert(g, ba, out):
        a = ba["a"]
        inputs = [g.v(a), g.const(_axes(g, a, ba["axis"])), g.const(bool(ba["keepdims"]))]
        return g.like(op, inputs + [g.const(e) for e in extra], out)
    return convert


def _arg(op):
    return lambda g, ba, out: g.like(op, [g.v(ba["a"]), g.const(int(ba["axis"])),
                                          g.const(TYPE_IDS[g.dtype(out)])], out)


def _reshape(g, ba, out):
    a = ba["a"]
    src, dst = g.shape(a), g.shape(out)
    handle = g.v(a)
    if len(src) > 2 and dst == (src[0], math.prod(src[1:])):
        flat = g.like("Flatten", [handle], out)
        g.reshaped[flat] = handle
        return flat
    return g.reshape(handle, dst)


def _transpose(g, ba, out):
    return g.like("Transpose", [g.v(ba["a"]), g.const(tuple(int(p) for p in ba["perm"]))],
                  out)


def _broadcast_to(g, ba, out):
    return _broadcast(g, ba["a"], g.shape(out))


def _concat(g, ba, out):
    arrays = ba["arrays"]
    pack = g.node("MakeTuple", [g.v(a) for a in arrays],
                  [(g.shape(a), g.dtype(a)) for a in arrays], None, prim_type=PRIMITIVE)
    return g.like("Concat", [pack, g.const(int(ba["axis"]))], out)


def _matmul(g, ba, out):
    a, b = ba["a"], ba["b"]
    no = g.const(False)
    if len(g.shape(a)) == 2 and len(g.shape(b)) == 2:
        return g.like("MatMul", [g.v(a), g.v(b), no, no], out, instance="matmul")
    return g.like("MatMulExt", [g.v(a), g.v(b)], out)


def _dense(g, ba, out):
    """``x @ w.T + b`` as MindSpore's nn.Dense writes it: MatMul(transpose_b) and BiasAdd,
    over the input flattened to 2-d."""
    x, w, b = ba["x"], ba["w"], ba["b"]
    shape, dtype = g.shape(x), g.dtype(out)
    rows = math.prod(shape[:-1])
    flat = (rows, shape[-1])
    handle = g.v(x)
    if shape != flat:
        handle = g.reshape(handle, flat)
    mm_shape = (rows, g.shape(w)[0])
    handle = g.node("MatMul", [handle, g.v(w), g.const(False), g.const(True)], mm_shape, dtype,
                    instance="matmul")
    if b is not None:
        handle = g.node("BiasAdd", [handle, g.v(b), g.const(FORMAT_NCHW)], mm_shape, dtype,
                        instance="bias_add")
    if g.shape(out) != mm_shape:
        handle = g.reshape(handle, g.shape(out))
    return handle


def _batch_norm(g, ba, out):
    """Inference BatchNorm as MindSpore writes it: BatchNorm on a 4-d value (2-d and 3-d inputs
    are reshaped, as MindSpore's BatchNorm1d does), then TupleGetItem 0."""
    x = ba["x"]
    shape, dtype = g.shape(x), g.dtype(x)
    operands = [ba[k] for k in ("weight", "bias", "running_mean", "running_var")]
    if any(o is None for o in operands):
        raise NotImplementedError("export: MINDIR export needs BatchNorm's gamma, beta and "
                                  "moving statistics")
    if len(shape) not in (2, 3, 4):
        raise NotImplementedError(f"export: MINDIR export of BatchNorm over a {len(shape)}-d "
                                  f"input is not supported")
    shape4 = shape + (1,) * (4 - len(shape))
    handle = g.v(x)
    if shape4 != shape:
        handle = g.reshape(handle, shape4)
    stats = [(g.shape(o), g.dtype(o)) for o in operands]
    bn = g.node("BatchNorm", [handle] + [g.v(o) for o in operands]
                + [g.const(False), g.const(float(ba["eps"])), g.const(float(ba["momentum"])),
                   g.const(FORMAT_NCHW)],
                [(shape4, dtype)] + stats, None, instance="bn_infer")
    handle = g.node("TupleGetItem", [bn, g.const(0)], shape4, dtype, prim_type=PRIMITIVE)
    if shape4 != shape:
        handle = g.reshape(handle, shape)
    return handle


def _flat_pads(padding):
    return tuple(int(p) for pair in padding for p in pair)


def _check_2d(g, x, what):
    if len(g.shape(x)) != 4:
        raise NotImplementedError(f"export: MINDIR export supports 2-d {what} only (an "
                                  f"(N, C, H, W) input), got shape {g.shape(x)}")


def _conv(g, ba, out):
    x, w = ba["x"], ba["w"]
    _check_2d(g, x, "convolutions")
    pads = _flat_pads(ba["padding"])
    stride = tuple(int(s) for s in ba["stride"])
    dilation = tuple(int(d) for d in ba["dilation"])
    groups = int(ba["groups"])
    out_channel, _, kh, kw = g.shape(w)
    attrs = (("kernel_size", (kh, kw)), ("mode", 1), ("out_channel", out_channel),
             ("input_names", ["x", "w"]), ("pad", pads),
             ("pad_mode", "pad" if any(pads) else "valid"), ("format", "NCHW"),
             ("pad_list", pads), ("groups", groups), ("stride", (1, 1) + stride),
             ("group", groups), ("dilation", (1, 1) + dilation),
             ("output_names", ["output"]))
    return g.like("Conv2D", [g.v(x), g.v(w)], out, prim_type=PRIMITIVE, instance="conv2d",
                  attrs=attrs)


def _pool_mode(g, ba, what, same_ok=True):
    x = ba["x"]
    _check_2d(g, x, what)
    kernel = tuple(int(k) for k in ba["kernel"])
    stride = tuple(int(s) for s in ba["stride"])
    padding = tuple((int(lo), int(hi)) for lo, hi in ba["padding"])
    if not any(_flat_pads(padding)):
        return kernel, stride, "VALID"
    if same_ok and padding == same_pad_pairs(g.shape(x)[2:], kernel, stride):
        return kernel, stride, "SAME"
    raise NotImplementedError(f"export: MINDIR export of {what} with padding {padding} is not "
                              f"supported (only pad_mode 'valid' and 'same')")


def _max_pool(g, ba, out):
    kernel, stride, mode = _pool_mode(g, ba, "max pooling")
    attrs = (("pad_mode", mode), ("output_names", ["output"]), ("kernel_size", (1, 1) + kernel),
             ("format", "NCHW"), ("strides", (1, 1) + stride), ("input_names", ["x"]))
    return g.like("MaxPool", [g.v(ba["x"])], out, prim_type=PRIMITIVE, instance="max_pool",
                  attrs=attrs)


def _avg_pool(g, ba, out):
    # MindSpore's SAME average excludes the padding: only that case maps.
    kernel, stride, mode = _pool_mode(g, ba, "average pooling",
                                      same_ok=not ba["count_include_pad"])
    inputs = [g.v(ba["x"]), g.const(kernel), g.const(stride), g.const(PAD_MODES[mode]),
              g.const(FORMAT_NCHW)]
    return g.like("AvgPool", inputs, out, instance="avg_pool")


def _softmax(g, ba, out):
    return g.like("Softmax", [g.v(ba["x"]), g.const((int(ba["axis"]),))], out,
                  instance="softmax")


def _log_softmax(g, ba, out):
    return g.like("LogSoftmax", [g.v(ba["x"]), g.const(int(ba["axis"]))], out,
                  instance="log_softmax")


def _relu(g, ba, out):
    return g.like("ReLU", [g.v(ba["x"])], out, instance="relu")


_UNARY = {"neg": "Neg", "abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin",
          "cos": "Cos", "tanh": "Tanh", "erf": "Erf", "sign": "Sign", "floor": "Floor",
          "ceil": "Ceil", "logical_not": "LogicalNot", "isfinite": "IsFinite"}
_BINARY = {"sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Maximum",
           "minimum": "Minimum", "equal": "Equal", "not_equal": "NotEqual", "less": "Less",
           "less_equal": "LessEqual", "greater": "Greater", "greater_equal": "GreaterEqual",
           "logical_and": "LogicalAnd", "logical_or": "LogicalOr"}

_CONVERTERS = {name: _unary(op) for name, op in _UNARY.items()}
_CONVERTERS.update({name: _binary(op) for name, op in _BINARY.items()})
_CONVERTERS.update({
    "add": _add, "where": _where, "cast": _cast, "stop_gradient": _stop_gradient,
    "sum": _reduce("ReduceSum", (False,)), "max": _reduce("ReduceMax"),
    "min": _reduce("ReduceMin"), "all": _reduce("ReduceAll"), "any": _reduce("ReduceAny"),
    "argmax": _arg("Argmax"), "argmin": _arg("Argmin"), "reshape": _reshape,
    "transpose": _transpose, "broadcast_to": _broadcast_to, "concat": _concat,
    "matmul": _matmul, "conv": _conv, "max_pool": _max_pool, "avg_pool": _avg_pool,
    "softmax": _softmax, "log_softmax": _log_softmax, "relu": _relu, "dense": _dense,
    "batch_norm": _batch_norm,
})

# The fused ops recorded whole (the others run as the core's composites).
FUSED = ("softmax", "log_softmax", "relu", "dense", "batch_norm")


def _input_names(net, count):
    """The construct's parameter names (MindSpore names the graph inputs after them)."""
    try:
        params = list(inspect.signature(net.construct).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:count]
    return names + [f"args{i}" for i in range(len(names), count)]


def build_mindir_model(net, *inputs):
    """Trace ``net(*inputs)`` through the op layer (inference mode) and return the MindIR
    ``ModelProto`` (of mscore's generated ``mind_ir_pb2``)."""
    check_net_and_inputs(net, inputs)
    real = _context.current_backend()
    params = [p for _, p in net.parameters_and_names()]
    graph_name = f"{type(net).__name__}_construct"
    graph = MindIRGraph(real, params, graph_name, _CONVERTERS)
    specs = []
    taken = {p.name for p in params}
    for name, x in zip(_input_names(net, len(inputs)), inputs):
        while name in taken:  # a Parameter's value has this name: the input takes another
            name += "_input"
        taken.add(name)
        handle = f"{graph_name}:{name}"
        check_data_type(x.dtype, f"input {name!r}")
        graph.add_input(x, handle)
        graph.meta[handle] = (tuple(x.shape), x.dtype)
        specs.append((handle, tuple(x.shape), x.dtype))
    _, leaves = trace(net, inputs, graph, fused=FUSED)
    outputs = [graph.v(t._data) for t in leaves]
    return graph.finish(specs, outputs)


def export_mindir(net, *inputs, file_name):
    """Write ``net`` traced on ``inputs`` as a MindIR file; ``.mindir`` is appended to
    ``file_name`` when missing (as MindSpore does). Atomic. Returns the path written."""
    path = _check_path(file_name, "file_name")
    data = build_mindir_model(net, *inputs).SerializeToString(deterministic=True)
    if not path.endswith(".mindir"):
        path += ".mindir"
    if os.path.isdir(path):
        raise ValueError(f"file_name: {path!r} is a directory")
    atomic_write(path, lambda f: f.write(data))
    return path
