"""``nn.Adam``, ``nn.AdamWeightDecay`` and ``nn.AdamOffload`` (``nn.LazyAdam`` is in
``lazyadam``)."""
from __future__ import annotations

import numpy as np

from mscore._state import in_compiled
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.optim._args import check_bool, non_negative
from mscore.nn.optim.adamax import check_betas
from mscore.nn.optim.optimizer import Optimizer
from mscore.nn.optim.optimizer_attributes import settable_target
from mscore.ops.functional import native_addcmul as addcmul
from mscore.ops.multi_tensor import adam_update, solely_owned


def _adam_step(opt, moments1, moments2, grads, lrs, decays, nesterov):
    """Adam over every parameter of ``opt``: one multi-tensor update per group of
    parameters sharing a learning rate, a weight decay and a dtype."""
    params = opt.parameters
    groups = {}
    for i, (_param, lr, wd) in enumerate(zip(params, lrs, decays)):
        groups.setdefault((id(lr), id(wd)), (lr, wd, []))[2].append(i)
    for lr, wd, idx in groups.values():
        inplace = not in_compiled() and solely_owned(
            *(params[i] for i in idx), *(moments1[i] for i in idx),
            *(moments2[i] for i in idx))
        new_p, new_m, new_v = adam_update(
            [params[i]._data for i in idx], [moments1[i]._data for i in idx],
            [moments2[i]._data for i in idx], [grads[i] for i in idx], lr, opt.beta1,
            opt.beta2, opt.eps, nesterov, wd, inplace)
        for i, p, m, v in zip(idx, new_p, new_m, new_v):
            moments1[i]._assign(m)
            moments2[i]._assign(v)
            params[i]._assign(p)


class Adam(Optimizer):
    """Adam (MindSpore's Adam kernel): ``m += (g - m) * (1 - beta1)``,
    ``v += (g * g - v) * (1 - beta2)``, ``lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)``,
    ``param -= lr_t * m / (sqrt(v) + eps)`` (Nesterov: ``m`` replaced by
    ``beta1 * m + (1 - beta1) * g``; AMSGrad: ``vhat = max(vhat, v)`` in place of ``v``).
    ``weight_decay`` is L2 (added to the gradients).

    ``Adam(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
    use_nesterov=False, weight_decay=0.0, loss_scale=1.0, use_amsgrad=False, **kwargs)``
    (kwargs: ``use_lazy`` and ``use_offload``, which change nothing for dense gradients);
    states ``moment1``, ``moment2``, ``beta1_power``, ``beta2_power`` (and ``vhat``).
    """

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0,
                 use_amsgrad=False, **kwargs):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        cls = type(self).__name__
        unknown = set(kwargs) - {"use_lazy", "use_offload"}
        if unknown:
            raise KeyError(f"For '{cls}', invalid keys are passed as kwargs, supported keys "
                           f"are 'use_lazy' and 'use_offload', but got {sorted(unknown)}.")
        self.beta1, self.beta2, self.eps = check_betas(cls, beta1, beta2, eps)
        self.use_locking = check_bool(use_locking, "use_locking", cls)
        self.use_nesterov = check_bool(use_nesterov, "use_nesterov", cls)
        self.use_amsgrad = check_bool(use_amsgrad, "use_amsgrad", cls)
        self.use_lazy = check_bool(kwargs.get("use_lazy", False), "use_lazy", cls)
        self.use_offload = check_bool(kwargs.get("use_offload", False), "use_offload", cls)
        if self.use_lazy and self.use_offload:
            raise ValueError(f"For '{cls}', 'use_lazy' and 'use_offload' can not both be True.")
        if self.use_amsgrad and (self.use_lazy or self.use_offload):
            raise ValueError(f"For lazy Adam and Adam with offload, there is no parameter "
                             f"named 'use_amsgrad', but got 'use_amsgrad'={use_amsgrad}.")
        self.beta1_power = Parameter(Tensor(np.ones(self._POWER_SHAPE, np.float32)),
                                     name="beta1_power", requires_grad=False)
        self.beta2_power = Parameter(Tensor(np.ones(self._POWER_SHAPE, np.float32)),
                                     name="beta2_power", requires_grad=False)
        self.moment1 = self._state("moment1")
        self.moment2 = self._state("moment2")
        if self.use_amsgrad:
            self.vhat = self._state("vhat")

    _POWER_SHAPE = ()   # MindSpore 2.x keeps Adam's beta powers as 0-d

    def construct(self, gradients):
        grads, _, consts = self._prepare(gradients)
        f32 = mdt.float32
        shape = self._POWER_SHAPE
        b1p = call("mul", self.beta1_power._data, call("full", shape, self.beta1, f32))
        b2p = call("mul", self.beta2_power._data, call("full", shape, self.beta2, f32))
        self.beta1_power._assign(b1p)
        self.beta2_power._assign(b2p)
        one = call("full", (), 1.0, f32)
        # lr * sqrt(1 - beta2^t) / (1 - beta1^t), per group, as float32 scalars.
        corr = call("div", call("sqrt", call("sub", one, call("reshape", b2p, ()))),
                    call("sub", one, call("reshape", b1p, ())))
        if self.use_amsgrad:
            neg_lrs = [call("neg", call("mul", lr, corr)) for lr in consts.group_lrs]
            return self._amsgrad_update(grads, consts, neg_lrs)
        lrs_t = [call("mul", lr, corr) for lr in consts.group_lrs]
        _adam_step(self, self.moment1, self.moment2, grads,
                   [consts.cast(lrs_t[k], p.dtype) for k, p in zip(self._lr_of,
                                                                   self.parameters)],
                   [None] * len(grads), self.use_nesterov)
        return True

    def _amsgrad_update(self, grads, consts, neg_lrs):
        """AMSGrad (MindSpore's ApplyAdamWithAmsgradV2): the update divides by
        ``sqrt(vhat) + eps`` with ``vhat = max(vhat, v)``; no Nesterov term."""
        b1, b2, eps = self.beta1, self.beta2, self.eps
        for k, p, m, v, vh, g in zip(self._lr_of, self.parameters, self.moment1, self.moment2,
                                     self.vhat, grads):
            dt = p.dtype
            nm = addcmul(m._data, call("sub", g, m._data), consts.get(1.0 - b1, dt))
            nv = addcmul(v._data, call("sub", call("mul", g, g), v._data),
                         consts.get(1.0 - b2, dt))
            nvh = call("maximum", vh._data, nv)
            m._assign(nm)
            v._assign(nv)
            vh._assign(nvh)
            denom = call("add", call("sqrt", nvh), consts.get(eps, dt))
            p._assign(addcmul(p._data, call("div", nm, denom), consts.cast(neg_lrs[k], dt)))
        return True

    target = settable_target


class AdamWeightDecay(Optimizer):
    """Adam with decoupled weight decay and no bias correction (MindSpore's AdamWeightDecay):
    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g * g``,
    ``update = m / (sqrt(v) + eps) + weight_decay * param`` (where decay applies),
    ``param -= lr * update``.

    ``AdamWeightDecay(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6,
    weight_decay=0.0)``; states ``adam_m`` and ``adam_v``.
    """

    _decay_in_grads = False
    _centralizes = False   # MindSpore's AdamWeightDecay ignores 'grad_centralization'

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = check_betas("AdamWeightDecay", beta1, beta2, eps)
        self.moments1 = self._state("adam_m")
        self.moments2 = self._state("adam_v")

    def construct(self, gradients):
        grads, lrs, consts = self._prepare(gradients)
        decays = [self._decay_scalar(i, p, consts) for i, p in enumerate(self.parameters)]
        _adam_step(self, self.moments1, self.moments2, grads, lrs, decays, False)
        return True


class AdamOffload(Adam):
    """Adam with MindSpore's AdamOffload arguments: MindSpore runs the update on the host
    to save device memory (and deprecates it); here the backend decides, the update is Adam's.

    ``AdamOffload(params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-8,
    use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0)``; the weight
    decay must be a non-negative float; states ``beta1_power``, ``beta2_power`` (shape (1,)),
    ``moment1``, ``moment2``.
    """

    _POWER_SHAPE = (1,)
    _centralizes = False   # MindSpore's AdamOffload ignores 'grad_centralization'

    def __init__(self, params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-08,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
        super().__init__(params, learning_rate, beta1, beta2, eps, use_locking, use_nesterov,
                         weight_decay, loss_scale)
        non_negative(weight_decay, "weight_decay", "AdamOffload")
