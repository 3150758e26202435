"""Argument checks shared by the checkpoint functions."""
from __future__ import annotations


def _check_bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__}")
    return value


def _check_flag(value, name, func):
    """A bool, else ``ValueError``: MindSpore's ``check_isinstance`` for ``crc_check`` and
    ``remove_redundancy``."""
    if not isinstance(value, bool):
        raise ValueError(f"For '{func}', the argument '{name}' must be bool, but got "
                         f"{value!r}.")
    return value
