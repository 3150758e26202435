"""Sources over the user's own data: ``NumpySlicesDataset``, ``GeneratorDataset``,
``PaddedDataset``."""
from __future__ import annotations

import numpy as np

from mscore.dataset.engine import validators as v
from mscore.dataset.engine.datasets import Dataset
from mscore.dataset.engine.map_workers import WorkerSlot, dump_job
from mscore.dataset.engine.mappable import MappableDataset, check_shards
from mscore.dataset.engine.schema import Schema

__all__ = ["NumpySlicesDataset", "GeneratorDataset", "PaddedDataset"]


def _default_names(n):
    return [f"column_{i}" for i in range(n)]


def _column_array(value, i):
    arr = np.asarray(value)
    if arr.dtype == object:
        raise TypeError(f"data: column {i} has ragged or non-numeric values")
    if arr.ndim == 0:
        raise ValueError(f"data: column {i} is a scalar; expected something to slice")
    return arr


class NumpySlicesDataset(MappableDataset):
    """Rows sliced along the first axis of in-memory data.

    ``data``: a dict ``{column: array}``; a tuple of arrays (one column each); or a list /
    numpy array (one column). ``column_names`` names the columns (default ``column_0``, ...;
    the keys for a dict). ``shuffle=None`` (default) shuffles, as in MindSpore.
    """

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None):
        super().__init__(num_samples, shuffle, sampler, num_shards, shard_id,
                         num_parallel_workers)
        if isinstance(data, dict):
            names = [str(k) for k in data]
            cols = [_column_array(x, i) for i, x in enumerate(data.values())]
        elif isinstance(data, tuple):
            names = None
            cols = [_column_array(x, i) for i, x in enumerate(data)]
        elif isinstance(data, (list, np.ndarray)):
            names = None
            cols = [_column_array(data, 0)]
        else:
            raise TypeError(f"data: expected a list, tuple, dict or numpy array, got "
                            f"{type(data).__name__}")
        if not cols:
            raise ValueError("data: expected at least one column")
        if len({len(c) for c in cols}) != 1:
            raise ValueError(f"data: every column must have the same length, got "
                             f"{[len(c) for c in cols]}")
        if column_names is not None:
            column_names = v.check_columns(column_names, "column_names")
            if len(column_names) != len(cols):
                raise ValueError(f"column_names: {len(column_names)} name(s) for "
                                 f"{len(cols)} column(s)")
            names = column_names
        self._names = names or _default_names(len(cols))
        self._data = cols

    def _columns(self):
        return list(self._names)

    def _len(self):
        return len(self._data[0])

    def _get(self, index):
        # a scalar column's item as a 0-d array, as MindSpore yields it (map operations and
        # iterators see arrays, never numpy scalars; a string its own length's dtype)
        return tuple(np.asarray(c[index]) for c in self._data)


class PaddedDataset(MappableDataset):
    """Rows given as a list of dicts ``{column: value}`` (to pad a ``concat`` so that every
    shard of a ``DistributedSampler`` gets as many rows)."""

    def __init__(self, padded_samples):
        if not isinstance(padded_samples, list):
            raise TypeError(f"padded_samples: expected a list of dicts, got "
                            f"{type(padded_samples).__name__}")
        if not padded_samples:
            raise ValueError("padded_samples: cannot be empty")
        for i, sample in enumerate(padded_samples):
            if not isinstance(sample, dict):
                raise TypeError(f"padded_samples: element {i} is not a dict "
                                f"({type(sample).__name__})")
        super().__init__(shuffle=False)
        self._samples = padded_samples

    def _columns(self):
        names = [str(k) for k in self._samples[0]]
        for i, s in enumerate(self._samples):
            if [str(k) for k in s] != names:
                raise RuntimeError(f"padded_samples: element {i} has columns {list(s)}, "
                                   f"element 0 has {names}")
        return names

    def _len(self):
        return len(self._samples)

    def _get(self, index):
        return tuple(v.as_array(x) for x in self._samples[index].values())


class _Indexed(MappableDataset):
    """The random-access side of a GeneratorDataset over ``source[i]``."""

    def __init__(self, owner, num_samples, shuffle, sampler, num_shards, shard_id):
        super().__init__(num_samples, shuffle, sampler, num_shards, shard_id)
        self._owner = owner

    def _len(self):
        return len(self._owner.source)

    def _get(self, index):
        return read_item(self._owner.source, index)

    def _columns(self):
        return self._owner.get_col_names()

    def _rows(self, epoch):
        workers = self._owner._workers
        if workers is None:
            return super()._rows(epoch)
        return workers.run(((int(i),) for i in self._indices(epoch)), epoch)


def read_item(source, index):
    """Row ``index`` of a random-access source."""
    item = v.call_user(source.__getitem__, (index,), "GeneratorDataset source")
    return v.as_row(item, "GeneratorDataset source")


def read_batch(source, indices, collate_fn):
    """The rows ``indices`` of a random-access source as one batch: merged by
    ``collate_fn(*columns)``, else stacked."""
    rows = [read_item(source, int(i)) for i in indices]
    cols = [list(c) for c in zip(*rows)]
    if collate_fn is not None:
        return v.call_user(collate_fn, cols, "collate_fn")
    return tuple(np.stack(c) for c in cols)


class _ReadJob:
    """What a GeneratorDataset's worker process runs: one row, or (under ``batch_sampler``)
    one batch, of the source (see :mod:`.map_workers`)."""

    def __init__(self, source, collate_fn, batched):
        self.source, self.collate_fn, self.batched = source, collate_fn, batched

    def __call__(self, index):
        if self.batched:
            return read_batch(self.source, index, self.collate_fn)
        return read_item(self.source, index)


class GeneratorDataset(MappableDataset):
    """Rows from Python: a random-accessible object (``__getitem__`` and ``__len__``), a
    callable returning an iterator (a generator function), or an iterable.

    Each item is a tuple of arrays (one per column) or a single array. ``shuffle``,
    ``sampler``, ``num_shards`` and ``num_samples`` need a random-accessible source
    (``shuffle=None`` shuffles it, as in MindSpore); ``batch_sampler`` (lists of indices)
    makes each row a batch, merged by ``collate_fn(*columns)`` (default: stacked). A
    random-access source with ``num_parallel_workers > 1`` and ``python_multiprocessing``
    (default True) is read in worker processes (see :mod:`.map_workers`); otherwise rows are
    read in the calling thread. ``max_rowsize`` (an int) is checked as MindSpore checks it.
    """

    def __init__(self, source, column_names=None, column_types=None, schema=None,
                 num_samples=None, num_parallel_workers=1, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, python_multiprocessing=True, max_rowsize=None,
                 batch_sampler=None, collate_fn=None):
        Dataset.__init__(self, num_parallel_workers=num_parallel_workers)
        if not (callable(source) or hasattr(source, "__iter__") or
                hasattr(source, "__getitem__")):
            raise TypeError("source: GeneratorDataset takes a callable, an iterable or a "
                            "random-accessible object (with __getitem__)")
        self._names, self._types = self._layout(column_names, column_types, schema)
        self.python_multiprocessing = v.check_bool(python_multiprocessing,
                                                   "python_multiprocessing")
        self.max_rowsize = v.check_max_rowsize(max_rowsize, allow_list=False)
        self._check_batch_sampler(batch_sampler, collate_fn, num_samples, shuffle, sampler,
                                  num_shards, shard_id)
        self.source = source
        self.batch_sampler, self.collate_fn = batch_sampler, collate_fn
        self.random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if self.random_access and batch_sampler is None:
            self._inner = _Indexed(self, num_samples, shuffle, sampler, num_shards, shard_id)
            self.sampler = self._inner.sampler
        else:
            if sampler is not None or num_shards is not None:
                raise ValueError("sampler and num_shards: need a random-accessible source "
                                 "(with __getitem__ and __len__)")
            check_shards(num_shards, shard_id)
            self._inner = None
            self.sampler = None
            self._num_samples = v.check_optional_int(num_samples, "num_samples", 0,
                                                     v.INT64_MAX) or None
        self._one_shot_used = False
        self._workers = self._worker_slot()

    def _worker_slot(self):
        """The worker processes that read a random-access source, as MindSpore reads it in
        processes (``python_multiprocessing`` and more than one worker), or None."""
        if not (self.python_multiprocessing and (self.num_parallel_workers or 1) > 1 and
                self.random_access):
            return None
        what = f"GeneratorDataset(source {v.func_name(self.source)})"
        job = _ReadJob(self.source, self.collate_fn, self.batch_sampler is not None)
        payload = dump_job(job, what, [("the source", self.source),
                                       ("collate_fn", self.collate_fn)])
        return WorkerSlot(what, payload, self.num_parallel_workers)

    @staticmethod
    def _layout(column_names, column_types, schema):
        if column_names is not None:
            names = v.check_columns(column_names, "column_names")
        elif schema is not None:
            schema = schema if isinstance(schema, Schema) else Schema(schema)
            names = [c["name"] for c in schema.columns]
            if column_types is None:
                column_types = [c["type"] for c in schema.columns]
        else:
            raise ValueError("column_names: neither column_names nor schema are provided")
        types = None
        if column_types is not None:
            if not isinstance(column_types, (list, tuple)):
                raise TypeError("column_types: expected a list of dtypes")
            types = [v.np_dtype(t, "column_types") for t in column_types]
        return names, types

    @staticmethod
    def _check_batch_sampler(batch_sampler, collate_fn, num_samples, shuffle, sampler,
                             num_shards, shard_id):
        if batch_sampler is not None:
            if not (hasattr(batch_sampler, "__iter__") or hasattr(batch_sampler, "__getitem__")):
                raise TypeError("batch_sampler: should have a __getitem__ or __iter__ method")
            if any(x is not None for x in (num_samples, shuffle, sampler, num_shards, shard_id)):
                raise ValueError("batch_sampler: mutually exclusive with num_samples, shuffle, "
                                 "num_shards, shard_id and sampler")
        if collate_fn is not None:
            if batch_sampler is None:
                raise ValueError("collate_fn: can be given only together with batch_sampler")
            v.check_callable(collate_fn, "collate_fn")

    def _columns(self):
        return list(self._names)

    def _len(self):
        return len(self.source)

    def _indices(self, epoch):
        return self._inner._indices(epoch)

    def is_shuffled(self):
        return self._inner is not None and self._inner.is_shuffled()

    def is_sharded(self):
        return self._inner is not None and self._inner.is_sharded()

    def use_sampler(self, new_sampler):
        if self._inner is None:
            raise ValueError("use_sampler: needs a random-accessible source")
        self._inner.use_sampler(new_sampler)
        self.sampler = self._inner.sampler
        self._cached_size = None

    def add_sampler(self, new_sampler):
        if self._inner is None:
            raise ValueError("add_sampler: needs a random-accessible source")
        self._inner.add_sampler(new_sampler)
        self.sampler = self._inner.sampler
        self._cached_size = None

    def with_sampler(self, new_sampler):
        clone = super().with_sampler(new_sampler)
        clone._inner = _Indexed(clone, None, None, new_sampler, None, None)
        return clone

    def set_dynamic_columns(self, columns=None):
        """MindSpore 1.x: declares columns of changing shape; every shape may change here."""
        if columns is not None and not isinstance(columns, dict):
            raise TypeError(f"columns: expected a dict, got {type(columns).__name__}")

    def _batches(self, epoch):
        batches = _guarded(iter(self.batch_sampler), "GeneratorDataset batch_sampler")
        if self._workers is not None:
            yield from self._workers.run(((list(b),) for b in batches), epoch)
            return
        for indices in batches:
            yield read_batch(self.source, indices, self.collate_fn)

    def _items(self, epoch):
        if self._inner is not None:
            yield from self._inner._rows(epoch)
            return
        if self.batch_sampler is not None:
            yield from self._batches(epoch)
            return
        src = self.source
        if callable(src) and not hasattr(src, "__iter__"):
            it = v.call_user(src, (), "GeneratorDataset source")
        else:
            it = iter(src)
            if it is src:
                if self._one_shot_used:
                    raise RuntimeError("source: a one-shot iterator can be read once; pass a "
                                       "generator function instead")
                self._one_shot_used = True
        for i, item in enumerate(_guarded(it)):
            if self._num_samples is not None and i >= self._num_samples:
                return
            yield item

    def _rows(self, epoch):
        for item in self._items(epoch):
            row = v.as_row(item, "GeneratorDataset source")
            if len(row) != len(self._names):
                raise RuntimeError(f"GeneratorDataset: the source gave {len(row)} column(s) "
                                   f"but column_names has {len(self._names)}")
            if self._types is not None:
                row = tuple(a.astype(t, copy=False) for a, t in zip(row, self._types))
            yield row

    def _size(self):
        if self._inner is not None:
            return self._inner.get_dataset_size()
        if self.batch_sampler is not None and hasattr(self.batch_sampler, "__len__"):
            return len(self.batch_sampler)
        src = self.source
        if hasattr(src, "__iter__") and not callable(src) and iter(src) is src:
            return -1  # a one-shot iterator: unknown until it has been read
        return sum(1 for _ in self._items(0))


def _guarded(iterator, where="GeneratorDataset source"):
    """The items of a user's iterator; what it raises becomes a ``RuntimeError``."""
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except Exception as exc:
            raise RuntimeError(f"{where} raised {type(exc).__name__}: {exc}") from exc
        yield item
