"""``parse_print``: read MindSpore's print files (``mscore/train/proto/print.proto``)."""
from __future__ import annotations

import math
import os

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor

# Print files spell types as the checkpoint does ("Float32"); accept any capitalisation.
_TYPES = {d.tensor_type.lower(): d for d in mdt.ALL_DTYPES}
_TYPES.update({"float": mdt.float32, "double": mdt.float64, "int": mdt.int32,
               "bool_": mdt.bool_})


def _bad(path, why):
    return ValueError(f"parse_print: {path!r} is not a valid print file: {why}")


def _tensor(path, index, tensor):
    if not isinstance(tensor.tensor_type, str):
        raise _bad(path, f"value {index} has a tensor_type that is not UTF-8 text")
    dtype = _TYPES.get(tensor.tensor_type.lower())
    if dtype is None:
        raise _bad(path, f"value {index} has unsupported tensor_type {tensor.tensor_type!r}")
    dims = list(tensor.dims)
    if any(d < 0 for d in dims):
        raise _bad(path, f"value {index} has negative dims {dims}")
    scalar = not dims or dims == [0]
    count = 1 if scalar else math.prod(dims)
    content = tensor.tensor_content
    if len(content) != count * dtype.itemsize:
        raise _bad(path, f"value {index} ({tensor.tensor_type}, dims {dims}) needs "
                         f"{count * dtype.itemsize} bytes, the file holds {len(content)}")
    from mscore.train.serialization._checkpoint import _from_le_bytes
    arr = _from_le_bytes(content, dtype, count)
    return Tensor(arr.reshape(()) if scalar else arr.reshape(dims))


def parse_print(print_file_name):
    """The values of a print file, in order: ``str`` for text and ``Tensor`` for tensors (a
    scalar, ``dims`` empty or ``[0]``, is a 0-d Tensor). An empty, missing or malformed file
    is a ``ValueError`` naming it."""
    from google.protobuf.message import DecodeError
    from mscore.train.proto import print_pb2
    if isinstance(print_file_name, os.PathLike):
        print_file_name = os.fspath(print_file_name)
    if not isinstance(print_file_name, str):
        raise TypeError(f"print_file_name: expected a str, got {type(print_file_name).__name__}")
    path = os.path.realpath(print_file_name)
    if not os.path.isfile(path):
        raise ValueError(f"print_file_name: the print file {print_file_name!r} does not exist")
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise ValueError(f"parse_print: the print file {print_file_name!r} is empty; check "
                         f"the file name")
    msg = print_pb2.Print()
    try:
        msg.ParseFromString(data)
        out = []
        for i, value in enumerate(msg.value):
            if value.HasField("desc"):
                desc = value.desc
                if not isinstance(desc, str):  # protobuf gives bytes that are not UTF-8
                    raise _bad(print_file_name, f"value {i} is not valid UTF-8 text")
                out.append(desc)
            elif value.HasField("tensor"):
                out.append(_tensor(print_file_name, i, value.tensor))
            else:
                raise _bad(print_file_name, f"value {i} holds neither text nor a tensor")
    except ValueError:
        raise
    except (DecodeError, TypeError, RuntimeError, OverflowError) as exc:
        raise _bad(print_file_name, f"{type(exc).__name__}: {exc}") from None
    return out

