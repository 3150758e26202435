"""Any Python iterable of rows as a pipeline (what ``Model.train`` accepts besides an
``mscore.dataset`` pipeline)."""
from __future__ import annotations

from mscore.common._errors import TypeAttributeError
from mscore.dataset.engine.datasets import Dataset
from mscore.dataset.engine.iterators import raw_row
from mscore.dataset.engine.validators import check_columns
from mscore.dataset.user import UserDataset, is_user_dataset

__all__ = ["IterableDataset", "as_dataset"]


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
        self._names = None if column_names is None else check_columns(column_names, "column_names")
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
                    self._peeked = raw_row(next(self._source))
                except StopIteration:
                    raise RuntimeError("the dataset iterator is empty") from None
            else:
                for item in self._source:
                    self._peeked = raw_row(item)
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
                yield raw_row(item)
            return
        self._passes += 1
        for item in self._source:
            yield raw_row(item)


def as_dataset(obj, arg_name="dataset"):
    """``obj`` if it is a :class:`Dataset`; a :class:`~mscore.dataset.user.UserDataset` around
    an object with MindSpore's dataset interface; else an :class:`IterableDataset` around it.
    None or a non-iterable is an error that is both a TypeError and the AttributeError
    MindSpore raises."""
    if isinstance(obj, Dataset):
        return obj
    if obj is None:
        raise TypeAttributeError(f"{arg_name}: expected a dataset, got None")
    if is_user_dataset(obj):   # MindSpore's dataset interface (create_tuple_iterator, ...)
        return UserDataset(obj)
    try:
        return IterableDataset(obj)
    except TypeError as e:
        raise TypeAttributeError(f"{arg_name}: expected an mscore.dataset.Dataset, an object "
                                 f"with create_tuple_iterator/get_dataset_size, or an "
                                 f"iterable of (data, label) batches, got "
                                 f"{type(obj).__name__}") from e
