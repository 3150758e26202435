"""Callbacks into a dataset pipeline (MindSpore's ``mindspore.dataset.callback``)."""
from mscore.dataset.callback.ds_callback import DSCallback, WaitedDSCallback

__all__ = ["DSCallback", "WaitedDSCallback"]
