"""Device-ready batches: a pipeline read one epoch at a time as tuples of device Tensors,
optionally prefetched by a background thread (``DeviceFeed``), and ``Dataset.device_que``'s
``DeviceQueue`` over it.

MindSpore's sink mode moves the whole loop onto the device and feeds it through a device
queue. mscore keeps the loop in Python on every backend; sink mode means a background thread
reads the pipeline and converts each batch to Tensors of the active backend (the
host-to-device copy) ahead of the step, through a bounded queue
(:func:`mscore.dataset.config.set_prefetch_size`, default 4 batches).
"""
from __future__ import annotations

import queue
import threading

from mscore.dataset.config import get_prefetch_size
from mscore.dataset.engine import validators as v
from mscore.dataset.engine.iterators import to_tensor

__all__ = ["DeviceFeed", "DeviceQueue", "device_row"]

_END_EPOCH = object()
_DONE = object()


class _Failure:
    """An exception of the background thread, raised again by the reader."""

    def __init__(self, exc):
        self.exc = exc


def device_row(row):
    """A row of column values as device Tensors."""
    return tuple(to_tensor(x) for x in row)


class _Prefetcher:
    """A background thread that converts rows to Tensors and queues them.

    With ``sink_size > 0`` it streams rows across dataset passes and puts ``steps`` of them
    per epoch; otherwise it puts one whole pass per epoch followed by an end-of-epoch mark.
    """

    def __init__(self, stream_fn, epochs, steps, depth):
        self._queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(stream_fn, epochs, steps),
                                        name="mscore-dataset-sink", daemon=True)
        self._thread.start()

    def _put(self, item):
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, stream_fn, epochs, steps):
        try:
            if steps > 0:
                stream = stream_fn()
                for _ in range(epochs * steps):
                    if self._stop.is_set():
                        return
                    if not self._put(device_row(next(stream))):
                        return
            else:
                for _ in range(epochs):
                    for row in stream_fn():
                        if not self._put(device_row(row)):
                            return
                    if not self._put(_END_EPOCH):
                        return
            self._put(_DONE)
        except BaseException as exc:
            self._put(_Failure(exc))

    def get(self):
        item = self._queue.get()
        if isinstance(item, _Failure):
            raise item.exc
        return item

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=5)

    @property
    def alive(self):
        return self._thread.is_alive()


class DeviceFeed:
    """A pipeline one epoch at a time as tuples of device Tensors: read in the calling thread,
    or (``dataset_sink_mode``) prefetched by a background thread. ``sink_size`` -1 makes an
    epoch one pass; ``n > 0`` makes it ``n`` rows, going round the dataset as often as needed
    and continuing the next epoch where the previous one stopped. ``epoch_num``: the epochs
    the background thread prepares at a time. ``DatasetHelper`` (``mscore.train``) and
    ``Dataset.device_que`` are built on it; the arguments are checked there.
    """

    def __init__(self, dataset, dataset_sink_mode, sink_size, epoch_num):
        self._dataset = dataset
        self._sink = dataset_sink_mode
        self._sink_size = sink_size if dataset_sink_mode else -1
        self._epoch_num = epoch_num
        if self._sink_size == -1:
            if self._dataset._is_endless():
                raise ValueError("sink_size: the dataset repeats endlessly; give sink_size > 0 "
                                 "(with dataset_sink_mode=True) to bound an epoch")
            self._steps = self._dataset.get_dataset_size()  # -1: unknown (a one-shot iterator)
        else:
            self._steps = self._sink_size
        self._prefetcher = None
        self._stream = None

    # -- information ----------------------------------------------------------------------
    @property
    def dataset(self):
        """The wrapped dataset pipeline."""
        return self._dataset

    def sink_size(self):
        """Steps in one epoch (-1 when a one-shot iterator's length is
        unknown)."""
        return self._steps

    def get_data_info(self):
        """``(dtypes, shapes)`` of the columns, from the first row (MindSpore's
        ``types_shapes``)."""
        return self.types_shapes()

    def types_shapes(self):
        """``(dtypes, shapes)`` of the columns, read from the first row of the dataset."""
        tensors = device_row(self._dataset._first_row())
        return [t.dtype for t in tensors], [t.shape for t in tensors]

    # -- iteration --------------------------------------------------------------------------
    def _endless_rows(self):
        while True:
            got = False
            for row in self._dataset._next_epoch_rows():
                got = True
                yield row
            if not got:
                raise RuntimeError("the dataset is empty")

    def _pass_rows(self):
        return self._dataset._next_epoch_rows()

    def _ensure_prefetcher(self):
        if self._prefetcher is None:
            if self._sink_size > 0:
                if self._stream is None:
                    self._stream = self._endless_rows()
                stream = self._stream

                def stream_fn():
                    return stream
            else:
                stream_fn = self._pass_rows
            self._prefetcher = _Prefetcher(stream_fn, self._epoch_num, self._sink_size,
                                           get_prefetch_size())

    def __iter__(self):
        if not self._sink:
            for row in self._dataset._next_epoch_rows():
                yield device_row(row)
            return
        yield from self._sink_epoch()

    def _sink_epoch(self):
        self._ensure_prefetcher()
        if self._sink_size > 0:
            for _ in range(self._sink_size):
                item = self._prefetcher.get()
                if item is _DONE:
                    # more epochs than epoch_num: prepare another block of epochs
                    self._prefetcher = None
                    self._ensure_prefetcher()
                    item = self._prefetcher.get()
                yield item
            return
        while True:
            item = self._prefetcher.get()
            if item is _DONE:
                self._prefetcher = None
                self._ensure_prefetcher()
                continue
            if item is _END_EPOCH:
                return
            yield item

    # -- control ------------------------------------------------------------------------------
    def stop_send(self):
        """Stop the background thread (the rest of the prefetched data is dropped)."""
        if self._prefetcher is not None:
            self._prefetcher.stop()
            self._prefetcher = None

    def continue_send(self):
        """MindSpore compatibility: the thread restarts on demand, so nothing to do."""

    def release(self):
        """Free the background thread."""
        self.stop_send()

    def __del__(self):
        try:
            self.stop_send()
        except Exception:
            pass


class DeviceQueue:
    """The pipeline's rows as tuples of device Tensors, prepared ahead in a background
    thread (MindSpore's device queue; see ``Dataset.device_que``).

    >>> queue = dataset.device_que()
    >>> for epoch in range(2):
    ...     for data, label in queue:
    ...         ...
    """

    def __init__(self, dataset, send_epoch_end=True):
        self._dataset = dataset
        self._send_epoch_end = send_epoch_end
        self._helper = None

    def send(self, num_epochs=-1):
        """Start preparing ``num_epochs`` epochs (-1: as many as are read)."""
        epochs = 1 if num_epochs == -1 else v.check_int(num_epochs, "num_epochs", 1)
        self._helper = DeviceFeed(self._dataset, True, -1, epochs)

    def __iter__(self):
        if self._helper is None:
            self.send()
        return iter(self._helper)

    def get_data_info(self):
        """``(dtypes, shapes)`` of the columns."""
        if self._helper is None:
            self.send()
        return self._helper.types_shapes()

    def stop_send(self):
        """Stop the background thread."""
        if self._helper is not None:
            self._helper.stop_send()

    def continue_send(self):
        """Nothing to do: the thread restarts on demand."""

    def release(self):
        """Free the background thread."""
        self.stop_send()
        self._helper = None

    def get_dataset_size(self):
        """Batches per epoch."""
        return self._dataset.get_dataset_size()
