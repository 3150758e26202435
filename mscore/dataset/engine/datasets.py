"""``Dataset``: the base of every pipeline node, with MindSpore's pipeline methods.

A pipeline is a chain of nodes. A source produces rows, each a tuple of numpy arrays (one
per column); ``map``, ``batch``, ``shuffle``, ``repeat``, ... each return a new node. A pass
over a pipeline runs it lazily on the host, one row at a time, in the calling thread; the
iterators convert rows to :class:`mscore.Tensor` on the active backend.

Every pass has an epoch number. Random choices (samplers, ``shuffle``, random transforms)
depend on the pipeline seed (:func:`mscore.dataset.config.get_seed`) and the epoch, so a run
that resumes at epoch ``k`` (``Model.train(..., initial_epoch=k)``) reads what an
uninterrupted run reads in epoch ``k``.
"""
from __future__ import annotations

import numpy as np

from mscore.dataset.engine import validators as v
from mscore.dataset.engine.device_feed import DeviceQueue
from mscore.dataset.engine.iterators import DictIterator, TupleIterator

__all__ = ["Dataset", "BatchInfo"]

# The operation nodes Dataset's pipeline methods build, by method name. The modules that
# define them (ops_rows, ops_batch, ops_combine) import this one and register their nodes with
# ``builds``; the package ``mscore.dataset.engine`` imports them all, so the table is full once
# any engine module has been imported.
_BUILDERS = {}

_BATCH_KWARGS = ("per_batch_map", "input_columns", "output_columns", "python_multiprocessing",
                 "max_rowsize")
_MAP_KWARGS = ("python_multiprocessing", "max_rowsize", "cache", "callbacks", "offload",
               "column_order")


def _unexpected(kwargs, allowed, where):
    for key in kwargs:
        if key not in allowed:
            raise TypeError(f"{where}() got an unexpected keyword argument {key!r}")


def builds(*methods):
    """Class (or function) decorator: ``Dataset``'s pipeline methods named ``methods`` build
    their result by calling the decorated callable (with the dataset, or the datasets they
    combine, first)."""
    def register(builder):
        for method in methods:
            _BUILDERS[method] = builder
        return builder
    return register


def _builder(method):
    """The registered builder of pipeline method ``method``."""
    try:
        return _BUILDERS[method]
    except KeyError:
        raise RuntimeError(f"Dataset.{method}: its operation is not registered (import "
                           f"mscore.dataset.engine)") from None


class BatchInfo:
    """Passed to a ``per_batch_map`` function or a callable ``batch_size``: the batch number
    (counted across epochs, from 0) and the epoch number (from 0)."""

    def __init__(self, batch_num, epoch_num):
        self._batch_num, self._epoch_num = batch_num, epoch_num

    def get_batch_num(self):
        """The batch number."""
        return self._batch_num

    def get_epoch_num(self):
        """The epoch number."""
        return self._epoch_num


class Dataset:
    """Base class of pipeline nodes. Subclasses implement ``_rows(epoch)`` (an iterator of
    row tuples), ``_size()`` (rows per epoch) and ``_columns()`` (the column names)."""

    def __init__(self, children=(), num_parallel_workers=None):
        self.children = list(children)
        self.num_parallel_workers = v.check_num_parallel_workers(num_parallel_workers)
        self._epoch = 0             # the epoch of the next pass the training loop reads
        self._first_epoch = 0       # where a new iterator starts (a resumed run: later)
        self._cached_size = None
        self._init_step = 0

    # -- to override ------------------------------------------------------------------------
    def _rows(self, epoch):
        raise NotImplementedError

    def _size(self):
        raise NotImplementedError

    def _columns(self):
        raise NotImplementedError

    @property
    def _children(self):
        return self.children

    def _child(self):
        return self.children[0]

    # -- information ---------------------------------------------------------------------------
    def _is_endless(self):
        """True when one pass never ends (an endless ``repeat()`` somewhere below)."""
        return any(c._is_endless() for c in self.children)

    def get_dataset_size(self):
        """Rows (or batches after ``batch``) in one epoch; for an endless ``repeat()``, one
        repetition's; -1 for a one-shot iterator of unknown length."""
        if self._cached_size is None:
            self._cached_size = int(self._size())
        return self._cached_size

    def _count_rows(self):
        """The size of one epoch by running it (filters, bucketing, unknown sources)."""
        return sum(1 for _ in self._rows(0))

    def __len__(self):
        size = self.get_dataset_size()
        if size < 0:
            raise TypeError("len() of a dataset of unknown size (a one-shot iterator)")
        return size

    def get_col_names(self):
        """The column names, in row order."""
        return list(self._columns())

    def get_batch_size(self):
        """The batch size of the last ``batch`` in the pipeline (1 without one)."""
        for c in self.children:
            return c.get_batch_size()
        return 1

    def get_repeat_count(self):
        """The count of the last ``repeat`` in the pipeline (1 without one)."""
        for c in self.children:
            return c.get_repeat_count()
        return 1

    def num_classes(self):
        """The number of classes of a labelled source below (``ImageFolderDataset``), or
        None."""
        for c in self.children:
            return c.num_classes()
        return None

    def get_class_indexing(self):
        """``{class name: label}`` of ``ImageFolderDataset`` below; ``{}`` otherwise."""
        for c in self.children:
            return c.get_class_indexing()
        return {}

    def _first_row(self):
        for row in self._rows(self._epoch):
            return row
        raise RuntimeError("the dataset is empty")

    def output_shapes(self, estimate=False):
        """The shape of each column, from the first row."""
        v.check_bool(estimate, "estimate")
        return [list(np.shape(a)) for a in self._first_row()]

    def output_types(self):
        """The numpy dtype of each column, from the first row."""
        return [np.asarray(a).dtype for a in self._first_row()]

    # -- pipeline operations -------------------------------------------------------------------
    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, **kwargs):
        """Stack ``batch_size`` consecutive rows into one, column by column.

        ``batch_size`` may be a function of a :class:`BatchInfo`. ``drop_remainder`` drops a
        last, smaller batch. Keyword arguments: ``per_batch_map(*columns, batch_info)``
        (each column a list of arrays, one per row) transforms the rows of a batch before
        they are stacked and returns one list (or array) per output column;
        ``input_columns`` (the columns it receives; default all), ``output_columns`` (the
        names of what it returns; default ``input_columns``); ``python_multiprocessing`` runs
        ``per_batch_map`` in ``num_parallel_workers`` worker processes
        (:mod:`~mscore.dataset.engine.map_workers`); ``max_rowsize`` is checked.
        """
        _unexpected(kwargs, _BATCH_KWARGS, "batch")
        return _builder("batch")(self, batch_size, drop_remainder, num_parallel_workers,
                                 **kwargs)

    def padded_batch(self, batch_size, drop_remainder=False, num_parallel_workers=None,
                     pad_info=None):
        """Like :meth:`batch`, padding the rows of a batch to one shape first: ``pad_info``
        maps a column to ``(shape, pad_value)`` (a ``None`` shape or dimension: the longest
        in the batch); ``{}`` pads every column to the longest with 0."""
        return _builder("padded_batch")(self, batch_size, drop_remainder,
                                        num_parallel_workers, pad_info)

    def bucket_batch_by_length(self, column_names, bucket_boundaries, bucket_batch_sizes,
                               element_length_function=None, pad_info=None,
                               pad_to_bucket_boundary=False, drop_remainder=False):
        """Group rows by length into buckets ``[0, b0), [b0, b1), ..., [b_last, inf)`` and
        batch each bucket with its own size from ``bucket_batch_sizes``. The length is the
        first dimension of the single column in ``column_names``, or
        ``element_length_function(*columns)``."""
        return _builder("bucket_batch_by_length")(
            self, column_names, bucket_boundaries, bucket_batch_sizes, element_length_function,
            pad_info, pad_to_bucket_boundary, drop_remainder)

    def map(self, operations, input_columns=None, output_columns=None, num_parallel_workers=None,
            **kwargs):
        """Apply ``operations`` (a callable or a list, run in order) to ``input_columns``
        (default: the first column). The results replace the input columns in place when
        there are as many; otherwise they come first, named ``output_columns``, followed by
        the other columns. Keyword arguments: ``callbacks`` (``DSCallback`` objects told of
        every row), ``python_multiprocessing`` (run the operations in ``num_parallel_workers``
        worker processes: :mod:`~mscore.dataset.engine.map_workers`), ``max_rowsize``
        (checked), ``cache``, ``offload`` (accepted), ``column_order`` (MindSpore 1.x: the
        columns to keep, in order)."""
        _unexpected(kwargs, _MAP_KWARGS, "map")
        return _builder("map")(self, operations, input_columns, output_columns,
                               num_parallel_workers, **kwargs)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None):
        """The rows for which ``predicate(*input_columns)`` (default: every column) is
        true."""
        return _builder("filter")(self, predicate, input_columns, num_parallel_workers)

    def shuffle(self, buffer_size):
        """Shuffle rows through a buffer of ``buffer_size`` rows (>= 2): a row leaves the
        buffer at random and the next row takes its place. A buffer at least the size of
        the dataset gives a uniform shuffle; a new order each epoch."""
        return _builder("shuffle")(self, buffer_size)

    def repeat(self, count=None):
        """The dataset ``count`` times over (``None`` or -1: endlessly)."""
        return _builder("repeat")(self, count)

    def take(self, count=-1):
        """The first ``count`` rows (-1: all)."""
        return _builder("take")(self, count)

    def skip(self, count):
        """All rows but the first ``count``."""
        return _builder("skip")(self, count)

    def project(self, columns):
        """Only ``columns``, in that order."""
        return _builder("project")(self, columns)

    def rename(self, input_columns, output_columns):
        """Columns ``input_columns`` renamed to ``output_columns``."""
        return _builder("rename")(self, input_columns, output_columns)

    def concat(self, datasets):
        """This dataset's rows followed by those of ``datasets`` (a Dataset or a list of
        them; same columns)."""
        if isinstance(datasets, Dataset):
            datasets = [datasets]
        elif not isinstance(datasets, list):
            raise TypeError(f"datasets: expected a Dataset or a list of Datasets, got "
                            f"{type(datasets).__name__}")
        for i, d in enumerate(datasets):
            if not isinstance(d, Dataset):
                raise TypeError(f"datasets: element {i} is not a Dataset "
                                f"({type(d).__name__})")
        return _builder("concat")([self] + datasets)

    def __add__(self, datasets):
        return self.concat(datasets)

    def zip(self, datasets):
        """Rows of this dataset and of ``datasets`` (a Dataset or a tuple of them) side by
        side; as many rows as the shortest has. Column names must differ."""
        if isinstance(datasets, Dataset):
            datasets = (datasets,)
        elif not isinstance(datasets, tuple):
            raise TypeError(f"datasets: expected a Dataset or a tuple of Datasets, got "
                            f"{type(datasets).__name__}")
        return _builder("zip")((self,) + datasets)

    def split(self, sizes, randomize=True):
        """Split into datasets of ``sizes`` rows (ints summing to the dataset size) or
        fractions (floats summing to 1). ``randomize`` assigns rows at random (the same way
        every epoch)."""
        return _builder("split")(self, sizes, randomize)

    def apply(self, apply_func):
        """``apply_func(self)``, which must return a Dataset."""
        v.check_callable(apply_func, "apply_func")
        out = apply_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"apply_func: must return a Dataset, got {type(out).__name__}")
        return out

    def use_sampler(self, new_sampler):
        """Replace the sampler of the source (or, on ``concat``, sample the concatenation:
        a ``DistributedSampler`` without shuffle)."""
        for c in self.children:
            c.use_sampler(new_sampler)

    # -- iteration ---------------------------------------------------------------------------
    def _next_epoch_rows(self):
        epoch = self._epoch
        self._epoch += 1
        return self._rows(epoch)

    def _advance_epoch_to(self, epoch):
        """Start the next pass at epoch ``epoch`` or later, and new iterators at ``epoch``
        (used when training resumes)."""
        self._epoch = max(self._epoch, int(epoch))
        self._first_epoch = int(epoch)

    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False,
                              do_copy=False):
        """An iterator of lists, one value per column (Tensors, or numpy arrays with
        ``output_numpy=True``; string columns stay numpy arrays). Each pass over it is one
        epoch; ``num_epochs`` limits the passes (-1: no limit)."""
        return TupleIterator(self, columns, num_epochs, output_numpy, do_copy)

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=False):
        """Like :meth:`create_tuple_iterator`, yielding ``{column name: value}`` dicts."""
        return DictIterator(self, num_epochs, output_numpy, do_copy)

    def __iter__(self):
        return iter(self.create_tuple_iterator(num_epochs=1))

    def device_que(self, send_epoch_end=True, create_data_info_queue=False, queue_name=""):
        """A :class:`~mscore.dataset.engine.device_feed.DeviceQueue` over the pipeline: the
        batches as device Tensors, prepared ahead in a background thread."""
        v.check_bool(send_epoch_end, "send_epoch_end")
        v.check_bool(create_data_info_queue, "create_data_info_queue")
        v.check_type(queue_name, str, "queue_name")
        return DeviceQueue(self, send_epoch_end)

    def reset(self):
        """Start the next pass afresh (each pass already does)."""

    def set_init_step(self, init_step):
        """The step a resumed pipeline starts from (recorded; passes start at the epoch
        ``Model`` asks for)."""
        self._init_step = v.check_int(init_step, "init_step", 0)

    def get_init_step(self):
        """See :meth:`set_init_step`."""
        return self._init_step

    def save(self, file_name, num_files=1, file_type="mindrecord"):
        """MindRecord files are MindSpore's own format; mscore does not write them."""
        raise NotImplementedError("Dataset.save: MindRecord files are not supported by mscore; "
                                  "save the arrays with numpy instead")

    def sync_wait(self, condition_name, num_batch=1, callback=None):
        """Not supported: mscore pipelines run in the training thread, so there is nothing
        to wait for."""
        raise NotImplementedError("Dataset.sync_wait: not supported by mscore")

    def sync_update(self, condition_name, num_batch=None, data=None):
        """See :meth:`sync_wait`."""
        raise NotImplementedError("Dataset.sync_update: not supported by mscore")
