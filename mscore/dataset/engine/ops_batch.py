"""Batching: ``batch`` (with ``per_batch_map``), ``padded_batch`` and
``bucket_batch_by_length``."""
from __future__ import annotations

import collections
import inspect
import numbers

import numpy as np

from mscore.dataset import config
from mscore.dataset.engine import validators as v
from mscore.dataset.engine.datasets import BatchInfo, builds
from mscore.dataset.engine.map_workers import WorkerSlot, dump_job
from mscore.dataset.engine.ops_rows import _OneChild, _place, replace_columns

__all__ = ["BatchDataset", "PaddedBatchDataset", "BucketBatchByLengthDataset", "stack_column",
           "pad_column"]


def _check_batch_size(batch_size):
    if callable(batch_size) and not isinstance(batch_size, type):
        if len(inspect.signature(batch_size).parameters) != 1:
            raise ValueError("batch_size: a callable batch_size takes one parameter (a "
                             "BatchInfo)")
        return batch_size
    if not isinstance(batch_size, int) or isinstance(batch_size, bool):
        raise TypeError(f"batch_size: expected an int or a callable, got "
                        f"{type(batch_size).__name__}")
    return v.check_int(batch_size, "batch_size", 1, v.INT32_MAX)


def stack_column(name, values):
    """One batch array from a column's values (one per row): they must share a shape."""
    arrs = [v.as_array(a) for a in values]
    shapes = {a.shape for a in arrs}
    if len(shapes) > 1:
        raise RuntimeError(f"batch: rows of column {name!r} have different shapes "
                           f"{sorted(shapes)}; pad them (padded_batch) or resize them first")
    return np.stack(arrs)


def _check_pad_info(pad_info):
    if pad_info is None:
        return None
    if not isinstance(pad_info, dict):
        raise TypeError(f"pad_info: expected a dict, got {type(pad_info).__name__}")
    out = {}
    for key, value in pad_info.items():
        if not isinstance(key, str):
            raise TypeError(f"pad_info: keys must be column names, got {key!r}")
        if not isinstance(value, tuple) or len(value) != 2:
            raise ValueError(f"pad_info: the value of {key!r} must be a tuple (shape, "
                             f"pad_value), got {value!r}")
        shape, pad_value = value
        if shape is not None:
            if not isinstance(shape, list):
                raise TypeError(f"pad_info: the shape of {key!r} must be a list or None, got "
                                f"{shape!r}")
            for dim in shape:
                if dim is not None:
                    v.check_int(dim, f"pad_info[{key!r}] shape dim", 1, v.INT32_MAX)
        if not isinstance(pad_value, (numbers.Number, str, bytes)):
            raise TypeError(f"pad_info: the pad value of {key!r} must be a number or a "
                            f"string, got {pad_value!r}")
        out[key] = (shape, pad_value)
    return out


def pad_column(name, values, shape, pad_value):
    """The column's values padded (at the end of each dimension) to ``shape`` (``None``
    dimensions: the longest in the batch) and stacked; longer values are cut to it."""
    arrs = [v.as_array(a) for a in values]
    ndims = {a.ndim for a in arrs}
    if len(ndims) > 1:
        raise RuntimeError(f"padded_batch: rows of column {name!r} have different ranks "
                           f"{sorted(ndims)}")
    ndim = ndims.pop()
    longest = [max(a.shape[d] for a in arrs) for d in range(ndim)]
    if shape is None:
        target = longest
    else:
        if len(shape) != ndim:
            raise RuntimeError(f"pad_info: the shape {shape} of column {name!r} does not have "
                               f"the rank {ndim} of its values")
        target = [longest[d] if s is None else s for d, s in enumerate(shape)]
    if arrs[0].dtype.kind in "US":
        dtype = np.result_type(*[a.dtype for a in arrs], np.asarray(pad_value).dtype)
        fill = pad_value if isinstance(pad_value, str) else ""
    else:
        dtype = np.result_type(*[a.dtype for a in arrs])
        fill = pad_value
    out = np.full([len(arrs)] + list(target), fill, dtype=dtype)
    for i, a in enumerate(arrs):
        cut = tuple(slice(0, min(a.shape[d], target[d])) for d in range(ndim))
        out[(i,) + cut] = a[cut]
    return out


@builds("batch")
class BatchDataset(_OneChild):
    """Rows stacked into batches (see :meth:`Dataset.batch`)."""

    def __init__(self, child, batch_size, drop_remainder=False, num_parallel_workers=None,
                 per_batch_map=None, input_columns=None, output_columns=None,
                 python_multiprocessing=False, max_rowsize=None):
        super().__init__(child, num_parallel_workers)
        self.batch_size = _check_batch_size(batch_size)
        self.drop_remainder = v.check_bool(drop_remainder, "drop_remainder")
        self.python_multiprocessing = v.check_bool(python_multiprocessing,
                                                   "python_multiprocessing")
        self.max_rowsize = v.check_max_rowsize(max_rowsize)
        if input_columns is not None and per_batch_map is None:
            raise ValueError("input_columns: can be given only together with per_batch_map")
        self._in = v.check_optional_columns(input_columns, "input_columns")
        if self._in is not None and len(self._in) != \
                len(inspect.signature(per_batch_map).parameters) - 1:
            raise ValueError("per_batch_map: its parameters must be input_columns followed by "
                             "a BatchInfo")
        self._out = v.check_optional_columns(output_columns, "output_columns")
        if per_batch_map is not None:
            v.check_callable(per_batch_map, "per_batch_map")
        self.per_batch_map = per_batch_map
        self._workers = None
        if self.python_multiprocessing and per_batch_map is not None:
            what = f"batch(per_batch_map={v.func_name(per_batch_map)})"
            payload = dump_job(_BatchMapJob(per_batch_map), what,
                               [(f"per_batch_map {v.func_name(per_batch_map)}",
                                 per_batch_map)])
            num = self.num_parallel_workers or config.get_num_parallel_workers()
            self._workers = WorkerSlot(what, payload, num)

    def get_batch_size(self):
        return self.batch_size if isinstance(self.batch_size, int) else -1

    def _layout(self):
        names = self._child().get_col_names()
        ins = self._in if self._in is not None else names
        v.missing_columns(ins, names, "input_columns")
        outs = self._out if self._out is not None else ins
        return names, ins, outs

    def _columns(self):
        names, ins, outs = self._layout()
        if self.per_batch_map is None:
            return names
        return replace_columns(names, ins, outs)

    def _size(self):
        if not isinstance(self.batch_size, int):
            return self._count_rows()
        n = self._child().get_dataset_size()
        if n < 0:
            return -1
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def _map_batch(self, cols, names, ins, outs, info):
        args = [cols[names.index(c)] for c in ins] + [info]
        return self._placed(cols, names, ins, outs, _BatchMapJob(self.per_batch_map)(*args))

    @staticmethod
    def _placed(cols, names, ins, outs, result):
        """The batch's columns with what ``per_batch_map`` returned in place of ``ins``."""
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != len(outs):
            raise RuntimeError(f"per_batch_map: returned {len(result)} column(s), expected "
                               f"{len(outs)} ({outs})")
        return list(_place(cols, names, ins, result))

    def _make_batch(self, rows, info):
        names, ins, outs = self._layout()
        cols = [list(c) for c in zip(*rows)]
        if self.per_batch_map is not None:
            cols = self._map_batch(cols, names, ins, outs, info)
        return self._stack(self.get_col_names(), cols)

    def _stack(self, names, cols):
        return tuple(stack_column(name, col) for name, col in zip(names, cols))

    def _sizes(self, epoch):
        index = 0
        while True:
            if isinstance(self.batch_size, int):
                yield self.batch_size
            else:
                size = v.call_user(self.batch_size, (BatchInfo(index, epoch),), "batch_size")
                yield v.check_int(size, "batch_size", 1, v.INT32_MAX)
            index += 1

    def _groups(self, epoch):
        """``(rows, BatchInfo)`` of each batch of the pass."""
        sizes = self._sizes(epoch)
        want = None
        buf, index = [], 0
        for row in self._child()._rows(epoch):
            if want is None:
                want = next(sizes)
            buf.append(row)
            if len(buf) == want:
                yield buf, BatchInfo(index, epoch)
                buf, index, want = [], index + 1, None
        if buf and not self.drop_remainder:
            yield buf, BatchInfo(index, epoch)

    def _rows(self, epoch):
        if self._workers is None:
            for rows, info in self._groups(epoch):
                yield self._make_batch(rows, info)
            return
        names, ins, outs = self._layout()
        out_names = self.get_col_names()
        held = collections.deque()

        def requests():
            for rows, info in self._groups(epoch):
                cols = [list(c) for c in zip(*rows)]
                held.append(cols)
                yield tuple([cols[names.index(c)] for c in ins] + [info])

        for result in self._workers.run(requests(), epoch):
            yield self._stack(out_names, self._placed(held.popleft(), names, ins, outs, result))


class _BatchMapJob:
    """A batch's ``per_batch_map`` call, here or in a worker process (see
    :mod:`.map_workers`)."""

    def __init__(self, per_batch_map):
        self.per_batch_map = per_batch_map

    def __call__(self, *args):
        return v.call_user(self.per_batch_map, args,
                           f"per_batch_map {v.func_name(self.per_batch_map)}")


@builds("padded_batch")
class PaddedBatchDataset(BatchDataset):
    """Rows padded to one shape per column and batched (see :meth:`Dataset.padded_batch`)."""

    def __init__(self, child, batch_size, drop_remainder=False, num_parallel_workers=None,
                 pad_info=None):
        super().__init__(child, batch_size, drop_remainder, num_parallel_workers)
        self.pad_info = _check_pad_info(pad_info)

    def _stack(self, names, cols):
        if self.pad_info is None:
            return super()._stack(names, cols)
        v.missing_columns(list(self.pad_info), names, "pad_info")
        out = []
        for name, col in zip(names, cols):
            shape, value = self.pad_info.get(name, (None, 0))
            out.append(pad_column(name, col, shape, value))
        return tuple(out)


def _check_increasing_positive(values, name):
    if not isinstance(values, list):
        raise TypeError(f"{name}: expected a list of ints, got {type(values).__name__}")
    for x in values:
        v.check_type(x, int, name)
    return values


@builds("bucket_batch_by_length")
class BucketBatchByLengthDataset(_OneChild):
    """Rows batched by length bucket (see :meth:`Dataset.bucket_batch_by_length`)."""

    def __init__(self, child, column_names, bucket_boundaries, bucket_batch_sizes,
                 element_length_function=None, pad_info=None, pad_to_bucket_boundary=False,
                 drop_remainder=False):
        super().__init__(child)
        self._cols = v.check_columns(column_names, "column_names")
        bounds = _check_increasing_positive(bucket_boundaries, "bucket_boundaries")
        if not bounds:
            raise ValueError("bucket_boundaries: cannot be empty")
        if any(b <= 0 for b in bounds):
            raise ValueError("bucket_boundaries: must only contain positive numbers")
        if any(b >= c for b, c in zip(bounds, bounds[1:])):
            raise ValueError("bucket_boundaries: should be strictly increasing")
        sizes = _check_increasing_positive(bucket_batch_sizes, "bucket_batch_sizes")
        if len(sizes) != len(bounds) + 1:
            raise ValueError("bucket_batch_sizes: must contain one element more than "
                             "bucket_boundaries")
        if any(s <= 0 for s in sizes):
            raise ValueError("bucket_batch_sizes: should be a list of positive numbers")
        if element_length_function is None and len(self._cols) != 1:
            raise ValueError("column_names: without element_length_function exactly one "
                             "column name is needed")
        if element_length_function is not None:
            v.check_callable(element_length_function, "element_length_function")
        self.bounds, self.sizes = list(bounds), list(sizes)
        self.length_fn = element_length_function
        self.pad_info = _check_pad_info(pad_info) or {}
        self.pad_to_bucket_boundary = v.check_bool(pad_to_bucket_boundary,
                                                   "pad_to_bucket_boundary")
        self.drop_remainder = v.check_bool(drop_remainder, "drop_remainder")

    def get_batch_size(self):
        return 1

    def _size(self):
        return self._count_rows()

    def _length(self, row, idx):
        values = tuple(row[i] for i in idx)
        if self.length_fn is None:
            return int(np.shape(values[0])[0]) if np.ndim(values[0]) else 1
        length = v.call_user(self.length_fn, values, "element_length_function")
        return int(length)

    def _make(self, bucket, rows, names):
        cols = [list(c) for c in zip(*rows)]
        out = []
        for name, col in zip(names, cols):
            shape, value = self.pad_info.get(name, (None, 0))
            if self.pad_to_bucket_boundary and bucket < len(self.bounds):
                shape = list(shape) if shape is not None else [None] * np.ndim(col[0])
                shape = [self.bounds[bucket] - 1 if s is None else s for s in shape]
            out.append(pad_column(name, col, shape, value))
        return tuple(out)

    def _rows(self, epoch):
        names = self._child().get_col_names()
        v.missing_columns(self._cols, names, "column_names")
        idx = [names.index(c) for c in self._cols]
        buckets = [[] for _ in self.sizes]
        for row in self._child()._rows(epoch):
            b = int(np.searchsorted(self.bounds, self._length(row, idx), side="right"))
            buckets[b].append(row)
            if len(buckets[b]) == self.sizes[b]:
                yield self._make(b, buckets[b], names)
                buckets[b] = []
        if not self.drop_remainder:
            for b, rows in enumerate(buckets):
                if rows:
                    yield self._make(b, rows, names)
