"""A user's own dataset object with MindSpore's dataset interface, as a pipeline.

MindSpore's ``Model`` accepts any object with ``create_tuple_iterator`` and
``get_dataset_size`` (its own tests use such "MindData" classes, and so does user code that
wraps another data source). It reads it this way, and :class:`UserDataset` does the same:
one iterator is created per ``train``/``eval`` (``create_tuple_iterator(num_epochs=<epochs of
the run>, do_copy=False)``), each epoch reads it until ``StopIteration``, and the object's
``reset()`` is called after every epoch (``Model`` calls it where MindSpore does: after the
evaluation ``fit`` runs at the end of an epoch; when nobody has, the next epoch calls it
before it starts), so an object whose iterator is itself and whose ``reset`` rewinds it
serves any number of epochs.
"""
from __future__ import annotations

from mscore.dataset.engine.datasets import Dataset
from mscore.dataset.engine.iterators import raw_row


def is_user_dataset(obj):
    """True for a non-mscore object with MindSpore's dataset interface."""
    return (not isinstance(obj, Dataset)
            and callable(getattr(obj, "create_tuple_iterator", None))
            and callable(getattr(obj, "get_dataset_size", None)))


class UserDataset(Dataset):
    """Adapts a user's dataset object (see the module docstring)."""

    def __init__(self, source):
        super().__init__()
        self._source = source
        self._iterator = None
        self._num_epochs = -1
        self._names = None
        self._needs_reset = False   # an epoch ended and the source's reset() is still due

    def plan_epochs(self, num_epochs):
        """Start a new run of ``num_epochs`` epochs: the next read creates a new iterator
        for them (MindSpore passes the run's epochs to ``create_tuple_iterator``)."""
        self._num_epochs = int(num_epochs)
        self._iterator = None

    def reset(self):
        """Call the source's ``reset()`` once the epoch being read has ended."""
        if self._needs_reset:
            self._needs_reset = False
            reset = getattr(self._source, "reset", None)
            if callable(reset):
                reset()

    def _size(self):
        return int(self._source.get_dataset_size())

    def _columns(self):
        if self._names is None:
            names = getattr(self._source, "get_col_names", None)
            if callable(names):
                self._names = list(names())
            else:
                self._names = [f"column_{i}" for i in range(len(self._first_row()))]
        return self._names

    def _is_endless(self):
        return False

    def _rows(self, epoch):
        self.reset()
        if self._iterator is None:
            self._iterator = iter(self._source.create_tuple_iterator(
                num_epochs=self._num_epochs, do_copy=False))
        iterator = self._iterator
        while True:
            try:
                item = next(iterator)
            except StopIteration:
                break
            yield raw_row(item)
        self._needs_reset = True
