"""``nn.Adadelta``."""
from __future__ import annotations

from mscore.dispatch import call
from mscore.nn.optim._args import check_range, non_negative
from mscore.nn.optim.optimizer import Optimizer
from mscore.ops.functional import native_addcmul


class Adadelta(Optimizer):
    """Adadelta (MindSpore's ApplyAdadelta): ``accum = rho * accum + (1 - rho) * g^2``,
    ``update = sqrt(accum_update + eps) * g / sqrt(accum + eps)``,
    ``accum_update = rho * accum_update + (1 - rho) * update^2``, ``param -= lr * update``.

    ``Adadelta(params, learning_rate=1.0, rho=0.9, epsilon=1e-6, loss_scale=1.0,
    weight_decay=0.0)``; states ``accum`` and ``accum_update``.
    """

    def __init__(self, params, learning_rate=1.0, rho=0.9, epsilon=1e-6, loss_scale=1.0,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        cls = "Adadelta"
        self.rho = check_range(rho, "rho", cls, 0.0, 1.0)
        self.epsilon = non_negative(epsilon, "epsilon", cls)
        self.accum = self._state("accum")
        self.accum_update = self._state("accum_update")

    def construct(self, grads):
        if not isinstance(grads, tuple) or not grads:
            raise TypeError("For 'Adadelta', the 'grads' must be a tuple of Tensor.")
        grads, lrs, consts = self._prepare(grads)
        rho, eps = self.rho, self.epsilon
        for p, a, u, g, lr in zip(self.parameters, self.accum, self.accum_update, grads, lrs):
            dt = p.dtype
            keep, take, e = consts.get(rho, dt), consts.get(1.0 - rho, dt), consts.get(eps, dt)
            acc = native_addcmul(call("mul", a._data, keep), call("mul", g, g), take)
            update = call("mul", call("sqrt", call("add", u._data, e)),
                          call("div", g, call("sqrt", call("add", acc, e))))
            a._assign(acc)
            u._assign(native_addcmul(call("mul", u._data, keep), call("mul", update, update),
                                     take))
            p._assign(native_addcmul(p._data, update, consts.negated(lr)))
        return True
