"""Argument checks with MindSpore's exception types for the metrics' constructors.

MindSpore's rules: a bool is not an int unless bool is allowed, an int is not a float, a
choice that is not a str or not among the choices is ``ValueError``.
"""
from __future__ import annotations


def check_type(name, value, types, owner=None):
    """``value`` if it is an instance of ``types`` (bool counts only when listed), else
    ``TypeError`` naming the argument."""
    types = tuple(types)
    bad = (isinstance(value, bool) and bool not in types) or not isinstance(value, types)
    if bad:
        where = f"For '{owner}', " if owner else ""
        names = " or ".join(t.__name__ for t in types)
        raise TypeError(f"{where}'{name}' must be of type {names}, but got "
                        f"{type(value).__name__}: {value!r}.")
    return value


def check_optional_type(name, value, types, owner=None):
    """None, or ``value`` checked by :func:`check_type`."""
    return None if value is None else check_type(name, value, types, owner)


def check_choice(name, value, choices, owner=None):
    """``value`` if it is one of the strings ``choices``, else ``ValueError``."""
    if not (isinstance(value, str) and value in choices):
        where = f"For '{owner}', " if owner else ""
        raise ValueError(f"{where}'{name}' must be one of {list(choices)}, but got {value!r}.")
    return value


def check_str_choice(name, value, choices, owner=None):
    """A str (``TypeError`` otherwise) that is one of ``choices`` (``ValueError`` otherwise)."""
    check_type(name, value, [str], owner)
    return check_choice(name, value, choices, owner)


def check_positive_float(name, value, owner=None):
    """A float (``TypeError`` for anything else, ints included) greater than 0
    (``ValueError``)."""
    check_type(name, value, [float], owner)
    if not value > 0:
        where = f"For '{owner}', " if owner else ""
        raise ValueError(f"{where}'{name}' must be a float greater than 0, but got {value}.")
    return value
