"""Samplers: which rows of a random-access source an epoch reads, in which order
(MindSpore's ``mindspore.dataset.samplers``).

A sampler gives, for a source of ``n`` rows and an epoch number, an array of row indices.
The random ones draw from the streams MindSpore's engine uses (see ``_stdrandom``), so with
the same ``mindspore.dataset.config.set_seed`` they give MindSpore 2.10's orders:

- ``RandomSampler``: epoch ``k`` shuffles epoch ``k - 1``'s order with seed ``seed + k``;
  with ``replacement=True`` it draws ``num_samples`` rows with seed ``seed + k``;
- ``DistributedSampler(shuffle=True)``: epoch ``k`` shuffles the previous order with seed
  ``seed + 1 + k``, then keeps every ``num_shards``-th row from ``shard_id`` (the order is
  padded by wrapping round so that every shard has as many rows);
- ``SubsetRandomSampler``: each epoch shuffles the previous epoch's order with ``seed``;
- ``WeightedRandomSampler``: the same draws each epoch, from ``seed``.

A sampler may have a child (:meth:`Sampler.add_child`): the child picks rows first, and the
sampler picks among the child's picks.
"""
from __future__ import annotations

import enum
import numbers

import numpy as np

from mscore.dataset import config
from mscore.dataset.engine._stdrandom import StdMT19937, chained_shuffles, std_shuffle
from mscore.dataset.engine.validators import INT64_MAX, check_int

__all__ = ["Sampler", "BuiltinSampler", "SequentialSampler", "RandomSampler",
           "DistributedSampler", "SubsetRandomSampler", "SubsetSampler",
           "WeightedRandomSampler", "PKSampler", "IterSampler", "Shuffle"]


class Shuffle(str, enum.Enum):
    """How file-based sources shuffle: ``GLOBAL`` (files and rows), ``FILES`` (file order),
    ``INFILE`` (rows within each file), ``ADAPTIVE`` / ``PARTIAL`` (as ``GLOBAL`` here)."""
    ADAPTIVE = "adaptive"
    GLOBAL = "global"
    PARTIAL = "partial"
    FILES = "file"
    INFILE = "infile"


def _seed():
    return config.get_seed()


def _check_num_samples(num_samples):
    if num_samples is None:
        return None
    return check_int(num_samples, "num_samples", 0, INT64_MAX)


class Sampler:
    """Base class of samplers; subclass it and implement ``__iter__`` to yield row indices
    (``self.dataset_size`` holds the number of rows of the source when it is called).

    >>> class Backwards(ds.Sampler):
    ...     def __iter__(self):
    ...         return iter(range(self.dataset_size - 1, -1, -1))
    >>> ds.NumpySlicesDataset(data, sampler=Backwards())
    """

    def __init__(self, num_samples=None):
        self.num_samples = _check_num_samples(num_samples)
        self.child_sampler = None
        self.dataset_size = 0

    def __iter__(self):
        raise NotImplementedError("a user-defined Sampler implements __iter__")

    def add_child(self, sampler):
        """Sample from what ``sampler`` picks instead of from the whole source."""
        if not isinstance(sampler, Sampler):
            raise TypeError(f"sampler: expected a Sampler, got {type(sampler).__name__}")
        if self.child_sampler is not None:
            raise RuntimeError("Cannot add child sampler, this sampler already has a child")
        self.child_sampler = sampler

    def get_child(self):
        """The child sampler, or None."""
        return self.child_sampler

    def get_num_samples(self):
        """``num_samples`` as given (None: every row)."""
        return self.num_samples

    def is_shuffled(self):
        """Whether the order is random."""
        return False

    def is_sharded(self):
        """Whether the sampler keeps one shard of the rows."""
        return bool(self.child_sampler and self.child_sampler.is_sharded())

    # -- used by the pipeline --------------------------------------------------------------
    def indices(self, n, epoch):
        """The row indices of epoch ``epoch`` for a source of ``n`` rows."""
        if self.child_sampler is not None:
            picked = self.child_sampler.indices(n, epoch)
            return picked[self._own(len(picked), epoch)]
        return self._own(n, epoch)

    def _limit(self, idx):
        return idx if not self.num_samples else idx[:self.num_samples]

    def _own(self, n, epoch):
        self.dataset_size = n
        idx = np.fromiter((int(i) for i in self), dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise RuntimeError(f"sampler: index out of range for a source of {n} rows")
        return self._limit(idx)


class BuiltinSampler(Sampler):
    """Base class of the samplers mscore provides."""

    def __iter__(self):
        return iter(self.indices(self.dataset_size, 0).tolist())


class SequentialSampler(BuiltinSampler):
    """Rows in order from ``start_index`` (default 0), at most ``num_samples`` of them."""

    def __init__(self, start_index=None, num_samples=None):
        if start_index is not None and (not isinstance(start_index, numbers.Integral) or
                                        isinstance(start_index, bool)):
            raise TypeError(f"start_index: expected an int, got {start_index!r}")
        super().__init__(num_samples)
        self.start_index = start_index

    def _own(self, n, epoch):
        start = self.start_index or 0
        if start < 0 or (n and start >= n):
            raise RuntimeError(f"start_index: expected a value in [0, {n}) for a source of "
                               f"{n} rows, got {start}")
        return self._limit(np.arange(start, n, dtype=np.int64))


class RandomSampler(BuiltinSampler):
    """A random order of the rows (a new one each epoch); ``replacement=True`` draws rows
    independently. ``num_samples`` rows at most (never more than the source has)."""

    def __init__(self, replacement=False, num_samples=None, shuffle=Shuffle.GLOBAL):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement: expected a bool, got {replacement!r}")
        if not isinstance(shuffle, Shuffle):
            raise TypeError(f"shuffle: expected a Shuffle mode, got {shuffle!r}")
        super().__init__(num_samples)
        self.replacement = replacement
        self.shuffle = shuffle
        self.reshuffle_each_epoch = True
        self._cache = {}

    def is_shuffled(self):
        return True

    def _own(self, n, epoch):
        seed = _seed()
        epoch = epoch if self.reshuffle_each_epoch else 0
        count = n if not self.num_samples else min(self.num_samples, n)
        if self.replacement:
            return StdMT19937(seed + epoch).uniform_int(0, max(n - 1, 0), count) if n else \
                np.empty(0, np.int64)
        order = chained_shuffles(np.arange(n, dtype=np.int64), lambda e: seed + e, epoch,
                                 self._cache)
        return order[:count]


class DistributedSampler(BuiltinSampler):
    """One of ``num_shards`` equal parts of the rows: row ``j`` of the (shuffled) order goes
    to shard ``j % num_shards``; the order wraps round so that every shard gets
    ``ceil(n / num_shards)`` rows. ``offset >= 0`` (for ``ConcatDataset``) starts the
    assignment at that shard and does not pad."""

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None, offset=-1):
        for name, value in (("num_shards", num_shards), ("shard_id", shard_id),
                            ("offset", offset)):
            if not isinstance(value, numbers.Integral) or isinstance(value, bool):
                raise TypeError(f"{name}: expected an int, got {value!r}")
        if not isinstance(shuffle, bool):
            raise TypeError(f"shuffle: expected a bool, got {shuffle!r}")
        super().__init__(num_samples)
        self.num_shards, self.shard_id = int(num_shards), int(shard_id)
        self.shuffle, self.offset = shuffle, int(offset)
        self._cache = {}

    def is_shuffled(self):
        return self.shuffle

    def is_sharded(self):
        return True

    def _check_shard(self):
        if self.num_shards < 1:
            raise RuntimeError(f"num_shards: expected a positive int, got {self.num_shards}")
        if not 0 <= self.shard_id < self.num_shards:
            raise RuntimeError(f"shard_id: expected a value in [0, {self.num_shards}), got "
                               f"{self.shard_id}")

    def _own(self, n, epoch):
        self._check_shard()
        order = np.arange(n, dtype=np.int64)
        if self.shuffle:
            seed = _seed()
            order = chained_shuffles(order, lambda e: seed + 1 + e, epoch, self._cache)
        if self.offset >= 0:
            keep = (np.arange(n) + self.offset) % self.num_shards == self.shard_id
            return self._limit(order[keep])
        per = -(-n // self.num_shards)
        if n:
            order = np.resize(order, per * self.num_shards)
        return self._limit(order[self.shard_id::self.num_shards])


def _check_indices(indices, name):
    if isinstance(indices, numbers.Integral) and not isinstance(indices, bool):
        indices = [indices]
    if isinstance(indices, np.ndarray):
        indices = indices.tolist()
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"indices: expected a list of ints, got {type(indices).__name__}")
    for i, v in enumerate(indices):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"{name}: indices[{i}] must be an int, got {v!r}")
    return np.asarray(indices, dtype=np.int64)


class SubsetSampler(BuiltinSampler):
    """The rows ``indices``, in that order."""

    def __init__(self, indices, num_samples=None):
        self.indices_ = _check_indices(indices, type(self).__name__)
        super().__init__(num_samples)

    def _checked(self, n):
        idx = self.indices_
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise RuntimeError(f"indices: {idx.tolist()} go beyond the source's {n} rows")
        return idx

    def _own(self, n, epoch):
        return self._limit(self._checked(n))


class SubsetRandomSampler(SubsetSampler):
    """The rows ``indices`` in a random order (a new one each epoch)."""

    def __init__(self, indices, num_samples=None):
        super().__init__(indices, num_samples)
        self._cache = {}

    def is_shuffled(self):
        return True

    def _own(self, n, epoch):
        seed = _seed()
        order = chained_shuffles(self._checked(n), lambda e: seed, epoch, self._cache)
        return self._limit(order)


class WeightedRandomSampler(BuiltinSampler):
    """Rows drawn with probability proportional to ``weights`` (row ``i`` has weight
    ``weights[i]``); ``num_samples`` rows (default: as many as the source has), with or
    without ``replacement``."""

    def __init__(self, weights, num_samples=None, replacement=True):
        if not isinstance(weights, (list, tuple, np.ndarray)):
            raise TypeError(f"weights: expected a list of numbers, got "
                            f"{type(weights).__name__}")
        for i, w in enumerate(weights):
            if not isinstance(w, numbers.Real) or isinstance(w, bool):
                raise TypeError(f"weights: weights[{i}] must be a number, got {w!r}")
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement: expected a bool, got {replacement!r}")
        super().__init__(num_samples)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.replacement = replacement

    def is_shuffled(self):
        return True

    def _own(self, n, epoch):
        w = self.weights
        if not w.size or np.any(w < 0) or not w.sum() > 0:
            raise RuntimeError(f"weights: expected non-negative numbers with a positive sum, "
                               f"got {w.tolist()}")
        count = n if not self.num_samples else min(self.num_samples, n)
        gen = StdMT19937(_seed())
        if self.replacement:
            return gen.discrete(w, count).astype(np.int64)
        with np.errstate(divide="ignore"):
            keys = -np.log1p(-gen.canonical(len(w))) / w
        count = min(count, int(np.count_nonzero(w)))
        return np.argsort(keys, kind="stable")[:count].astype(np.int64)


class PKSampler(BuiltinSampler):
    """``num_val`` rows of every class (classes in label order; a class with fewer rows
    repeats them), read from the source's ``class_column``; ``shuffle`` randomises the class
    order and the rows within each class."""

    def __init__(self, num_val, num_class=None, shuffle=False, class_column="label",
                 num_samples=None):
        if not isinstance(num_val, numbers.Integral) or isinstance(num_val, bool):
            raise TypeError(f"num_val: expected an int, got {num_val!r}")
        if num_class is not None:
            raise NotImplementedError("num_class: PKSampler takes every class; leave it None")
        if not isinstance(shuffle, bool):
            raise TypeError(f"shuffle: expected a bool, got {shuffle!r}")
        if not isinstance(class_column, str):
            raise TypeError(f"class_column: expected a str, got {class_column!r}")
        super().__init__(num_samples)
        self.num_val, self.shuffle, self.class_column = int(num_val), shuffle, class_column
        self.labels = None   # set by the source: one label per row

    def is_shuffled(self):
        return self.shuffle

    def _own(self, n, epoch):
        if self.num_val < 1:
            raise RuntimeError(f"num_val: expected a positive int, got {self.num_val}")
        if self.labels is None or len(self.labels) != n:
            raise RuntimeError(f"PKSampler: the source has no {self.class_column!r} column")
        gen = StdMT19937(_seed() + epoch)
        classes = np.unique(self.labels)
        if self.shuffle:
            classes = std_shuffle(classes, gen)
        picked = []
        for c in classes:
            rows = np.flatnonzero(self.labels == c)
            if self.shuffle:
                rows = std_shuffle(rows, gen)
            picked.append(np.resize(rows, self.num_val))
        return self._limit(np.concatenate(picked).astype(np.int64) if picked else
                           np.empty(0, np.int64))


class IterSampler(Sampler):
    """Wraps an iterable of row indices (a list, an array, a generator function's result);
    it is read again each epoch."""

    def __init__(self, sampler, num_samples=None):
        super().__init__(num_samples)
        self.sampler = sampler

    def __iter__(self):
        return iter(self.sampler)


def select_sampler(num_samples, sampler, shuffle, num_shards, shard_id):
    """The sampler a random-access source uses, from its arguments (MindSpore's rules): an
    explicit ``sampler`` cannot be combined with the others."""
    num_samples = _check_num_samples(num_samples)
    if sampler is not None:
        if shuffle is not None or num_shards is not None or shard_id is not None or \
                num_samples is not None:
            raise ValueError(f"sampler: conflicting arguments; with a sampler leave "
                             f"num_samples ({num_samples}), num_shards ({num_shards}), "
                             f"shard_id ({shard_id}) and shuffle ({shuffle}) unset")
        if isinstance(sampler, Sampler):
            return sampler
        if isinstance(sampler, (str, bytes, dict)) or not hasattr(sampler, "__iter__"):
            raise TypeError(f"sampler: expected a Sampler or an iterable of row indices, got "
                            f"{type(sampler).__name__}")
        return IterSampler(sampler)
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, True if shuffle is None else shuffle,
                                  num_samples)
    if shuffle is None or shuffle:
        return RandomSampler(num_samples=num_samples)
    return SequentialSampler(num_samples=num_samples)
