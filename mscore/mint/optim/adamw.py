"""``mint.optim.AdamW``: Adam with decoupled weight decay."""
from __future__ import annotations

from mscore import nn as _nn
from mscore.mint.optim._common import betas_pair, check_unsupported

__all__ = ["AdamW"]


class AdamW(_nn.AdamWeightDecay):
    """Adam with decoupled weight decay: ``p -= lr * (m_hat / (sqrt(v_hat) + eps) +
    weight_decay * p)`` (:class:`mscore.nn.AdamWeightDecay`); ``optimizer(grads)`` updates
    the parameters."""

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01,
                 amsgrad=False, *, maximize=False):
        check_unsupported(amsgrad, maximize, type(self).__name__)
        beta1, beta2 = betas_pair(betas)
        super().__init__(params, lr, beta1, beta2, eps, weight_decay)
