"""The boost train cells: ``BoostTrainOneStepCell`` and ``BoostTrainOneStepWithLossScaleCell``.

A boost train step is a ``TrainOneStepCell`` step that honours what ``AutoBoost`` set up:

* a :class:`~mscore.boost.FreezeOpt` optimizer: each step runs the per-group train cell the
  freezing schedule names (``step`` counts the steps; the cell itself runs eagerly and in
  GRAPH_MODE each group's cell is its own compiled program);
* gradient accumulation (``grad_accumulation`` on in the AutoBoost configuration, with
  ``grad_accumulation_step`` > 1): the optimizer steps every that many calls, on the mean;
* AdaSum (``optimizer.adasum``, set by level O2) in a DATA_PARALLEL job of
  ``group_number = world // device_number`` > 1 server groups, a power of 2: see
  :mod:`mscore.boost.adasum`. Otherwise (one process, or too few processes) the step is the
  usual data-parallel one, as in MindSpore.

The configuration is the one of the AutoBoost that rewrote the optimizer, else the one this
thread made last (MindSpore reads its process-wide singleton).
"""
from __future__ import annotations

import numpy as np

from mscore.boost import boost as _boost
from mscore.boost._conditional import apply_if
from mscore.boost.adasum import AdaSum, server_group_name
from mscore.boost.grad_accumulation import accumulate
from mscore.boost.grad_freeze import FreezeOpt, _Cells, _TrainFreezeCell, freeze_cell
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common.tensor import Tensor
from mscore.communication import management
from mscore.nn.cell import Cell
from mscore.nn.wrap.cell_wrapper import TrainOneStepCell
from mscore.nn.wrap.grad_reducer import DistributedGradReducer, agree_overflow, broadcast_parameters
from mscore.nn.wrap.loss_scale import all_finite
from mscore.ops import functional as F
from mscore.ops.grad import value_and_grad
from mscore.parallel import _context as _parallel

__all__ = ["BoostTrainOneStepCell", "BoostTrainOneStepWithLossScaleCell"]


def _int_parameter(name):
    return Parameter(Tensor(np.int32(0)), name=name, requires_grad=False)


class BoostTrainOneStepCell(TrainOneStepCell):
    r"""A train step with boost: ``BoostTrainOneStepCell(network, optimizer, sens=None)``;
    returns the loss. See the module docstring for what it does with a FreezeOpt, gradient
    accumulation and AdaSum; with a plain optimizer it is ``TrainOneStepCell``.
    """

    def __init__(self, network, optimizer, sens=None):
        super().__init__(network, optimizer, sens)
        self.freeze = isinstance(optimizer, FreezeOpt)
        self.train_strategy = getattr(optimizer, "train_strategy", None)
        self._schedule = None if self.train_strategy is None else \
            [int(s) for s in self.train_strategy.asnumpy()]
        object.__setattr__(self, "auto_boost",
                           getattr(optimizer, "_auto_boost", None) or _boost.current())
        config = self.auto_boost.boost_config
        mode = _parallel.parallel_mode()
        self.parallel_mode = mode
        self.use_grad_accumulation = bool(config.get("grad_accumulation", False)) and mode in (
            _parallel.ParallelMode.DATA_PARALLEL, _parallel.ParallelMode.STAND_ALONE)
        self.max_accumulation_step = 1
        if self.use_grad_accumulation:
            self.max_accumulation_step = int(self.auto_boost.grad_accumulation_step)
            if self.max_accumulation_step <= 1:
                self.max_accumulation_step = 1
                self.use_grad_accumulation = False
        self.accumulation_step = _int_parameter("accumulation_step")
        if self.use_grad_accumulation:
            self.grad_accumulation = ParameterTuple(self.weights).clone(
                prefix="grad_accumulation", init="zeros")
        self.enable_dim_reduce = self.check_dim_reduce_enable()
        if self.enable_dim_reduce:
            raise NotImplementedError("BoostTrainOneStepCell: dim_reduce (second-order "
                                      "training in a PCA subspace) is not implemented in "
                                      "mscore; see docs/differences.md")
        self.step = _int_parameter("step")
        self.freeze_nets = None
        if self.freeze:
            self.mean = _parallel.get_auto_parallel_context("gradients_mean") \
                if self.reducer_flag else None
            self.degree = _parallel.effective_device_num() if self.reducer_flag else None
            self.freeze_nets = _Cells(self._freeze_cells())
            # the schedule picks a compiled program per group: this cell runs eagerly
            self.jit_disabled = True
        self.enable_adasum = self.check_adasum_enable()
        self.sync_tensor = _int_parameter("sync_tensor")
        if self.enable_adasum:
            self._init_adasum()

    def _freeze_cells(self):
        return freeze_cell(self.reducer_flag, self.network, self.optimizer, self.sens, None,
                           self.use_grad_accumulation, self.mean, self.degree,
                           self.max_accumulation_step)

    # -- checks ---------------------------------------------------------------------------------
    def check_adasum_enable(self):
        """True when AdaSum acts: the optimizer asks for it, the job reduces gradients and
        has ``world // device_number`` > 1 server groups, a power of 2."""
        if not getattr(self.optimizer, "adasum", None) or not self.reducer_flag:
            return False
        groups = management.get_group_size() // int(self.auto_boost.device_number)
        return bool(groups > 1 and groups & (groups - 1) == 0)

    def check_dim_reduce_enable(self):
        """True when the optimizer asks for dim_reduce."""
        return bool(getattr(self.optimizer, "dim_reduce", None))

    # -- the step -------------------------------------------------------------------------------
    def __call__(self, *inputs):
        if self.enable_adasum and not self._adasum_synced:
            broadcast_parameters(list(self.get_parameters()))   # rank 0's, to every group
            self._adasum_synced = True
        if self.enable_adasum:
            return Cell.__call__(self, *inputs)
        return super().__call__(*inputs)

    def construct(self, *inputs):
        if self.freeze:
            return self.gradient_freeze_process(*inputs)
        loss, grads = self.grad(*inputs)
        grads = self.process_grads(grads)
        return self._update(loss, grads, inputs)

    def _update(self, loss, grads, inputs):
        if self.use_grad_accumulation:
            return self.gradient_accumulation_process(loss, grads, self.sens, *inputs)
        if self.enable_adasum:
            return self.adasum_process(loss, grads)
        self.optimizer(grads)
        return loss

    def _next_net(self):
        """The index of the freeze cell this step runs, and the step counter moved on."""
        step = int(self.step.asnumpy())
        if self._schedule is None:
            index, length = step, len(self.freeze_nets)
        else:
            index, length = self._schedule[step], len(self._schedule)
        self.step.set_data(Tensor(np.int32(0 if step + 1 >= length else step + 1)))
        return index

    def gradient_freeze_process(self, *inputs):
        r"""One gradient-freezing step: the train cell of the group the schedule names.
        Returns its output (the loss)."""
        return self.freeze_nets[self._next_net()](*inputs)

    def gradient_accumulation_process(self, loss, grads, sens, *inputs):
        r"""Accumulate ``grads``; every ``max_accumulation_step``-th call update (AdaSum or
        the optimizer) on their mean. Returns ``loss``."""
        update = (lambda g: self.adasum_process(loss, g)) if self.enable_adasum \
            else self.optimizer
        accumulate(self.grad_accumulation, self.accumulation_step, grads,
                   self.max_accumulation_step, update)
        return loss

    def adasum_process(self, loss, grads):
        r"""The optimizer step inside the server group, then AdaSum of the weight changes
        across the groups. Returns ``loss``."""
        old = [Tensor._wrap(p._data) for p in self.weights]
        self.optimizer(grads)
        deltas = [F.sub(o, Tensor._wrap(p._data)) for o, p in zip(old, self.weights)]
        self.adasum(deltas, self.weights, old)
        return loss

    def _init_adasum(self):
        rank = management.get_rank()
        world = management.get_group_size()
        device_number = int(self.auto_boost.device_number)
        group_number = world // device_number
        self.device_number = device_number
        self.server_rank = rank % device_number
        self.adasum = AdaSum(rank, device_number, group_number, tuple(self.weights))
        self._adasum_synced = False
        self.degree = device_number
        if device_number > 1:
            self.grad_reducer = DistributedGradReducer(
                self.weights, _parallel.get_auto_parallel_context("gradients_mean"),
                device_number, group=server_group_name(rank // device_number))
        else:
            # the data-parallel reducer the base cell registered gives way to no reduction
            if isinstance(getattr(self, "grad_reducer", None), Cell):
                del self.grad_reducer
            self.grad_reducer = _no_reduction


def _no_reduction(grads):
    return grads


class _TrainFreezeLossScaleCell(_TrainFreezeCell):
    """One gradient-freezing step with loss scaling (the scale and its update cell shared
    by every group's cell); returns ``(loss, overflow, scale)``."""

    def __init__(self, owner, net, grad_reducer, optimizer):
        super().__init__(net, 1.0, None, grad_reducer, owner.use_grad_accumulation, optimizer,
                         owner.max_accumulation_step)
        self.scale_sense = owner.scale_sense
        self.loss_scaling_manager = owner.loss_scaling_manager
        object.__setattr__(self, "_owner", owner)
        self._scaled = value_and_grad(owner.scaled_loss_of(net), None, list(self.parameters),
                                      has_aux=True)

    def construct(self, *inputs):
        def update(grads):
            if self.use_grad_accumulation:
                self.grad_accumulation(None, grads)
            else:
                self.opt(grads)
        return self._owner.scaled_step(self._scaled, self.grad_reducer, update, inputs)


class BoostTrainOneStepWithLossScaleCell(BoostTrainOneStepCell):
    r"""A boost train step with loss scaling: ``BoostTrainOneStepWithLossScaleCell(network,
    optimizer, scale_sense)``; returns ``(loss, overflow, scale)``.

    ``scale_sense`` is an update Cell (``nn.DynamicLossScaleUpdateCell``,
    ``nn.FixedLossScaleUpdateCell``) or a Tensor of shape () or (1,) (change it with
    :meth:`set_sense_scale`). The gradients of ``loss * scale`` are unscaled, reduced across
    the job in DATA_PARALLEL mode, checked for inf/nan (the flag agreed across ranks), the
    update cell adjusts the scale, and the boost update (see BoostTrainOneStepCell) is
    skipped on overflow.
    """

    def __init__(self, network, optimizer, scale_sense):
        if isinstance(scale_sense, Cell):
            manager, value = scale_sense, np.float32(scale_sense.get_loss_scale())
        elif isinstance(scale_sense, Tensor):
            if scale_sense.shape not in ((), (1,)):
                raise ValueError(f"The shape of scale_sense must be (1,) or (), but got "
                                 f"{scale_sense.shape}")
            manager, value = None, scale_sense.asnumpy().astype(np.float32)
        else:
            raise TypeError(f"The scale_sense must be Cell or Tensor, but got "
                            f"{type(scale_sense)}")
        object.__setattr__(self, "_scale_init", (manager, value))
        super().__init__(network, optimizer, sens=None)
        if self.auto_boost.boost_config.get("loss_scale_group", False):
            raise NotImplementedError(
                "BoostTrainOneStepWithLossScaleCell: 'loss_scale_group' (GroupLossScaleManager's "
                "per-layer loss scales) needs Ascend's per-layer overflow status; it is not "
                "implemented in mscore")
        self._make_scale()
        self._scaled_grad = value_and_grad(self.scaled_loss_of(self.network), None,
                                           list(self.weights), has_aux=True)

    def _make_scale(self):
        """The ``scale_sense`` Parameter and the update cell (once; the freeze cells need
        them while the base class is still being built)."""
        if "scale_sense" in self._params:
            return
        manager, value = self._scale_init
        self.loss_scaling_manager = manager
        self.scale_sense = Parameter(Tensor(value), name="scale_sense", requires_grad=False)

    def _freeze_cells(self):
        self._make_scale()
        plain = super()._freeze_cells()
        return [_TrainFreezeLossScaleCell(self, cell.net, cell.grad_reducer, cell.opt)
                for cell in plain]

    def set_sense_scale(self, sens):
        """Replace the loss scale (a Tensor of shape () or (1,))."""
        if not isinstance(sens, Tensor):
            raise TypeError(f"The input type must be Tensor, but got {type(sens)}")
        self.scale_sense.set_data(F.cast(F.reshape(sens, self.scale_sense.shape), mdt.float32))

    _set_sense_scale = set_sense_scale

    def scaled_loss_of(self, net):
        """``fn(*inputs) -> (loss * scale in float32, loss)`` for ``net``."""
        def scaled(*inputs):
            loss = net(*inputs)
            full = loss if loss.dtype in (mdt.float32, mdt.float64) else F.cast(loss, mdt.float32)
            return F.mul(full, F.cast(self.scale_sense, full.dtype)), loss
        return scaled

    def scaled_step(self, grad_fn, reducer, update, inputs):
        """One loss-scaled step: gradients of ``grad_fn``, unscaled, reduced, checked; the
        scale updated; ``update(grads)`` unless they overflowed."""
        scale = Tensor._wrap(self.scale_sense._data)
        (_, loss), grads = grad_fn(*inputs)
        grads = tuple(F.div(g, F.cast(scale, g.dtype)) for g in grads)
        if reducer is not None:
            grads = reducer(grads)
        overflow = F.logical_not(all_finite(grads))
        if self.reducer_flag:
            overflow = agree_overflow(overflow)
        if self.loss_scaling_manager is not None:
            overflow = self.loss_scaling_manager(self.scale_sense, overflow)
        apply_if(F.logical_not(overflow), lambda: update(grads))
        return loss, overflow, scale

    def construct(self, *inputs):
        if self.freeze:
            return self.gradient_freeze_process(*inputs)

        def update(grads):
            self._update(None, grads, inputs)
        return self.scaled_step(self._scaled_grad, self.grad_reducer, update, inputs)

