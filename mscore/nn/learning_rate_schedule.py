"""Learning-rate schedules.

``LearningRateSchedule`` cells (``ExponentialDecayLR``, ``CosineDecayLR``,
``PolynomialDecayLR``, ``WarmUpLR``, ...) map the optimizer's ``global_step`` Tensor to a
float32 learning rate with tensor ops, so a compiled train step computes the rate inside the
program. The list helpers (``piecewise_constant_lr``, ``exponential_decay_lr``,
``cosine_decay_lr``, ...; MindSpore's ``nn.dynamic_lr``) return a Python list with one
rate per step, which an optimizer accepts as ``learning_rate``.
"""
from __future__ import annotations

import math

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_int, check_number, check_tensor
from mscore.ops import functional as F

_wrap = Tensor._wrap


def _step_float(global_step):
    check_tensor(global_step, "global_step", "LearningRateSchedule")
    return F.cast(global_step, mdt.float32)


class LearningRateSchedule(Cell):
    """Base class: ``construct(global_step)`` returns the learning rate (float32 Tensor)."""

    def construct(self, global_step):
        raise NotImplementedError(f"{type(self).__name__}.construct is not defined")


def _positive_float(v, name, cls):
    return check_number(v, name, cls, 0.0, low_inclusive=False)


class _StepDecayLR(LearningRateSchedule):
    """Shared arguments of the decays driven by ``p = step / decay_steps``."""

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        cls = type(self).__name__
        self.learning_rate = _positive_float(learning_rate, "learning_rate", cls)
        self.decay_rate = _positive_float(decay_rate, "decay_rate", cls)
        self.decay_steps = check_int(decay_steps, "decay_steps", cls, minimum=1)
        self.is_stair = check_bool(is_stair, "is_stair", cls)

    def _progress(self, global_step):
        """``global_step / decay_steps``, floored when ``is_stair``."""
        p = F.div(_step_float(global_step), float(self.decay_steps))
        return F.floor(p) if self.is_stair else p


class ExponentialDecayLR(_StepDecayLR):
    """``learning_rate * decay_rate ** p`` with ``p = step / decay_steps`` (floored when
    ``is_stair``)."""

    def construct(self, global_step):
        p = self._progress(global_step)
        return F.mul(F.pow(self.decay_rate, p), self.learning_rate)


class NaturalExpDecayLR(_StepDecayLR):
    """``learning_rate * exp(-decay_rate * p)`` with ``p = step / decay_steps`` (floored
    when ``is_stair``)."""

    def construct(self, global_step):
        p = self._progress(global_step)
        return F.mul(F.exp(F.mul(p, -self.decay_rate)), self.learning_rate)


class InverseDecayLR(_StepDecayLR):
    """``learning_rate / (1 + decay_rate * p)`` with ``p = step / decay_steps`` (floored
    when ``is_stair``)."""

    def construct(self, global_step):
        p = self._progress(global_step)
        return F.div(self.learning_rate, F.add(F.mul(p, self.decay_rate), 1.0))


class CosineDecayLR(LearningRateSchedule):
    """``min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * p))`` with
    ``p = min(step, decay_steps) / decay_steps``."""

    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        cls = "CosineDecayLR"
        self.min_lr = check_number(min_lr, "min_lr", cls, 0.0)
        self.max_lr = _positive_float(max_lr, "max_lr", cls)
        if self.min_lr >= self.max_lr:
            raise ValueError(f"For '{cls}', 'max_lr' must be greater than 'min_lr', got "
                             f"{max_lr} and {min_lr}")
        self.decay_steps = check_int(decay_steps, "decay_steps", cls, minimum=1)

    def construct(self, global_step):
        p = F.div(F.minimum(_step_float(global_step), float(self.decay_steps)),
                  float(self.decay_steps))
        cos = F.add(F.cos(F.mul(p, math.pi)), 1.0)
        return F.add(F.mul(cos, 0.5 * (self.max_lr - self.min_lr)), self.min_lr)


class PolynomialDecayLR(LearningRateSchedule):
    """``(learning_rate - end_learning_rate) * (1 - p) ** power + end_learning_rate`` with
    ``p = min(step, decay_steps) / decay_steps``; with ``update_decay_steps`` the decay
    period grows to the next multiple of ``decay_steps`` instead of clamping."""

    def __init__(self, learning_rate, end_learning_rate, decay_steps, power,
                 update_decay_steps=False):
        super().__init__()
        cls = "PolynomialDecayLR"
        self.learning_rate = _positive_float(learning_rate, "learning_rate", cls)
        self.end_learning_rate = check_number(end_learning_rate, "end_learning_rate", cls, 0.0)
        self.decay_steps = check_int(decay_steps, "decay_steps", cls, minimum=1)
        self.power = _positive_float(power, "power", cls)
        self.update_decay_steps = check_bool(update_decay_steps, "update_decay_steps", cls)

    def construct(self, global_step):
        step = _step_float(global_step)
        decay = float(self.decay_steps)
        if self.update_decay_steps:
            d = F.mul(F.maximum(F.ceil(F.div(step, decay)), 1.0), decay)
            p = F.div(step, d)
        else:
            p = F.div(F.minimum(step, decay), decay)
        base = F.sub(1.0, p)
        return F.add(F.mul(F.pow(base, self.power),
                           self.learning_rate - self.end_learning_rate),
                     self.end_learning_rate)


class WarmUpLR(LearningRateSchedule):
    """``learning_rate * min(step, warmup_steps) / warmup_steps``."""

    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        cls = "WarmUpLR"
        self.learning_rate = _positive_float(learning_rate, "learning_rate", cls)
        self.warmup_steps = check_int(warmup_steps, "warmup_steps", cls, minimum=1)

    def construct(self, global_step):
        w = float(self.warmup_steps)
        return F.mul(F.div(F.minimum(_step_float(global_step), w), w), self.learning_rate)


class _IteratorLearningRate(LearningRateSchedule):
    """The rate of step ``i`` is ``values[min(i, len - 1)]`` (a list or 1-d Tensor of rates;
    past the end the last rate stays)."""

    def __init__(self, values, name="learning_rate"):
        super().__init__()
        if isinstance(values, Tensor):
            arr = values.asnumpy().astype(np.float32)
        else:
            arr = np.asarray(list(values), dtype=np.float64)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"learning_rate: a dynamic learning rate must be a non-empty 1-d "
                             f"list or Tensor, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError("learning_rate: every rate must be finite and non-negative")
        self.size = int(arr.size)
        self.learning_rate = Parameter(Tensor(arr.astype(np.float32)), name=name,
                                       requires_grad=False)

    def construct(self, global_step):
        step = call("reshape", global_step._data, ())
        last = call("full", (), self.size - 1, global_step.dtype)
        idx = call("cast", call("minimum", step, last), mdt.int64)
        return _wrap(call("getitem", self.learning_rate._data, (idx,)))


# The list helpers (MindSpore's nn.dynamic_lr) live in mscore.nn.dynamic_lr.
from mscore.nn.dynamic_lr import (  # noqa: E402,F401
    cosine_decay_lr,
    exponential_decay_lr,
    inverse_decay_lr,
    natural_exp_decay_lr,
    piecewise_constant_lr,
    polynomial_decay_lr,
    warmup_lr,
)
