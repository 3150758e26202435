"""Samplers (MindSpore's ``mindspore.dataset.samplers``); see
:mod:`mscore.dataset.engine.samplers`."""
from mscore.dataset.engine.samplers import (
    BuiltinSampler,
    DistributedSampler,
    IterSampler,
    PKSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Shuffle,
    SubsetRandomSampler,
    SubsetSampler,
    WeightedRandomSampler,
)

__all__ = ["Sampler", "BuiltinSampler", "SequentialSampler", "RandomSampler",
           "DistributedSampler", "SubsetRandomSampler", "SubsetSampler", "WeightedRandomSampler",
           "PKSampler", "IterSampler", "Shuffle"]
