"""MindSpore 1.x's ``mindspore.dataset.vision.c_transforms``: the same transforms as
:mod:`mscore.dataset.vision`."""
from mscore.dataset.vision import *  # noqa: F401,F403
from mscore.dataset.vision import __all__  # noqa: F401
