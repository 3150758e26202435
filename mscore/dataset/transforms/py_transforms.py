"""MindSpore 1.x's ``mindspore.dataset.transforms.py_transforms``: the same transforms as
:mod:`mscore.dataset.transforms` (they take numpy arrays, and PIL images where an image
transform does)."""
from mscore.dataset.transforms.transforms import (
    Compose,
    Duplicate,
    OneHot,
    RandomApply,
    RandomChoice,
    RandomOrder,
    TypeCast,
)

__all__ = ["Compose", "OneHot", "Duplicate", "TypeCast", "RandomApply", "RandomChoice",
           "RandomOrder"]
