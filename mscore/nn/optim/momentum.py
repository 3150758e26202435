"""``nn.Momentum`` and ``nn.SGD``."""
from __future__ import annotations

import numpy as np

from mscore import dispatch
from mscore._state import in_compiled
from mscore.common.parameter import Parameter, assign_all
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.layer._checks import check_bool, check_number
from mscore.nn.optim.optimizer import Optimizer
from mscore.ops.functional import native_addcmul
from mscore.ops.multi_tensor import momentum_update, solely_owned


def _negated(lr, cache):
    """``-lr`` (a 0-d native array), made once per step for each distinct rate."""
    key = id(lr)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = (lr, call("neg", lr))  # holding lr keeps its id() unique
    return hit[1]


def _momentum_step(params, moments, grads, lrs, momentum, consts, nesterov):
    """Momentum SGD over every parameter, one multi-tensor update per group of parameters
    that share a learning rate and a dtype."""
    if len(set(map(id, lrs))) <= 1:
        # One rate object: one group (rates are cast per dtype, so one dtype too).
        groups = [(lrs[0], dispatch.dtype(params[0]._data), params, moments, grads)] \
            if lrs else []
    else:
        by_rate = {}
        dtype_of = dispatch.dtype
        for i, (p, lr) in enumerate(zip(params, lrs)):
            by_rate.setdefault(id(lr), (lr, dtype_of(p._data), []))[2].append(i)
        groups = [(lr, dt, [params[i] for i in idx], [moments[i] for i in idx],
                   [grads[i] for i in idx]) for lr, dt, idx in by_rate.values()]
    for lr, dt, ps, vs, gs in groups:
        inplace = not in_compiled() and solely_owned(*ps, *vs)
        new_p, new_v = momentum_update([p._data for p in ps], [v._data for v in vs], gs, lr,
                                       consts.cast(momentum, dt), nesterov, inplace)
        assign_all(vs, new_v)
        assign_all(ps, new_p)


class Momentum(Optimizer):
    """Momentum SGD: ``v = momentum * v + grad; param -= lr * v`` (with ``use_nesterov``:
    ``param -= lr * (grad + momentum * v)``).

    ``Momentum(params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
    use_nesterov=False)``; the velocities are the ``moments`` ParameterTuple.
    """

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
                 use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if not isinstance(momentum, float):   # MindSpore: a float, not an int
            raise TypeError(f"For 'Momentum', the type of 'momentum' should be 'float', but got "
                            f"type '{type(momentum).__name__}'.")
        momentum = check_number(momentum, "momentum", "Momentum", 0.0)
        self.use_nesterov = check_bool(use_nesterov, "use_nesterov", "Momentum")
        self.momentum = Parameter(Tensor(np.float32(momentum)), name="momentum",
                                  requires_grad=False)
        self.moments = self._state("moments")

    def construct(self, gradients):
        grads, lrs, consts = self._prepare(gradients)
        _momentum_step(self.parameters, self.moments, grads, lrs, self.momentum._data, consts,
                       self.use_nesterov)
        return True

    def extend_repr(self):
        return f"params={len(self.parameters)}, use_nesterov={self.use_nesterov}"


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, dampening and Nesterov (the
    first step with momentum sets ``accum = grad``, as torch and MindSpore do).

    ``SGD(params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
    nesterov=False, loss_scale=1.0)``; states ``accum`` (zeros) and ``stat`` (ones until the
    first step).
    """

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0,
                 weight_decay=0.0, nesterov=False, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        cls = "SGD"
        if self.dynamic_weight_decay:
            raise TypeError(f"For '{cls}', dynamic weight decay is currently not supported, the "
                            f"argument 'weight_decay' or 'weight_decay' set in grouped 'params' "
                            f"must be float or int type.")
        momentum = check_number(momentum, "momentum", cls, 0.0)
        self.dampening = check_number(dampening, "dampening", cls, 0.0)
        self.nesterov = check_bool(nesterov, "nesterov", cls)
        if self.nesterov and (momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError(f"For '{cls}', nesterov needs momentum > 0 and dampening == 0, got "
                             f"momentum={momentum} and dampening={dampening}")
        self.momentum = Parameter(Tensor(np.float32(momentum)), name="momentum",
                                  requires_grad=False)
        self._has_momentum = momentum > 0
        self.accum = self._state("accum")
        self.stat = self._state("stat", "ones")

    def construct(self, gradients):
        grads, lrs, consts = self._prepare(gradients)
        neg = {}
        if not self._has_momentum:
            for p, g, lr in zip(self.parameters, grads, lrs):
                p._assign(native_addcmul(p._data, g, _negated(lr, neg)))
            return True
        mom = self.momentum._data
        damp = self.dampening
        if not damp:
            # accum starts at zero, so the first step gives accum = grad by itself: the
            # momentum update of nn.Momentum, over all parameters at once.
            _momentum_step(self.parameters, self.accum, grads, lrs, mom, consts, self.nesterov)
            return True
        for p, a, st, g, lr in zip(self.parameters, self.accum, self.stat, grads, lrs):
            m = consts.cast(mom, p.dtype)
            # stat is 1 before the first step (accum = grad) and 0 after.
            gscale = call("sub", consts.get(1.0, p.dtype),
                          call("mul", call("sub", consts.get(1.0, p.dtype), st._data),
                               consts.get(damp, p.dtype)))
            na = call("add", call("mul", a._data, m), call("mul", g, gscale))
            st._assign(call("mul", st._data, consts.get(0.0, p.dtype)))
            a._assign(na)
            step = native_addcmul(g, na, m) if self.nesterov else na
            p._assign(native_addcmul(p._data, step, _negated(lr, neg)))
        return True

    def extend_repr(self):
        return f"params={len(self.parameters)}, nesterov={self.nesterov}"
