"""Dataset pipeline configuration: the seed of shuffles and random samplers.

``set_seed(seed)`` fixes every shuffle of every pipeline; without it the seed given to
``mscore.set_seed`` is used, and without either each process draws its own (in a
data-parallel job, rank 0 draws it for all, so that shards never overlap).
"""
from __future__ import annotations

import numpy as np

_state = {"seed": None, "fallback": None, "prefetch_size": 4}


def set_seed(seed):
    """Seed the shuffles and samplers of dataset pipelines (MindSpore's ``ds.config.set_seed``)."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2 ** 32:
        raise ValueError(f"seed: expected an int in [0, 2**32), got {seed!r}")
    _state["seed"] = seed


def get_seed():
    """The seed pipelines use: ``set_seed``'s, else ``mscore.set_seed``'s, else a fixed
    per-process random one."""
    if _state["seed"] is not None:
        return _state["seed"]
    from mscore import context
    seed = context.get_seed()
    if seed is not None:
        return int(seed) % 2 ** 32
    from mscore.communication import management
    if management.is_initialized():
        return management.job_seed()   # every rank of a job shuffles alike
    if _state["fallback"] is None:
        _state["fallback"] = int(np.random.SeedSequence().entropy % 2 ** 32)
    return _state["fallback"]


def set_prefetch_size(size):
    """Batches the sink-mode background thread keeps ready ahead of the step."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"size: expected a positive int, got {size!r}")
    _state["prefetch_size"] = size


def get_prefetch_size():
    """See :func:`set_prefetch_size` (default 4)."""
    return _state["prefetch_size"]
