"""``mindspore.train.loss_scale_manager`` (the 1.x path): the loss-scale managers of
:mod:`mscore.amp`."""
from mscore.amp.loss_scale import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]
