"""MindSpore 1.x's ``mindspore.dataset.vision.c_transforms``: the same transforms as
:mod:`mscore.dataset.vision`."""
from mscore.dataset.vision import *
from mscore.dataset.vision import __all__
