"""``nn.FTRL``: follow-the-regularized-leader."""
from __future__ import annotations

from mscore.dispatch import call
from mscore.nn.optim._args import check_bool, check_range, non_negative, positive
from mscore.nn.optim.optimizer import Optimizer
from mscore.nn.optim.optimizer_attributes import settable_target


class FTRL(Optimizer):
    """FTRL-proximal (MindSpore's ApplyFtrl), with ``p = -lr_power``:
    ``m' = m + g^2``; ``u += g - (m'^p - m^p) / lr * param``;
    ``param = (l1 * sign(u) - u) / (m'^p / lr + 2 * l2)`` where ``|u| > l1``, else 0.

    ``FTRL(params, initial_accum=0.1, learning_rate=0.001, lr_power=-0.5, l1=0.0, l2=0.0,
    use_locking=False, loss_scale=1.0, weight_decay=0.0)``; a fixed float learning rate
    only (a dynamic or per-group rate is a ``ValueError``, as in MindSpore). Without
    parameter groups the weight decay applies to every parameter. States ``moments`` and
    ``linear``.
    """

    def __init__(self, params, initial_accum=0.1, learning_rate=0.001, lr_power=-0.5, l1=0.0,
                 l2=0.0, use_locking=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale=loss_scale)
        cls = "FTRL"
        if self.dynamic_lr or self.is_group_lr:
            raise ValueError(f"For '{cls}', dynamic learning rate and group learning rate are "
                             f"not supported, but got dynamic learning rate "
                             f"{self.dynamic_lr} and group learning rate {self.is_group_lr}.")
        non_negative(initial_accum, "initial_accum", cls)
        positive(learning_rate, "learning_rate", cls)
        self.lr_power = check_range(lr_power, "lr_power", cls, None, 0.0)
        self.l1 = non_negative(l1, "l1", cls)
        self.l2 = non_negative(l2, "l2", cls)
        self.use_locking = check_bool(use_locking, "use_locking", cls)
        self.lr = learning_rate
        if not self.is_group:
            self._decay = [self.weight_decay] * len(self.parameters)
            self.decay_flags = tuple(self.weight_decay > 0 or callable(self.weight_decay)
                                     for _ in self.parameters)
            self.exec_weight_decay = any(self.decay_flags)
        self.moments = self._state("moments", initial_accum)
        self.linear = self._state("linear")

    def construct(self, grads):
        grads, lrs, consts = self._prepare(grads)
        for p, m, u, g, lr in zip(self.parameters, self.moments, self.linear, grads, lrs):
            dt = p.dtype
            power = consts.get(-self.lr_power, dt)
            m_new = call("add", m._data, call("mul", g, g))
            pow_new = call("pow", m_new, power)
            sigma = call("div", call("sub", pow_new, call("pow", m._data, power)), lr)
            lin = call("sub", call("add", u._data, g), call("mul", sigma, p._data))
            l1 = consts.get(self.l1, dt)
            shrunk = call("div", call("sub", call("mul", l1, call("sign", lin)), lin),
                          call("add", call("div", pow_new, lr), consts.get(2.0 * self.l2, dt)))
            p._assign(call("where", call("greater", call("abs", lin), l1), shrunk,
                           consts.get(0.0, dt)))
            m._assign(m_new)
            u._assign(lin)
        return True

    target = settable_target
