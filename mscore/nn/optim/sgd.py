"""``mindspore.nn.optim.sgd``: ``nn.SGD`` (defined with ``nn.Momentum`` in
:mod:`mscore.nn.optim.momentum`)."""
from mscore.nn.optim.momentum import SGD  # noqa: F401

__all__ = ["SGD"]
