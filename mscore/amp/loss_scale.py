"""Loss scaling: functional scalers, managers for ``Model``/``build_train_network``, and the
overflow check.

``DynamicLossScaleManager`` (on the host) and ``DynamicLossScaler`` (with Tensors) apply
:class:`~mscore.nn.wrap.loss_scale.DynamicLossScaleRule`, as the update cell does: on overflow
the scale becomes ``max(scale / factor, 1)``; ``scale_window`` iterations after the last
overflow or increase it is multiplied by ``factor``.
"""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.wrap.loss_scale import (
    HOST_OPS,
    MAX_CONSECUTIVE_OVERFLOWS,
    DynamicLossScaleRule,
    DynamicLossScaleUpdateCell,
    FixedLossScaleUpdateCell,
    check_loss_scale,
    check_overflow_streak,
)
from mscore.ops import functional as F


def init_status():
    """MindSpore's overflow status buffer (a float32 zeros(8)); ``all_finite`` ignores it."""
    return F.zeros((8,), mdt.float32)


def _map(inputs, fn):
    if isinstance(inputs, Tensor):
        return fn(inputs)
    if isinstance(inputs, tuple):
        return tuple(_map(x, fn) for x in inputs)
    if isinstance(inputs, list):
        return [_map(x, fn) for x in inputs]
    raise TypeError(f"inputs: expected Tensors or tuples/lists of Tensors, got "
                    f"{type(inputs).__name__}")


def _grad_scale_map(scale_value, inputs):
    """``inputs`` (a Tensor or nested tuple/list) times ``scale_value``, each in its own
    dtype. MindSpore's own ``LossScaler`` example imports this helper by name."""
    return _map(inputs, lambda x: F.mul(x, F.cast(scale_value, x.dtype)))


def _grad_unscale_map(scale_value, inputs):
    """``inputs`` divided by ``scale_value``, each in its own dtype (see
    :func:`_grad_scale_map`)."""
    return _map(inputs, lambda x: F.div(x, F.cast(scale_value, x.dtype)))


class LossScaler:
    """Base of the functional loss scalers: ``scale``, ``unscale``, ``adjust``."""

    scale_value: Parameter

    def scale(self, inputs):
        """``inputs`` (a Tensor or nested tuple/list) times the scale, in their own dtype."""
        return _grad_scale_map(self.scale_value, inputs)

    def unscale(self, inputs):
        """``inputs`` divided by the scale, in their own dtype."""
        return _grad_unscale_map(self.scale_value, inputs)

    def adjust(self, grads_finite):
        """Update the scale after a step whose gradients were (not) finite."""
        raise NotImplementedError


class StaticLossScaler(LossScaler):
    """A constant scale: ``StaticLossScaler(scale_value)``, ``scale_value >= 1``."""

    def __init__(self, scale_value):
        value = check_loss_scale(scale_value, "scale_value")
        self.scale_value = Parameter(Tensor(value, mdt.float32), name="scale_value",
                                     requires_grad=False)

    def adjust(self, grads_finite):
        """Nothing to adjust; returns False (the scale did not change)."""
        return False


class DynamicLossScaler(LossScaler):
    """``DynamicLossScaler(scale_value, scale_factor, scale_window)``: divide by
    ``scale_factor`` on overflow (not below 1), multiply after ``scale_window`` consecutive
    finite steps (if the product stays finite): :class:`DynamicLossScaleRule` on Tensors."""

    def __init__(self, scale_value, scale_factor, scale_window):
        value = check_loss_scale(scale_value, "scale_value")
        self._rule = DynamicLossScaleRule(scale_factor, scale_window, keep_finite=True)
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.scale_value = Parameter(Tensor(value, mdt.float32), name="scale_value",
                                     requires_grad=False)
        self.iteration = Parameter(Tensor(1, mdt.int32), name="iteration",
                                   requires_grad=False)
        self.last_change = Parameter(Tensor(0, mdt.int32), name="last_change",
                                     requires_grad=False)

    @property
    def counter(self):
        """The finite steps since the last overflow or increase (an int32 Tensor)."""
        return F.sub(F.sub(self.iteration, self.last_change), 1)

    def adjust(self, grads_finite):
        """Apply the rule for one step; ``grads_finite`` is a bool Tensor or bool."""
        finite = grads_finite if isinstance(grads_finite, Tensor) else Tensor(bool(grads_finite))
        scale, last, iteration = self._rule.update(F, self.scale_value, self.iteration,
                                                   self.last_change, F.logical_not(finite))
        self.scale_value.assign_value(scale)
        self.last_change.assign_value(last)
        self.iteration.assign_value(iteration)
        return True


class LossScaleManager:
    """Base of the loss-scale managers used by ``Model`` and ``build_train_network``."""

    def get_loss_scale(self):
        """The current loss scale (a float)."""
        raise NotImplementedError

    def update_loss_scale(self, overflow):
        """Update the scale after a step; ``overflow`` is a bool."""
        raise NotImplementedError

    def get_update_cell(self):
        """The Cell that updates the scale inside ``TrainOneStepWithLossScaleCell``."""
        raise NotImplementedError

    def get_drop_overflow_update(self):
        """Whether the optimizer step is skipped when gradients overflow."""
        return True


class FixedLossScaleManager(LossScaleManager):
    """A constant scale: ``FixedLossScaleManager(loss_scale=128.0, drop_overflow_update=True)``.

    With ``drop_overflow_update=False`` every step updates (MindSpore then expects the
    optimizer's own ``loss_scale`` to undo the scaling).
    """

    def __init__(self, loss_scale=128.0, drop_overflow_update=True):
        self._loss_scale = check_loss_scale(loss_scale, "loss_scale")
        if not isinstance(drop_overflow_update, bool):
            raise TypeError(f"drop_overflow_update: expected a bool, got "
                            f"{type(drop_overflow_update).__name__}")
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self):
        return self._loss_scale

    def get_drop_overflow_update(self):
        return self._drop_overflow_update

    def update_loss_scale(self, overflow):
        """A fixed scale never changes."""

    def get_update_cell(self):
        """``FixedLossScaleUpdateCell`` when overflowing steps are dropped, else None."""
        if not self._drop_overflow_update:
            return None
        return FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """``DynamicLossScaleManager(init_loss_scale=2**24, scale_factor=2, scale_window=2000)``:
    :class:`DynamicLossScaleRule` on the host (iterations count from 1; an overflow sets
    ``scale = max(scale / factor, 1)``; when ``scale_window`` iterations passed since the last
    overflow (or increase) without one, ``scale *= factor``). More than ``bad_step_max``
    overflows in a row are a RuntimeError.
    """

    def __init__(self, init_loss_scale=2 ** 24, scale_factor=2, scale_window=2000):
        self.loss_scale = check_loss_scale(init_loss_scale, "init_loss_scale")
        self._rule = DynamicLossScaleRule(scale_factor, scale_window)
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.cur_iter = 1
        self.last_overflow_iter = 0
        self.bad_step_max = MAX_CONSECUTIVE_OVERFLOWS
        self.bad_step = 0

    def get_loss_scale(self):
        return self.loss_scale

    def get_drop_overflow_update(self):
        return True

    def update_loss_scale(self, overflow):
        """Apply the rule for one iteration (``overflow``: bool)."""
        overflow = bool(overflow)
        self.loss_scale, self.last_overflow_iter, self.cur_iter = self._rule.update(
            HOST_OPS, self.loss_scale, self.cur_iter, self.last_overflow_iter, overflow)
        self.bad_step = self.bad_step + 1 if overflow else 0
        # MindSpore raises once the streak exceeds bad_step_max.
        check_overflow_streak(self.bad_step, self.loss_scale, "DynamicLossScaleManager",
                              self.bad_step_max + 1)

    def get_update_cell(self):
        """A ``DynamicLossScaleUpdateCell`` with this manager's settings."""
        return DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor,
                                          self.scale_window)
