"""``nn.ASGD``: averaged stochastic gradient descent."""
from __future__ import annotations

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.optim._args import check_float
from mscore.nn.optim.optimizer import Optimizer


def _scalar_states(params, prefix, value):
    return ParameterTuple([Parameter(Tensor(np.float32(value)), name=f"{prefix}{p.name}",
                                     requires_grad=False) for p in params])


class ASGD(Optimizer):
    """Averaged SGD as MindSpore computes it (in float32), with ``t`` the step number
    (1 on the first step) and ``eta = lr`` on the first step:
    ``param = param * (1 - lambd * eta) - eta * g``; ``ax += (param - ax) * mu`` (``ax =
    param`` while ``mu == 1``); then ``eta = lr / (1 + lambd * lr * t) ** alpha`` and
    ``mu = 1 / max(1, t - t0)``.

    ``ASGD(params, learning_rate=0.1, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0)``;
    states ``mu_<name>``, ``eta_<name>`` (float32 scalars) and ``ax_.<name>`` (the average).
    """

    def __init__(self, params, learning_rate=0.1, lambd=1e-4, alpha=0.75, t0=1e6,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        cls = "ASGD"
        self.lambd = check_float(lambd, "lambd", cls)
        self.alpha = check_float(alpha, "alpha", cls)
        self.t0 = check_float(t0, "t0", cls)
        self.mu = _scalar_states(self.parameters, "mu_", 1.0)
        self.eta = _scalar_states(self.parameters, "eta_", 0.0)
        self.ax = self._state("ax_")

    def construct(self, gradients):
        grads, _, consts = self._prepare(gradients)
        f32 = mdt.float32
        t = call("cast", call("reshape", self.global_step._data, ()), f32)
        first = call("equal", t, consts.get(1.0, f32))
        one = consts.get(1.0, f32)
        lambd = consts.get(self.lambd, f32)
        mu_next = call("div", one, call("maximum", one, call("sub", t, consts.get(self.t0, f32))))
        for k, p, mu, eta, ax, g in zip(self._lr_of, self.parameters, self.mu, self.eta,
                                        self.ax, grads):
            lr = consts.group_lrs[k]
            eta_now = call("where", first, lr, eta._data)
            p32 = call("cast", p._data, f32)
            new = call("sub", call("mul", p32, call("sub", one, call("mul", lambd, eta_now))),
                       call("mul", eta_now, call("cast", g, f32)))
            p._assign(call("cast", new, p.dtype))
            ax32 = call("cast", ax._data, f32)
            averaged = call("add", ax32, call("mul", call("sub", new, ax32), mu._data))
            stored = call("cast", p._data, f32)   # MindSpore assigns the (cast) parameter
            ax._assign(call("cast", call("where", call("equal", mu._data, one), stored,
                                         averaged), ax.dtype))
            denom = call("pow", call("add", one, call("mul", call("mul", lambd, lr), t)),
                         consts.get(self.alpha, f32))
            eta._assign(call("div", lr, denom))
            mu._assign(mu_next)
        return True
