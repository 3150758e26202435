"""``nn.Rprop``: resilient back-propagation."""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.dispatch import call
from mscore.nn.optim._args import check_float, check_range
from mscore.nn.optim.optimizer import Optimizer


class Rprop(Optimizer):
    """Rprop as MindSpore computes it: each element's step size starts at ``lr`` and is
    multiplied by ``etaplus`` when the gradient keeps its sign, by ``etaminus`` when it
    flips (and that element then skips its update and forgets its gradient), clipped to
    ``step_sizes``; ``param -= sign(g) * step_size``.

    ``Rprop(params, learning_rate=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.0),
    weight_decay=0.0)``; states ``prev`` and ``step_size``.
    """

    def __init__(self, params, learning_rate=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.),
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        cls = "Rprop"
        if not isinstance(etas, tuple):
            raise TypeError(f"For {cls}, etas must be a tuple, but got {type(etas)}.")
        if len(etas) != 2:
            raise ValueError(f"For {cls}, etas must be a tuple with the size of 2, but got "
                             f"{len(etas)}.")
        if not isinstance(step_sizes, tuple):
            raise TypeError(f"For {cls}, step_sizes must be a tuple, but got "
                            f"{type(step_sizes)}.")
        if len(step_sizes) != 2:
            raise ValueError(f"For {cls}, step_sizes must be a tuple with the size of 2, but "
                             f"got {len(step_sizes)}.")
        if step_sizes[0] > step_sizes[1]:
            raise ValueError(f"For {cls}, maximal step size should not be less than minimal "
                             f"step size, but got {step_sizes[0]} > {step_sizes[1]}.")
        check_range(etas[0], "etaminus", cls, 0.0, 1.0, False, False)
        check_float(etas[1], "etaplus", cls)
        if etas[1] <= 1.0:
            raise ValueError(f"For {cls}, etaplus must be greater than 1.0, but got etaplus "
                             f"{etas[1]}.")
        check_float(step_sizes[0], "min_step_sizes", cls)
        check_float(step_sizes[1], "max_step_sizes", cls)
        self.etaminus, self.etaplus = etas
        self.step_size_min, self.step_size_max = step_sizes
        self.prev = self._state("prev")
        self.step_size = self._state("step_size")

    def construct(self, gradients):
        grads, lrs, consts = self._prepare(gradients)
        first = call("equal", call("reshape", self.global_step._data, ()),
                     consts.get(1, mdt.int32))
        for p, prev, size, g, lr in zip(self.parameters, self.prev, self.step_size, grads, lrs):
            dt = p.dtype
            zero, one = consts.get(0.0, dt), consts.get(1.0, dt)
            size_now = call("where", first, call("mul", call("full", p.shape, 1.0, dt), lr),
                            size._data)
            trend = call("sign", call("mul", g, prev._data))
            factor = call("where", call("greater", trend, zero), consts.get(self.etaplus, dt),
                          call("where", call("less", trend, zero),
                               consts.get(self.etaminus, dt), one))
            size_new = call("minimum", call("maximum", call("mul", size_now, factor),
                                            consts.get(self.step_size_min, dt)),
                            consts.get(self.step_size_max, dt))
            flipped = call("equal", factor, consts.get(self.etaminus, dt))
            g_used = call("where", flipped, zero, g)
            p._assign(call("sub", p._data, call("mul", call("sign", g_used), size_new)))
            prev._assign(g_used)
            size._assign(size_new)
        return True
