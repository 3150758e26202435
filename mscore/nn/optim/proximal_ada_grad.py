"""``nn.ProximalAdagrad``."""
from __future__ import annotations

from mscore.dispatch import call
from mscore.nn.optim._args import check_bool, non_negative
from mscore.nn.optim.optimizer import Optimizer
from mscore.nn.optim.optimizer_attributes import settable_target
from mscore.ops.functional import native_addcmul


class ProximalAdagrad(Optimizer):
    """Proximal Adagrad (MindSpore's ApplyProximalAdagrad kernel): ``accum += g^2``,
    ``r = lr / sqrt(accum)``, ``v = param - r * g``,
    ``param = sign(v) * max(|v| - r * l1, 0) / (1 + r * l2)``.

    ``ProximalAdagrad(params, accum=0.1, learning_rate=0.001, l1=0.0, l2=0.0,
    use_locking=False, loss_scale=1.0, weight_decay=0.0)``; state ``accum``.
    """

    def __init__(self, params, accum=0.1, learning_rate=0.001, l1=0.0, l2=0.0,
                 use_locking=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        cls = "ProximalAdagrad"
        non_negative(accum, "accum", cls)
        self.l1 = non_negative(l1, "l1", cls)
        self.l2 = non_negative(l2, "l2", cls)
        self.use_locking = check_bool(use_locking, "use_locking", cls)
        self.accum = self._state("accum", accum)

    def construct(self, grads):
        grads, lrs, consts = self._prepare(grads)
        for p, a, g, lr in zip(self.parameters, self.accum, grads, lrs):
            dt = p.dtype
            acc = native_addcmul(a._data, g, g)
            a._assign(acc)
            rate = call("div", lr, call("sqrt", acc))          # the per-element rate
            v = call("sub", p._data, call("mul", g, rate))
            shrink = call("maximum", call("sub", call("abs", v),
                                          call("mul", rate, consts.get(self.l1, dt))),
                          consts.get(0.0, dt))
            scale = call("add", consts.get(1.0, dt), call("mul", rate, consts.get(self.l2, dt)))
            p._assign(call("div", call("mul", call("sign", v), shrink), scale))
        return True

    target = settable_target
