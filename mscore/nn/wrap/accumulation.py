"""Gradient accumulation of the train cells (``grad_accumulation_step`` of the auto-parallel
context): the gradients of ``k`` calls are summed into ``accu_grads.<name>`` Parameters and
the optimizer steps once every ``k`` calls, on their mean — the step one call on the k-times
larger batch would make when the loss is a mean over the batch.

The data-parallel reduction (the gradient reducer, or the parallel optimizer's
reduce-scatter) runs once per update, on the summed gradients, never per micro-batch.

Which call updates is counted on the host, so each kind of call is its own program in
GRAPH_MODE: :class:`AccumulateGrads` (gradients of one micro-batch added to the sums) on
every call, and :class:`ApplyAccumulated` (the mean of the sums through the reduction and
the optimizer, the sums cleared) after every ``k``-th one. Neither holds a branch on a
value, and the collectives run only in the second.
"""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.common.parameter import ParameterTuple
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.ops.grad import value_and_grad

ACCUMULATION_PREFIX = "accu_grads"


def accumulation_sums(weights):
    """Zero-initialised ``accu_grads.<name>`` Parameters, one per weight (not trained)."""
    sums = ParameterTuple(weights).clone(prefix=ACCUMULATION_PREFIX, init="zeros")
    for s in sums:
        s.requires_grad = False
    return sums


class AccumulateGrads(Cell):
    """``cell(*inputs)``: the loss of ``network(*inputs)``; its gradients with respect to
    ``weights``, times ``sens`` (and through ``reducer`` when given: the parallel
    optimizer's reduce-scatter, which then runs on every call), are added to ``sums``."""

    def __init__(self, network, weights, sums, sens=1.0, reducer=None):
        super().__init__(auto_prefix=False)
        self.network = network
        self.sums = sums
        self.sens = float(sens)
        self.reducer = reducer
        self._grad = value_and_grad(network, None, list(weights))

    def construct(self, *inputs):
        loss, grads = self._grad(*inputs)
        if self.reducer is not None:
            grads = self.reducer(grads)
        for acc, g in zip(self.sums, grads):
            native = g._data
            if self.sens != 1.0:
                native = call("mul", native, call("full", (), self.sens, g.dtype))
            acc._assign(call("add", acc._data, call("cast", native, acc.dtype)))
        return loss


class ApplyAccumulated(Cell):
    """``cell()``: ``update(mean of the sums)`` and the sums back to zero; ``update`` is the
    train cell's reduction and optimizer step (a Cell, so its Parameters are threaded
    through the compiled program)."""

    def __init__(self, sums, steps, update):
        super().__init__(auto_prefix=False)
        self.sums = sums
        self.steps = int(steps)
        self.update = update

    def construct(self):
        inverse = None
        grads = []
        for acc in self.sums:
            if inverse is None or inverse[0] != acc.dtype:
                inverse = (acc.dtype, call("full", (), 1.0 / self.steps, acc.dtype))
            grads.append(Tensor._wrap(call("mul", acc._data, inverse[1])))
        self.update(tuple(grads))
        for acc in self.sums:
            acc._assign(call("full", tuple(acc.shape), 0.0, acc.dtype))
        return Tensor._wrap(call("full", (), True, mdt.bool_))


class MicroBatchSchedule:
    """Counts the calls of a train cell on the host: :meth:`tick` is True on every
    ``steps``-th call (the one after which the update runs)."""

    def __init__(self, steps):
        self.steps = int(steps)
        self.calls = 0

    def tick(self):
        """Count one call; True when it completes an accumulation window."""
        self.calls += 1
        if self.calls == self.steps:
            self.calls = 0
            return True
        return False


class ReduceAndStep(Cell):
    """``cell(grads)``: ``optimizer(reducer(grads))`` — a train cell's update as one Cell.
    ``reducer`` is the data-parallel reduction (a Cell) or any function of the gradients."""

    def __init__(self, reducer, optimizer):
        super().__init__(auto_prefix=False)
        self.reducer = reducer
        self.optimizer = optimizer

    def construct(self, grads):
        self.optimizer(self.reducer(grads))
        return True
