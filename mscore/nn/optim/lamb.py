"""``nn.Lamb``: layer-wise adaptive moments."""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.dispatch import call
from mscore.nn.optim.adamax import check_betas
from mscore.nn.optim.optimizer import Optimizer
from mscore.ops.functional import native_addcmul


class Lamb(Optimizer):
    """LAMB as MindSpore's kernel computes it, with ``t`` the step number (1 first):
    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g^2``,
    ``r = m / (1 - beta1^t) / (sqrt(v / (1 - beta2^t)) + eps) + weight_decay * param``,
    ``param -= lr * (|param| / |r|) * r`` (the trust ratio is 1 when either norm is 0).

    ``Lamb(params, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0)``;
    no loss scale; states ``lamb_m`` and ``lamb_v``.
    """

    updates_elementwise = False   # a norm over each whole Parameter

    _decay_in_grads = False

    def __init__(self, params, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = check_betas("Lamb", beta1, beta2, eps)
        self.moments1 = self._state("lamb_m")
        self.moments2 = self._state("lamb_v")

    def construct(self, gradients):
        grads, lrs, consts = self._prepare(gradients)
        f32 = mdt.float32
        t = call("cast", call("reshape", self.global_step._data, ()), f32)
        one = consts.get(1.0, f32)
        corr1 = call("sub", one, call("pow", consts.get(self.beta1, f32), t))
        corr2 = call("sub", one, call("pow", consts.get(self.beta2, f32), t))
        b1, b2, eps = self.beta1, self.beta2, self.eps
        for i, (p, m, v, g, lr) in enumerate(zip(self.parameters, self.moments1, self.moments2,
                                                 grads, lrs)):
            dt = p.dtype
            nm = native_addcmul(call("mul", m._data, consts.get(b1, dt)), g,
                                consts.get(1.0 - b1, dt))
            nv = native_addcmul(call("mul", v._data, consts.get(b2, dt)), call("mul", g, g),
                                consts.get(1.0 - b2, dt))
            m._assign(nm)
            v._assign(nv)
            m_hat = call("div", nm, consts.cast(corr1, dt))
            v_hat = call("div", nv, consts.cast(corr2, dt))
            update = call("div", m_hat, call("add", call("sqrt", v_hat), consts.get(eps, dt)))
            if self.decay_flags[i]:
                update = self._decayed(i, p, update, consts)
            w_norm = _norm(p._data)
            u_norm = _norm(update)
            zero = consts.get(0.0, dt)
            both = call("logical_and", call("greater", w_norm, zero), call("greater", u_norm, zero))
            ratio = call("where", both, call("div", w_norm, call("where", both, u_norm,
                                                                 consts.get(1.0, dt))),
                         consts.get(1.0, dt))
            p._assign(native_addcmul(p._data, update,
                                     call("neg", call("mul", ratio, lr))))
        return True


def _norm(x):
    """The 2-norm of every element of ``x`` (a 0-d array)."""
    return call("sqrt", call("sum", call("mul", x, x), axis=None, keepdims=False))
