"""Argument checks of the optimizers, with MindSpore's exception types: a hyper-parameter
MindSpore declares as ``float`` must be a Python float (an int is a ``TypeError`` there
too), and a value out of range is a ``ValueError``."""
from __future__ import annotations

import math


def check_float(value, name, cls):
    """``value`` if it is a float (not an int, not a bool), else TypeError."""
    if not isinstance(value, float):
        raise TypeError(f"For '{cls}', the '{name}' must be a float, but got "
                        f"{type(value).__name__}")
    return value


def check_range(value, name, cls, low, high, low_inclusive=True, high_inclusive=True):
    """A float inside ``low .. high`` (either bound may be None)."""
    check_float(value, name, cls)
    bad = math.isnan(value) or \
        (low is not None and (value < low if low_inclusive else value <= low)) or \
        (high is not None and (value > high if high_inclusive else value >= high))
    if bad:
        lb = "[" if low_inclusive else "("
        hb = "]" if high_inclusive else ")"
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"For '{cls}', the '{name}' must be in {lb}{lo}, {hi}{hb}, but got "
                         f"{value}")
    return value


def non_negative(value, name, cls):
    """A float >= 0."""
    return check_range(value, name, cls, 0.0, None)


def positive(value, name, cls):
    """A float > 0."""
    return check_range(value, name, cls, 0.0, None, low_inclusive=False)


def check_bool(value, name, cls):
    """A bool."""
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls}', the '{name}' must be a bool, but got "
                        f"{type(value).__name__}")
    return value
