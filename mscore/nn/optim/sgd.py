"""``mindspore.nn.optim.sgd``: ``nn.SGD`` (defined with ``nn.Momentum`` in
:mod:`mscore.nn.optim.momentum`)."""
from mscore.nn.optim.momentum import SGD

__all__ = ["SGD"]
