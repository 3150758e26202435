"""``MappableDataset``: the base of random-access sources (rows read by index).

Which rows an epoch reads, and in which order, is the sampler's business
(:mod:`~mscore.dataset.engine.samplers`): ``shuffle``, ``num_samples``, ``num_shards`` /
``shard_id`` and ``sampler`` choose it as in MindSpore. In a data-parallel job (the
communication is initialised, gradients are reduced, the dataset strategy is
``data_parallel``) a source that was given no shards reads the shard of this rank.
"""
from __future__ import annotations

import copy

import numpy as np

from mscore.communication import management
from mscore.dataset.engine import validators as v
from mscore.dataset.engine.datasets import Dataset
from mscore.dataset.engine.samplers import DistributedSampler, PKSampler, select_sampler
from mscore.parallel import _context

__all__ = ["MappableDataset", "job_shard"]


def job_shard():
    """``(num_shards, shard_id)`` of this process in a data-parallel job, else
    ``(None, None)``."""
    if not (management.is_initialized() and _context.reduces_gradients()):
        return None, None
    if _context.get_auto_parallel_context("full_batch") or \
            _context.get_auto_parallel_context("dataset_strategy") != "data_parallel":
        return None, None
    size = management.get_group_size()
    return (size, management.get_rank()) if size > 1 else (None, None)


def check_shards(num_shards, shard_id):
    if (num_shards is None) != (shard_id is None):
        raise ValueError("num_shards and shard_id: need to be passed in together")
    if num_shards is None:
        return None, None
    num_shards = v.check_int(num_shards, "num_shards", 1, v.INT32_MAX)
    shard_id = v.check_int(shard_id, "shard_id", 0, v.INT32_MAX)
    if shard_id >= num_shards:
        raise ValueError(f"shard_id: should be less than num_shards ({num_shards}), got "
                         f"{shard_id}")
    return num_shards, shard_id


class MappableDataset(Dataset):
    """A source whose rows are read by index. Subclasses implement ``_len()`` and
    ``_get(index)`` (one row tuple) and ``_columns()``; ``class_column`` names the column a
    ``PKSampler`` groups by (None: not supported)."""

    class_column = None

    def __init__(self, num_samples=None, shuffle=None, sampler=None, num_shards=None,
                 shard_id=None, num_parallel_workers=None):
        super().__init__(num_parallel_workers=num_parallel_workers)
        if shuffle is not None:
            v.check_bool(shuffle, "shuffle")
        num_shards, shard_id = check_shards(num_shards, shard_id)
        self.sampler = select_sampler(num_samples, sampler, shuffle, num_shards, shard_id)
        if isinstance(self.sampler, PKSampler) and self.class_column is None:
            raise ValueError(f"sampler: {type(self).__name__} doesn't support PKSampler")
        self._explicit_shards = num_shards is not None or isinstance(self.sampler,
                                                                      DistributedSampler)
        self.shuffle_flag = shuffle

    # -- to override ----------------------------------------------------------------------
    def _len(self):
        raise NotImplementedError

    def _get(self, index):
        raise NotImplementedError

    def _labels(self):
        """One class label per row (for ``PKSampler``)."""
        col = self.get_col_names().index(self.class_column)
        return np.asarray([np.asarray(self._get(i)[col]).item() for i in range(self._len())])

    # -- sampling ---------------------------------------------------------------------------
    def is_shuffled(self):
        """Whether the sampler gives a random order."""
        return self.sampler.is_shuffled()

    def is_sharded(self):
        """Whether the sampler keeps one shard."""
        return self.sampler.is_sharded()

    def _auto_shard(self):
        if self._explicit_shards:
            return None
        num_shards, shard_id = job_shard()
        if num_shards is None:
            return None
        return DistributedSampler(num_shards, shard_id, shuffle=False)

    def _indices(self, epoch):
        n = self._len()
        if isinstance(self.sampler, PKSampler) and self.sampler.labels is None:
            self.sampler.labels = self._labels()
        idx = np.asarray(self.sampler.indices(n, epoch), dtype=np.int64)
        shard = self._auto_shard()
        if shard is not None:
            idx = idx[shard.indices(len(idx), epoch)]
        return idx

    def _size(self):
        return len(self._indices(0))

    def _rows(self, epoch):
        for i in self._indices(epoch):
            yield self._get(int(i))

    def use_sampler(self, new_sampler):
        """Read the rows ``new_sampler`` picks."""
        self.sampler = select_sampler(None, new_sampler, None, None, None)
        self._explicit_shards = isinstance(self.sampler, DistributedSampler)
        self._cached_size = None

    def add_sampler(self, new_sampler):
        """Sample from what the current sampler picks (``new_sampler`` becomes its parent)."""
        new_sampler.add_child(self.sampler)
        self.sampler = new_sampler
        self._cached_size = None

    def with_sampler(self, new_sampler):
        """A copy of this source that reads with ``new_sampler``."""
        clone = copy.copy(self)
        clone.sampler = new_sampler
        clone._cached_size = None
        clone._epoch = clone._first_epoch = 0
        return clone
