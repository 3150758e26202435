"""The print file of ``ops.Print`` (``set_context(print_file_path=...)``): a sequence of
serialized ``Print`` messages of ``mscore/train/proto/print.proto``, one per call, from host
values. :func:`print_record` encodes one in protobuf's wire format directly (the three small
messages need nothing more), byte for byte what the generated ``print_pb2`` module serializes
(``tests/test_print_file.py`` compares them), so ``Print`` needs neither protobuf nor the
train layer that reads these files. The text ``Print`` writes otherwise is
:func:`mscore.common.tensor_text.graph_text`.
"""
from __future__ import annotations

import numbers
import os

import numpy as np

from mscore.common.protobuf_wire import field_head, varint
from mscore.common.tensor_text import dtype_of


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
    tensor_type = dtype_of(arr).tensor_type.encode()
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
