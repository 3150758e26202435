"""Row-by-row pipeline operations: map, filter, shuffle, repeat, take, skip, project,
rename."""
from __future__ import annotations

import collections

import numpy as np

from mscore.dataset import config
from mscore.dataset.callback import DSCallback
from mscore.dataset.callback.ds_callback import CallbackRunner
from mscore.dataset.engine import validators as v
from mscore.dataset.engine.datasets import Dataset, builds
from mscore.dataset.engine.map_workers import WorkerSlot, dump_job
from mscore.dataset.engine.op_random import OpStreams

__all__ = ["MapDataset", "FilterDataset", "ShuffleDataset", "RepeatDataset", "TakeDataset",
           "SkipDataset", "ProjectDataset", "RenameDataset", "apply_operations"]


class _OneChild(Dataset):
    """A node with one child whose columns and size it keeps unless it says otherwise."""

    def __init__(self, child, num_parallel_workers=None):
        super().__init__([child], num_parallel_workers)

    def _columns(self):
        return self._child().get_col_names()

    def _size(self):
        return self._child().get_dataset_size()


def replace_columns(names, ins, outs):
    """The column names after ``ins`` are replaced by ``outs``: in place when there are as
    many, else ``outs`` first and the other columns after them, in order."""
    if len(ins) == len(outs):
        mapping = dict(zip(ins, outs))
        return [mapping.get(n, n) for n in names]
    return list(outs) + [n for n in names if n not in ins]


def _place(row, names, ins, values):
    """The row with the values of columns ``ins`` replaced by ``values`` (see
    :func:`replace_columns`)."""
    if len(ins) == len(values):
        out = list(row)
        for name, value in zip(ins, values):
            out[names.index(name)] = value
        return tuple(out)
    return tuple(values) + tuple(x for n, x in zip(names, row) if n not in ins)


def _check_callbacks(callbacks):
    if callbacks is None:
        return []
    items = callbacks if isinstance(callbacks, list) else [callbacks]
    for cb in items:
        if not isinstance(cb, DSCallback):
            raise TypeError(f"callbacks: expected DSCallback objects, got "
                            f"{type(cb).__name__}")
    return items


@builds("map")
class MapDataset(_OneChild):
    """Columns transformed by operations (see :meth:`Dataset.map`)."""

    def __init__(self, child, operations, input_columns=None, output_columns=None,
                 num_parallel_workers=None, python_multiprocessing=False, max_rowsize=None,
                 cache=None, callbacks=None, offload=None, column_order=None):
        super().__init__(child, num_parallel_workers)
        ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        for op in ops:
            if not callable(op):
                raise ValueError(f"operations: every operation must be callable, got {op!r}")
        self.operations = ops
        self._in = v.check_optional_columns(input_columns, "input_columns")
        self._out = v.check_optional_columns(output_columns, "output_columns")
        self.python_multiprocessing = v.check_bool(python_multiprocessing,
                                                   "python_multiprocessing")
        self.max_rowsize = v.check_max_rowsize(max_rowsize)
        self._workers = self._worker_slot() if self.python_multiprocessing else None
        self._order = v.check_optional_columns(column_order, "column_order")
        self.callbacks = _check_callbacks(callbacks)
        self._streams = OpStreams()
        self._runs = None

    def _layout(self):
        names = self._child().get_col_names()
        ins = self._in if self._in is not None else names[:1]
        v.missing_columns(ins, names, "input_columns")
        outs = self._out if self._out is not None else ins
        return names, ins, outs

    def _columns(self):
        names, ins, outs = self._layout()
        out = replace_columns(names, ins, outs)
        if self._order is not None:
            v.missing_columns(self._order, out, "column_order")
            return list(self._order)
        return out

    def _worker_slot(self):
        what = f"map({', '.join(v.func_name(op) for op in self.operations)})"
        parts = [(f"operation {v.func_name(op)}", op) for op in self.operations]
        payload = dump_job(_MapJob(self.operations), what, parts)
        num = self.num_parallel_workers or config.get_num_parallel_workers()
        return WorkerSlot(what, payload, num)

    def _mapped(self, rows, idx, ins, epoch, runner):
        """``(row, new values)`` for each row: the operations run here, or in the workers."""
        if self._workers is None:
            self._streams.begin(epoch)
            for row in rows:
                runner.step_begin()
                token = self._streams.activate()
                try:
                    values = apply_operations(self.operations, tuple(row[i] for i in idx), ins)
                finally:
                    OpStreams.deactivate(token)
                yield row, values
            return
        held = collections.deque()

        def requests():
            for row in rows:
                held.append(row)
                yield tuple(row[i] for i in idx), ins

        for values in self._workers.run(requests(), epoch):
            runner.step_begin()
            yield held.popleft(), values

    def _rows(self, epoch):
        names, ins, outs = self._layout()
        idx = [names.index(c) for c in ins]
        full = replace_columns(names, ins, outs)
        select = None if self._order is None else [full.index(c) for c in self._order]
        if epoch == 0 or self._runs is None:
            self._runs = CallbackRunner(self.callbacks)
        runner = self._runs
        runner.epoch_begin(epoch)
        for row, values in self._mapped(self._child()._rows(epoch), idx, ins, epoch, runner):
            if len(values) != len(outs):
                raise RuntimeError(f"map: the operations returned {len(values)} column(s) for "
                                   f"output_columns {outs}")
            new = _place(row, names, ins, values)
            runner.step_end()
            yield new if select is None else tuple(new[i] for i in select)
        runner.epoch_end()


def apply_operations(operations, values, columns):
    """The new values of ``columns`` (a row tuple) after ``operations`` ran in order on
    ``values``; an operation that returns None or a dict (or a tuple holding one) fails at
    once naming it and the columns."""
    where = f"map on column(s) {columns}"
    for op in operations:
        where = f"map operation {v.func_name(op)} on column(s) {columns}"
        values = v.call_user(op, values, where)
        if values is None or isinstance(values, dict):
            what = "None" if values is None else "a dict"
            raise RuntimeError(f"{where} returned {what}; a map operation returns the new "
                               f"column values (an array, or a tuple of arrays)")
        if not isinstance(values, tuple):
            values = (values,)
        if any(x is None or isinstance(x, dict) for x in values):
            raise RuntimeError(f"{where} returned a tuple holding None or a dict; a map "
                               f"operation returns the new column values as arrays")
    row = v.as_row(values, "map")
    if any(x.dtype == object for x in row):
        # MindSpore: "Failed to create tensor from numpy array, data type is unknown."
        raise RuntimeError(f"{where} returned an array of dtype object, which cannot become "
                           f"a column: failed to create tensor from numpy array, data type is "
                           f"unknown (a column holds numbers, bool or str)")
    return row


class _MapJob:
    """What a map's worker process runs on one row (see :mod:`.map_workers`)."""

    def __init__(self, operations):
        self.operations = operations

    def __call__(self, values, columns):
        return apply_operations(self.operations, values, columns)


@builds("filter")
class FilterDataset(_OneChild):
    """Rows for which a predicate holds (see :meth:`Dataset.filter`)."""

    def __init__(self, child, predicate, input_columns=None, num_parallel_workers=None):
        super().__init__(child, num_parallel_workers)
        if not callable(predicate):
            raise TypeError("predicate: expected a Python function or a callable object")
        self.predicate = predicate
        self._in = v.check_optional_columns(input_columns, "input_columns")

    def _size(self):
        return self._count_rows()

    def _rows(self, epoch):
        names = self._child().get_col_names()
        ins = self._in if self._in is not None else names
        v.missing_columns(ins, names, "input_columns")
        idx = [names.index(c) for c in ins]
        where = f"filter predicate {v.func_name(self.predicate)}"
        for row in self._child()._rows(epoch):
            keep = v.call_user(self.predicate, tuple(row[i] for i in idx), where)
            arr = np.asarray(keep)
            if arr.size != 1:
                raise RuntimeError(f"{where}: expected a bool, got a value of shape {arr.shape}")
            if bool(arr):
                yield row


@builds("shuffle")
class ShuffleDataset(_OneChild):
    """Rows shuffled through a buffer (see :meth:`Dataset.shuffle`)."""

    def __init__(self, child, buffer_size):
        super().__init__(child)
        self.buffer_size = v.check_int(buffer_size, "buffer_size", 2, v.INT32_MAX)
        self.reshuffle_each_epoch = True

    def _rows(self, epoch):
        epoch = epoch if self.reshuffle_each_epoch else 0
        rng = np.random.default_rng([config.get_seed(), epoch])
        draws = iter(())
        buf = []
        rows = iter(self._child()._rows(epoch))
        for row in rows:
            buf.append(row)
            if len(buf) == self.buffer_size:
                break
        for row in rows:
            u = next(draws, None)
            if u is None:
                draws = iter(rng.random(1024).tolist())
                u = next(draws)
            slot = int(u * len(buf))
            yield buf[slot]
            buf[slot] = row
        for i in rng.permutation(len(buf)):
            yield buf[i]


@builds("repeat")
class RepeatDataset(_OneChild):
    """The child ``count`` times over; each repetition is a new child epoch."""

    def __init__(self, child, count=None):
        super().__init__(child)
        if count is None:
            count = -1
        if not isinstance(count, int) or isinstance(count, bool):
            raise TypeError(f"count: expected an int or None, got {type(count).__name__}")
        if count != -1 and not 0 < count <= v.INT32_MAX:
            raise ValueError(f"count: expected -1 or an int in [1, {v.INT32_MAX}], got {count}")
        self.count = count

    def get_repeat_count(self):
        return self.count

    def _is_endless(self):
        return self.count == -1 or super()._is_endless()

    def _size(self):
        n = self._child().get_dataset_size()
        return n if self.count == -1 or n < 0 else n * self.count

    def _rows(self, epoch):
        reps = 1 if self.count == -1 else self.count
        k = 0
        while self.count == -1 or k < self.count:
            any_row = False
            for row in self._child()._rows(epoch * reps + k):
                any_row = True
                yield row
            if not any_row:
                return
            k += 1


@builds("take")
class TakeDataset(_OneChild):
    """The first ``count`` rows."""

    def __init__(self, child, count=-1):
        super().__init__(child)
        v.check_type(count, int, "count")
        if count != -1 and not 0 < count <= v.INT32_MAX:
            raise ValueError(f"count: expected -1 or an int in [1, {v.INT32_MAX}], got {count}")
        self.count = count

    def _size(self):
        n = self._child().get_dataset_size()
        if self.count == -1:
            return n
        return self.count if n < 0 else min(n, self.count)

    def _rows(self, epoch):
        if self.count == -1:
            yield from self._child()._rows(epoch)
            return
        for i, row in enumerate(self._child()._rows(epoch)):
            yield row
            if i + 1 >= self.count:
                return


@builds("skip")
class SkipDataset(_OneChild):
    """All rows but the first ``count``."""

    def __init__(self, child, count):
        super().__init__(child)
        self.count = v.check_int(count, "count", 0, v.INT32_MAX)

    def _size(self):
        n = self._child().get_dataset_size()
        return -1 if n < 0 else max(n - self.count, 0)

    def _rows(self, epoch):
        for i, row in enumerate(self._child()._rows(epoch)):
            if i >= self.count:
                yield row


@builds("project")
class ProjectDataset(_OneChild):
    """Only the given columns."""

    def __init__(self, child, columns):
        super().__init__(child)
        self._cols = v.check_columns(columns, "columns")

    def _columns(self):
        v.missing_columns(self._cols, self._child().get_col_names(), "columns")
        return list(self._cols)

    def _rows(self, epoch):
        names = self._child().get_col_names()
        v.missing_columns(self._cols, names, "columns")
        idx = [names.index(c) for c in self._cols]
        for row in self._child()._rows(epoch):
            yield tuple(row[i] for i in idx)


@builds("rename")
class RenameDataset(_OneChild):
    """Columns renamed."""

    def __init__(self, child, input_columns, output_columns):
        super().__init__(child)
        self._ins = v.check_columns(input_columns, "input_columns")
        self._outs = v.check_columns(output_columns, "output_columns")
        if len(self._ins) != len(self._outs):
            raise ValueError(f"output_columns: expected as many names as input_columns "
                             f"({len(self._ins)}), got {len(self._outs)}")

    def _columns(self):
        names = self._child().get_col_names()
        v.missing_columns(self._ins, names, "input_columns")
        mapping = dict(zip(self._ins, self._outs))
        out = [mapping.get(n, n) for n in names]
        if len(set(out)) != len(out):
            raise RuntimeError(f"output_columns: renaming gives duplicate columns {out}")
        return out

    def _rows(self, epoch):
        self._columns()
        return self._child()._rows(epoch)
