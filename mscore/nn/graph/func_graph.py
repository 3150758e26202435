"""``FuncGraph``: a computation graph loaded from a MindIR file, run with mscore's ops."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from mscore.common.tensor import Tensor
from mscore.nn.graph.primitives import PRIMITIVES


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
        for node in self.nodes:
            operands = [env[i] for i in node.inputs]
            env[node.name] = PRIMITIVES[node.op](node.attrs, *operands)
        return env[self.output]
