"""Image transforms (MindSpore's ``mindspore.dataset.vision``)."""
from mscore.dataset.vision import transforms  # noqa: F401
from mscore.dataset.vision.transforms import (  # noqa: F401
    CenterCrop, HWC2CHW, Inter, Normalize, Pad, Rescale, Resize, ToTensor)

__all__ = ["Inter", "Rescale", "Normalize", "HWC2CHW", "ToTensor", "Resize", "Pad",
           "CenterCrop"]
