"""MindSpore's print files (``mscore/train/proto/print.proto``): :func:`parse_print` reads
them. ``Print`` writes them (when ``set_context(print_file_path=...)`` is set) through
:func:`mscore.common.printing.append_print_record`, below the layers of ``ops``.

The file is a sequence of serialized ``Print`` messages, one per ``Print`` call, which
protobuf parses as one message whose values follow in order: text as ``desc``, a tensor as
``TensorProto`` (``dims`` the shape, none for a 0-d tensor; ``tensor_type`` spelled as in
checkpoints, ``"Float32"``; the little-endian element bytes).
"""
from __future__ import annotations

import math
import os

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.train.proto import print_pb2, unknown_field_numbers
from mscore.train.serialization._ckpt_format import _from_le_bytes
from mscore.train.serialization._reading import read_bounded

# Print files spell types as the checkpoint does ("Float32"); accept any capitalisation.
_TYPES = {d.tensor_type.lower(): d for d in mdt.ALL_DTYPES}
_TYPES.update({"float": mdt.float32, "double": mdt.float64, "int": mdt.int32,
               "bool_": mdt.bool_})


def _bad(path, why):
    return ValueError(f"parse_print: {path!r} is not a valid print file: {why}")


_MAX_DIMS = 32   # numpy's limit on the number of axes (numpy 1.x)


def _tensor(path, index, tensor):
    if not isinstance(tensor.tensor_type, str):
        raise _bad(path, f"value {index} has a tensor_type that is not UTF-8 text")
    dtype = _TYPES.get(tensor.tensor_type.lower())
    if dtype is None:
        raise _bad(path, f"value {index} has unsupported tensor_type {tensor.tensor_type!r}")
    dims = list(tensor.dims)
    if any(d < 0 for d in dims) or len(dims) > _MAX_DIMS:
        raise _bad(path, f"value {index} has invalid dims {dims[:_MAX_DIMS + 1]} (negative, "
                         f"or more than {_MAX_DIMS} of them)")
    content = tensor.tensor_content
    if dims == [0] and not content:  # an empty 1-d tensor
        return Tensor(np.zeros((0,), dtype.np_dtype))
    scalar = not dims or dims == [0]
    count = 1 if scalar else math.prod(dims)
    if len(content) != count * dtype.itemsize:
        raise _bad(path, f"value {index} ({tensor.tensor_type}, dims {dims}) needs "
                         f"{count * dtype.itemsize} bytes, the file holds {len(content)}")
    arr = _from_le_bytes(content, dtype, count)
    try:
        arr = arr.reshape(()) if scalar else arr.reshape(dims)
    except ValueError as exc:  # an empty tensor with absurd dims
        raise _bad(path, f"value {index} has dims {dims} numpy cannot hold ({exc})") from None
    return Tensor(arr)


def _check_known_fields(path, message, what):
    """A print file written by MindSpore has only the fields of print.proto; others mean
    the file is some other protobuf."""
    unknown = unknown_field_numbers(message)
    if unknown:
        raise _bad(path, f"{what} holds protobuf fields {unknown} that are not part of a "
                         f"print file")


def _value(path, index, value):
    """The str or Tensor of one ``Print.Value``: exactly one of ``desc`` and ``tensor``."""
    _check_known_fields(path, value, f"value {index}")
    has_desc, has_tensor = value.HasField("desc"), value.HasField("tensor")
    if has_desc == has_tensor:
        raise _bad(path, f"value {index} holds {'both' if has_desc else 'neither'} text and "
                         f"a tensor (a print value holds one of them)")
    if has_desc:
        if not isinstance(value.desc, str):  # protobuf gives bytes that are not UTF-8
            raise _bad(path, f"value {index} is not valid UTF-8 text")
        return value.desc
    _check_known_fields(path, value.tensor, f"the tensor of value {index}")
    return _tensor(path, index, value.tensor)


def parse_print(print_file_name):
    """The values of a print file, in order: ``str`` for text and ``Tensor`` for tensors (a
    scalar, ``dims`` empty or ``[0]``, is a 0-d Tensor). An empty, missing or malformed file,
    or one that is some other protobuf (a checkpoint, a strategy file), is a ``ValueError``
    naming it."""
    from google.protobuf.message import DecodeError
    if isinstance(print_file_name, os.PathLike):
        print_file_name = os.fspath(print_file_name)
    if not isinstance(print_file_name, str):
        raise TypeError(f"print_file_name: expected a str, got {type(print_file_name).__name__}")
    path = os.path.realpath(print_file_name)
    if not os.path.isfile(path):
        raise ValueError(f"print_file_name: the print file {print_file_name!r} does not exist")
    data = read_bounded(path, "parse_print", print_file_name)
    if not data:
        raise ValueError(f"parse_print: the print file {print_file_name!r} is empty; check "
                         f"the file name")
    msg = print_pb2.Print()
    try:
        msg.ParseFromString(data)
    except (DecodeError, ValueError, TypeError, RuntimeError, OverflowError) as exc:
        raise _bad(print_file_name, f"{type(exc).__name__}: {exc}") from None
    _check_known_fields(print_file_name, msg, "the file")
    if not msg.value:
        raise _bad(print_file_name, "it holds no printed values")
    return [_value(print_file_name, i, value) for i, value in enumerate(msg.value)]
