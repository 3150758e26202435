"""Image transforms (MindSpore's ``mindspore.dataset.vision``); the MindSpore 1.x paths
``vision.c_transforms`` and ``vision.py_transforms`` give the same classes."""
from mscore.dataset.vision import transforms, utils
from mscore.dataset.vision.adjust import (
    AdjustBrightness, AdjustContrast, AdjustGamma, AdjustHue, AdjustSaturation, AutoContrast,
    CutOut, Equalize, HsvToRgb, Invert, Posterize, RandomAutoContrast, RandomColorAdjust,
    RandomEqualize, RandomInvert, ResizedCrop, RgbToHsv, Solarize, ToNumpy,
    get_image_num_channels, get_image_size)
from mscore.dataset.vision.random_transforms import (
    RandomCrop, RandomCropDecodeResize, RandomErasing, RandomGrayscale, RandomHorizontalFlip,
    RandomResizedCrop, RandomRotation, RandomVerticalFlip, not_random)
from mscore.dataset.vision.transforms import (
    CenterCrop, ConvertColor, Crop, Decode, Grayscale, HorizontalFlip, HWC2CHW, Normalize, Pad,
    Rescale, Resize, Rotate, ToPIL, ToTensor, ToType, VerticalFlip)
from mscore.dataset.vision.utils import Border, ConvertMode, ImageBatchFormat, Inter

__all__ = ["Inter", "Border", "ConvertMode", "ImageBatchFormat", "Decode", "Resize", "Rescale",
           "Normalize", "HWC2CHW", "CenterCrop", "Crop", "Pad", "ToTensor", "ToType", "ToPIL",
           "Grayscale", "ConvertColor", "HorizontalFlip", "VerticalFlip", "Rotate",
           "RandomCrop", "RandomResizedCrop", "RandomHorizontalFlip", "RandomVerticalFlip",
           "RandomRotation", "RandomGrayscale", "RandomCropDecodeResize", "AdjustBrightness",
           "AdjustContrast", "AdjustSaturation", "AdjustHue", "AdjustGamma", "Invert",
           "Posterize", "Solarize", "AutoContrast", "Equalize", "RandomColorAdjust", "CutOut",
           "ToNumpy", "get_image_size", "get_image_num_channels", "RandomInvert",
           "RandomEqualize", "RandomAutoContrast", "ResizedCrop", "RandomErasing",
           "RgbToHsv", "HsvToRgb", "not_random"]
