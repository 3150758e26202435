"""The random streams of random transforms (``RandomHorizontalFlip``, ``RandomCrop``, ...).

In MindSpore each random operation of a ``map`` draws from its own ``std::mt19937`` seeded
with the pipeline seed, and keeps drawing from it epoch after epoch; an operation called
eagerly (outside a pipeline) starts a new stream at each call. ``MapDataset`` keeps one
stream per operation for its passes and makes it current while an operation runs;
:func:`generator_for` gives an operation its stream.
"""
from __future__ import annotations

import contextvars
import copy

from mscore.dataset import config
from mscore.dataset.engine._stdrandom import StdMT19937

__all__ = ["OpStreams", "generator_for"]

_current = contextvars.ContextVar("mscore_dataset_op_streams", default=None)


def _eager_seed():
    """The seed of an eager call: the configured one, else a fresh random one (an eager
    random operation without a seed is random at every call, as in MindSpore)."""
    import numpy as np
    if config.seed_is_set():
        return config.get_seed()
    return int(np.random.SeedSequence().entropy % 2 ** 32)


def generator_for(op):
    """The stream ``op`` draws from: its stream in the running pipeline, or a new one."""
    streams = _current.get()
    if streams is None:
        return StdMT19937(_eager_seed())
    return streams.get(op)


class OpStreams:
    """One stream per operation of a ``map`` node, kept across epochs.

    Epoch 0 starts every stream from the pipeline seed (MindSpore's streams); the next epoch
    continues them; an epoch read again starts from where it started before; any other
    epoch (a resumed run) starts from ``seed + epoch``."""

    def __init__(self):
        self._epoch = None
        self._start = {}
        self._live = {}
        self._seed = 0

    def begin(self, epoch):
        """Prepare the streams of a pass over ``epoch``."""
        if self._epoch == epoch:
            self._live = copy.deepcopy(self._start)
        elif not (self._epoch is not None and self._epoch == epoch - 1):
            self._seed = config.get_seed() + (0 if epoch == 0 else epoch)
            self._live = {}
        self._start = copy.deepcopy(self._live)
        self._epoch = epoch

    @classmethod
    def for_row(cls, seed):
        """Fresh streams, every one started from ``seed`` (one row in a worker process)."""
        streams = cls()
        streams._epoch, streams._seed = -1, int(seed)
        return streams

    def get(self, op):
        key = id(op)
        if key not in self._live:
            self._live[key] = StdMT19937(self._seed)
            self._start[key] = StdMT19937(self._seed)
        return self._live[key]

    def activate(self):
        """Make these streams current (returns the token for :meth:`deactivate`)."""
        return _current.set(self)

    @staticmethod
    def deactivate(token):
        _current.reset(token)
