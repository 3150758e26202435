"""The dataset pipeline: a small, in-process version of MindSpore's ``mindspore.dataset``.

A pipeline is a chain of :class:`Dataset` nodes. A source (``NumpySlicesDataset``,
``GeneratorDataset``, ``MnistDataset``) produces rows, each a tuple of numpy arrays (one per
column); ``map``, ``batch``, ``shuffle``, ``repeat``, ``take``, ``skip``, ``project`` and
``rename`` each return a new node. Iterating a pipeline runs it lazily on the host, one row at
a time; the iterators convert rows to :class:`mscore.Tensor` on the active backend.

Shuffles are seeded per epoch from :func:`mscore.dataset.config.get_seed`, the epoch number
and the node's depth in the pipeline, so a run that resumes at epoch ``k`` (``Model.train(...,
initial_epoch=k)``) sees the same order as an uninterrupted one.
"""
from __future__ import annotations

import numbers

import numpy as np

from mscore.common._errors import TypeAttributeError
from mscore.dataset import config

__all__ = ["Dataset", "BatchInfo", "to_tensor", "as_dataset"]


def _check_int(value, name, minimum=None, allow=()):
    if value in allow and not isinstance(value, bool):
        return value
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        extra = f" (or one of {list(allow)})" if allow else ""
        raise ValueError(f"{name}: expected an int >= {minimum}{extra}, got {value}")
    return int(value)


def _check_columns(columns, name):
    if isinstance(columns, str):
        columns = [columns]
    if not isinstance(columns, (list, tuple)) or not columns:
        raise TypeError(f"{name}: expected a column name or a non-empty list of names, got "
                        f"{columns!r}")
    for c in columns:
        if not isinstance(c, str) or not c:
            raise TypeError(f"{name}: column names must be non-empty str, got {c!r}")
    if len(set(columns)) != len(columns):
        raise ValueError(f"{name}: duplicate column names in {list(columns)}")
    return list(columns)


def _as_row(item, ncols=None, where="row"):
    """A tuple of numpy arrays from one item a source or a map operation returned."""
    if isinstance(item, dict):
        item = tuple(item.values())
    if not isinstance(item, (tuple, list)):
        item = (item,)
    row = tuple(_as_array(x) for x in item)
    if ncols is not None and len(row) != ncols:
        raise RuntimeError(f"{where}: expected {ncols} column(s), got {len(row)}")
    return row


def _as_array(x):
    from mscore.common.tensor import Tensor
    if isinstance(x, Tensor):
        return x.asnumpy()
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x)


class BatchInfo:
    """Passed to a ``per_batch_map`` function: the batch and epoch numbers (from 0)."""

    def __init__(self, batch_num, epoch_num):
        self._batch_num, self._epoch_num = batch_num, epoch_num

    def get_batch_num(self):
        """The index of this batch in the epoch."""
        return self._batch_num

    def get_epoch_num(self):
        """The index of the epoch."""
        return self._epoch_num


class Dataset:
    """Base class of pipeline nodes. Subclasses implement ``_rows(epoch)`` (an iterator of
    row tuples), ``_size()`` and ``_columns()``."""

    def __init__(self, children=()):
        self._children = list(children)
        self._epoch = 0
        self._cached_size = None

    # -- to override ------------------------------------------------------------------------
    def _rows(self, epoch):
        raise NotImplementedError

    def _size(self):
        raise NotImplementedError

    def _columns(self):
        raise NotImplementedError

    # -- structure ----------------------------------------------------------------------------
    @property
    def _depth(self):
        return 1 + max((c._depth for c in self._children), default=0)

    def _rng(self, epoch):
        """The generator of this node's shuffle for ``epoch``."""
        return np.random.default_rng([config.get_seed(), int(epoch), self._depth])

    # -- information ---------------------------------------------------------------------------
    def _is_endless(self):
        """True when one pass never ends (an endless ``repeat()`` somewhere below)."""
        return any(c._is_endless() for c in self._children)

    def get_dataset_size(self):
        """Rows (or batches after ``batch``) in one epoch; -1 for an endless ``repeat()`` or a
        one-shot iterator of unknown length."""
        if self._cached_size is None:
            self._cached_size = int(self._size())
        return self._cached_size

    def __len__(self):
        size = self.get_dataset_size()
        if size < 0:
            raise TypeError("len() of an endlessly repeated dataset")
        return size

    def get_col_names(self):
        """The column names, in row order."""
        return list(self._columns())

    def get_batch_size(self):
        """The batch size of the last ``batch`` in the pipeline (1 without one)."""
        for c in self._children:
            return c.get_batch_size()
        return 1

    def get_repeat_count(self):
        """The count of the last ``repeat`` in the pipeline (1 without one)."""
        for c in self._children:
            return c.get_repeat_count()
        return 1

    def _first_row(self):
        for row in self._rows(self._epoch):
            return row
        raise RuntimeError("the dataset is empty")

    def output_shapes(self):
        """The shape of each column, from the first row."""
        return [list(a.shape) for a in self._first_row()]

    def output_types(self):
        """The numpy dtype of each column, from the first row."""
        return [a.dtype for a in self._first_row()]

    # -- pipeline operations -------------------------------------------------------------------
    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None,
              per_batch_map=None, input_columns=None, output_columns=None, **kwargs):
        """Stack ``batch_size`` consecutive rows into one, column by column.

        ``drop_remainder`` drops a last, smaller batch. ``per_batch_map(*columns,
        batch_info)`` (each column a list of arrays) may transform the rows of a batch before
        they are stacked; it returns one list/array per output column.
        """
        return BatchDataset(self, batch_size, drop_remainder, per_batch_map, input_columns,
                            output_columns)

    def shuffle(self, buffer_size):
        """Shuffle rows through a buffer of ``buffer_size`` rows (>= 2); a buffer at least
        the size of the dataset gives a uniform shuffle."""
        return ShuffleDataset(self, buffer_size)

    def map(self, operations, input_columns=None, output_columns=None, column_order=None,
            num_parallel_workers=None, python_multiprocessing=False, **kwargs):
        """Apply ``operations`` (a callable or a list, run in order) to ``input_columns``
        (default: the first column); the results replace them, or become ``output_columns``."""
        return MapDataset(self, operations, input_columns, output_columns, column_order)

    def repeat(self, count=None):
        """The dataset ``count`` times over (``None`` or -1: endlessly)."""
        return RepeatDataset(self, count)

    def take(self, count=-1):
        """The first ``count`` rows (-1: all)."""
        return TakeDataset(self, count)

    def skip(self, count):
        """All rows but the first ``count``."""
        return SkipDataset(self, count)

    def project(self, columns):
        """Only ``columns``, in that order."""
        return ProjectDataset(self, columns)

    def rename(self, input_columns, output_columns):
        """Columns ``input_columns`` renamed to ``output_columns``."""
        return RenameDataset(self, input_columns, output_columns)

    # -- iteration ---------------------------------------------------------------------------
    def _next_epoch_rows(self):
        epoch = self._epoch
        self._epoch += 1
        return self._rows(epoch)

    def _advance_epoch_to(self, epoch):
        """Start the next pass at epoch ``epoch`` or later (used when training resumes)."""
        self._epoch = max(self._epoch, int(epoch))

    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False,
                              do_copy=True):
        """An iterator of lists, one value per column (Tensors, or numpy arrays with
        ``output_numpy=True``). Each pass over it is one epoch; ``num_epochs`` limits the
        passes (-1: no limit)."""
        if columns is not None:
            columns = _check_columns(columns, "columns")
            missing = [c for c in columns if c not in self.get_col_names()]
            if missing:
                raise ValueError(f"columns: {missing} not in the dataset's columns "
                                 f"{self.get_col_names()}")
        return _Iterator(self, num_epochs, output_numpy, columns, as_dict=False)

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
        """Like :meth:`create_tuple_iterator`, yielding ``{column name: value}`` dicts."""
        return _Iterator(self, num_epochs, output_numpy, None, as_dict=True)

    def __iter__(self):
        return iter(self.create_tuple_iterator(num_epochs=1))

    def reset(self):
        """MindSpore compatibility; each pass starts afresh, so nothing to do."""


class _Iterator:
    """Iterates one epoch per pass; a new pass starts once the previous one has ended."""

    def __init__(self, dataset, num_epochs, output_numpy, columns, as_dict):
        self._dataset = dataset
        self._num_epochs = _check_int(num_epochs, "num_epochs", 1, allow=(-1,))
        if not isinstance(output_numpy, bool):
            raise TypeError(f"output_numpy: expected a bool, got {type(output_numpy).__name__}")
        self._output_numpy = output_numpy
        self._names = dataset.get_col_names()
        self._select = None if columns is None else [self._names.index(c) for c in columns]
        self._as_dict = as_dict
        self._epochs_done = 0
        self._current = None

    def _convert(self, row):
        if self._select is not None:
            row = tuple(row[i] for i in self._select)
        values = [a if self._output_numpy else to_tensor(a) for a in row]
        if self._as_dict:
            return dict(zip(self._names, values))
        return values

    def _start(self):
        if self._num_epochs != -1 and self._epochs_done >= self._num_epochs:
            raise RuntimeError(f"the iterator was created with num_epochs={self._num_epochs} "
                               f"and all of them have been read")
        self._current = iter(self._dataset._next_epoch_rows())

    def __iter__(self):
        if self._current is None:
            self._start()
        return self

    def __next__(self):
        if self._current is None:
            self._start()
        try:
            row = next(self._current)
        except StopIteration:
            self._current = None
            self._epochs_done += 1
            raise
        return self._convert(row)

    def get_col_names(self):
        """The column names of the rows."""
        return list(self._names)


_UNSIGNED_TO_SIGNED = {np.dtype(np.uint16): np.int32, np.dtype(np.uint32): np.int64,
                       np.dtype(np.uint64): np.int64}


def to_tensor(value):
    """A :class:`mscore.Tensor` for one column value; unsigned dtypes mscore has no type for
    (uint16/32/64, e.g. MNIST labels) become the next signed integer type."""
    from mscore.common.tensor import Tensor
    if isinstance(value, Tensor):
        return value
    arr = np.asarray(value)
    if arr.dtype in _UNSIGNED_TO_SIGNED:
        arr = arr.astype(_UNSIGNED_TO_SIGNED[arr.dtype])
    if arr.dtype.kind not in "biuf" and arr.dtype.name != "bfloat16":
        raise TypeError(f"a column of dtype {arr.dtype} cannot become a Tensor")
    return Tensor(np.ascontiguousarray(arr))


# -- operations --------------------------------------------------------------------------------
class BatchDataset(Dataset):
    """Rows stacked ``batch_size`` at a time (see :meth:`Dataset.batch`)."""

    def __init__(self, child, batch_size, drop_remainder=False, per_batch_map=None,
                 input_columns=None, output_columns=None):
        super().__init__([child])
        self.batch_size = _check_int(batch_size, "batch_size", 1)
        if not isinstance(drop_remainder, bool):
            raise TypeError(f"drop_remainder: expected a bool, got "
                            f"{type(drop_remainder).__name__}")
        self.drop_remainder = drop_remainder
        if per_batch_map is not None and not callable(per_batch_map):
            raise TypeError(f"per_batch_map: expected a callable, got "
                            f"{type(per_batch_map).__name__}")
        self.per_batch_map = per_batch_map
        names = child.get_col_names()
        self._in = None if input_columns is None else _check_columns(input_columns,
                                                                     "input_columns")
        if self._in is not None:
            bad = [c for c in self._in if c not in names]
            if bad:
                raise ValueError(f"input_columns: {bad} not in the dataset's columns {names}")
        self._out = None if output_columns is None else _check_columns(output_columns,
                                                                       "output_columns")
        if self._out is not None and per_batch_map is None:
            raise ValueError("output_columns: only meaningful together with per_batch_map")

    def get_batch_size(self):
        return self.batch_size

    def _columns(self):
        names = self._children[0].get_col_names()
        if self.per_batch_map is None or self._out is None:
            return names
        ins = self._in if self._in is not None else names
        out, done = [], False
        for n in names:
            if n in ins:
                if not done:
                    out.extend(self._out)
                    done = True
            else:
                out.append(n)
        return out

    def _size(self):
        n = self._children[0].get_dataset_size()
        if n < 0:
            return -1
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def _make_batch(self, rows, index, epoch):
        names = self._children[0].get_col_names()
        cols = [list(c) for c in zip(*rows)]
        if self.per_batch_map is not None:
            ins = self._in if self._in is not None else names
            idx = [names.index(c) for c in ins]
            result = self.per_batch_map(*[cols[i] for i in idx], BatchInfo(index, epoch))
            if not isinstance(result, tuple):
                result = (result,)
            n_out = len(self._out) if self._out is not None else len(idx)
            if len(result) != n_out:
                raise RuntimeError(f"per_batch_map returned {len(result)} column(s), expected "
                                   f"{n_out}")
            new_cols, done = [], False
            for i, c in enumerate(cols):
                if i in idx:
                    if not done:
                        new_cols.extend(list(r) for r in result)
                        done = True
                else:
                    new_cols.append(c)
            cols = new_cols
        out = []
        for name, col in zip(self.get_col_names(), cols):
            arrs = [_as_array(a) for a in col]
            shapes = {a.shape for a in arrs}
            if len(shapes) > 1:
                raise RuntimeError(f"batch: rows of column {name!r} have different shapes "
                                   f"{sorted(shapes)}; pad or resize them before batch")
            out.append(np.stack(arrs))
        return tuple(out)

    def _rows(self, epoch):
        buf, index = [], 0
        for row in self._children[0]._rows(epoch):
            buf.append(row)
            if len(buf) == self.batch_size:
                yield self._make_batch(buf, index, epoch)
                buf, index = [], index + 1
        if buf and not self.drop_remainder:
            yield self._make_batch(buf, index, epoch)


class ShuffleDataset(Dataset):
    """Rows shuffled through a buffer (see :meth:`Dataset.shuffle`)."""

    def __init__(self, child, buffer_size):
        super().__init__([child])
        self.buffer_size = _check_int(buffer_size, "buffer_size", 2)

    def _columns(self):
        return self._children[0].get_col_names()

    def _size(self):
        return self._children[0].get_dataset_size()

    def _rows(self, epoch):
        rng = self._rng(epoch)
        buf = []
        for row in self._children[0]._rows(epoch):
            if len(buf) < self.buffer_size:
                buf.append(row)
                continue
            i = int(rng.integers(len(buf)))
            yield buf[i]
            buf[i] = row
        order = rng.permutation(len(buf))
        for i in order:
            yield buf[i]


class MapDataset(Dataset):
    """Columns transformed by operations (see :meth:`Dataset.map`)."""

    def __init__(self, child, operations, input_columns=None, output_columns=None,
                 column_order=None):
        super().__init__([child])
        ops = operations if isinstance(operations, (list, tuple)) else [operations]
        if not ops:
            raise ValueError("operations: expected at least one operation")
        for i, op in enumerate(ops):
            if not callable(op):
                raise TypeError(f"operations: element {i} is not callable "
                                f"({type(op).__name__})")
        self.operations = list(ops)
        names = child.get_col_names()
        self._in = [names[0]] if input_columns is None else _check_columns(input_columns,
                                                                           "input_columns")
        bad = [c for c in self._in if c not in names]
        if bad:
            raise ValueError(f"input_columns: {bad} not in the dataset's columns {names}")
        self._out = list(self._in) if output_columns is None else \
            _check_columns(output_columns, "output_columns")
        self._order = None if column_order is None else _check_columns(column_order,
                                                                       "column_order")

    def _columns(self):
        names = self._children[0].get_col_names()
        out, done = [], False
        for n in names:
            if n in self._in:
                if not done:
                    out.extend(self._out)
                    done = True
            else:
                out.append(n)
        if self._order is not None:
            missing = [c for c in self._order if c not in out]
            if missing:
                raise ValueError(f"column_order: {missing} not among the columns {out}")
            return list(self._order)
        return out

    def _size(self):
        return self._children[0].get_dataset_size()

    def _rows(self, epoch):
        names = self._children[0].get_col_names()
        idx = [names.index(c) for c in self._in]
        full = []
        done = False
        for n in names:
            if n in self._in:
                if not done:
                    full.extend(self._out)
                    done = True
            else:
                full.append(n)
        select = None if self._order is None else [full.index(c) for c in self._order]
        for row in self._children[0]._rows(epoch):
            values = tuple(row[i] for i in idx)
            for op in self.operations:
                values = _as_row(op(*values), where=f"map operation {_op_name(op)}")
            if len(values) != len(self._out):
                raise RuntimeError(f"map: the operations returned {len(values)} column(s) for "
                                   f"output_columns {self._out}")
            new, done = [], False
            for i, v in enumerate(row):
                if i in idx:
                    if not done:
                        new.extend(values)
                        done = True
                else:
                    new.append(v)
            if select is not None:
                new = [new[i] for i in select]
            yield tuple(new)


def _op_name(op):
    return getattr(op, "__name__", type(op).__name__)


class RepeatDataset(Dataset):
    """The child ``count`` times over; each repetition is a new child epoch."""

    def __init__(self, child, count=None):
        super().__init__([child])
        if count is None:
            count = -1
        self.count = _check_int(count, "count", 1, allow=(-1,))

    def get_repeat_count(self):
        return self.count

    def _is_endless(self):
        return self.count == -1 or super()._is_endless()

    def _columns(self):
        return self._children[0].get_col_names()

    def _size(self):
        n = self._children[0].get_dataset_size()
        return -1 if self.count == -1 or n < 0 else n * self.count

    def _rows(self, epoch):
        k = 0
        while self.count == -1 or k < self.count:
            reps = 1 if self.count == -1 else self.count
            any_row = False
            for row in self._children[0]._rows(epoch * reps + k):
                any_row = True
                yield row
            if not any_row:
                return
            k += 1


class TakeDataset(Dataset):
    """The first ``count`` rows."""

    def __init__(self, child, count=-1):
        super().__init__([child])
        self.count = _check_int(count, "count", 1, allow=(-1,))

    def _columns(self):
        return self._children[0].get_col_names()

    def _size(self):
        n = self._children[0].get_dataset_size()
        if self.count == -1:
            return n
        return self.count if n < 0 else min(n, self.count)

    def _rows(self, epoch):
        for i, row in enumerate(self._children[0]._rows(epoch)):
            if self.count != -1 and i >= self.count:
                return
            yield row


class SkipDataset(Dataset):
    """All rows but the first ``count``."""

    def __init__(self, child, count):
        super().__init__([child])
        self.count = _check_int(count, "count", 0)

    def _columns(self):
        return self._children[0].get_col_names()

    def _size(self):
        n = self._children[0].get_dataset_size()
        return -1 if n < 0 else max(n - self.count, 0)

    def _rows(self, epoch):
        for i, row in enumerate(self._children[0]._rows(epoch)):
            if i >= self.count:
                yield row


class ProjectDataset(Dataset):
    """Only the given columns."""

    def __init__(self, child, columns):
        super().__init__([child])
        self._cols = _check_columns(columns, "columns")
        names = child.get_col_names()
        bad = [c for c in self._cols if c not in names]
        if bad:
            raise ValueError(f"columns: {bad} not in the dataset's columns {names}")
        self._idx = [names.index(c) for c in self._cols]

    def _columns(self):
        return list(self._cols)

    def _size(self):
        return self._children[0].get_dataset_size()

    def _rows(self, epoch):
        for row in self._children[0]._rows(epoch):
            yield tuple(row[i] for i in self._idx)


class RenameDataset(Dataset):
    """Columns renamed."""

    def __init__(self, child, input_columns, output_columns):
        super().__init__([child])
        ins = _check_columns(input_columns, "input_columns")
        outs = _check_columns(output_columns, "output_columns")
        if len(ins) != len(outs):
            raise ValueError(f"output_columns: expected {len(ins)} names to match "
                             f"input_columns, got {len(outs)}")
        names = child.get_col_names()
        bad = [c for c in ins if c not in names]
        if bad:
            raise ValueError(f"input_columns: {bad} not in the dataset's columns {names}")
        mapping = dict(zip(ins, outs))
        self._names = [mapping.get(n, n) for n in names]
        if len(set(self._names)) != len(self._names):
            raise ValueError(f"output_columns: renaming gives duplicate columns {self._names}")

    def _columns(self):
        return list(self._names)

    def _size(self):
        return self._children[0].get_dataset_size()

    def _rows(self, epoch):
        return self._children[0]._rows(epoch)


class IterableDataset(Dataset):
    """Wraps any Python iterable of rows (``(data, label)`` batches, say) as a pipeline.

    A re-iterable object (a list, a ``DataLoader``-like object) gives one pass per epoch; a
    one-shot iterator (a generator object) can be read for one epoch only.
    """

    def __init__(self, source, column_names=None):
        super().__init__()
        if isinstance(source, (str, bytes)) or not hasattr(source, "__iter__"):
            raise TypeError(f"dataset: expected an mscore.dataset.Dataset or an iterable of "
                            f"(data, label) batches, got {type(source).__name__}")
        self._source = source
        self._one_shot = iter(source) is source
        self._passes = 0
        self._names = None if column_names is None else _check_columns(column_names,
                                                                       "column_names")
        self._peeked = None

    def _columns(self):
        if self._names is None:
            row = self._peek()
            self._names = [f"column_{i}" for i in range(len(row))]
        return self._names

    def _peek(self):
        if self._peeked is None:
            if self._one_shot:
                try:
                    self._peeked = _raw_row(next(self._source))
                except StopIteration:
                    raise RuntimeError("the dataset iterator is empty") from None
            else:
                for item in self._source:
                    self._peeked = _raw_row(item)
                    break
                else:
                    raise RuntimeError("the dataset is empty")
        return self._peeked

    def _first_row(self):
        return self._peek()

    def _is_endless(self):
        return False

    def _size(self):
        if hasattr(self._source, "__len__"):
            return len(self._source)
        if self._one_shot:
            return -1  # unknown until it has been read
        return sum(1 for _ in self._source)

    def _rows(self, epoch):
        if self._one_shot:
            if self._passes:
                raise RuntimeError("a one-shot iterator (a generator object) can be read for "
                                   "one epoch only; pass a list, or a GeneratorDataset over a "
                                   "generator function, to train for several epochs")
            self._passes += 1
            if self._peeked is not None:
                yield self._peeked
                self._peeked = None
            for item in self._source:
                yield _raw_row(item)
            return
        self._passes += 1
        for item in self._source:
            yield _raw_row(item)


def _raw_row(item):
    """Like :func:`_as_row`, but keeps Tensors as they are (they are already on device)."""
    from mscore.common.tensor import Tensor
    if isinstance(item, dict):
        item = tuple(item.values())
    if not isinstance(item, (tuple, list)):
        item = (item,)
    return tuple(x if isinstance(x, (Tensor, np.ndarray)) else np.asarray(x) for x in item)


def as_dataset(obj, arg_name="dataset"):
    """``obj`` if it is a :class:`Dataset`; a :class:`~mscore.dataset.user.UserDataset` around
    an object with MindSpore's dataset interface; else an :class:`IterableDataset` around it.
    None or a non-iterable is an error that is both a TypeError and the AttributeError
    MindSpore raises."""
    if isinstance(obj, Dataset):
        return obj
    if obj is None:
        raise TypeAttributeError(f"{arg_name}: expected a dataset, got None")
    from mscore.dataset.user import UserDataset, is_user_dataset
    if is_user_dataset(obj):   # MindSpore's dataset interface (create_tuple_iterator, ...)
        return UserDataset(obj)
    try:
        return IterableDataset(obj)
    except TypeError as e:
        raise TypeAttributeError(f"{arg_name}: expected an mscore.dataset.Dataset, an object "
                                 f"with create_tuple_iterator/get_dataset_size, or an "
                                 f"iterable of (data, label) batches, got "
                                 f"{type(obj).__name__}") from e
