"""``mindspore.nn.dynamic_lr``: learning-rate lists computed ahead of training, one rate per
step (an optimizer takes such a list as ``learning_rate``). Arguments are checked as
MindSpore checks them: rates are Python floats, step counts positive ints."""
from __future__ import annotations

import math


def _float(value, name, fn, positive=True):
    if not isinstance(value, float):
        raise TypeError(f"For '{fn}', the argument '{name}' must be type of float, but got "
                        f"'{name}' type: {type(value)}.")
    if (value <= 0.0 if positive else value < 0.0) or math.isnan(value):
        raise ValueError(f"For '{fn}', the '{name}' must be float and must "
                         f"{'>' if positive else '>='} 0, but got '{value}'.")
    return value


def _positive_int(value, name, fn):
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, bool):
            raise TypeError(f"For '{fn}', the '{name}' must be int and must > 0, but got "
                            f"'{value}' with type 'bool'.")
        raise TypeError(f"For '{fn}', the '{name}' must be int, but got "
                        f"'{type(value).__name__}'")
    if value <= 0:
        raise ValueError(f"For '{fn}', the '{name}' must be int and must > 0, but got "
                         f"'{value}'.")
    return value


def _bool(value, name, fn):
    if not isinstance(value, bool):
        raise TypeError(f"For '{fn}', the type of '{name}' should be 'bool', but got type "
                        f"'{type(value).__name__}'.")
    return value


def _check_decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                 fn):
    _positive_int(total_step, "total_step", fn)
    _positive_int(step_per_epoch, "step_per_epoch", fn)
    _positive_int(decay_epoch, "decay_epoch", fn)
    _float(learning_rate, "learning_rate", fn)
    _float(decay_rate, "decay_rate", fn)
    _bool(is_stair, "is_stair", fn)


def piecewise_constant_lr(milestone, learning_rates):
    """``learning_rates[j]`` for the steps ``milestone[j-1] <= i < milestone[j]``; the list
    has ``milestone[-1]`` entries (a milestone equal to the previous one adds nothing)."""
    fn = "piecewise_constant_lr"
    for name, value in (("milestone", milestone), ("learning_rates", learning_rates)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"For '{fn}', the type of '{name}' should be one of "
                            f"'['tuple', 'list']', but got type '{type(value).__name__}'.")
    if len(milestone) != len(learning_rates):
        raise ValueError(f"For '{fn}', the size of 'milestone' must be same with the size of "
                         f"'learning_rates', but got 'milestone' size: {len(milestone)}, "
                         f"'learning_rates' size: {len(learning_rates)}.")
    out, last = [], 0
    for i, (item, lr) in enumerate(zip(milestone, learning_rates)):
        _positive_int(item, f"milestone[{i}]", fn)
        if not isinstance(lr, float):
            raise TypeError(f"For '{fn}', the type of 'learning_rates[{i}]' must be 'float', "
                            f"but got '{type(lr).__name__}'.")
        if item < last:
            raise ValueError(f"For '{fn}', the value of milestone[{i}] must be greater than "
                             f"milestone[{i - 1}], but got milestone[{i}]: {item}, "
                             f"milestone[{i - 1}]: {last}.")
        out += [lr] * (item - last)
        last = item
    return out


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False):
    """``learning_rate * decay_rate ** (epoch / decay_epoch)`` for each step, ``epoch =
    floor(i / step_per_epoch)``; the exponent is floored when ``is_stair``."""
    _check_decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                 "exponential_decay_lr")
    out = []
    for i in range(total_step):
        p = (i // step_per_epoch) / decay_epoch
        out.append(learning_rate * decay_rate ** (math.floor(p) if is_stair else p))
    return out


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False):
    """``learning_rate * e ** (-decay_rate * epoch)`` for each step, ``epoch =
    floor(i / step_per_epoch)``; with ``is_stair`` the epoch is rounded down to a multiple of
    ``decay_epoch`` (as MindSpore computes it: ``decay_epoch`` matters only then)."""
    _check_decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                 "natural_exp_decay_lr")
    out = []
    for i in range(total_step):
        epoch = i // step_per_epoch
        if is_stair:
            epoch = math.floor(epoch / decay_epoch) * decay_epoch
        out.append(learning_rate * math.e ** (-decay_rate * epoch))
    return out


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                     is_stair=False):
    """``learning_rate / (1 + decay_rate * epoch / decay_epoch)`` for each step, ``epoch =
    floor(i / step_per_epoch)``; ``epoch / decay_epoch`` is floored when ``is_stair``."""
    _check_decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                 "inverse_decay_lr")
    out = []
    for i in range(total_step):
        epoch = i // step_per_epoch
        if is_stair:
            out.append(learning_rate / (1 + decay_rate * math.floor(epoch / decay_epoch)))
        else:
            out.append(learning_rate / (1 + decay_rate * epoch / decay_epoch))
    return out


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch):
    """``min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * e / decay_epoch))`` for each step,
    ``e = min(floor(i / step_per_epoch), decay_epoch)``."""
    fn = "cosine_decay_lr"
    _float(min_lr, "min_lr", fn, positive=False)
    _float(max_lr, "max_lr", fn)
    _positive_int(total_step, "total_step", fn)
    _positive_int(step_per_epoch, "step_per_epoch", fn)
    _positive_int(decay_epoch, "decay_epoch", fn)
    if min_lr >= max_lr:
        raise ValueError(f"For '{fn}', the 'max_lr' must be greater than the 'min_lr', but got "
                         f"'max_lr' value: {max_lr}, 'min_lr' value: {min_lr}.")
    delta = 0.5 * (max_lr - min_lr)
    return [min_lr + delta * (1 + math.cos(math.pi * min(i // step_per_epoch, decay_epoch)
                                           / decay_epoch)) for i in range(total_step)]


def polynomial_decay_lr(learning_rate, end_learning_rate, total_step, step_per_epoch,
                        decay_epoch, power, update_decay_epoch=False):
    """``(lr - end) * (1 - e / d) ** power + end`` for each step: ``e`` the epoch clamped to
    ``d = decay_epoch``, or, with ``update_decay_epoch``, ``d`` grown to the next multiple of
    ``decay_epoch`` at or above the epoch."""
    fn = "polynomial_decay_lr"
    _float(learning_rate, "learning_rate", fn)
    _float(end_learning_rate, "end_learning_rate", fn, positive=False)
    _float(power, "power", fn)
    _positive_int(total_step, "total_step", fn)
    _positive_int(step_per_epoch, "step_per_epoch", fn)
    _positive_int(decay_epoch, "decay_epoch", fn)
    _bool(update_decay_epoch, "update_decay_epoch", fn)
    delta = learning_rate - end_learning_rate
    out = []
    for i in range(total_step):
        epoch = i // step_per_epoch
        if update_decay_epoch:
            d = decay_epoch * max(math.ceil(epoch / decay_epoch), 1)
        else:
            d, epoch = decay_epoch, min(epoch, decay_epoch)
        out.append(delta * (1 - epoch / d) ** power + end_learning_rate)
    return out


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch):
    """``learning_rate * min(epoch, warmup_epoch) / warmup_epoch`` for each step."""
    fn = "warmup_lr"
    _float(learning_rate, "learning_rate", fn, positive=False)
    _positive_int(warmup_epoch, "warmup_epoch", fn)
    _positive_int(total_step, "total_step", fn)
    _positive_int(step_per_epoch, "step_per_epoch", fn)
    return [learning_rate * min(i // step_per_epoch, warmup_epoch) / warmup_epoch
            for i in range(total_step)]


__all__ = ["piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr",
           "inverse_decay_lr", "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr"]
