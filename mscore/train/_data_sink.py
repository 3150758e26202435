"""``data_sink``: run a step function on batches a dataset feeds it (MindSpore 2.x's
functional sink mode).

MindSpore moves the dataset into a device queue and, on Ascend/GPU, runs ``sink_size`` steps
per call inside one graph. mscore keeps the loop in Python on every backend (CPU included):
each call of the returned function reads ``sink_size`` batches, going round the dataset as
often as needed and continuing where the previous call stopped, runs ``fn`` on each, and
returns the last result.
"""
from __future__ import annotations

import functools

from mscore.dataset.engine.iterable import as_dataset
from mscore.dataset.engine.iterators import to_tensor

__all__ = ["data_sink"]


def _check_sink_size(sink_size):
    if not isinstance(sink_size, int) or isinstance(sink_size, bool):
        raise TypeError(f"sink_size: expected an int, got {type(sink_size).__name__}")
    if sink_size <= 0:
        raise ValueError(f"sink_size: must be positive, got {sink_size}")
    return sink_size


def _endless_batches(dataset):
    while True:
        got = False
        for row in dataset._next_epoch_rows():
            got = True
            yield tuple(to_tensor(x) for x in row)
        if not got:
            raise RuntimeError("data_sink: the dataset is empty")


def data_sink(fn, dataset, sink_size=1, jit_config=None, input_signature=None):
    """A function that runs ``fn(*batch)`` on the next ``sink_size`` batches of ``dataset``
    and returns the last result.

    Args:
        fn (callable): the step (e.g. a train step returning the loss).
        dataset: an ``mscore.dataset`` pipeline or an iterable of batches.
        sink_size (int): batches per call (> 0).
        jit_config: accepted; compile ``fn`` with ``mscore.jit`` yourself if wanted.
        input_signature: accepted (the batches' shapes come from the dataset).

    >>> step = ms.data_sink(train_step, dataset, sink_size=4)
    >>> for _ in range(epochs * steps // 4):
    ...     loss = step()
    """
    if not callable(fn):
        raise TypeError(f"fn: expected a callable, got {type(fn).__name__}")
    sink_size = _check_sink_size(sink_size)
    data = as_dataset(dataset, "dataset")
    batches = _endless_batches(data)

    @functools.wraps(fn)
    def sink_process(*args, **kwargs):
        out = None
        for _ in range(sink_size):
            out = fn(*next(batches))
        return out

    return sink_process
