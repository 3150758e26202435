"""Loss scaling: functional scalers, managers for ``Model``/``build_train_network``, and the
overflow check.

``DynamicLossScaleManager`` and ``DynamicLossScaler`` follow one rule: on overflow the scale
becomes ``max(scale / factor, 1)``; after ``scale_window`` consecutive finite steps it is
multiplied by ``factor``.
"""
from __future__ import annotations

import numbers

from mscore import dispatch
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.ops import functional as F


def _check_scale(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    if not value >= 1:
        raise ValueError(f"{name}: must be >= 1, got {value}")
    return float(value)


def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name}: must be a positive int, got {value}")
    return value


def _check_factor(value, name="scale_factor"):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    if not value > 1:
        raise ValueError(f"{name}: must be > 1, got {value}")
    return value


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
    from mscore.common import graph
    leaves = _tensor_leaves(inputs)
    if not leaves:
        return Tensor(True)
    if graph.in_compiled():
        ok = None
        for t in leaves:
            part = dispatch.call("all", dispatch.call("isfinite", t._data), axis=None,
                                 keepdims=False)
            ok = part if ok is None else dispatch.call("logical_and", ok, part)
        return Tensor._wrap(ok)
    return Tensor(bool(dispatch.backend().all_finite([t._data for t in leaves])))


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
        value = _check_scale(scale_value, "scale_value")
        self.scale_value = Parameter(Tensor(value, mdt.float32), name="scale_value",
                                     requires_grad=False)

    def adjust(self, grads_finite):
        """Nothing to adjust; returns False (the scale did not change)."""
        return False


class DynamicLossScaler(LossScaler):
    """``DynamicLossScaler(scale_value, scale_factor, scale_window)``: divide by
    ``scale_factor`` on overflow (not below 1), multiply after ``scale_window`` consecutive
    finite steps (if the product stays finite)."""

    def __init__(self, scale_value, scale_factor, scale_window):
        value = _check_scale(scale_value, "scale_value")
        self.scale_factor = _check_factor(scale_factor)
        self.scale_window = _check_positive_int(scale_window, "scale_window")
        self.scale_value = Parameter(Tensor(value, mdt.float32), name="scale_value",
                                     requires_grad=False)
        self.counter = Parameter(Tensor(0, mdt.int32), name="counter", requires_grad=False)

    def adjust(self, grads_finite):
        """Apply the rule for one step; ``grads_finite`` is a bool Tensor or bool."""
        finite = grads_finite if isinstance(grads_finite, Tensor) else Tensor(bool(grads_finite))
        scale = self.scale_value
        grown = F.mul(scale, float(self.scale_factor))
        at_window = F.equal(self.counter, self.scale_window - 1)
        on_good = F.where(F.logical_and(at_window, F.isfinite(grown)), grown, scale)
        on_bad = F.maximum(F.div(scale, float(self.scale_factor)), 1.0)
        new_scale = F.where(finite, on_good, on_bad)
        next_count = F.mul(F.remainder(F.add(self.counter, 1), self.scale_window),
                           F.cast(finite, mdt.int32))
        self.scale_value.assign_value(new_scale)
        self.counter.assign_value(next_count)
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
        self._loss_scale = _check_scale(loss_scale, "loss_scale")
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
        from mscore.nn.wrap.loss_scale import FixedLossScaleUpdateCell
        return FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """``DynamicLossScaleManager(init_loss_scale=2**24, scale_factor=2, scale_window=2000)``.

    Iterations count from 1; an overflow sets ``scale = max(scale / factor, 1)``; when
    ``scale_window`` iterations passed since the last overflow (or increase) without one,
    ``scale *= factor``.
    """

    def __init__(self, init_loss_scale=2 ** 24, scale_factor=2, scale_window=2000):
        self.loss_scale = _check_scale(init_loss_scale, "init_loss_scale")
        self.scale_factor = _check_factor(scale_factor)
        self.scale_window = _check_positive_int(scale_window, "scale_window")
        self.cur_iter = 1
        self.last_overflow_iter = 0
        self.bad_step_max = 1000
        self.bad_step = 0

    def get_loss_scale(self):
        return self.loss_scale

    def get_drop_overflow_update(self):
        return True

    def update_loss_scale(self, overflow):
        """Apply the rule for one iteration (``overflow``: bool)."""
        if overflow:
            self.loss_scale = max(self.loss_scale / self.scale_factor, 1.0)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
            if self.bad_step > self.bad_step_max:
                raise RuntimeError(f"Dynamic loss scale: {self.bad_step} consecutive "
                                   f"overflows (loss scale {self.loss_scale}); the training "
                                   f"diverges")
        else:
            self.bad_step = 0
            if self.cur_iter - self.last_overflow_iter >= self.scale_window:
                self.loss_scale *= self.scale_factor
                self.last_overflow_iter = self.cur_iter
        self.cur_iter += 1

    def get_update_cell(self):
        """A ``DynamicLossScaleUpdateCell`` with this manager's settings."""
        from mscore.nn.wrap.loss_scale import DynamicLossScaleUpdateCell
        return DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor,
                                          self.scale_window)
