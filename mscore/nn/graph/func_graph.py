"""``FuncGraph``: a computation graph loaded from a MindIR file, run with mscore's ops."""
from __future__ import annotations

import math
import os
from collections import OrderedDict

import numpy as np

from mscore.common.tensor import Tensor
from mscore.nn.graph.primitives import PRIMITIVES

#: Environment variable overriding :data:`DEFAULT_MAX_ELEMENTS`.
MAX_ELEMENTS_ENV = "MSCORE_MINDIR_MAX_ELEMENTS"
#: The most elements one value of a loaded graph may have (8 GiB of float32): a small file
#: must not be able to ask for terabytes.
DEFAULT_MAX_ELEMENTS = 2 ** 31


def max_elements():
    """The element bound for one value of a loaded graph (:data:`MAX_ELEMENTS_ENV` or
    :data:`DEFAULT_MAX_ELEMENTS`)."""
    raw = os.environ.get(MAX_ELEMENTS_ENV)
    if raw is None:
        return DEFAULT_MAX_ELEMENTS
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{MAX_ELEMENTS_ENV} must be an integer, got {raw!r}") from None


def shape_elements(values):
    """The element count of the shape ``values`` (ints; -1 and 0 count as 1), or None when
    ``values`` is not a tuple of ints."""
    if not isinstance(values, tuple) or not values or \
            not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return None
    return math.prod(max(int(v), 1) for v in values)


def _result_elements(operands):
    """An estimate of the elements a node's result takes, before it runs: the broadcast of
    its Tensor operands (elementwise ops, MatMul's outer products) or a shape operand."""
    shapes = [tuple(x.shape) for x in operands if isinstance(x, Tensor)]
    estimate = 0
    try:
        estimate = math.prod(np.broadcast_shapes(*shapes)) if shapes else 0
    except ValueError:
        pass
    for x in operands:
        count = shape_elements(x)
        if count is not None:
            estimate = max(estimate, count)
    return estimate


class Node:
    """One call in a :class:`FuncGraph`: primitive ``op`` with attributes ``attrs`` on the
    values named ``inputs``, producing the value named ``name``."""

    __slots__ = ("name", "op", "attrs", "inputs")

    def __init__(self, name, op, attrs, inputs):
        self.name = name
        self.op = op
        self.attrs = attrs
        self.inputs = tuple(inputs)

    def __repr__(self):
        return f"Node({self.name!r}, {self.op!r}, inputs={list(self.inputs)})"


class FuncGraph:
    """A graph of MindSpore primitives, as :func:`mscore.load` reads it from a MindIR file.

    ``inputs``: ``(value name, shape, dtype)`` of each graph input, in call order;
    ``parameters``: value name -> ``(parameter name, numpy value)`` (the network's parameter
    name, such as ``"conv1.weight"``; each :class:`~mscore.nn.GraphCell` makes its own
    Parameters from them, on the backend active then);
    ``constants``: value name -> Python value or numpy array; ``nodes``: :class:`Node` in an
    order where every operand is computed before it is used; ``output``: the value name of the
    result. Run it through :class:`mscore.nn.GraphCell`.
    """

    def __init__(self, name, inputs, parameters, constants, nodes, output, file_name=""):
        self.name = name
        self.inputs = list(inputs)
        self.parameters = OrderedDict(parameters)
        self.constants = dict(constants)
        self.nodes = list(nodes)
        self.output = output
        self.file_name = file_name
        for node in self.nodes:  # checked by the loader; an assertion for hand-built graphs
            if node.op not in PRIMITIVES:
                raise NotImplementedError(f"FuncGraph: MindSpore primitive {node.op!r} is not "
                                          f"supported")

    def __repr__(self):
        return (f"FuncGraph(name={self.name!r}, inputs={len(self.inputs)}, "
                f"parameters={len(self.parameters)}, nodes={len(self.nodes)})")

    def check_inputs(self, args):
        """Validate the call's Tensors against the graph's inputs (count and dtype; the
        shapes are left to the ops, as in MindSpore)."""
        if len(args) != len(self.inputs):
            raise RuntimeError(f"GraphCell: the graph {self.name!r} takes {len(self.inputs)} "
                               f"input(s), got {len(args)}")
        for i, (arg, (_, _, dtype)) in enumerate(zip(args, self.inputs)):
            if not isinstance(arg, Tensor):
                raise TypeError(f"GraphCell: input {i} must be a Tensor, got "
                                f"{type(arg).__name__}")
            if arg.dtype is not dtype:
                raise TypeError(f"GraphCell: input {i} must be {dtype} (as exported), got "
                                f"{arg.dtype}")

    def run(self, args, parameters):
        """Evaluate the graph on the Tensors ``args`` with ``parameters`` (value name ->
        Tensor); a tuple result comes back as a tuple."""
        self.check_inputs(args)
        env = {name: arg for (name, _, _), arg in zip(self.inputs, args)}
        env.update(parameters)
        for name, value in self.constants.items():
            env[name] = Tensor(value) if isinstance(value, np.ndarray) else value
        bound = max_elements()
        for node in self.nodes:
            operands = [env[i] for i in node.inputs]
            env[node.name] = self._run_node(node, operands, bound)
        return env[self.output]

    def _run_node(self, node, operands, bound):
        """One node's result; a failure is a ValueError naming the file and the node."""
        where = f"{self.file_name!r}, node {node.name!r} ({node.op})"
        elements = _result_elements(operands)
        if elements > bound:
            raise ValueError(f"GraphCell: {where} would make a value of {elements} elements, "
                             f"over the bound of {bound} (set {MAX_ELEMENTS_ENV} to allow more)")
        try:
            return PRIMITIVES[node.op](node.attrs, *operands)
        except (ArithmeticError, IndexError, KeyError, TypeError, ValueError, MemoryError,
                RuntimeError) as exc:
            raise ValueError(f"GraphCell: {where} failed: {type(exc).__name__}: {exc}") from exc
