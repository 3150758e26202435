"""Operations over several datasets: ``concat`` (``+``), ``zip`` and ``split``."""
from __future__ import annotations

import builtins

import numpy as np

from mscore.dataset.engine import validators as v
from mscore.dataset.engine.datasets import Dataset, builds
from mscore.dataset.engine.mappable import MappableDataset
from mscore.dataset.engine.ops_rows import ShuffleDataset
from mscore.dataset.engine.samplers import DistributedSampler, RandomSampler, SequentialSampler

__all__ = ["ConcatDataset", "ZipDataset", "zip", "split_dataset", "split_sizes"]


@builds("concat")
class ConcatDataset(Dataset):
    """The rows of several datasets with the same columns, one after the other.

    ``use_sampler(DistributedSampler(num_shards, shard_id, shuffle=False))`` keeps row ``j``
    of the concatenation when ``(j + offset) % num_shards == shard_id`` (no padding), which
    with a ``PaddedDataset`` makes every shard the same size."""

    def __init__(self, datasets):
        super().__init__(datasets)
        self._sampler = None

    def _columns(self):
        names = self.children[0].get_col_names()
        for d in self.children[1:]:
            if d.get_col_names() != names:
                raise RuntimeError(f"concat: the datasets have different columns "
                                   f"({names} and {d.get_col_names()})")
        return names

    def _size(self):
        sizes = [d.get_dataset_size() for d in self.children]
        if any(s < 0 for s in sizes):
            return -1
        total = sum(sizes)
        if self._sampler is None:
            return total
        return sum(1 for j in range(total) if self._keeps(j))

    def _keeps(self, j):
        s = self._sampler
        return (j + max(s.offset, 0)) % s.num_shards == s.shard_id

    def use_sampler(self, new_sampler):
        if not isinstance(new_sampler, DistributedSampler):
            raise ValueError("use_sampler: a concatenation takes a DistributedSampler")
        if new_sampler.shuffle:
            raise ValueError("use_sampler: the DistributedSampler of a concatenation must "
                             "have shuffle=False")
        if new_sampler.num_samples is not None:
            raise ValueError("use_sampler: the DistributedSampler of a concatenation takes "
                             "no num_samples")
        new_sampler._check_shard()
        self._sampler = new_sampler
        self._cached_size = None

    def _rows(self, epoch):
        names = self._columns()
        dtypes = None
        j = 0
        for d in self.children:
            for row in d._rows(epoch):
                kinds = [np.asarray(x).dtype for x in row]
                if dtypes is None:
                    dtypes = kinds
                elif [k.kind for k in kinds] != [k.kind for k in dtypes]:
                    raise RuntimeError(f"concat: the datasets have different column types "
                                       f"({dtypes} and {kinds}) for columns {names}")
                if self._sampler is None or self._keeps(j):
                    yield row
                j += 1


@builds("zip")
class ZipDataset(Dataset):
    """The rows of several datasets side by side (columns must differ); as many rows as the
    shortest has."""

    def __init__(self, datasets):
        for i, d in enumerate(datasets):
            if not isinstance(d, Dataset):
                raise TypeError(f"datasets: element {i} is not a Dataset ({type(d).__name__})")
        if len(datasets) < 2:
            raise ValueError("datasets: zip needs at least two datasets")
        super().__init__(list(datasets))

    def _columns(self):
        names = [n for d in self.children for n in d.get_col_names()]
        if len(set(names)) != len(names):
            raise RuntimeError(f"zip: the datasets share column names {names}; rename them "
                               f"first")
        return names

    def _size(self):
        sizes = [d.get_dataset_size() for d in self.children]
        known = [s for s in sizes if s >= 0]
        return min(known) if known else -1

    def _rows(self, epoch):
        self._columns()
        for rows in builtins.zip(*(d._rows(epoch) for d in self.children)):
            yield tuple(x for row in rows for x in row)


def zip(datasets):
    """Rows of ``datasets`` (a tuple of at least two Datasets) side by side."""
    if not isinstance(datasets, tuple):
        raise TypeError(f"datasets: expected a tuple of Datasets, got {type(datasets).__name__}")
    return ZipDataset(datasets)


def split_sizes(sizes, total):
    """Absolute sizes from ``sizes`` (ints summing to ``total``, or fractions summing to 1:
    rounded, with the rounding difference given to the first split that can take it)."""
    if not isinstance(sizes, list):
        raise TypeError(f"sizes: expected a list, got {type(sizes).__name__}")
    if not sizes:
        raise ValueError("sizes: cannot be empty")
    all_int = all(isinstance(s, int) and not isinstance(s, bool) for s in sizes)
    all_float = all(isinstance(s, float) for s in sizes)
    if not (all_int or all_float):
        raise ValueError("sizes: should be a list of int or a list of float")
    if all_int:
        if any(s <= 0 for s in sizes):
            raise ValueError("sizes: a list of int must hold positive numbers only")
        if sum(sizes) != total:
            raise RuntimeError(f"sizes: they sum to {sum(sizes)}, not to the dataset size "
                               f"{total}")
        return list(sizes)
    if any(not 0 < s <= 1 for s in sizes):
        raise ValueError("sizes: a list of float must hold numbers in (0, 1] only")
    if abs(sum(sizes) - 1) > 1e-9:
        raise ValueError(f"sizes: the fractions must sum to 1, got {sum(sizes)}")
    out = []
    for s in sizes:
        n = int(round(s * total))
        if n == 0:
            raise RuntimeError(f"sizes: the fraction {s} is too small for {total} rows")
        out.append(n)
    diff = total - sum(out)
    if diff > 0:
        out[0] += diff
    else:
        for i, n in enumerate(out):
            if n + diff > 0:
                out[i] += diff
                break
    return out


def _source_of(dataset):
    node = dataset
    while node.children:
        node = node.children[0]
    return node


@builds("split")
def split_dataset(dataset, sizes, randomize=True):
    """See :meth:`Dataset.split`."""
    v.check_bool(randomize, "randomize")
    if not isinstance(sizes, list):
        raise TypeError(f"sizes: expected a list, got {type(sizes).__name__}")
    source = _source_of(dataset)
    if isinstance(source, MappableDataset) and source.is_sharded():
        raise RuntimeError("split: the dataset should not be sharded before split")
    absolute = split_sizes(sizes, dataset.get_dataset_size())
    parts, start = [], 0
    if isinstance(dataset, MappableDataset) and dataset.sampler is not None:
        for size in absolute:
            sampler = source.sampler
            if randomize:
                shuffled = RandomSampler()
                shuffled.reshuffle_each_epoch = False
                shuffled.add_child(sampler)
                sampler = shuffled
            subset = SequentialSampler(start, size)
            subset.add_child(sampler)
            parts.append(dataset.with_sampler(subset))
            start += size
        return parts
    base = dataset
    if randomize:
        base = ShuffleDataset(dataset, 10000)
        base.reshuffle_each_epoch = False
    for size in absolute:
        parts.append(base.skip(start).take(size) if start else base.take(size))
        start += size
    return parts
