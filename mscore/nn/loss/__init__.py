"""Loss cells (MindSpore's ``mindspore.nn.loss``): ``LossBase`` and the losses of
:mod:`mscore.nn.loss.loss`."""
from mscore.nn.loss import loss  # noqa: F401
from mscore.nn.loss.loss import *  # noqa: F401,F403
from mscore.nn.loss.loss import __all__  # noqa: F401
