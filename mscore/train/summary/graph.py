"""A network's graph for TensorBoard's Graphs tab: a GraphDef of its cells and ops.

The network runs once on example inputs with the exporters' tracer recording every op (see
:mod:`mscore.compile.trace`). Each op becomes a node named after the cells it
ran in, ``Network/dense_relu_sequential/0/dense_3``, so TensorBoard shows one box per cell
that opens onto its ops, as PyTorch's ``add_graph`` does; inputs are ``input_0, ...``,
Parameters are nodes named after the Parameter, constants are ``Const`` nodes, and every node
carries its output shape (``_output_shapes``) and dtype.
"""
from __future__ import annotations

from mscore import context as _context
from mscore.compile.trace import TraceGraph, array_args, check_net_and_inputs, trace
from mscore.train.summary.proto import summary_pb2 as pb

# mscore dtype name -> TensorFlow's DataType (what TensorBoard shows on the edges)
_TF_DTYPES = {"float16": pb.DT_HALF, "bfloat16": pb.DT_BFLOAT16, "float32": pb.DT_FLOAT,
              "float64": pb.DT_DOUBLE, "int8": pb.DT_INT8, "int16": pb.DT_INT16,
              "int32": pb.DT_INT32, "int64": pb.DT_INT64, "uint8": pb.DT_UINT8,
              "bool": pb.DT_BOOL}


# Fused ops shown as one node each (the others show the primitives they are made of).
_ONE_NODE_OPS = ("softmax", "log_softmax", "relu", "dense", "batch_norm")


class _GraphDefTrace(TraceGraph):
    """The GraphDef under construction; ``scope`` is the stack of cell names running now."""

    format_name = "summary graph"

    def __init__(self, real, params, root):
        super().__init__(real, params)
        self.graph = pb.GraphDef()
        self.scope = [root]
        self.used = set()

    def _name(self, hint):
        base = "/".join(self.scope + [hint])
        name, n = base, 1
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return name

    def add_node(self, name, op, inputs, native):
        """Append a node ``name`` running ``op`` on ``inputs`` whose value is ``native``."""
        node = self.graph.node.add(name=name, op=op, input=inputs)
        shape = node.attr["_output_shapes"].list.shape.add()
        for size in self.shape(native):
            shape.dim.add(size=size)
        tf_dtype = _TF_DTYPES.get(self.dtype(native).name)
        if tf_dtype is not None:
            node.attr["dtype"].type = tf_dtype
        return name

    def add_input(self, x, handle):
        super().add_input(x, handle)
        self.used.add(handle)
        self.add_node(handle, "Input", [], x._data)

    def v(self, x):
        key = id(x)
        if key in self.names:
            return self.names[key]
        if key in self.params:   # in the box of the cell that uses it: .../0/weight
            name = self._name(self.params[key].name.rsplit(".", 1)[-1])
            self.names[key] = self.add_node(name, "Parameter", [], x)
            return self.names[key]
        self.constant_value(x)
        self.names[key] = self.add_node(self._name("Const"), "Const", [], x)
        return self.names[key]

    def convert(self, name, ba, out):
        inputs = [self.v(a) for a in array_args(name, ba)]
        return self.add_node(self._name(name), name, inputs, out)


def network_graph(network, *inputs):
    """The serialized GraphDef of ``network(*inputs)`` (inference mode, eager): one node per
    op, nested in the cells that ran it, plus the inputs, Parameters and constants."""
    check_net_and_inputs(network, inputs)
    real = _context.current_backend()
    params = [p for _, p in network.parameters_and_names()]
    graph = _GraphDefTrace(real, params, type(network).__name__)
    for i, x in enumerate(inputs):
        graph.add_input(x, f"input_{i}")
    handles = []

    def enter(cell, args):   # hooks return None: they leave the arguments and outputs alone
        graph.scope.append(names[id(cell)])

    def leave(cell, args, output):
        graph.scope.pop()

    names = {}
    for cell_name, cell in network.cells_and_names():
        if cell is network:
            continue
        names[id(cell)] = cell_name.rsplit(".", 1)[-1]
        handles.append(cell.register_forward_pre_hook(enter))
        handles.append(cell.register_forward_hook(leave, always_call=True))
    try:
        _, leaves = trace(network, inputs, graph, fused=_ONE_NODE_OPS)
    finally:
        for handle in handles:
            handle.remove()
    for i, t in enumerate(leaves):
        graph.add_node(f"output_{i}", "Output", [graph.v(t._data)], t._data)
    return graph.graph.SerializeToString()
