"""General transforms (MindSpore's ``mindspore.dataset.transforms``)."""
from mscore.dataset.transforms import transforms  # noqa: F401
from mscore.dataset.transforms.transforms import (  # noqa: F401
    Compose, Duplicate, OneHot, PyTensorOperation, TypeCast)

__all__ = ["TypeCast", "Compose", "OneHot", "Duplicate", "PyTensorOperation"]
