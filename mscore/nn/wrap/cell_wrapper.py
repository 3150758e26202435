"""Wrapper cells: ``nn.WithLossCell``, ``nn.WithEvalCell``, ``nn.TrainOneStepCell``."""
from __future__ import annotations

import numbers

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.wrap.accumulation import AccumulateGrads, ApplyAccumulated, MicroBatchSchedule
from mscore.nn.wrap.grad_cells import (  # noqa: F401  (MindSpore's path for them)
    ForwardValueAndGrad,
    GradAccumulationCell,
    ParameterUpdate,
    WithGradCell,
)
from mscore.nn.wrap.loss_cell import WithLossCell, _check_cell  # noqa: F401  (its MindSpore path)
from mscore.nn.wrap.parallel_optimizer import accumulation_plan, train_cell_update
from mscore.ops import functional as F
from mscore.ops.grad import value_and_grad
from mscore.parallel import _context as _parallel

_wrap = Tensor._wrap


class WithEvalCell(Cell):
    """``(loss, outputs, label)`` of a network and its loss, for evaluation; with
    ``add_cast_fp32`` the outputs and label are cast to float32 before the loss."""

    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        self._network = _check_cell(network, "network", "WithEvalCell")
        if not callable(loss_fn):
            raise TypeError(f"For 'WithEvalCell', 'loss_fn' must be a Cell or a callable, got "
                            f"{type(loss_fn).__name__}")
        self._loss_fn = loss_fn
        if not isinstance(add_cast_fp32, bool):
            raise TypeError(f"For 'WithEvalCell', 'add_cast_fp32' must be a bool, got "
                            f"{type(add_cast_fp32).__name__}")
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            label = F.cast(label, mdt.float32) if label.dtype.is_floating else label
            outputs = F.cast(outputs, mdt.float32)
        loss = self._loss_fn(outputs, label)
        return loss, outputs, label


def _identity(grads):
    return grads


class TrainOneStepCell(Cell):
    """One training step: the loss and gradients of ``network`` (which returns the loss)
    with respect to the optimizer's parameters, then the optimizer update. Returns the loss.

    ``TrainOneStepCell(network, optimizer, sens=None, return_grad=False)``; ``sens`` (default 1.0, 0
    is a ``ValueError``) scales the gradients; with ``return_grad`` a step returns ``(loss,
    {parameter name: gradient})``. ``grad_reducer`` (identity; in DATA_PARALLEL mode a
    :class:`~mscore.nn.DistributedGradReducer`, which also broadcasts rank 0's parameters before the
    first step) and :meth:`process_grads` are the places to hook gradient clipping or reduction.

    With ``grad_accumulation_step=k`` (auto-parallel context) a call adds its gradients to
    ``accu_grads.<name>`` and every ``k``-th call steps the optimizer on their mean (reduced
    across the job once, in DATA_PARALLEL mode); each call returns its own loss.
    """

    def __init__(self, network, optimizer, sens=None, return_grad=False):
        super().__init__(auto_prefix=False)
        cls = "TrainOneStepCell"
        self.network = _check_cell(network, "network", cls)
        self.network.set_grad()
        self.optimizer = _check_cell(optimizer, "optimizer", cls)
        params = getattr(optimizer, "parameters", None)
        if params is None:
            raise TypeError(f"For '{cls}', 'optimizer' must have a 'parameters' attribute "
                            f"(an nn.Optimizer)")
        if sens is None:
            sens = 1.0
        if isinstance(sens, bool) or not isinstance(sens, numbers.Real):
            raise TypeError(f"For '{cls}', 'sens' must be a float or None, got "
                            f"{type(sens).__name__}")
        if sens == 0:
            raise ValueError("The input argument of 'sens' can not be 0.")
        self.sens = float(sens)
        self.return_grad = return_grad
        if return_grad:
            self.weights_name = [p.name for p in params]
        self.weights = tuple(params)
        self.reducer_flag = False
        self.grad_reducer = _identity
        # DATA_PARALLEL: all-reduce the grads (or shard the optimizer over the ranks)
        reducer, self.optimizer = train_cell_update(optimizer)
        if reducer is not None:
            self.reducer_flag = True
            self.grad_reducer = reducer
        self.grad = value_and_grad(self.network, None, self.weights)
        self._accumulation = None
        steps = _parallel.grad_accumulation_step()
        if steps > 1:
            if return_grad:
                raise ValueError(f"For '{cls}', 'return_grad' cannot be used with "
                                 f"grad_accumulation_step={steps} (a call does not update)")
            sums, micro_reducer, update = accumulation_plan(self.weights, self.grad_reducer,
                                                            self.optimizer)
            self.micro_step = AccumulateGrads(self.network, self.weights, sums, self.sens,
                                              micro_reducer)
            self.apply_accumulated = ApplyAccumulated(sums, steps, update)
            self._accumulation = MicroBatchSchedule(steps)

    def __call__(self, *inputs):
        if self.reducer_flag:  # every rank starts from rank 0's parameters
            self.grad_reducer.broadcast_once(self)
        if self._accumulation is not None:
            loss = self.micro_step(*inputs)
            if self._accumulation.tick():
                self.apply_accumulated()
            return loss
        return super().__call__(*inputs)

    def process_grads(self, grads):
        """Gradients as the optimizer gets them: scaled by ``sens``, then ``grad_reducer``."""
        if self.sens != 1.0:
            grads = tuple(_wrap(call("mul", g._data, call("full", (), self.sens, g.dtype)))
                          for g in grads)
        return self.grad_reducer(grads)

    def construct(self, *inputs):
        loss, grads = self.grad(*inputs)
        grads = self.process_grads(grads)
        self.optimizer(grads)
        if self.return_grad:
            return loss, dict(zip(self.weights_name, grads))
        return loss
