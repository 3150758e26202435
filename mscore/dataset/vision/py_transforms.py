"""MindSpore 1.x's ``mindspore.dataset.vision.py_transforms``: the same transforms as
:mod:`mscore.dataset.vision` (they take numpy arrays or PIL images)."""
from mscore.dataset.vision import *
from mscore.dataset.vision import __all__
