"""Argument validation shared by layers, losses and optimizers (MindSpore-style messages)."""
from __future__ import annotations

import numbers

import numpy as np

from mscore.common import dtype as mdt
from mscore.common._errors import is_numpy_array, numpy_cell_input_error
from mscore.common.tensor import Tensor


def check_int(value, name, cls, minimum=None, allow_zero=True):
    """``value`` as an int, TypeError if it is not one, ValueError below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{cls}', '{name}' must be an int, got {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"For '{cls}', '{name}' must be >= {minimum}, got {value}")
    if not allow_zero and value == 0:
        raise ValueError(f"For '{cls}', '{name}' must not be 0")
    return value


def check_positive_int(value, name, cls):
    """A strictly positive int."""
    return check_int(value, name, cls, minimum=1)


def check_bool(value, name, cls):
    """A bool (not a number that looks like one)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"For '{cls}', '{name}' must be a bool, got {type(value).__name__}")
    return bool(value)


def check_number(value, name, cls, low=None, high=None, low_inclusive=True,
                 high_inclusive=True):
    """A real number (not bool) inside the given bounds, as float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{cls}', '{name}' must be a float or int, got "
                        f"{type(value).__name__}")
    value = float(value)
    bad = (low is not None and (value < low if low_inclusive else value <= low)) or \
        (high is not None and (value > high if high_inclusive else value >= high))
    if bad:
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        lb = "[" if low_inclusive else "("
        hb = "]" if high_inclusive else ")"
        raise ValueError(f"For '{cls}', '{name}' must be in {lb}{lo}, {hi}{hb}, got {value}")
    return value


def check_str(value, name, cls, choices):
    """One of ``choices``."""
    if not isinstance(value, str):
        raise TypeError(f"For '{cls}', '{name}' must be a str, got {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"For '{cls}', '{name}' must be one of {list(choices)}, got {value!r}")
    return value


def int_tuple(value, n, name, cls, minimum=1):
    """An int or a tuple of ``n`` ints (each >= ``minimum``) as a tuple of ``n`` ints."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),) * n
    if not isinstance(value, (tuple, list)) or len(value) != n or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        raise TypeError(f"For '{cls}', '{name}' must be an int or a tuple of {n} ints, got "
                        f"{value!r}")
    value = tuple(int(v) for v in value)
    if any(v < minimum for v in value):
        raise ValueError(f"For '{cls}', '{name}' must be >= {minimum}, got {value}")
    return value


def check_dtype(dtype, name, cls, floating=True):
    """An mscore DType (floating unless ``floating`` is False)."""
    try:
        dt = mdt.as_dtype(dtype, name)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"For '{cls}', '{name}' must be an mscore dtype, got {dtype!r}") \
            from exc
    if floating and not dt.is_floating:
        raise TypeError(f"For '{cls}', '{name}' must be a floating dtype, got {dt}")
    return dt


def check_tensor(x, name, cls):
    """``x`` if it is a Tensor, else TypeError."""
    if not isinstance(x, Tensor):
        if is_numpy_array(x):
            raise numpy_cell_input_error(cls)
        raise TypeError(f"For '{cls}', '{name}' must be a Tensor, got {type(x).__name__}")
    return x
