"""``nn.LazyAdam``: Adam that MindSpore applies lazily to sparse gradients; mscore's
gradients are dense, where it is Adam."""
from __future__ import annotations

from mscore.nn.optim._args import non_negative
from mscore.nn.optim.adam import Adam


class LazyAdam(Adam):
    """Adam with MindSpore's LazyAdam arguments (dense gradients update every row, as
    MindSpore's LazyAdam does for a dense gradient).

    ``LazyAdam(params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-8,
    use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0)``; the weight
    decay must be a float; states ``beta1_power``, ``beta2_power`` (shape (1,)),
    ``moment1``, ``moment2``.
    """

    _POWER_SHAPE = (1,)

    def __init__(self, params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-08,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
        super().__init__(params, learning_rate, beta1, beta2, eps, use_locking, use_nesterov,
                         weight_decay, loss_scale)
        non_negative(weight_decay, "weight_decay", "LazyAdam")
