"""The dataset pipeline, with MindSpore's ``mindspore.dataset`` interface.

>>> from mscore.dataset import MnistDataset, vision, transforms
>>> ds = MnistDataset("MNIST_Data/train")
>>> ds = ds.map([vision.Rescale(1 / 255, 0), vision.Normalize((0.1307,), (0.3081,))], "image")
>>> ds = ds.map(transforms.TypeCast(ms.int32), "label").batch(64)

Pipelines run lazily in the calling process (no worker pools); ``Model`` can prefetch their
batches onto the device in a background thread (``dataset_sink_mode=True``). Sources:
``NumpySlicesDataset``, ``GeneratorDataset``, ``PaddedDataset``, ``RandomDataset``,
``MnistDataset`` / ``FashionMnistDataset`` / ``KMnistDataset``, ``Cifar10Dataset`` /
``Cifar100Dataset``, ``ImageFolderDataset``, ``FakeImageDataset``, ``TextFileDataset``,
``CSVDataset``; samplers in :mod:`mscore.dataset.samplers`.
"""
from mscore.dataset import config, text, transforms, vision
from mscore.dataset import engine, samplers
from mscore.dataset.callback import DSCallback, WaitedDSCallback
from mscore.dataset.engine import (
    BatchInfo, CSVDataset, Cifar10Dataset, Cifar100Dataset, Dataset, FakeImageDataset,
    FashionMnistDataset, GeneratorDataset, ImageFolderDataset, IterableDataset, KMnistDataset,
    MappableDataset, MnistDataset, NumpySlicesDataset, PaddedDataset, RandomDataset, Schema,
    TextFileDataset, as_dataset, read_idx, to_tensor, write_idx, zip)
from mscore.dataset.engine.samplers import (
    DistributedSampler, PKSampler, RandomSampler, Sampler, SequentialSampler, Shuffle,
    SubsetRandomSampler, SubsetSampler, WeightedRandomSampler)

__all__ = ["Dataset", "MappableDataset", "NumpySlicesDataset", "GeneratorDataset",
           "PaddedDataset", "RandomDataset", "MnistDataset", "FashionMnistDataset",
           "KMnistDataset", "Cifar10Dataset", "Cifar100Dataset", "ImageFolderDataset",
           "FakeImageDataset", "TextFileDataset", "CSVDataset", "Schema", "zip", "Sampler",
           "SequentialSampler", "RandomSampler", "DistributedSampler", "SubsetRandomSampler",
           "SubsetSampler", "WeightedRandomSampler", "PKSampler", "Shuffle", "DSCallback",
           "WaitedDSCallback", "BatchInfo", "IterableDataset", "config", "vision", "text",
           "transforms", "samplers", "engine", "as_dataset", "to_tensor", "read_idx",
           "write_idx"]
