"""Iterators over a pipeline (``TupleIterator``, ``DictIterator``) and the conversions of
column values and rows (``to_tensor``, ``to_output``, ``raw_row``)."""
from __future__ import annotations

import numpy as np

from mscore.common.tensor import Tensor
from mscore.dataset.engine import validators as v
from mscore.dataset.engine.map_workers import WorkerLease, lease_scope

__all__ = ["TupleIterator", "DictIterator", "to_tensor", "to_output", "raw_row"]

_UNSIGNED_TO_SIGNED = {np.dtype(np.uint16): np.int32, np.dtype(np.uint32): np.int64,
                       np.dtype(np.uint64): np.int64}


def to_tensor(value):
    """A :class:`mscore.Tensor` for one column value; unsigned dtypes mscore has no type for
    (uint16/32/64, e.g. MNIST labels) become the next signed integer type."""
    if isinstance(value, Tensor):
        return value
    arr = np.asarray(value)
    if arr.dtype in _UNSIGNED_TO_SIGNED:
        arr = arr.astype(_UNSIGNED_TO_SIGNED[arr.dtype])
    if arr.dtype.kind not in "biuf" and arr.dtype.name != "bfloat16":
        raise TypeError(f"a column of dtype {arr.dtype} cannot become a Tensor")
    return Tensor(arr if arr.flags.c_contiguous else arr.copy())


def to_output(value, output_numpy, do_copy=False):
    """A column value as an iterator gives it: a Tensor, or a numpy array with
    ``output_numpy`` (string and bytes columns are numpy arrays either way, as in
    MindSpore)."""
    if isinstance(value, Tensor):
        return value.asnumpy() if output_numpy else value
    arr = np.asarray(value)
    if output_numpy or arr.dtype.kind in "USO":
        return arr.copy() if do_copy else arr
    return to_tensor(arr)


def raw_row(item):
    """An item a user's iterable or dataset object yields, as a row: a tuple of numpy arrays
    and the Tensors it holds as they are (they are already on device)."""
    if isinstance(item, dict):
        item = tuple(item.values())
    if not isinstance(item, (tuple, list)):
        item = (item,)
    return tuple(x if isinstance(x, (Tensor, np.ndarray)) else np.asarray(x) for x in item)


class _Iterator:
    """Iterates one epoch per pass, from epoch 0; a new pass starts once the previous one has
    ended."""

    def __init__(self, dataset, columns, num_epochs, output_numpy, do_copy, as_dict):
        v.check_type(num_epochs, int, "num_epochs")
        if num_epochs == 0:
            raise RuntimeError("num_epochs: expected -1 or a positive int, got 0")
        self._num_epochs = v.check_int(num_epochs, "num_epochs", -1, v.INT32_MAX)
        self._output_numpy = v.check_bool(output_numpy, "output_numpy")
        self._do_copy = v.check_bool(do_copy, "do_copy")
        self._wanted = v.check_optional_columns(columns, "columns")
        self.dataset = dataset
        self._as_dict = as_dict
        self._epochs_done = 0
        self._current = None
        self._names = None
        self._select = None
        self._lease = WorkerLease()   # worker pools kept from one epoch to the next

    def _layout(self):
        if self._names is None:
            names = self.dataset.get_col_names()
            if self._wanted is not None:
                v.missing_columns(self._wanted, names, "columns")
                self._select = [names.index(c) for c in self._wanted]
                names = list(self._wanted)
            self._names = names
        return self._names

    def _convert(self, row):
        if self._select is not None:
            row = tuple(row[i] for i in self._select)
        values = [to_output(a, self._output_numpy, self._do_copy) for a in row]
        if self._as_dict:
            return dict(zip(self._names, values))
        return values

    def _start(self):
        if self._num_epochs != -1 and self._epochs_done >= self._num_epochs:
            raise RuntimeError(f"the iterator was created with num_epochs={self._num_epochs} "
                               f"and all of them have been read")
        self._layout()
        # Each iterator is a fresh pipeline, as in MindSpore: its first pass is epoch 0 (of a
        # resumed run: the epoch it resumes at), so a second iterator replays the first
        # one's shuffle order.
        epoch = getattr(self.dataset, "_first_epoch", 0) + self._epochs_done
        self._current = iter(self.dataset._rows(epoch))

    def __iter__(self):
        if self._current is None:
            self._start()
        return self

    def __next__(self):
        if self._current is None:
            self._start()
        try:
            with lease_scope(self._lease):
                row = next(self._current)
        except StopIteration:
            self._current = None
            self._epochs_done += 1
            if self._num_epochs != -1 and self._epochs_done >= self._num_epochs:
                self._lease.close()
            raise
        except BaseException:
            self._current = None
            self._lease.close()
            raise
        return self._convert(row)

    def get_col_names(self):
        """The column names of the rows."""
        return list(self._layout())

    def stop(self):
        """End the current pass (the next pass starts a new epoch)."""
        if self._current is not None:
            self._current = None
            self._epochs_done += 1

    def release(self):
        """End the current pass and stop the worker processes kept for the next ones."""
        self.stop()
        self._lease.close()

    def __del__(self):
        self._current = None
        lease = getattr(self, "_lease", None)
        if lease is not None:
            lease.close()


class TupleIterator(_Iterator):
    """Yields a list of column values per row (see ``Dataset.create_tuple_iterator``)."""

    def __init__(self, dataset, columns=None, num_epochs=-1, output_numpy=False, do_copy=False):
        super().__init__(dataset, columns, num_epochs, output_numpy, do_copy, as_dict=False)


class DictIterator(_Iterator):
    """Yields ``{column name: value}`` per row (see ``Dataset.create_dict_iterator``)."""

    def __init__(self, dataset, num_epochs=-1, output_numpy=False, do_copy=False):
        super().__init__(dataset, None, num_epochs, output_numpy, do_copy, as_dict=True)
