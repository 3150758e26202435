"""The dataset pipeline engine (MindSpore's ``mindspore.dataset.engine``), by concern:

- ``datasets``: the ``Dataset`` base class and its pipeline methods;
- ``ops_rows``, ``ops_batch``, ``ops_combine``: map/filter/shuffle/..., batching,
  concat/zip/split (the nodes ``Dataset``'s methods build; each registers its own with
  ``datasets.builds``, so this package imports them all);
- ``iterators``: tuple and dict iterators, ``to_tensor``;
- ``device_feed``: batches prefetched onto the device (``device_que``, ``DatasetHelper``);
- ``samplers``: which rows a random-access source reads (``_stdrandom``: MindSpore's streams);
- ``mappable``: the base of random-access sources and data-parallel sharding;
- ``datasets_user_defined``, ``datasets_vision``, ``datasets_text``, ``schema``: the sources;
- ``binary_files``: bounded reading of IDX and CIFAR files;
- ``iterable``: any Python iterable as a pipeline.
"""
from mscore.dataset.engine.binary_files import read_idx, write_idx
from mscore.dataset.engine.datasets import BatchInfo, Dataset
from mscore.dataset.engine.datasets_text import CSVDataset, TextFileDataset
from mscore.dataset.engine.datasets_user_defined import (
    GeneratorDataset, NumpySlicesDataset, PaddedDataset)
from mscore.dataset.engine.datasets_vision import (
    Cifar10Dataset, Cifar100Dataset, FakeImageDataset, FashionMnistDataset, ImageFolderDataset,
    KMnistDataset, MnistDataset)
from mscore.dataset.engine.iterable import IterableDataset, as_dataset
from mscore.dataset.engine.iterators import (
    DictIterator, TupleIterator, to_tensor)
from mscore.dataset.engine.mappable import MappableDataset
from mscore.dataset.engine.ops_batch import (
    BatchDataset, BucketBatchByLengthDataset, PaddedBatchDataset)
from mscore.dataset.engine.ops_combine import ConcatDataset, ZipDataset, zip
from mscore.dataset.engine.ops_rows import (
    FilterDataset, MapDataset, ProjectDataset, RenameDataset, RepeatDataset, ShuffleDataset,
    SkipDataset, TakeDataset)
from mscore.dataset.engine.samplers import (
    DistributedSampler, PKSampler, RandomSampler, Sampler, SequentialSampler, Shuffle,
    SubsetRandomSampler, SubsetSampler, WeightedRandomSampler)
from mscore.dataset.engine.schema import RandomDataset, Schema
