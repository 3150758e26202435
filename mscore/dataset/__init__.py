"""A small dataset pipeline with MindSpore's ``mindspore.dataset`` interface.

>>> from mscore.dataset import MnistDataset, vision, transforms
>>> ds = MnistDataset("MNIST_Data/train")
>>> ds = ds.map([vision.Rescale(1 / 255, 0), vision.Normalize((0.1307,), (0.3081,))], "image")
>>> ds = ds.map(transforms.TypeCast(ms.int32), "label").batch(64)

Pipelines run lazily in the calling process (no worker pools); ``Model`` can prefetch their
batches onto the device in a background thread (``dataset_sink_mode=True``).
"""
from mscore.dataset import config, transforms, vision  # noqa: F401
from mscore.dataset.engine import (  # noqa: F401
    BatchDataset, BatchInfo, Dataset, IterableDataset, MapDataset, RepeatDataset,
    ShuffleDataset, as_dataset, to_tensor)
from mscore.dataset.sources import (  # noqa: F401
    GeneratorDataset, MnistDataset, NumpySlicesDataset, read_idx, write_idx)

__all__ = ["Dataset", "NumpySlicesDataset", "GeneratorDataset", "MnistDataset",
           "IterableDataset", "BatchInfo", "config", "vision", "transforms", "as_dataset",
           "to_tensor", "read_idx", "write_idx"]
