"""Graphs loaded from MindIR files: :class:`FuncGraph` and the :class:`GraphCell` that runs
one (``mscore.load`` reads the file)."""
from mscore.nn.graph.func_graph import FuncGraph, Node
from mscore.nn.graph.graph_cell import GraphCell

__all__ = ["FuncGraph", "GraphCell", "Node"]
