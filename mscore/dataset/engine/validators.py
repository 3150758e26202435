"""Argument checks and row helpers shared by the dataset pipeline.

The checks raise what MindSpore 2.10's ``mindspore.dataset`` raises for the same mistake
(``TypeError`` for a wrong type, ``ValueError`` for a value out of range) with a message that
names the argument; a pipeline whose structure only turns out wrong when it runs (a column
that does not exist, a user function that fails) raises ``RuntimeError``, as MindSpore does.
"""
from __future__ import annotations

import numbers

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor

INT32_MAX = 2 ** 31 - 1
INT64_MAX = 2 ** 63 - 1


def type_name(types):
    if isinstance(types, tuple):
        return " or ".join(t.__name__ for t in types)
    return types.__name__


def check_type(value, types, name):
    """``value`` is one of ``types`` (a bool is not an int); else ``TypeError``."""
    bad_bool = isinstance(value, bool) and bool not in (types if isinstance(types, tuple)
                                                        else (types,))
    if bad_bool or not isinstance(value, types):
        raise TypeError(f"{name}: expected {type_name(types)}, got {type(value).__name__} "
                        f"({value!r})")
    return value


def check_int(value, name, low=None, high=None, allow=()):
    """An int in ``[low, high]`` (or one of ``allow``); ``TypeError`` / ``ValueError``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value in allow:
        return int(value)
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} ({value!r})")
    if (low is not None and value < low) or (high is not None and value > high):
        extra = f" or one of {list(allow)}" if allow else ""
        raise ValueError(f"{name}: expected an int in [{low}, {high}]{extra}, got {value}")
    return int(value)


def check_bool(value, name):
    """A bool; else ``TypeError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__} ({value!r})")
    return bool(value)


def check_optional_int(value, name, low, high=INT32_MAX):
    return None if value is None else check_int(value, name, low, high)


def check_num_parallel_workers(value):
    """``None`` or a positive int: the worker processes of Python code run with
    ``python_multiprocessing`` (see :mod:`.map_workers`); otherwise unused (rows are read in
    the calling thread)."""
    return check_optional_int(value, "num_parallel_workers", 1)


def check_columns(columns, name):
    """A column name or a non-empty list of distinct names."""
    if isinstance(columns, str):
        columns = [columns]
    if not isinstance(columns, list):
        raise TypeError(f"{name}: expected a str or a list of str, got "
                        f"{type(columns).__name__} ({columns!r})")
    if not columns:
        raise ValueError(f"{name}: should not be empty")
    for c in columns:
        if not isinstance(c, str):
            raise TypeError(f"{name}: column names must be str, got {type(c).__name__} "
                            f"({c!r})")
    if len(set(columns)) != len(columns):
        raise ValueError(f"{name}: every column name should differ from the others, got "
                         f"{columns}")
    return list(columns)


def check_optional_columns(columns, name):
    return None if columns is None else check_columns(columns, name)


def check_callable(value, name):
    if not callable(value):
        raise TypeError(f"{name}: expected a callable, got {type(value).__name__}")
    return value


def missing_columns(wanted, names, name):
    """``RuntimeError`` (raised when the pipeline runs, as in MindSpore) for names not among
    the dataset's columns."""
    bad = [c for c in wanted if c not in names]
    if bad:
        raise RuntimeError(f"{name}: column(s) {bad} not in the dataset's columns {names}")


# -- rows ------------------------------------------------------------------------------------
def as_array(x):
    """A numpy array for one column value (Tensors come back to the host)."""
    if isinstance(x, Tensor):
        return x.asnumpy()
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, bytes):
        return np.frombuffer(x, np.uint8).copy()
    return np.asarray(x)


def as_row(item, where="row"):
    """A tuple of numpy arrays from one item a source or an operation returned."""
    if isinstance(item, dict):
        item = tuple(item.values())
    if not isinstance(item, (tuple, list)):
        item = (item,)
    try:
        return tuple(as_array(x) for x in item)
    except (TypeError, ValueError) as exc:
        raise RuntimeError(f"{where}: a value cannot become an array ({exc})") from exc


def call_user(fn, args, where):
    """Call a user function of the pipeline; what it raises becomes a ``RuntimeError``
    naming where (the original is chained), as MindSpore reports it."""
    try:
        return fn(*args)
    except Exception as exc:
        raise RuntimeError(f"{where} raised {type(exc).__name__}: {exc}") from exc


def func_name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


def argument_type_error(value, types, name):
    """MindSpore's ``TypeError`` for an argument of the wrong type ("Argument prob with value
    a is not of type [<class 'float'>, <class 'int'>], but got <class 'str'>.")."""
    return TypeError(f"Argument {name} with value {value} is not of type {types}, but got "
                     f"{type(value)}.")


def _max_rowsize_type_error(value, types, name="max_rowsize"):
    return argument_type_error(value, types, name)


def check_max_rowsize(value, allow_list=True):
    """MindSpore's ``max_rowsize`` (the shared-memory size of a row, in MB): ``None``, an int
    in ``[-1, INT32_MAX]`` or, where ``allow_list``, a list ``[in_rowsize, out_rowsize]``;
    MindSpore's exception types and messages. Checked, and otherwise unused: rows travel to
    and from worker processes through pipes, whatever their size."""
    if value is None:
        return None
    interval = f"[-1, {INT32_MAX}]"
    if isinstance(value, bool):
        raise _max_rowsize_type_error(value, (int, list) if allow_list else (int,))
    if not isinstance(value, (int, list) if allow_list else int):
        raise _max_rowsize_type_error(value, [int, list] if allow_list else [int])
    if isinstance(value, int):
        if not -1 <= value <= INT32_MAX:
            raise ValueError(f"Input max_rowsize is not within the required interval of "
                             f"{interval}.")
        return value
    if len(value) != 2:
        raise TypeError("max_rowsize should be a single integer or a list[in_rowsize, "
                        "out_rowsize] of length 2.")
    for i, x in enumerate(value):
        if isinstance(x, bool) or not isinstance(x, int):
            raise _max_rowsize_type_error(x, [int], f"max_rowsize[{i}]")
        if not -1 <= x <= INT32_MAX:
            # "max_rowsizei" is MindSpore 2.10's own spelling of this message
            raise ValueError(f"Input max_rowsizei[{i}] is not within the required interval "
                             f"of {interval}.")
    return list(value)


def np_dtype(data_type, name="data_type"):
    """The numpy dtype of an mscore dtype, a numpy dtype or type, or a dtype name."""
    if isinstance(data_type, mdt.DType):
        return np.dtype(data_type.np_dtype)
    if isinstance(data_type, str):
        try:
            return np.dtype(mdt.as_dtype(data_type, name).np_dtype)
        except (TypeError, ValueError):
            pass
    if isinstance(data_type, (np.dtype, type, str)):
        try:
            return np.dtype(data_type)
        except TypeError:
            pass
    raise TypeError(f"{name}: expected an mscore dtype (ms.int32, ...) or a numpy dtype, got "
                    f"{data_type!r}")
