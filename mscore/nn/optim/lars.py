"""``nn.LARS``: layer-wise adaptive rate scaling around another optimizer."""
from __future__ import annotations

import numpy as np

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.optim._args import check_bool, check_float
from mscore.nn.optim.optimizer import Optimizer, _Consts


def _default_lars_filter(param):
    return "LayerNorm" not in param.name and "bias" not in param.name


class LARS(Optimizer):
    """LARS around ``optimizer`` (MindSpore's LARSUpdate): for every parameter the filter
    selects, the gradient becomes ``coeff * (g + wd * w)`` with
    ``coeff = coefficient * |w| / (|g| + wd * |w| + epsilon)`` (``wd`` the wrapped
    optimizer's weight decay where it applies, else 0); with ``use_clip``,
    ``coeff = clip(coeff / lr, 0, 1)``. Other parameters keep their gradient (and get no
    weight decay). The wrapped optimizer then steps with its own rate, without its weight
    decay and loss scale, which LARS has taken over.

    ``LARS(optimizer, epsilon=1e-05, coefficient=0.001, use_clip=False,
    lars_filter=lambda x: 'LayerNorm' not in x.name and 'bias' not in x.name)``.
    """

    updates_elementwise = False   # a norm over each whole Parameter

    def __init__(self, optimizer, epsilon=1e-05, coefficient=0.001, use_clip=False,
                 lars_filter=_default_lars_filter):
        fake = Parameter(Tensor(np.float32(0.0)), name="fake_param")
        super().__init__(0.0, [fake])
        self.fake_param = fake   # kept, as MindSpore keeps it (a checkpoint key of LARS)
        cls = "LARS"
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"For '{cls}', the 'optimizer' must be an Optimizer, but got "
                            f"{type(optimizer).__name__}")
        self.epsilon = check_float(epsilon, "epsilon", cls)
        self.coefficient = check_float(coefficient, "coefficient", cls)
        self.use_clip = check_bool(use_clip, "use_clip", cls)
        if use_clip and optimizer.is_group_lr and optimizer.dynamic_lr:
            raise ValueError(f"For '{cls}', if the argument 'use_clip' is set to True, then the "
                             f"dynamic learning rate and group learning rate cannot both be "
                             f"true.")
        self.opt = optimizer
        self.parameters = optimizer.parameters
        self.global_step = optimizer.global_step
        self.learning_rate = Parameter(Tensor(np.float32(0.0)), name="fake_lr",
                                       requires_grad=False)
        self.lars_flag = tuple(bool(lars_filter(p)) for p in self.parameters)
        # LARS applies the wrapped optimizer's weight decay and loss scale itself
        self._decay = list(optimizer._decay)
        self.decay_flags = optimizer.decay_flags
        self.dynamic_weight_decay = optimizer.dynamic_weight_decay
        self.weight_decay = optimizer.weight_decay
        self.loss_scale = optimizer.loss_scale
        self.need_scale = optimizer.need_scale
        self.is_group = optimizer.is_group
        self.is_group_lr = optimizer.is_group_lr
        self.dynamic_lr = optimizer.dynamic_lr
        self._lr_of = optimizer._lr_of
        self._lr_list = optimizer._lr_list
        self._mindspore_attributes()   # reciprocal_scale, param_length, ... of the wrapped one
        optimizer.exec_weight_decay = False
        optimizer.decay_flags = tuple(False for _ in optimizer.decay_flags)
        optimizer.dynamic_weight_decay = False
        optimizer.need_scale = False

    def construct(self, gradients):
        grads = self._grads_list(gradients)
        consts = _Consts()
        lrs, wd_now = self._step_lrs()
        consts.wd_now = wd_now
        if self.need_scale:
            grads = [call("mul", g, consts.get(1.0 / self.loss_scale, p.dtype))
                     for p, g in zip(self.parameters, grads)]
        out = []
        for i, (p, g) in enumerate(zip(self.parameters, grads)):
            if self.lars_flag[i]:
                g = self._lars(i, p, g, consts, lrs[self._lr_of[i]])
            out.append(Tensor._wrap(g))
        return self.opt(tuple(out))

    def _lars(self, i, p, g, consts, lr):
        dt = p.dtype
        w = p._data
        wd = self._decay_value(i, dt, consts)
        w_norm = call("sqrt", call("sum", call("mul", w, w), axis=None, keepdims=False))
        g_norm = call("sqrt", call("sum", call("mul", g, g), axis=None, keepdims=False))
        denom = call("add", call("add", g_norm, call("mul", wd, w_norm)),
                     consts.get(self.epsilon, dt))
        coeff = call("div", call("mul", consts.get(self.coefficient, dt), w_norm), denom)
        if self.use_clip:
            coeff = call("maximum", call("minimum", call("div", coeff, consts.cast(lr, dt)),
                                         consts.get(1.0, dt)), consts.get(0.0, dt))
        return call("mul", call("add", g, call("mul", wd, w)), coeff)

    def _decay_value(self, i, dt, consts):
        d = self._decay[i]
        if not self.decay_flags[i]:
            return consts.get(0.0, dt)
        if isinstance(d, float):
            return consts.get(d, dt)
        return consts.cast(consts.wd_now[id(d)], dt)
