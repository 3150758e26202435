"""Which BatchNorm layers less-BN removes: MindSpore 2.10's less-BN graph pass, on mscore's
trace of the network.

The network runs once in inference mode through the exporters' tracer
(:mod:`mscore.compile.trace`), with zeros for its inputs and parameters (only
the structure matters), and every op becomes a node named as MindSpore's graph names it:
``Conv2D``, ``BatchNorm`` followed by ``TupleGetItem``, ``ReLU``, ``ReLU6``, ``Add``,
``BiasAdd`` (a layer's bias), ``MaxPool``, ``Concat`` over a ``MakeTuple``, ``ReduceMean``,
``MatMul``, ``Load`` for a parameter operand, and the op's own name otherwise.

The pass, as MindSpore 2.10 runs it: every node, from the graph's output towards its inputs,
is tried against sixteen block shapes in order (ResNet bottleneck and basic blocks,
MobileNetV2's inverted residuals, DenseNet's layers). A shape is one or two *branches*, each
a count of nodes and a repeating list of primitives; the node's operands are walked in turn,
each walk following first inputs, and one match state runs through all of them, so a branch
that ends early leaves the next operand to go on from where it stopped. A ``TupleGetItem``
position matches any node. BatchNorm and TupleGetItem nodes met at a branch's removal
positions are collected; when the whole shape matched, those BatchNorms leave the graph (their
consumers read the BatchNorm's input) before the next node is tried.
"""
from __future__ import annotations

import contextlib

import numpy as np

from mscore import context as _context
from mscore import dispatch
from mscore._state import process as _process
from mscore._state import thread as _thread
from mscore.common.tensor import Tensor
from mscore.compile.trace import TraceGraph, array_args, trace
from mscore.dispatch import call
from mscore.nn.layer.normalization import _BatchNorm

FUSED = ("softmax", "log_softmax", "relu", "dense", "batch_norm")
_NONE = (2 ** 63, 2 ** 63)           # a branch that removes nothing

GET, BN, CONV, RELU, RELU6, ADD = ("TupleGetItem", "BatchNorm", "Conv2D", "ReLU", "ReLU6",
                                   "Add")
MAXPOOL, CONCAT, MEAN = "MaxPool", "Concat", "ReduceMean"

# (node count, primitives repeated along the branch, (first, last) removal position), per
# branch; positions count from the first node of the first branch.
PATTERNS = (
    # ResNet bottleneck, projection shortcut (conv + BN)
    ((12, (GET, BN, CONV, RELU), (4, 11)), (3, (GET, BN, CONV), (12, 14))),
    # ResNet bottleneck, identity shortcut
    ((12, (GET, BN, CONV, RELU), (4, 11)), (1, (RELU,), (12, 2))),
    # ResNet bottleneck whose input is not a ReLU (after the stem's pooling)
    ((11, (GET, BN, CONV, RELU, GET, BN, CONV, RELU, GET, BN, CONV), (4, 10)),
     (3, (GET, BN, CONV), (11, 13))),
    # ResNet basic block, projection shortcut
    ((8, (GET, BN, CONV, RELU), (4, 6)), (3, (GET, BN, CONV), (8, 11))),
    # ResNet basic block after max pooling
    ((7, (GET, BN, CONV, RELU, GET, BN, CONV), (4, 6)), (1, (MAXPOOL,), (7, 10))),
    # ResNet basic block, identity shortcut
    ((8, (GET, BN, CONV, RELU), (4, 6)), (1, (RELU,), (8, 11))),
    # MobileNetV2 inverted residual with its shortcut
    ((1, (GET, BN), _NONE),
     (13, (GET, BN, CONV, RELU6, GET, BN, CONV, RELU6, GET, BN, CONV, GET, BN), (7, 10))),
    # MobileNetV2: the expansion after a residual addition
    ((4, (GET, BN, CONV, ADD), (0, 3)),),
    # MobileNetV2 inverted residual after a residual addition
    ((1, (ADD,), _NONE),
     (12, (GET, BN, CONV, RELU6, GET, BN, CONV, RELU6, GET, BN, CONV, ADD), (7, 10))),
    # MobileNetV2's head before the global mean
    ((5, (MEAN, RELU6, GET, BN, CONV), (0, 4)),),
    # MobileNetV2 blocks without a shortcut
    ((17, (GET, BN, CONV, RELU6, GET, BN, CONV, GET, BN, CONV, RELU6, GET, BN, CONV, RELU6,
           GET, BN, CONV), (3, 6)),),
    # DenseNet layer beside its concatenated input
    ((1, (CONCAT,), _NONE),
     (9, (CONV, RELU, GET, BN, CONV, RELU, GET, BN, CONCAT), (6, 9))),
    # DenseNet layer
    ((5, (CONV, RELU, GET, BN, CONCAT), (0, 4)),),
    ((9, (CONV, RELU, GET, BN, CONV, RELU, GET, BN, CONCAT), (5, 8)), (1, (CONCAT,), _NONE)),
    # DenseNet layer after pooling
    ((9, (CONV, RELU, GET, BN, CONV, RELU, GET, BN, MAXPOOL), (0, 4)),
     (1, (CONCAT,), _NONE)),
    ((1, (CONCAT,), _NONE),
     (9, (CONV, RELU, GET, BN, CONV, RELU, GET, BN, MAXPOOL), (1, 5))),
)


class Node:
    """One node of the traced graph: its primitive, its operands (Nodes, or None for a
    graph input or a constant) and, for a BatchNorm, the layer's parameter that names it."""

    __slots__ = ("kind", "inputs", "param", "const", "dead")

    def __init__(self, kind, inputs, param=None, const=None):
        self.kind = kind
        self.inputs = list(inputs)
        self.param = param
        self.const = const
        self.dead = False

    def first(self):
        """The node's first operand when it is a node (the walk's next step), else None."""
        return self.inputs[0] if self.inputs else None


class StructureGraph(TraceGraph):
    """The traced network as :class:`Node` objects (a value's handle is its Node; graph
    inputs and constants have None)."""

    format_name = "less-BN analysis"

    def __init__(self, real, params):
        super().__init__(real, params)
        self.nodes = []
        self.fills = {}    # id(native) -> the Python value a ``full`` op filled it with

    def record(self, name, args, attrs, out):
        """Record op ``name``; unlike the exporters, never read a value back from the
        device (inside a compiled GRAPH_MODE program every value is symbolic): constants
        are known by the ``full`` ops that made them."""
        ba, arrays = self.bind_and_keep(name, args, attrs, out)
        if name == "full":
            self.fills[id(out)] = ba["value"]
        if not any(self.is_dynamic(a) for a in arrays) or any(out is a for a in arrays):
            return
        self.names[id(out)] = self.convert(name, ba, out)

    def v(self, x):
        node = self.names.get(id(x))
        if node is not None:
            return node
        param = self.params.get(id(x))
        if param is not None:
            return self.node("Load", [], param=param)
        return None

    def node(self, kind, inputs, param=None, const=None):
        """A new node, kept in creation (topological) order."""
        made = Node(kind, inputs, param, const)
        self.nodes.append(made)
        return made

    def _const(self, x):
        """The value of constant ``x`` when a ``full`` op made it, else None."""
        value = self.fills.get(id(x))
        return None if value is None else np.asarray(value)

    def _param_of(self, x):
        """The Parameter behind native ``x`` (directly, or through Cast/Reshape nodes)."""
        param = self.params.get(id(x))
        if param is not None:
            return param
        node = self.names.get(id(x))
        while node is not None and node.kind in ("cast", "reshape", "Load"):
            if node.param is not None:
                return node.param
            node = node.first()
        return None

    def convert(self, name, ba, out):
        handler = _CONVERTERS.get(name)
        if handler is not None:
            return handler(self, ba, out)
        return self.node(name, [self.v(a) for a in array_args(name, ba)])


def _scalar_equals(value, target):
    return value is not None and value.size == 1 and float(value.reshape(-1)[0]) == target


def _conv(g, ba, out):
    kind = CONV if len(g.shape(ba["x"])) == 4 else "Conv"
    return g.node(kind, [g.v(ba["x"]), g.v(ba["w"])])


def _is_bias(g, a, b):
    """``b`` is a layer's bias added to ``a``: a parameter's (reshaped) vector along a's
    axis 1 (its last axis for 2-d values)."""
    if g._param_of(b) is None or g.names.get(id(a)) is None:
        return False
    shape_a, shape_b = g.shape(a), g.shape(b)
    if len(shape_a) < 2:
        return False
    channels = shape_a[1]
    return (shape_b == (channels,) or
            shape_b == (1, channels) + (1,) * (len(shape_a) - 2))


def _add(g, ba, out):
    a, b = ba["a"], ba["b"]
    if _is_bias(g, a, b):
        return g.node("BiasAdd", [g.v(a), g.node("Load", [], param=g._param_of(b))])
    return g.node(ADD, [g.v(a), g.v(b)])


def _batch_norm(g, ba, out):
    operands = [ba[k] for k in ("weight", "bias", "running_mean", "running_var")]
    param = next((p for p in map(g._param_of, operands) if p is not None), None)
    bn = g.node(BN, [g.v(ba["x"])] + [g.v(o) for o in operands if o is not None],
                param=param)
    return g.node(GET, [bn])


def _maximum(g, ba, out):
    return g.node("Maximum", [g.v(ba["a"]), g.v(ba["b"])], const=g._const(ba["b"]))


def _minimum(g, ba, out):
    """``minimum(relu(x), 6)`` (or ``minimum(maximum(x, 0), 6)``) is ReLU6, as mscore
    writes nn.ReLU6."""
    a = g.names.get(id(ba["a"]))
    clipped_below = a is not None and (
        a.kind == RELU or (a.kind == "Maximum" and _scalar_equals(a.const, 0.0)))
    if clipped_below and _scalar_equals(g._const(ba["b"]), 6.0):
        a.dead = True
        return g.node(RELU6, [a.first()])
    return g.node("Minimum", [g.v(ba["a"]), g.v(ba["b"])])


def _sum(g, ba, out):
    return g.node("ReduceSum", [g.v(ba["a"])])


def _div(g, ba, out):
    """``sum(x) / count`` is ReduceMean (mscore's mean is written so)."""
    a = g.names.get(id(ba["a"]))
    if a is not None and a.kind == "ReduceSum" and g._const(ba["b"]) is not None:
        a.dead = True
        return g.node(MEAN, [a.first()])
    return g.node("Div", [g.v(ba["a"]), g.v(ba["b"])])


def _concat(g, ba, out):
    pack = g.node("MakeTuple", [g.v(a) for a in ba["arrays"]])
    return g.node(CONCAT, [pack])


def _dense(g, ba, out):
    matmul = g.node("MatMul", [g.v(ba["x"]), g.v(ba["w"])])
    if ba["b"] is None:
        return matmul
    return g.node("BiasAdd", [matmul, g.v(ba["b"])])


_CONVERTERS = {
    "conv": _conv, "add": _add, "batch_norm": _batch_norm, "maximum": _maximum,
    "minimum": _minimum, "sum": _sum, "div": _div, "concat": _concat, "dense": _dense,
    "relu": lambda g, ba, out: g.node(RELU, [g.v(ba["x"])]),
    "max_pool": lambda g, ba, out: g.node(MAXPOOL, [g.v(ba["x"])]),
    "avg_pool": lambda g, ba, out: g.node("AvgPool", [g.v(ba["x"])]),
}


# -- the pass -----------------------------------------------------------------------------------
class _Match:
    """The state of matching one pattern at one node (MindSpore's visitor state)."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.totals = [0]
        for count, _, _ in pattern:
            self.totals.append(self.totals[-1] + count)
        self.position = 0          # nodes matched so far, over every branch
        self.branch = 0
        self.matched = False
        self.remove = []

    def visit(self, node):
        """Walk from ``node`` along first inputs while the pattern goes on."""
        while node is not None:
            self._note_removal(node)
            if not self._step(node):
                return
            node = node.first()

    def _note_removal(self, node):
        if node.kind not in (BN, GET):
            return
        first, last = self.pattern[self.branch][2]
        if first <= self.position <= last:
            self.remove.append(node)

    def _step(self, node):
        """Does ``node`` match the next position (then go on along this branch)?"""
        if self.branch + 1 >= len(self.totals) or self.branch >= len(self.pattern):
            return False
        _, prims, _ = self.pattern[self.branch]
        wanted = prims[(self.position - self.totals[self.branch]) % len(prims)]
        if node.kind != wanted and wanted != GET:
            return False
        self.position += 1
        if self.position == self.totals[-1]:
            self.matched = True
            return False
        if self.position == self.totals[self.branch + 1]:
            self.branch += 1
            return False
        return True


def _match(node):
    """The nodes the first matching pattern removes at ``node`` (empty when none matches)."""
    for pattern in PATTERNS:
        state = _Match(pattern)
        for operand in node.inputs:
            if operand is not None:
                state.visit(operand)
        if state.matched:
            return state.remove
    return []


def _remove(graph, doomed):
    """Take the BatchNorm nodes of ``doomed`` (and their TupleGetItem) out of the graph: their
    consumers read the BatchNorm's input. Returns the removed BatchNorm nodes."""
    bypass = {}
    removed = []
    for node in doomed:
        bn = node if node.kind == BN else node.first()
        if bn is None or bn.kind != BN or bn.dead:
            continue
        removed.append(bn)
        bn.dead = True
        for other in graph.nodes:
            if other.kind == GET and other.first() is bn:
                other.dead = True
                bypass[id(other)] = bn.first()
        bypass[id(bn)] = bn.first()
    if bypass:
        for other in graph.nodes:
            other.inputs = [bypass.get(id(i), i) if i is not None else None
                            for i in other.inputs]
    return removed


def run_pass(graph):
    """MindSpore's less-BN pass over ``graph``: the BatchNorm nodes it removes, in order."""
    removed = []
    for node in reversed(graph.nodes):
        if node.dead:
            continue
        doomed = _match(node)
        if doomed:
            removed.extend(_remove(graph, doomed))
    return removed


# -- tracing the network ------------------------------------------------------------------------
def _zeros_like(a):
    if isinstance(a, Tensor):
        data = a._data
        value = getattr(data, "value", data)           # a reference-autodiff tracer
        return Tensor._wrap(call("full", tuple(dispatch.shape(value)), 0,
                                 dispatch.dtype(value)))
    if isinstance(a, (tuple, list)):
        return type(a)(_zeros_like(x) for x in a)
    return a


@contextlib.contextmanager
def _structure_only(params):
    """Outside any gradient trace or compiled program, with every parameter holding zeros of
    its shape and dtype (the values restored afterwards): the trace needs only shapes."""
    saved_state = (_thread.tracing_depth, _thread.compiled_depth, _thread.mutation_scopes)
    saved = [p._data for p in params]
    _thread.tracing_depth, _thread.compiled_depth, _thread.mutation_scopes = 0, 0, ()
    try:
        for p in params:
            value = getattr(p._data, "value", p._data)
            p._data = call("full", tuple(dispatch.shape(value)), 0, dispatch.dtype(value))
        yield
    finally:
        for p, data in zip(params, saved):
            p._data = data
        _thread.tracing_depth, _thread.compiled_depth, _thread.mutation_scopes = saved_state


def _owners(network):
    """``{id(parameter): (parent cell, attribute name, BatchNorm cell)}`` for the BatchNorm
    layers registered in ``network``."""
    owners = {}
    for _, parent in network.cells_and_names():
        for name, child in parent._cells.items():
            if isinstance(child, _BatchNorm):
                for param in child._params.values():
                    owners[id(param)] = (parent, name, child)
    return owners


def removable_batch_norms(network, args):
    """``[(parent, attribute name, BatchNorm cell)]``: the layers of ``network`` that
    MindSpore's less-BN pass removes, found by tracing ``network(*args)``."""
    params = list(network.get_parameters())
    with _structure_only(params):
        real = _process.backend or _context.current_backend()
        graph = StructureGraph(real, params)
        inputs = [_zeros_like(a) for a in args]
        for x in _tensors(inputs):
            graph.add_input(x, None)
        trace(network, inputs, graph, fused=FUSED)
    owners = _owners(network)
    found, seen = [], set()
    for bn in run_pass(graph):
        owner = owners.get(id(bn.param)) if bn.param is not None else None
        if owner is not None and id(owner[2]) not in seen:
            seen.add(id(owner[2]))
            found.append(owner)
    return found


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (tuple, list)):
            yield from _tensors(v)
