"""``nn.Adagrad``."""
from __future__ import annotations

from mscore.dispatch import call
from mscore.nn.optim._args import check_bool, non_negative
from mscore.nn.optim.optimizer import Optimizer
from mscore.ops.functional import native_addcmul


class Adagrad(Optimizer):
    """Adagrad (MindSpore's ApplyAdagrad): ``accum += g * g`` (when ``update_slots``, as
    documented; MindSpore 2.10's CPU kernel updates it always), ``param -= lr * g /
    sqrt(accum)``.

    ``Adagrad(params, accum=0.1, learning_rate=0.001, update_slots=True, loss_scale=1.0,
    weight_decay=0.0)``; ``accum`` is the initial value of the ``accum`` states.
    """

    def __init__(self, params, accum=0.1, learning_rate=0.001, update_slots=True,
                 loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        cls = "Adagrad"
        non_negative(accum, "accum", cls)
        self.update_slots = check_bool(update_slots, "update_slots", cls)
        self.accum = self._state("accum", accum)

    def construct(self, grads):
        grads, lrs, consts = self._prepare(grads)
        for p, a, g, lr in zip(self.parameters, self.accum, grads, lrs):
            acc = a._data
            if self.update_slots:
                acc = native_addcmul(acc, g, g)
                a._assign(acc)
            step = call("div", g, call("sqrt", acc))
            p._assign(native_addcmul(p._data, step, consts.negated(lr)))
        return True
