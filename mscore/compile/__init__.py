"""Compilation, the layer above ``mscore.nn``: GRAPH_MODE programs (:mod:`.graph`), ``jit``
and MindSpore's other compiler directives (:mod:`.api`).

Importing this package installs :mod:`.graph` as the GRAPH_MODE runner of every Cell
(:attr:`mscore.nn.cell.Cell._graph_runner`); ``import mscore`` does it.
"""
from __future__ import annotations

from mscore.compile import api, graph
from mscore.compile.api import (
    constexpr, jit, jit_class, lazy_inline, mutable, no_inline, reachable_state, recompute)
from mscore.nn.cell import Cell

Cell._graph_runner = graph

__all__ = ["api", "graph", "jit", "jit_class", "lazy_inline", "no_inline", "constexpr",
           "mutable", "recompute", "reachable_state"]
