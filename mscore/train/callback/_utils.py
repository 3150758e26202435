"""Helpers shared by the callbacks."""
from __future__ import annotations

import numbers

import numpy as np

from mscore.common.tensor import Tensor


def loss_value(net_outputs):
    """The loss as a Python float from a step's outputs: the first element of a tuple/list
    (``(loss, overflow, scale)``), averaged when it has several values; None if absent."""
    out = net_outputs
    if isinstance(out, (tuple, list)):
        if not out:
            return None
        out = out[0]
    if isinstance(out, Tensor):
        arr = out.asnumpy()
        return float(np.mean(arr.astype(np.float64)))
    if isinstance(out, np.ndarray):
        return float(np.mean(out.astype(np.float64)))
    if isinstance(out, numbers.Real):
        return float(out)
    return None


def loss_display(net_outputs):
    """The loss as MindSpore prints it: a Tensor as the Python float of its mean
    (``3.6393022537231445``), the first Tensor of a tuple or list as that Tensor prints
    itself, anything else as it is."""
    out = net_outputs
    if isinstance(out, (tuple, list)):
        return out[0] if out and isinstance(out[0], Tensor) else out
    if isinstance(out, Tensor):
        return float(np.mean(out.asnumpy()))
    return out


def step_in_epoch(cb_params):
    """The step number inside the current epoch (1-based), from ``cur_step_num`` and
    ``batch_num`` as MindSpore computes it; ``cur_step_num`` when the epoch length is
    unknown."""
    cur = cb_params.get("cur_step_num", 0) or 0
    batch_num = cb_params.get("batch_num")
    if isinstance(batch_num, int) and batch_num > 0:
        return (cur - 1) % batch_num + 1
    return cur


def check_non_negative_int(value, name, cls):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For '{cls}', the argument '{name}' must be int, but got "
                        f"{type(value).__name__}.")
    if value < 0:
        raise ValueError(f"For '{cls}', the argument '{name}' must be >= 0, but got {value}.")
    return value


def check_positive_int(value, name, cls):
    check_non_negative_int(value, name, cls)
    if value == 0:
        raise ValueError(f"For '{cls}', the argument '{name}' must be > 0, but got 0.")
    return value


def check_bool(value, name, cls):
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls}', the argument '{name}' must be bool, but got "
                        f"{type(value).__name__}.")
    return value


def check_number(value, name, cls):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"For '{cls}', the argument '{name}' must be a number, but got "
                        f"{type(value).__name__}.")
    return float(value)


def check_str(value, name, cls):
    """A str, else ``TypeError`` (MindSpore's ``check_value_type``)."""
    if not isinstance(value, str):
        raise TypeError(f"For '{cls}', the argument '{name}' must be str, but got "
                        f"{type(value).__name__}.")
    return value


def check_int_or_float(value, name, cls):
    """An int or float (not bool), else ``TypeError`` (MindSpore's ``check_value_type``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{cls}', the argument '{name}' must be int or float, but got "
                        f"{type(value).__name__}.")
    return value


def check_flag(value, name, cls):
    """A bool, else ``ValueError``: MindSpore's ``check_isinstance`` raises ValueError for a
    wrong type."""
    if not isinstance(value, bool):
        raise ValueError(f"For '{cls}', the argument '{name}' must be bool, but got "
                         f"{value!r}.")
    return value
