"""Argument checks of ``mindspore.dataset.text`` with MindSpore 2.10's exception types and
messages (its ``validator_helpers`` wording), and the reading of string inputs."""
from __future__ import annotations

import os

import numpy as np

UINT32_MAX = 4294967295
INT32_MAX = 2147483647


def type_check(value, types, name):
    """``value`` is one of ``types`` (a bool is not an int unless ``bool`` is listed);
    MindSpore's TypeError otherwise."""
    shown = '""' if repr(value) == repr("") else value
    if int in types and bool not in types and isinstance(value, bool):
        raise TypeError(f"Argument {name} with value {shown} is not of type {types}, but got "
                        f"{type(value)}.")
    if not isinstance(value, types):
        raise TypeError(f"Argument {name} with value {shown} is not of type {list(types)}, "
                        f"but got {type(value)}.")


def check_range(value, low, high, name=""):
    """``low <= value <= high``; MindSpore's ValueError otherwise."""
    if not low <= value <= high:
        label = f"{name} " if name else ""
        raise ValueError(f"Input {label}is not within the required interval of "
                         f"[{low}, {high}].")


def check_uint32(value, name=""):
    """An int in ``[0, 2**32 - 1]``."""
    type_check(value, (int,), name)
    check_range(value, 0, UINT32_MAX, name)


def check_bool(value, name):
    """A bool, in the words of MindSpore's text tokenizers."""
    if not isinstance(value, bool):
        raise TypeError(f"Wrong input type for {name}, should be boolean.")
    return value


def check_str(value, name):
    """A str, in the words of MindSpore's text tokenizers."""
    if not isinstance(value, str):
        raise TypeError(f"Wrong input type for {name}, should be string.")
    return value


def check_filename(path):
    """MindSpore's rules for a file name: none of ``\\/:*?"<>|`&';`` and no space at either
    end."""
    name = os.path.basename(os.path.realpath(path))
    if set(name) & set('\\/:*?"<>|`&\';'):
        raise ValueError(r"filename should not contain \/:*?\"<>|`&;\'")
    if name.startswith(" ") or name.endswith(" "):
        raise ValueError("filename should not start/end with space.")


def string_array(value, error):
    """``value`` (a str, bytes, list of them or a string array) as a numpy array of str;
    ``RuntimeError(error)`` for anything else."""
    if isinstance(value, (str, bytes)):
        value = np.array(value)
    arr = np.asarray(value) if isinstance(value, (list, tuple, np.ndarray)) else None
    if arr is None or arr.dtype.kind not in "US":
        raise RuntimeError(error)
    if arr.dtype.kind == "S":
        arr = np.char.decode(arr, "utf-8")
    return arr


def scalar_text(text, op_name):
    """The str held by a 0-d string array ``text``; MindSpore's RuntimeError naming
    ``op_name`` for any other shape or type."""
    arr = np.asarray(text)
    if arr.ndim != 0 or arr.dtype.kind != "U":
        raise RuntimeError(f"{op_name}: the input shape should be scalar and the input "
                           f"datatype should be string.")
    return arr.item()
