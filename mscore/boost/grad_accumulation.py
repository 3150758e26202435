"""``GradientAccumulation``: the optimizer steps once every ``max_accumulation_step`` calls,
on the mean of the gradients of those calls (MindSpore's boost gradient accumulation)."""
from __future__ import annotations

import numbers

import numpy as np

from mscore.boost._conditional import apply_if
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.ops import functional as F

__all__ = ["GradientAccumulation"]


def check_steps(value, name="max_accumulation_step"):
    """A positive int number of steps (TypeError / ValueError naming ``name``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For 'GradientAccumulation', '{name}' must be an int, got "
                        f"{type(value).__name__}")
    if value <= 0:
        raise ValueError(f"For 'GradientAccumulation', '{name}' must be positive, got {value}")
    return int(value)


def accumulate(sums, counter, grads, steps, optimizer):
    """Add ``grads / steps`` to the ``sums`` Parameters and count the call in ``counter``;
    on the ``steps``-th call step ``optimizer`` on the sums and clear them."""
    for acc, g in zip(sums, grads):
        acc._assign(F.add(acc, F.div(F.cast(g, acc.dtype), float(steps)))._data)
    counter._assign(F.add(counter, 1)._data)
    due = F.greater_equal(counter, steps)

    def step():
        optimizer(tuple(Tensor._wrap(acc._data) for acc in sums))
        for acc in sums:
            acc._assign(F.zeros_like(acc)._data)
        counter._assign(F.zeros_like(counter)._data)
    apply_if(due, step)


class GradientAccumulation(Cell):
    """``GradientAccumulation(max_accumulation_step, optimizer)``;
    ``cell(loss, grads)`` adds ``grads / max_accumulation_step`` to the accumulated
    gradients (Parameters ``grad_accumulation.<name>``) and counts the call
    (``_accumulation_step``); every ``max_accumulation_step``-th call the optimizer steps on
    the accumulated gradients, which then restart from zero. Returns ``loss``.
    """

    def __init__(self, max_accumulation_step, optimizer):
        super().__init__(auto_prefix=False)
        self._max_accumulation_step = check_steps(max_accumulation_step)
        if not isinstance(optimizer, Cell) or not hasattr(optimizer, "parameters"):
            raise TypeError(f"For 'GradientAccumulation', 'optimizer' must be an Optimizer, "
                            f"got {type(optimizer).__name__}")
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self._grad_accumulation = self.weights.clone(prefix="grad_accumulation", init="zeros")
        for p in self._grad_accumulation:
            p.requires_grad = False
        self._accumulation_step = Parameter(Tensor(np.int32(0)), name="accumulation_step",
                                            requires_grad=False)

    def construct(self, loss, grads):
        accumulate(self._grad_accumulation, self._accumulation_step, grads,
                   self._max_accumulation_step, self.optimizer)
        return loss

