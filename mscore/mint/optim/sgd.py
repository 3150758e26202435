"""``mint.optim.SGD``: stochastic gradient descent with momentum."""
from __future__ import annotations

from mscore import nn as _nn
from mscore.mint.optim._common import check_unsupported

__all__ = ["SGD"]


class SGD(_nn.SGD):
    """Stochastic gradient descent with momentum (:class:`mscore.nn.SGD`)."""

    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False):
        check_unsupported(False, maximize, "SGD")
        super().__init__(params, lr, float(momentum), float(dampening), float(weight_decay),
                         nesterov)
