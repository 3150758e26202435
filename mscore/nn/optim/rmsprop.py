"""``nn.RMSProp``."""
from __future__ import annotations

from mscore.dispatch import call
from mscore.nn.optim._args import check_bool, non_negative, positive
from mscore.nn.optim.optimizer import Optimizer
from mscore.ops.functional import native_addcmul


class RMSProp(Optimizer):
    """RMSProp (MindSpore's ApplyRMSProp / ApplyCenteredRMSProp):
    ``ms = decay * ms + (1 - decay) * g^2``;
    ``mom = momentum * mom + lr * g / sqrt(ms + epsilon)``; ``param -= mom``. Centered:
    ``mg = decay * mg + (1 - decay) * g`` and the denominator is
    ``sqrt(ms - mg^2 + epsilon)``.

    ``RMSProp(params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10,
    use_locking=False, centered=False, loss_scale=1.0, weight_decay=0.0)``; states
    ``mean_square`` (ones), ``moment`` and, when centered, ``mean_grad``.
    """

    def __init__(self, params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        cls = "RMSProp"
        self.decay = non_negative(decay, "decay", cls)
        self.momentum = non_negative(momentum, "momentum", cls)
        self.epsilon = positive(epsilon, "epsilon", cls)
        self.use_locking = check_bool(use_locking, "use_locking", cls)
        self.centered = check_bool(centered, "centered", cls)
        if centered:
            self.mg = self._state("mean_grad")
        self.ms = self._state("mean_square", "ones")
        self.moment = self._state("moment")

    def construct(self, gradients):
        grads, lrs, consts = self._prepare(gradients)
        mgs = self.mg if self.centered else [None] * len(grads)
        for p, mg, ms, mom, g, lr in zip(self.parameters, mgs, self.ms, self.moment, grads,
                                         lrs):
            dt = p.dtype
            keep, take = consts.get(self.decay, dt), consts.get(1.0 - self.decay, dt)
            new_ms = native_addcmul(call("mul", ms._data, keep), call("mul", g, g), take)
            ms._assign(new_ms)
            denom = new_ms
            if mg is not None:
                new_mg = native_addcmul(call("mul", mg._data, keep), g, take)
                mg._assign(new_mg)
                denom = call("sub", new_ms, call("mul", new_mg, new_mg))
            step = call("div", call("mul", g, lr),
                        call("sqrt", call("add", denom, consts.get(self.epsilon, dt))))
            new_mom = native_addcmul(step, mom._data, consts.get(self.momentum, dt))
            mom._assign(new_mom)
            p._assign(call("sub", p._data, new_mom))
        return True
