"""``DatasetHelper``: one epoch of device-ready batches per iteration, optionally prefetched.

MindSpore's sink mode moves the whole loop onto the device and feeds it through a device
queue. mscore keeps the loop in Python on every backend; ``dataset_sink_mode=True`` means a
background thread reads the pipeline and converts each batch to Tensors of the active backend
(the host-to-device copy) ahead of the step, through a bounded queue
(:func:`mscore.dataset.config.set_prefetch_size`, default 4 batches): the pipeline's
:class:`~mscore.dataset.engine.device_feed.DeviceFeed`, with MindSpore's argument checks.
"""
from __future__ import annotations

from mscore.dataset.engine.device_feed import DeviceFeed
from mscore.dataset.engine.iterable import as_dataset
from mscore.nn.cell import Cell

__all__ = ["DatasetHelper", "connect_network_with_dataset"]


class DatasetHelper(DeviceFeed):
    """Iterate a dataset one epoch at a time as tuples of Tensors.

    Args:
        dataset: an ``mscore.dataset`` pipeline, or any iterable of ``(data, label)`` batches.
        dataset_sink_mode (bool): prefetch batches onto the device in a background thread.
        sink_size (int): with sink mode, steps per epoch: -1 for the whole dataset, or
            ``n > 0`` to take ``n`` batches per epoch, going round the dataset as often as
            needed and continuing the next epoch where the previous one stopped.
        epoch_num (int): epochs the background thread prepares.

    >>> helper = DatasetHelper(dataset, dataset_sink_mode=False)
    >>> for inputs in helper:
    ...     outputs = network(*inputs)
    """

    def __init__(self, dataset, dataset_sink_mode=True, sink_size=-1, epoch_num=1):
        if not isinstance(dataset_sink_mode, bool):
            raise TypeError(f"dataset_sink_mode: expected a bool, got "
                            f"{type(dataset_sink_mode).__name__}")
        if not isinstance(sink_size, int) or isinstance(sink_size, bool):
            raise TypeError(f"sink_size: expected an int, got {type(sink_size).__name__}")
        if sink_size != -1 and sink_size <= 0:
            raise ValueError(f"sink_size: expected -1 or a positive int, got {sink_size}")
        if not isinstance(epoch_num, int) or isinstance(epoch_num, bool) or epoch_num < 1:
            raise ValueError(f"epoch_num: expected a positive int, got {epoch_num!r}")
        super().__init__(as_dataset(dataset, "dataset"), dataset_sink_mode, sink_size,
                         epoch_num)


def connect_network_with_dataset(network, dataset_helper):
    """MindSpore wraps ``network`` with a ``GetNext`` op that reads the device queue on
    Ascend in graph mode. mscore has no device queue (the sink thread hands the step its
    inputs), so the network is returned unchanged, as MindSpore does on other targets."""
    if not isinstance(network, Cell):
        raise TypeError(f"network: expected a Cell, got {type(network).__name__}")
    if not isinstance(dataset_helper, DatasetHelper):
        raise TypeError(f"dataset_helper: expected a DatasetHelper, got "
                        f"{type(dataset_helper).__name__}")
    return network
