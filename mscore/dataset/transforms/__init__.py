"""General transforms (MindSpore's ``mindspore.dataset.transforms``); the MindSpore 1.x paths
``transforms.c_transforms`` and ``transforms.py_transforms`` give the same classes."""
from mscore.dataset.transforms import transforms
from mscore.dataset.transforms.transforms import (
    Compose, Concatenate, Duplicate, Fill, Mask, OneHot, PadEnd, PyTensorOperation, RandomApply,
    RandomChoice, RandomOrder, Relational, Slice, TensorOperation, TypeCast, not_random)

__all__ = ["TypeCast", "Compose", "OneHot", "Fill", "Duplicate", "Concatenate", "Slice", "Mask",
           "PadEnd", "Relational", "RandomApply", "RandomChoice", "RandomOrder",
           "PyTensorOperation", "TensorOperation", "not_random"]
