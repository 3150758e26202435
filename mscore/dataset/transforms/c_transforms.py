"""MindSpore 1.x's ``mindspore.dataset.transforms.c_transforms``: the same transforms as
:mod:`mscore.dataset.transforms`."""
from mscore.dataset.transforms.transforms import (
    Compose,
    Concatenate,
    Duplicate,
    Fill,
    Mask,
    OneHot,
    PadEnd,
    RandomApply,
    RandomChoice,
    Relational,
    Slice,
    TypeCast,
)

__all__ = ["TypeCast", "Compose", "OneHot", "Fill", "Duplicate", "Concatenate", "Slice", "Mask",
           "PadEnd", "Relational", "RandomApply", "RandomChoice"]
