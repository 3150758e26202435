"""What ``ops.Print`` writes, from host values: MindSpore's text of a compiled (GRAPH_MODE /
``jit``) program's ``Print``, and the records of a print file.

Both work on host values only (``str``, Python numbers and numpy arrays), so that ``Print``
can hand them to a backend's host callback from inside a compiled program.

The text follows MindSpore 2.10's CPU ``Print`` kernel (recorded in
``tests/data/print_graph_oracle.json``): one line per value; a Tensor of one or more axes as
``Tensor(shape=[2, 2], dtype=Float32, value=`` (a line break before the values when it has two
or more axes), its elements right-aligned to one width (at least that of a finite float, or of
``False``) and separated by a space (float16 as ``% .4e``, other floats as ``% .8e``); an axis
of a 2-d or higher tensor longer than 6, or a 1-d tensor longer than 1000, shows its first and
last 3 entries around ``...``; a 1-d tensor breaks its line after every 24 integers or 12
floats or bools. A 0-d tensor and a Python number print bare (floats as C's ``%g``, booleans
as 1 and 0).

The print file (``set_context(print_file_path=...)``) is a sequence of serialized ``Print``
messages of ``mscore/train/proto/print.proto``, one per call; :func:`print_record` encodes one
in protobuf's wire format directly (the three small messages need nothing more), byte for byte
what the generated ``print_pb2`` module serializes (``tests/test_print_file.py`` compares
them), so ``Print`` needs neither protobuf nor the train layer that reads these files.
"""
from __future__ import annotations

import numbers
import os

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.protobuf_wire import field_head, varint

_EDGE = 3                # entries shown at each end of a summarised axis
_AXIS_LIMIT = 6          # an axis of a 2-d or higher tensor longer than this is summarised
_VECTOR_LIMIT = 1000     # a 1-d tensor longer than this is summarised
_PER_LINE = {"float": 12, "int": 24, "bool": 12}   # a 1-d tensor's entries per line


# -- text ----------------------------------------------------------------------------------------
def graph_text(values):
    """The text a compiled program's ``Print`` writes for ``values`` (``str``, Python numbers
    and numpy arrays, in order), one value per line, without the final newline."""
    return "\n".join(_value_text(v) for v in values)


def _value_text(value):
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray):
        return _scalar_text(value.item()) if value.ndim == 0 else _tensor_text(value)
    return _scalar_text(value)


def _scalar_text(value):
    """A number as MindSpore's kernel streams it: ``%g`` floats, 1/0 booleans."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return "%g" % float(value)


def _dtype_of(arr):
    """The mscore dtype of numpy ``arr`` (of either byte order)."""
    return mdt.from_numpy_dtype(arr.dtype.newbyteorder("="))


def _kind(dtype):
    if dtype.is_bool:
        return "bool"
    return "float" if dtype.is_floating else "int"


def _min_width(dtype):
    """The narrowest an element is padded to: a finite float's text, ``False``."""
    if dtype.is_bool:
        return 5
    if dtype.is_floating:
        return 11 if dtype.itemsize == 2 else 15
    return 0


def _element_texts(arr, dtype):
    """Each element's text, before alignment."""
    if dtype.is_bool:
        return ["True" if x else "False" for x in arr.reshape(-1).tolist()]
    if dtype.is_floating:
        spec = "% .4e" if dtype.itemsize == 2 else "% .8e"
        return [spec % x for x in arr.astype(np.float64).reshape(-1).tolist()]
    return [str(x) for x in arr.reshape(-1).tolist()]


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


def _tensor_text(arr):
    dtype = _dtype_of(arr)
    shown, cut = _shown(arr)
    texts = _element_texts(shown, dtype)
    width = max([_min_width(dtype)] + [len(t) for t in texts])
    cells = np.array([t.rjust(width) for t in texts] or [""], dtype=object)
    cells = cells[:shown.size].reshape(shown.shape)
    if arr.ndim == 1:
        body = _vector(list(cells), cut[0], _PER_LINE[_kind(dtype)])
    else:
        body = _block(cells, cut, 0)
    return (f"Tensor(shape={list(arr.shape)}, dtype={dtype.tensor_type}, value="
            f"{chr(10) if arr.ndim > 1 else ''}{body})")


def _with_ellipsis(items, is_cut):
    return items[:_EDGE] + ["..."] + items[_EDGE:] if is_cut else items


def _vector(cells, is_cut, per_line):
    """A 1-d tensor's entries; uncut, a line break follows every ``per_line`` entries."""
    if is_cut:
        return "[" + " ".join(_with_ellipsis(cells, True)) + "]"
    out = []
    for i, cell in enumerate(cells):
        out.append(cell)
        if i != len(cells) - 1:
            out.append(" ")
        if (i + 1) % per_line == 0:
            out.append("\n ")
    return "[" + "".join(out) + "]"


def _block(cells, cut, depth):
    """A tensor of two or more axes: nested brackets, one row per line, indented by depth."""
    if cells.ndim == 1:
        return "[" + " ".join(_with_ellipsis(list(cells), cut[0])) + "]"
    rows = [_block(sub, cut[1:], depth + 1) for sub in cells]
    return "[" + ("\n" + " " * (depth + 1)).join(_with_ellipsis(rows, cut[0])) + "]"


# -- print files ---------------------------------------------------------------------------------
def file_values(values):
    """``values`` as a print file holds them: ``str`` and numpy arrays, Python numbers as 0-d
    arrays (bool, int64, float32)."""
    out = []
    for value in values:
        if isinstance(value, (str, np.ndarray)):
            out.append(value)
        elif isinstance(value, (bool, np.bool_)):
            out.append(np.array(value, np.bool_))
        elif isinstance(value, numbers.Integral):
            out.append(np.array(value, np.int64))
        elif isinstance(value, numbers.Real):
            out.append(np.array(value, np.float32))
        else:
            raise TypeError(f"Print: inputs must be strings, numbers or Tensors, got "
                            f"{type(value).__name__}")
    return out


def _field(number, payload):
    """A length-delimited field (wire type 2)."""
    return field_head(number, len(payload)) + payload


def _tensor_proto(arr):
    """``TensorProto``: ``dims`` (1, unpacked int64s), ``tensor_type`` (2), the little-endian
    ``tensor_content`` (3)."""
    dims = b"".join(varint(1 << 3) + varint(d) for d in arr.shape)
    tensor_type = _dtype_of(arr).tensor_type.encode()
    content = np.ascontiguousarray(arr, arr.dtype.newbyteorder("<")).tobytes()
    return dims + _field(2, tensor_type) + _field(3, content)


def print_record(values):
    """One serialized ``Print`` message holding ``values`` (``str``, Python numbers, numpy
    arrays): a ``value`` (1) each, text as ``desc`` (1), an array as ``tensor`` (2)."""
    items = (_field(1, v.encode()) if isinstance(v, str) else _field(2, _tensor_proto(v))
             for v in file_values(values))
    return b"".join(_field(1, item) for item in items)


def append_print_record(path, values):
    """Append :func:`print_record` of ``values`` to the print file ``path`` (created with its
    folder)."""
    data = print_record(values)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "ab") as f:  # one write per call: records never interleave
        f.write(data)
