"""``mint.optim.Adam``: Adam with L2 weight decay added to the gradient."""
from __future__ import annotations

from mscore import nn as _nn
from mscore.mint.optim._common import betas_pair, check_unsupported

__all__ = ["Adam"]


class Adam(_nn.Adam):
    """Adam with L2 weight decay added to the gradient (:class:`mscore.nn.Adam`)."""

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0,
                 amsgrad=False, *, maximize=False):
        check_unsupported(amsgrad, maximize, "Adam")
        beta1, beta2 = betas_pair(betas)
        super().__init__(params, lr, beta1, beta2, eps, weight_decay=weight_decay)
