"""The text of tensors, written once for the three places that show one as MindSpore 2.10
does: ``repr(Tensor)``, ``str(Tensor)`` and what a compiled program's ``ops.Print`` writes.

``repr`` and ``Print`` come from one C++ formatter in MindSpore (``repr`` adds commas):
``Tensor(shape=[2, 2], dtype=Float32, value=`` then the values, after a line break when the
tensor has two or more axes (``repr``: after a space otherwise). Floats are ``%.8e``
(float16 ``%.4e``) each padded to 15 (11) characters; integers and booleans are padded to
the widest shown (booleans to at least 5). An axis of a 2-d or higher tensor longer than 6,
or a 1-d tensor longer than 1000, shows its first and last 3 entries around ``...``; an
uncut 1-d tensor breaks its line after every 12 floats or booleans or 24 integers. In
``repr`` a bfloat16 value is ``%g`` and counted as an integer, a 0-d tensor's value is
``%g`` (ints and booleans as they are) and an empty tensor shows no values; ``Print`` writes a
0-d tensor or a Python number bare (floats as ``%g``, booleans as 1 and 0). ``str`` is
numpy's text of the values (bfloat16 as ``%f``). Recorded in
``tests/data/tensor_text_oracle.json`` and ``tests/data/print_graph_oracle.json``.

Everything here works on host values (numpy arrays, Python numbers, ``str``), so that
``Print`` can use it from inside a compiled program's host callback.
"""
from __future__ import annotations

import numbers

import numpy as np

from mscore.common import dtype as mdt

_EDGE = 3                # entries shown at each end of a summarised axis
_AXIS_LIMIT = 6          # an axis of a 2-d or higher tensor longer than this is summarised
_VECTOR_LIMIT = 1000     # a 1-d tensor longer than this is summarised
_PER_LINE = {"float": 12, "int": 24, "bool": 12}   # a 1-d tensor's entries per line


class _Style:
    """What differs between ``repr`` (``comma=True``) and ``Print``'s text."""

    def __init__(self, comma):
        self.comma = "," if comma else ""
        self.separator = ", " if comma else " "
        self.gap = " " if comma else ""     # between ``value=`` and a 0-d or 1-d tensor's value
        self.general_bfloat16 = comma       # repr: bfloat16 as %g, counted as an integer
        self.show_empty = not comma         # Print: ``[]`` for an empty tensor; repr: nothing


_REPR = _Style(comma=True)
_PRINT = _Style(comma=False)


# -- repr and str ----------------------------------------------------------------------------
def tensor_repr(arr, dtype):
    """``repr`` of a Tensor of ``dtype`` holding the numpy array ``arr``."""
    if arr.ndim == 0:
        return f"{_header(arr, dtype)} {_scalar_value(arr.item(), dtype)})"
    return _tensor_text(arr, dtype, _REPR)


# numpy 2.3 writes float32 values from 1e7 on in scientific notation where older numpy
# (MindSpore's 1.26) does not; its legacy mode "2.2" keeps the older text. numpy before 2.3
# has no such mode (1.26 raises KeyError, 2.0-2.2 ValueError) and writes the older text.
_LEGACY_TEXT = "2.2" if np.lib.NumpyVersion(np.__version__) >= "2.3.0" else None


def tensor_str(arr, dtype):
    """``str`` of a Tensor of ``dtype`` holding the numpy array ``arr``: numpy's text
    (bfloat16 entries as ``%f``)."""
    if dtype is mdt.bfloat16:
        as_float = arr.astype(np.float32)
        if as_float.ndim == 0:
            return "%f" % as_float.item()
        return np.array2string(as_float, formatter={"float_kind": "{:f}".format})
    if _LEGACY_TEXT is None:
        return str(arr)
    with np.printoptions(legacy=_LEGACY_TEXT):
        return str(arr)


def parameter_text(name, shape, dtype, requires_grad):
    """``repr`` and ``str`` of a Parameter."""
    return (f"Parameter (name={name}, shape={tuple(shape)}, dtype={dtype.tensor_type}, "
            f"requires_grad={requires_grad})")


def _scalar_value(value, dtype):
    if dtype.is_floating:
        return "%g" % float(value)
    return str(value)


# -- Print ---------------------------------------------------------------------------------------
def graph_text(values):
    """The text a compiled program's ``Print`` writes for ``values`` (``str``, Python numbers
    and numpy arrays, in order), one value per line, without the final newline."""
    return "\n".join(_value_text(v) for v in values)


def _value_text(value):
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _bare_text(value.item())
        return _tensor_text(value, dtype_of(value), _PRINT)
    return _bare_text(value)


def _bare_text(value):
    """A number as MindSpore's kernel streams it: ``%g`` floats, 1/0 booleans."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return "%g" % float(value)


def dtype_of(arr):
    """The mscore dtype of numpy ``arr`` (of either byte order)."""
    return mdt.from_numpy_dtype(arr.dtype.newbyteorder("="))


# -- the shared formatter ------------------------------------------------------------------------
def _header(arr, dtype):
    return f"Tensor(shape={list(arr.shape)}, dtype={dtype.tensor_type}, value="


def _is_general(dtype, style):
    return style.general_bfloat16 and dtype is mdt.bfloat16


def _kind(dtype, style):
    if dtype.is_bool:
        return "bool"
    return "float" if dtype.is_floating and not _is_general(dtype, style) else "int"


def _cells(arr, dtype, style):
    """Each element's text, padded: floats each to their format's width, other entries to
    the widest one (booleans to at least 5)."""
    flat = arr.reshape(-1)
    if dtype.is_floating and not _is_general(dtype, style):
        spec, width = ("%.4e", 11) if dtype.itemsize == 2 else ("%.8e", 15)
        return [(spec % x).rjust(width) for x in flat.astype(np.float64).tolist()]
    if dtype.is_bool:
        texts, width = ["True" if x else "False" for x in flat.tolist()], 5
    elif dtype.is_floating:
        texts, width = ["%g" % x for x in flat.astype(np.float64).tolist()], 0
    else:
        texts, width = [str(x) for x in flat.tolist()], 0
    width = max([width] + [len(t) for t in texts])
    return [t.rjust(width) for t in texts]


def _shown(arr):
    """``arr`` with each summarised axis cut to its first and last entries, and for each axis
    whether it was cut."""
    limit = _VECTOR_LIMIT if arr.ndim == 1 else _AXIS_LIMIT
    cut = [n > limit for n in arr.shape]
    for axis, is_cut in enumerate(cut):
        if is_cut:
            n = arr.shape[axis]
            arr = np.take(arr, list(range(_EDGE)) + list(range(n - _EDGE, n)), axis=axis)
    return arr, cut


def _tensor_text(arr, dtype, style):
    """A tensor of one or more axes."""
    head = _header(arr, dtype) + ("\n" if arr.ndim > 1 else style.gap)
    if arr.size == 0 and not style.show_empty:
        return head + ")"
    shown, cut = _shown(arr)
    cells = np.empty(shown.shape, dtype=object)
    cells.reshape(-1)[:] = _cells(shown, dtype, style) if shown.size else []
    if arr.ndim == 1:
        body = _vector(list(cells), cut[0], _PER_LINE[_kind(dtype, style)], style)
    else:
        body = _block(cells, cut, 0, style)
    return f"{head}{body})"


def _row(items, is_cut, style):
    """Entries of one innermost axis, around ``...`` when cut."""
    if not is_cut:
        return style.separator.join(items)
    return (style.separator.join(items[:_EDGE]) + " ... " +
            style.separator.join(items[_EDGE:]))


def _vector(cells, is_cut, per_line, style):
    """A 1-d tensor's entries; uncut, a line break follows every ``per_line`` entries."""
    if is_cut:
        return "[" + _row(cells, True, style) + "]"
    out = []
    for i, cell in enumerate(cells):
        out.append(cell)
        if i != len(cells) - 1:
            out.append(style.separator)
        if (i + 1) % per_line == 0:
            out.append("\n ")
    return "[" + "".join(out) + "]"


def _block(cells, cut, depth, style):
    """A tensor of two or more axes: nested brackets, one row per line, indented by depth."""
    if cells.ndim == 1:
        return "[" + _row(list(cells), cut[0], style) + "]"
    rows = [_block(sub, cut[1:], depth + 1, style) for sub in cells]
    line = "\n" + " " * (depth + 1)
    joiner = style.comma + line
    if not cut[0]:
        return "[" + joiner.join(rows) + "]"
    return ("[" + joiner.join(rows[:_EDGE]) + style.comma + line + "..." + line +
            joiner.join(rows[_EDGE:]) + "]")
