"""The loss-scaled train step and the cells that update the scale.

``TrainOneStepWithLossScaleCell(network, optimizer, scale_sense)`` differentiates
``loss * scale``, divides the gradients by the scale (so the optimizer, and any gradient
clipping in it, sees true gradients), checks them for inf/nan, lets the update cell adjust the
scale, skips the optimizer step on overflow, and returns ``(loss, overflow, scale)`` where
``scale`` is the value this step used. In DATA_PARALLEL mode the unscaled gradients are
all-reduced before the check, and the overflow flag is agreed across ranks, so every rank
skips the same steps.

:class:`DynamicLossScaleRule` is the one dynamic loss-scale rule: the update cell here, the
amp managers and scalers, and boost's loss-scaled cells all apply it.
"""
from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from mscore import context, dispatch
from mscore._state import in_compiled
from mscore.common import dtype as mdt
from mscore.common.parameter import MutationScope, Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.wrap.grad_reducer import agree_overflow
from mscore.nn.wrap.parallel_optimizer import train_cell_update
from mscore.ops import functional as F
from mscore.ops.grad import value_and_grad
from mscore.ops.multi_tensor import divide_all, unscale_and_check
from mscore.parallel import _context as _parallel

_data_of = operator.attrgetter("_data")


def _tensor_leaves(inputs):
    if isinstance(inputs, Tensor):
        return [inputs]
    if isinstance(inputs, (list, tuple)):
        out = []
        for x in inputs:
            out.extend(_tensor_leaves(x))
        return out
    raise TypeError(f"inputs: expected Tensors or (nested) tuples/lists of Tensors, got "
                    f"{type(inputs).__name__}")


def all_finite(inputs, status=None):
    """A bool Tensor: True when no Tensor in ``inputs`` holds inf or nan.

    Eagerly this is the backend's fused check with one host synchronisation; inside a
    compiled program it is a device-side reduction, so the step stays one program.
    """
    leaves = _tensor_leaves(inputs)
    if not leaves:
        return Tensor(True)
    if in_compiled():
        ok = None
        for t in leaves:
            part = dispatch.call("all", dispatch.call("isfinite", t._data), axis=None,
                                 keepdims=False)
            ok = part if ok is None else dispatch.call("logical_and", ok, part)
        return Tensor._wrap(ok)
    return Tensor(bool(dispatch.backend().all_finite([t._data for t in leaves])))


MAX_CONSECUTIVE_OVERFLOWS = 1000
"""How many overflowing steps in a row the loss-scaled training tolerates (MindSpore's
``DynamicLossScaleManager.bad_step_max``)."""


class _HostOps:
    """The operations of :meth:`DynamicLossScaleRule.update` on Python numbers (the managers
    keep their state on the host)."""

    where = staticmethod(lambda condition, a, b: a if condition else b)
    maximum = staticmethod(max)
    add = staticmethod(operator.add)
    sub = staticmethod(operator.sub)
    mul = staticmethod(operator.mul)
    div = staticmethod(operator.truediv)
    greater_equal = staticmethod(operator.ge)
    logical_and = staticmethod(lambda a, b: bool(a and b))
    logical_or = staticmethod(lambda a, b: bool(a or b))
    logical_not = staticmethod(operator.not_)
    isfinite = staticmethod(math.isfinite)


HOST_OPS = _HostOps()
"""The rule's operations on Python numbers; :mod:`mscore.ops.functional` holds the same names
for Tensors (device-side selects: the rule runs inside a compiled step unchanged)."""


class DynamicLossScaleRule:
    """MindSpore's dynamic loss-scale rule, for a ``scale_factor`` (> 1) and a
    ``scale_window`` (a positive int).

    Iterations count from 1. An overflowing iteration sets ``scale = max(scale / factor, 1)``;
    an iteration without overflow that comes ``scale_window`` or more iterations after the
    last overflow (or increase) sets ``scale = scale * factor``. Either event makes it the
    new "last" iteration. With ``keep_finite`` (MindSpore's ``DynamicLossScaler``) the
    increase happens only when the product is finite; without it (MindSpore's update cell
    and manager) the scale may grow to inf, and the next step's overflow brings it back.
    :meth:`update` is the formula, written once over an operations namespace
    (:data:`HOST_OPS` or :mod:`mscore.ops.functional`).
    """

    def __init__(self, scale_factor, scale_window, keep_finite=False):
        if isinstance(scale_factor, bool) or not isinstance(scale_factor, numbers.Real):
            raise TypeError(f"scale_factor: expected a number, got "
                            f"{type(scale_factor).__name__}")
        if not scale_factor > 1:
            raise ValueError(f"scale_factor: must be > 1, got {scale_factor}")
        if isinstance(scale_window, bool) or not isinstance(scale_window, int):
            raise TypeError(f"scale_window: expected an int, got {type(scale_window).__name__}")
        if scale_window <= 0:
            raise ValueError(f"scale_window: must be a positive int, got {scale_window}")
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.keep_finite = keep_finite

    def update(self, ops, scale, iteration, last_change, overflow):
        """One iteration of the rule: ``(new scale, new last change, next iteration)``.

        ``iteration`` is this iteration's number (from 1), ``last_change`` the iteration of
        the last overflow or increase (0 before any), ``overflow`` whether this iteration's
        gradients overflowed; ``ops`` computes with them (:data:`HOST_OPS` for Python
        numbers, :mod:`mscore.ops.functional` for Tensors)."""
        factor = float(self.scale_factor)
        on_overflow = ops.where(overflow, ops.maximum(ops.div(scale, factor), 1.0), scale)
        due = ops.greater_equal(ops.sub(iteration, last_change), self.scale_window)
        last = ops.where(ops.logical_or(overflow, due), iteration, last_change)
        grown = ops.mul(on_overflow, factor)
        grow = ops.logical_and(due, ops.logical_not(overflow))
        if self.keep_finite:
            grow = ops.logical_and(grow, ops.isfinite(grown))
        return ops.where(grow, grown, on_overflow), last, ops.add(iteration, 1)


def check_overflow_streak(streak, scale, where, limit=MAX_CONSECUTIVE_OVERFLOWS):
    """RuntimeError once ``streak`` overflowing steps in a row reach ``limit``: the scale is
    at its floor and the gradients still overflow, so training cannot recover."""
    if streak >= limit:
        raise RuntimeError(
            f"{where}: {streak} consecutive steps overflowed (loss scale now {scale:g}); the "
            f"gradients are inf/nan even at the smallest scale — check the loss and the "
            f"learning rate")


def check_loss_scale(value, name):
    """``value`` as a float if it is a number >= 1, else the error of MindSpore's loss-scale
    managers (``The argument 'loss_scale' must be >= 1, but got 0.5``); the one check of a
    loss scale for the update cells, the managers and the scalers."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"The argument '{name}' must be a number, but got "
                        f"{type(value).__name__}")
    if not value >= 1:
        raise ValueError(f"The argument '{name}' must be >= 1, but got {value}")
    return float(value)


class FixedLossScaleUpdateCell(Cell):
    """Keeps the scale; ``cell(loss_scale, overflow)`` returns ``overflow``."""

    def __init__(self, loss_scale_value):
        super().__init__(auto_prefix=False)
        self.loss_scale_value = check_loss_scale(loss_scale_value, "loss_scale_value")

    def get_loss_scale(self):
        """The scale value."""
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        return overflow


class DynamicLossScaleUpdateCell(Cell):
    """``DynamicLossScaleUpdateCell(loss_scale_value, scale_factor, scale_window)``.

    ``cell(loss_scale, overflow)`` updates the ``loss_scale`` Parameter with
    :class:`DynamicLossScaleRule` using device-side selects, and returns ``overflow``.
    """

    def __init__(self, loss_scale_value, scale_factor, scale_window):
        super().__init__(auto_prefix=False)
        self.loss_scale_value = check_loss_scale(loss_scale_value, "loss_scale_value")
        self.rule = DynamicLossScaleRule(scale_factor, scale_window)
        self.scale_factor = float(scale_factor)
        self.scale_window = scale_window
        self.current_iterator_step = Parameter(Tensor(1, mdt.int32),
                                               name="current_iterator_step",
                                               requires_grad=False)
        self.last_overflow_iterator_step = Parameter(Tensor(0, mdt.int32),
                                                     name="last_overflow_iterator_step",
                                                     requires_grad=False)

    def get_loss_scale(self):
        """The initial scale value."""
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        cur = self.current_iterator_step
        last = self.last_overflow_iterator_step
        new_scale, new_last, new_cur = self.rule.update(F, loss_scale, cur, last, overflow)
        last.assign_value(new_last)
        loss_scale.assign_value(new_scale)
        cur.assign_value(new_cur)
        return overflow

    def update_on_host(self, loss_scale, overflow):
        """:meth:`construct` for a step that knows ``overflow`` as a Python bool (PYNATIVE):
        the rule runs on host copies of the three values (float32 arithmetic, as on the
        device), read from the device only when a Parameter changed behind its back; the
        device values are written only when they change, the iteration by one add. No
        synchronisation and one kernel per step instead of a dozen."""
        cur, last = self.current_iterator_step, self.last_overflow_iterator_step
        mirror = self.__dict__.get("_host_mirror")
        if mirror is None or mirror[0] is not loss_scale._data or \
                mirror[1] is not cur._data or mirror[2] is not last._data:
            mirror = (None, None, None, np.float32(loss_scale.asnumpy().reshape(-1)[0]),
                      int(cur.asnumpy().reshape(-1)[0]), int(last.asnumpy().reshape(-1)[0]))
        _, _, _, scale, step, last_change = mirror
        if not isinstance(overflow, bool):
            raise TypeError(f"update_on_host: overflow must be a Python bool, got "
                            f"{type(overflow).__name__}")
        new_scale, new_last, new_step = self.rule.update(HOST_OPS, scale, step, last_change,
                                                         overflow)
        new_scale = np.float32(new_scale)
        if new_last != last_change:
            last._assign(_fresh_full(last, new_last))
        if new_scale.tobytes() != scale.tobytes():
            loss_scale._assign(_fresh_full(loss_scale, new_scale))
        cur._assign(dispatch.call("add", cur._data, dispatch.call("full", (), 1, cur.dtype)))
        object.__setattr__(self, "_host_mirror", (loss_scale._data, cur._data, last._data,
                                                  new_scale, new_step, new_last))
        return overflow


def _fresh_full(param, value):
    """A new array of ``param``'s shape and dtype filled with ``value`` (never a cached
    constant the Parameter would share)."""
    dt = param.dtype
    return dispatch.call("add", dispatch.call("full", param.shape, value, dt),
                         dispatch.call("full", (), 0, dt))


class TrainOneStepWithLossScaleCell(Cell):
    """One optimizer step with loss scaling; returns ``(loss, overflow, scale)``.

    ``scale_sense`` is an update Cell (from ``LossScaleManager.get_update_cell()``) or a
    Tensor of shape () or (1,) holding a fixed scale (change it with ``set_sense_scale``).
    After ``max_consecutive_overflows`` overflowing steps in a row a RuntimeError says the
    scale cannot recover (:func:`check_overflow_streak`). The streak is counted on the device; it
    is read back every step in PYNATIVE mode (where the step already synchronised to decide
    the update) and every ``GRAPH_CHECK_INTERVAL`` steps in GRAPH_MODE, so a compiled step
    does not wait for the device.
    """

    GRAPH_CHECK_INTERVAL = 100

    def __init__(self, network, optimizer, scale_sense,
                 max_consecutive_overflows=MAX_CONSECUTIVE_OVERFLOWS):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"network: expected a Cell, got {type(network).__name__}")
        if not isinstance(optimizer, Cell) or not hasattr(optimizer, "parameters"):
            raise TypeError(f"optimizer: expected an Optimizer, got {type(optimizer).__name__}")
        if not isinstance(max_consecutive_overflows, int) or max_consecutive_overflows <= 0:
            raise ValueError("max_consecutive_overflows: expected a positive int")
        steps = _parallel.grad_accumulation_step()
        if steps > 1:
            raise NotImplementedError(
                f"grad_accumulation_step={steps}: gradient accumulation is implemented by "
                f"TrainOneStepCell (no loss scaling); TrainOneStepWithLossScaleCell "
                f"(amp O2/O3 with a loss scale manager) updates on every call")
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        if isinstance(scale_sense, Cell):
            self.loss_scaling_manager = scale_sense
            value = Tensor(float(scale_sense.get_loss_scale()), mdt.float32)
        elif isinstance(scale_sense, Tensor):
            if scale_sense.shape not in ((), (1,)):
                raise ValueError(f"scale_sense: expected shape () or (1,), got "
                                 f"{scale_sense.shape}")
            self.loss_scaling_manager = None
            value = F.cast(scale_sense, mdt.float32)
        else:
            raise TypeError(f"scale_sense: expected a Cell or a Tensor, got "
                            f"{type(scale_sense).__name__}")
        self.scale_sense = Parameter(value, name="scale_sense", requires_grad=False)
        self.max_consecutive_overflows = max_consecutive_overflows
        self.overflow_streak = Parameter(Tensor(0, mdt.int32), name="overflow_streak",
                                         requires_grad=False)
        self._calls = 0
        self._host_streak = 0   # PYNATIVE mirror of overflow_streak (None: read the device)
        self._grad_fn = value_and_grad(self._scaled_loss, None, list(self.weights),
                                       has_aux=True)
        # DATA_PARALLEL: all-reduce the grads (or shard the optimizer over the ranks)
        reducer, self.optimizer = train_cell_update(optimizer)
        self.reducer_flag = reducer is not None
        self.grad_reducer = reducer if reducer is not None else (lambda grads: grads)

    def set_sense_scale(self, sens):
        """Replace the scale value (a Tensor of shape () or (1,))."""
        if not isinstance(sens, Tensor):
            raise TypeError(f"sens: expected a Tensor, got {type(sens).__name__}")
        self.scale_sense.set_data(F.cast(F.reshape(sens, self.scale_sense.shape), mdt.float32))

    def _scaled_loss(self, *inputs):
        loss = self.network(*inputs)
        full = loss if loss.dtype in (mdt.float32, mdt.float64) else F.cast(loss, mdt.float32)
        return F.mul(full, F.cast(self.scale_sense, full.dtype)), loss

    def construct(self, *inputs):
        scale = Tensor._wrap(self.scale_sense._data)
        # inf/nan in the scaled gradients are what the check below is for: no warnings.
        with dispatch.backend().expected_overflow():
            (_, loss), grads = self._grad_fn(*inputs)
            grads, overflow, host_overflow = self._unscale(grads, scale)
        manager = self.loss_scaling_manager
        if manager is not None and host_overflow is not None and \
                type(manager).construct is DynamicLossScaleUpdateCell.construct and \
                manager._hooks is None:
            manager.update_on_host(self.scale_sense, host_overflow)   # the rule, no sync
        elif manager is not None:
            checked = overflow
            overflow = manager(self.scale_sense, overflow)
            if overflow is not checked and host_overflow is not None:
                host_overflow = bool(overflow)   # an update cell that decides otherwise
        self._count_streak(overflow, host_overflow)
        self._apply_unless(overflow, grads, host_overflow)
        return loss, overflow, scale

    def _unscale(self, grads, scale):
        """``(grads / scale, overflow Tensor, overflow as a Python bool or None)``: eagerly
        with the step's one host synchronisation, inside a compiled program on the device
        (None: the program does not wait for it). In DATA_PARALLEL mode the unscaled
        gradients are all-reduced before the check and the flag is agreed across ranks."""
        if in_compiled() or self.reducer_flag:
            raw = [g._data for g in grads]   # (a traced program: no attrgetter)
            grads = tuple(Tensor._wrap(g) for g in divide_all(raw, scale._data))
            grads = self.grad_reducer(grads)
            overflow = F.logical_not(all_finite(grads))
            if self.reducer_flag:  # every rank skips when any rank overflowed
                overflow = agree_overflow(overflow)
            return grads, overflow, None if in_compiled() else bool(overflow)
        raw = list(map(_data_of, grads))
        out, finite = unscale_and_check(raw, scale._data)
        flag = dispatch.call("full", (), not finite, mdt.bool_)   # no host-to-device copy
        # Unscaled in place (the fused unscale writes into the gradients): the step's own
        # gradient Tensors hold the results already.
        same = len(out) == len(raw) and all(map(operator.is_, out, raw))
        grads = tuple(grads if same else Tensor._wrap_all(out))
        return grads, Tensor._wrap(flag), not finite

    def _count_streak(self, overflow, host_overflow):
        streak = self.overflow_streak
        if host_overflow is None or self._host_streak is None:  # compiled: on the device
            streak.assign_value(F.where(overflow, F.add(streak, 1), 0))
            return
        previous = self._host_streak
        self._host_streak = previous + 1 if host_overflow else 0
        if self._host_streak != previous:   # written only when it changes: no work per step
            streak.assign_value(Tensor(self._host_streak, mdt.int32))

    def _apply_unless(self, overflow, grads, host_overflow=None):
        if not in_compiled():
            if not host_overflow:
                self.optimizer(grads)
            return
        # One compiled program has no branches on values: update, then select per state.
        with MutationScope() as scope:
            self.optimizer(grads)
            changed = scope.restore()
        for param, new in changed:
            param._assign(F.where(overflow, Tensor._wrap(param._data),
                                  Tensor._wrap(new))._data)

    def __call__(self, *inputs):
        if self.reducer_flag:  # every rank starts from rank 0's parameters
            self.grad_reducer.broadcast_once(self)
        if context.get_context("mode") == context.GRAPH_MODE:
            self._host_streak = None       # the compiled step counts on the device only
        elif self._host_streak is None:
            self._host_streak = self.consecutive_overflows   # read once after GRAPH_MODE
        out = super().__call__(*inputs)
        self._calls += 1
        if self._host_streak is not None:  # PYNATIVE: the step knew its overflow on the host
            self._check_streak(self._host_streak)
        elif self._calls % self.GRAPH_CHECK_INTERVAL == 0:
            self._check_streak(self.consecutive_overflows)
        return out

    @property
    def consecutive_overflows(self):
        """How many steps in a row have overflowed (read from the device)."""
        return int(self.overflow_streak.asnumpy())

    def _check_streak(self, streak):
        if streak >= self.max_consecutive_overflows:
            check_overflow_streak(streak, float(self.scale_sense.asnumpy()),
                                  "TrainOneStepWithLossScaleCell",
                                  self.max_consecutive_overflows)
