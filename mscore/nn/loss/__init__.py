"""Loss cells (MindSpore's ``mindspore.nn.loss``): ``LossBase`` and the losses of
:mod:`mscore.nn.loss.loss`."""
from mscore.nn.loss import loss
from mscore.nn.loss.loss import *
from mscore.nn.loss.loss import __all__
