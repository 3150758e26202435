"""``nn.AdaMax``."""
from __future__ import annotations

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.optim._args import check_range, positive
from mscore.nn.optim.optimizer import Optimizer
from mscore.ops.functional import native_addcmul


def check_betas(cls, beta1, beta2, eps):
    """``beta1``, ``beta2`` floats in (0, 1) and ``eps`` a float > 0, as MindSpore checks
    them for AdaMax, Adam, LazyAdam and Lamb."""
    check_range(beta1, "beta1", cls, 0.0, 1.0, False, False)
    check_range(beta2, "beta2", cls, 0.0, 1.0, False, False)
    positive(eps, "eps", cls)
    return beta1, beta2, eps


class AdaMax(Optimizer):
    """AdaMax (MindSpore's ApplyAdaMax): ``m = beta1 * m + (1 - beta1) * g``,
    ``v = max(beta2 * v, |g|)``, ``param -= lr / (1 - beta1^t) * m / (v + eps)``.

    ``AdaMax(params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-8,
    weight_decay=0.0, loss_scale=1.0)``; states ``beta1_power``, ``moment1``, ``moment2``.
    """

    def __init__(self, params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-08,
                 weight_decay=0.0, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1, self.beta2, self.eps = check_betas("AdaMax", beta1, beta2, eps)
        self.beta1_power = Parameter(Tensor(np.ones((1,), np.float32)), name="beta1_power",
                                     requires_grad=False)
        self.moment1 = self._state("moment1")
        self.moment2 = self._state("moment2")

    def construct(self, gradients):
        grads, lrs, consts = self._prepare(gradients)
        f32 = mdt.float32
        b1p = call("mul", self.beta1_power._data, call("full", (1,), self.beta1, f32))
        self.beta1_power._assign(b1p)
        # the rate of step t is lr / (1 - beta1^t)
        corr = call("sub", call("full", (), 1.0, f32), call("reshape", b1p, ()))
        b1, b2 = self.beta1, self.beta2
        scaled = {}
        for p, m, v, g, lr in zip(self.parameters, self.moment1, self.moment2, grads, lrs):
            dt = p.dtype
            hit = scaled.get(id(lr))
            if hit is None:  # holding lr keeps its id() unique
                hit = scaled[id(lr)] = (lr, call("neg", call("div", lr, consts.cast(corr, dt))))
            step = hit[1]
            nm = native_addcmul(call("mul", m._data, consts.get(b1, dt)), g,
                                consts.get(1.0 - b1, dt))
            nv = call("maximum", call("mul", v._data, consts.get(b2, dt)), call("abs", g))
            m._assign(nm)
            v._assign(nv)
            p._assign(native_addcmul(p._data, call("div", nm, call("add", nv,
                                                                    consts.get(self.eps, dt))),
                                     step))
        return True
