"""The former home of GRAPH_MODE programs: a facade for :mod:`mscore.compile.graph` (every
name, read live, ``trace_count`` included). It imports the compile layer, above ``common``:
nothing inside mscore imports this module."""
from __future__ import annotations

from mscore.compile import graph as _graph


def __getattr__(name):
    return getattr(_graph, name)
