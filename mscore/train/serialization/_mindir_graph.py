"""The MindIR graph under construction (``ModelProto`` of ``mind_ir.proto``), for
``_mindir_export``: values are named by their node, constants become ``Constant`` nodes (one per
distinct value), primitives are listed once per distinct attribute set, and nodes that a
rewrite left unused are dropped when the model is finished."""
from __future__ import annotations

import numpy as np

from mscore import __version__
from mscore.common import dtype as mdt
from mscore.compile.trace import TraceGraph
from mscore.nn.graph.mindir_types import DATA_TYPES
from mscore.train.proto import mind_ir_pb2 as pb

IR_VERSION = "1.1"
MIND_IR_VERSION = 3          # IR_VERSION_WITH_SCALAR_GRAPH_HOLDER, what MindSpore 2.10 writes
MODEL_VERSION = "2.10.0"     # the MindSpore release whose layout this follows

_A = pb.AttributeProto
PRIMITIVE = pb.PrimitiveProto.PRIMITIVE
FUNCTION = pb.PrimitiveProto.PRIMITIVE_FUNCTION


def _raw_bytes(array):
    array = np.ascontiguousarray(array)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array.tobytes()


def check_data_type(dtype, what):
    """The TensorProto data type of ``dtype`` (``NotImplementedError`` naming ``what``)."""
    try:
        return DATA_TYPES[dtype]
    except KeyError:
        raise NotImplementedError(f"export: {what} has dtype {dtype}, which MINDIR export does "
                                  f"not support") from None


def _set_value(attr, value):
    """Fill AttributeProto ``attr`` with a Python constant, as MindSpore encodes it."""
    if value is None:
        attr.type = _A.NONE
    elif isinstance(value, (bool, np.bool_)):
        attr.type, attr.i = _A.BOOL, int(value)
    elif isinstance(value, (int, np.integer)):
        attr.type, attr.i = _A.INT64, int(value)
    elif isinstance(value, (float, np.floating)):
        attr.type, attr.f = _A.FLOAT, float(value)
    elif isinstance(value, str):
        attr.type, attr.s = _A.STRING, value.encode()
    elif isinstance(value, tuple):
        attr.type = _A.TUPLE
        for item in value:  # a tuple element is an attribute with one entry in ``ints``
            elem = attr.values.add()
            elem.type = _A.INT64
            elem.ints.append(int(item))
    elif isinstance(value, list):  # input_names/output_names: a LIST of STRING elements
        attr.type = _A.LIST
        for item in value:
            elem = attr.values.add()
            elem.type = _A.STRING
            elem.strings.append(item.encode())
    else:
        raise TypeError(f"export: no MINDIR encoding for {type(value).__name__}")


def _tensor_info(tensor, shape, dtype):
    tensor.dims.extend(int(s) for s in shape)
    tensor.data_type = check_data_type(dtype, "a value")


class MindIRGraph(TraceGraph):
    """The MindIR graph under construction; a value's handle is its node name."""

    format_name = "MINDIR"

    def __init__(self, real, params, graph_name, converters):
        super().__init__(real, params)
        self.converters = converters  # traced op name -> fn(graph, bound args, native out)
        self.model = pb.ModelProto()
        self.graph_name = graph_name
        self.nodes = []            # NodeProto, in creation order (a topological order)
        self.parameters = []       # TensorProto, in order of first use
        self.meta = {}             # handle -> (shape, dtype) of the value
        self.reshaped = {}         # handle of a Reshape -> handle of its operand
        self.const_names = {}      # id(native) or constant key -> Constant node name
        self.primitives = {}       # primitive key -> PrimitiveProto
        self.counter = 0

    # -- names, constants, parameters ----------------------------------------------------------
    def fresh(self):
        self.counter += 1
        return self.counter

    def v(self, x):
        key = id(x)
        if key in self.names:
            return self.names[key]
        if key in self.params:
            p = self.params[key]
            name = f"{self.graph_name}:{p.name}"
            value = np.asarray(self.real.to_numpy(x))
            tensor = pb.TensorProto()
            _tensor_info(tensor, value.shape, p.dtype)
            tensor.name = name
            tensor.raw_data = _raw_bytes(value)
            tensor.ref_key = p.name
            tensor.compression_type = pb.TensorProto.NO_COMPRESSION
            self.parameters.append(tensor)
            self.names[key] = name
            self.meta[name] = (value.shape, p.dtype)
            return name
        if key not in self.const_names:
            self.const_names[key] = self.tensor_const(self.constant_value(x))
        return self.const_names[key]

    def _constant_node(self, fill):
        name = f"ValueNode_{self.fresh()}"
        node = pb.NodeProto()
        node.output.append(name)
        node.name = name
        node.op_type = "Constant"
        attr = node.attribute.add()
        attr.name = "value"
        fill(attr)
        self.nodes.append(node)
        return name

    def tensor_const(self, value):
        """A Constant node holding the numpy array ``value`` (one tensor, raw bytes); equal
        arrays share one node, so the graph does not depend on a backend's caching."""
        value = np.asarray(value)
        dtype = mdt.from_numpy_dtype(value.dtype)
        key = ("tensor", str(dtype), value.shape, _raw_bytes(value))
        if key in self.const_names:
            return self.const_names[key]

        def fill(attr):
            attr.type = _A.TENSORS
            tensor = attr.tensors.add()
            _tensor_info(tensor, value.shape, dtype)
            tensor.name = "value0"
            tensor.raw_data = _raw_bytes(value)
        name = self._constant_node(fill)
        self.meta[name] = (value.shape, dtype)
        self.const_names[key] = name
        return name

    def const(self, value):
        """A Constant node for a Python scalar, tuple of ints or None (shared by equal ones)."""
        key = (type(value).__name__, value)
        if key not in self.const_names:
            self.const_names[key] = self._constant_node(lambda attr: _set_value(attr, value))
        return self.const_names[key]

    # -- nodes ---------------------------------------------------------------------------------
    def primitive(self, op, prim_type=FUNCTION, instance="", attrs=()):
        """The name of the PrimitiveProto for ``op`` with ``attrs`` (one per distinct set)."""
        prim = pb.PrimitiveProto()
        prim.op_type = op
        for attr_name, value in attrs:
            attr = prim.attribute.add()
            attr.name = attr_name
            _set_value(attr, value)
        prim.instance_name = instance
        prim.prim_type = prim_type
        key = prim.SerializeToString(deterministic=True)
        if key not in self.primitives:
            prim.name = f"{op}:{self.fresh()}"
            self.primitives[key] = prim
        return self.primitives[key].name

    def node(self, op, inputs, shape, dtype, **prim):
        """A node calling primitive ``op`` on the values named ``inputs``; ``shape``/``dtype``
        annotate its output (``shape`` may be a list of (shape, dtype) pairs: a tuple)."""
        name = f"{self.graph_name}:CNode_{self.fresh()}"
        node = pb.NodeProto()
        node.input.extend(inputs)
        node.output.append(name)
        node.name = name
        node.op_type = "REF::" + self.primitive(op, **prim)
        attr = node.attribute.add()
        attr.name = "shape"
        if dtype is None:  # a tuple of tensors
            attr.type = _A.TUPLE
            for s, d in shape:
                elem = attr.values.add()
                elem.type = _A.TENSORS
                _tensor_info(elem.tensors.add(), s, d)
            attr.seq_info.is_dyn_len = False
        else:
            attr.type = _A.TENSORS
            _tensor_info(attr.tensors.add(), shape, dtype)
            self.meta[name] = (tuple(shape), dtype)
        self.nodes.append(node)
        return name

    def like(self, op, inputs, out, **prim):
        """A node whose output has the shape and dtype of native ``out``."""
        return self.node(op, inputs, self.shape(out), self.dtype(out), **prim)

    def reshape(self, handle, shape):
        """``handle`` reshaped to the static ``shape``."""
        _, dtype = self.meta[handle]
        out = self.node("Reshape", [handle, self.const(tuple(shape))], shape, dtype,
                        instance="reshape")
        self.reshaped[out] = handle
        return out

    def convert(self, name, ba, out):
        converter = self.converters.get(name)
        if converter is None:
            raise NotImplementedError(f"export: primitive {name!r} has no MINDIR mapping yet")
        return converter(self, ba, out)

    # -- the model -----------------------------------------------------------------------------
    def finish(self, input_specs, outputs):
        """Fill and return the ModelProto: ``input_specs`` are (name, shape, dtype), ``outputs``
        the output handles."""
        model = self.model
        model.ir_version = IR_VERSION
        model.producer_name = "mscore"
        model.producer_version = __version__
        model.model_version = MODEL_VERSION
        graph = model.graph
        if len(outputs) == 1:
            result = outputs[0]
        else:
            result = self.node("MakeTuple", list(outputs), [self.meta[o] for o in outputs],
                               None, prim_type=PRIMITIVE)
        live = self._live([result])
        graph.node.extend(n for n in self.nodes if n.output[0] in live)
        graph.name = self.graph_name
        graph.parameter.extend(p for p in self.parameters if p.name in live)
        for name, shape, dtype in input_specs:
            info = graph.input.add()
            info.name = name
            _tensor_info(info.tensor.add(), shape, dtype)
        info = graph.output.add()
        info.name = result
        if len(outputs) == 1:
            _tensor_info(info.tensor.add(), *self.meta[result])
        else:
            info.denotation = "Tuple"
            info.attr_info.type = _A.TUPLE
            for o in outputs:
                elem = info.attr_info.values.add()
                elem.type = _A.TENSORS
                _tensor_info(elem.tensors.add(), *self.meta[o])
            info.attr_info.seq_info.is_dyn_len = False
        model.little_endian = True
        used = {n.op_type[len("REF::"):] for n in graph.node}
        model.primitives.extend(p for p in self.primitives.values() if p.name in used)
        model.mind_ir_version = MIND_IR_VERSION
        return model

    def _live(self, results):
        """The names the results depend on (nodes left dead by a rewrite are dropped)."""
        producers = {n.output[0]: n for n in self.nodes}
        live, stack = set(), list(results)
        while stack:
            name = stack.pop()
            if name in live:
                continue
            live.add(name)
            node = producers.get(name)
            if node is not None:
                stack.extend(node.input)
        return live
