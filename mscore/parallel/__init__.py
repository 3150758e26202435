"""Parallel training helpers, as ``mindspore.parallel``: the auto-parallel context
(:class:`ParallelMode`, ``set/get/reset_auto_parallel_context``),
:func:`load_distributed_checkpoint` and :func:`transform_checkpoints` for checkpoints saved
by the ranks of a job; :func:`shard` (``Cell.shard`` as a function) and :class:`Layout`."""
import importlib

from mscore.parallel._context import (
    ParallelMode, get_auto_parallel_context, reset_auto_parallel_context,
    set_auto_parallel_context)
from mscore.parallel._layout_spec import Layout

__all__ = ["ParallelMode", "set_auto_parallel_context", "get_auto_parallel_context",
           "reset_auto_parallel_context", "load_distributed_checkpoint",
           "transform_checkpoints", "shard", "Layout"]

# names MindSpore keeps here whose code sits on higher floors (loaded on first use)
_ABOVE = {"load_distributed_checkpoint": "mscore.train.serialization",
          "transform_checkpoints": "mscore.train.serialization",
          "shard": "mscore.parallel.auto_parallel"}


def __getattr__(name):
    if name in _ABOVE:
        return getattr(importlib.import_module(_ABOVE[name]), name)
    raise AttributeError(f"module 'mscore.parallel' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})
