"""MindSpore's ``mindspore.mint.optim``: PyTorch-style optimizers (``AdamW``, ``Adam``,
``SGD``) on mscore's optimizers (``optimizer(grads)`` updates the parameters)."""
from __future__ import annotations

from mscore import nn as _nn

__all__ = ["AdamW", "Adam", "SGD", "FusedAdamW"]


def _betas(betas):
    if len(betas) != 2:
        raise ValueError(f"betas: expected two values, got {betas!r}")
    return float(betas[0]), float(betas[1])


def _no_amsgrad(amsgrad, maximize, name):
    if amsgrad or maximize:
        raise NotImplementedError(f"{name}: amsgrad and maximize are not supported")


class AdamW(_nn.AdamWeightDecay):
    """Adam with decoupled weight decay: ``p -= lr * (m_hat / (sqrt(v_hat) + eps) +
    weight_decay * p)`` (:class:`mscore.nn.AdamWeightDecay`)."""

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01,
                 amsgrad=False, *, maximize=False):
        _no_amsgrad(amsgrad, maximize, "AdamW")
        beta1, beta2 = _betas(betas)
        super().__init__(params, lr, beta1, beta2, eps, weight_decay)


class FusedAdamW(AdamW):
    """:class:`AdamW` (MindSpore's fused kernel computes the same update)."""


class Adam(_nn.Adam):
    """Adam with L2 weight decay added to the gradient (:class:`mscore.nn.Adam`)."""

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0,
                 amsgrad=False, *, maximize=False):
        _no_amsgrad(amsgrad, maximize, "Adam")
        beta1, beta2 = _betas(betas)
        super().__init__(params, lr, beta1, beta2, eps, weight_decay=weight_decay)


class SGD(_nn.SGD):
    """Stochastic gradient descent with momentum (:class:`mscore.nn.SGD`)."""

    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False):
        if maximize:
            raise NotImplementedError("SGD: maximize is not supported")
        super().__init__(params, lr, float(momentum), float(dampening), float(weight_decay),
                         nesterov)
