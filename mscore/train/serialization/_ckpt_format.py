"""The checkpoint file formats, both ways: entries to bytes and bytes to arrays.

Two formats, chosen with ``format=``:

* ``"ckpt"``: MindSpore's protobuf checkpoint (``mscore/train/proto/checkpoint.proto``), the
  same bytes MindSpore writes. Each tensor is one serialized ``Checkpoint`` message holding one
  ``Value``; the file is their concatenation (which protobuf parses as one message). A tensor of
  more than :data:`SLICE_BYTES` bytes is written as several consecutive Values with the same tag,
  each with the full ``dims`` and a slice of the flattened bytes (split on element boundaries, as
  ``numpy.array_split`` does); the loader joins consecutive pieces. Element bytes are little-endian;
  a 0-d tensor (or an appended Python number) has no ``dims``, as MindSpore 2.10 writes it (``dims
  == [0]`` with content, older MindSpore's spelling, also loads as 0-d); a string has ``tensor_type
  "str"``, ``dims == [0]`` and UTF-32-LE content. ``BFloat16`` content is the raw 2-byte bfloat16
  bits; a ``BFloat16`` entry whose content holds 4 bytes per element is read as float32 values and
  rounded to bfloat16.
* ``"safetensors"``: through the ``safetensors`` package. Appended strings go to the header's
  ``__metadata__`` as ``"mscore:str:<name>"``.

``crc_check=True`` adds a footer: ``b"crc_num"`` followed by the CRC-32 (``zlib.crc32``, the
polynomial of ``binascii.crc32``) of every byte before it, as a 10-byte big-endian integer --
MindSpore's layout. For safetensors the CRC-32 of the tensors (names, dtypes, shapes and bytes
in name order) and of every other metadata entry (the appended strings among them) is stored
in the metadata as ``"mscore:crc32"``. A loader verifies a CRC that is present;
``crc_check=True`` also requires one. (A ``.ckpt`` file cut exactly between two entries is
still valid protobuf; only the CRC footer can tell it was truncated there.)

Nothing here touches the file system or the network's Parameters: :mod:`._checkpoint` opens,
writes atomically, decrypts and loads into Cells; these functions only write to an open file
object and parse bytes already read.
"""
from __future__ import annotations

import json
import math
import sys
import zlib

import numpy as np

from mscore.common import dtype as mdt
from mscore.train.proto import checkpoint_pb2, unknown_field_numbers

#: A tensor with more bytes than this is written as several pieces (MindSpore: 512 MiB).
SLICE_BYTES = 512 * 1024 * 1024
FORMATS = ("ckpt", "safetensors")
_CRC_TAG = b"crc_num"
_CRC_LEN = 10
_FOOTER_LEN = len(_CRC_TAG) + _CRC_LEN
_STR_TYPE = "str"
_ST_STR_PREFIX = "mscore:str:"
_ST_CRC_KEY = "mscore:crc32"
# MindSpore skips this entry on load (it holds the state of random operators).
_SKIPPED_TAGS = ("random_op",)

_ST_CODES = {mdt.float16: "F16", mdt.bfloat16: "BF16", mdt.float32: "F32", mdt.float64: "F64",
             mdt.int8: "I8", mdt.int16: "I16", mdt.int32: "I32", mdt.int64: "I64",
             mdt.uint8: "U8", mdt.uint16: "U16", mdt.uint32: "U32", mdt.uint64: "U64",
             mdt.bool_: "BOOL"}
_ST_DTYPES = {code: d for d, code in _ST_CODES.items()}



class _Entry:
    """One named item of a checkpoint: a host array with its mscore dtype, or a string."""

    __slots__ = ("name", "dtype", "array", "text")

    def __init__(self, name, dtype=None, array=None, text=None):
        self.name, self.dtype, self.array, self.text = name, dtype, array, text



# -- raw bytes -------------------------------------------------------------------------------------
def _le_bytes_view(arr):
    """The flattened array as little-endian bytes (a uint8 view when already little-endian)."""
    arr = np.asarray(arr, order="C").reshape(-1)
    size = arr.dtype.itemsize
    if arr.dtype == np.bool_:
        return arr.view(np.uint8)
    raw = arr.view(f"u{size}") if size > 1 else arr.view(np.uint8)
    if size > 1 and sys.byteorder == "big":
        raw = raw.byteswap()
    return raw.view(np.uint8)


def _from_le_bytes(data, dtype, count):
    """``count`` elements of ``dtype`` from little-endian ``data``."""
    if dtype is mdt.bool_:
        return np.frombuffer(data, np.uint8, count) != 0
    size = dtype.itemsize
    raw = np.frombuffer(data, f"<u{size}" if size > 1 else np.uint8, count)
    return raw.astype(f"=u{size}" if size > 1 else np.uint8).view(dtype.np_dtype)


def _pieces(entry):
    """The tensor's bytes, split into pieces of at most about SLICE_BYTES on element
    boundaries (MindSpore's ``array_split`` of the flattened tensor)."""
    flat = np.asarray(entry.array, order="C").reshape(-1)
    nbytes = flat.nbytes
    count = max(1, math.ceil(nbytes / SLICE_BYTES)) if nbytes > SLICE_BYTES else 1
    if count == 1:
        return [_le_bytes_view(flat).tobytes()]
    return [_le_bytes_view(part).tobytes() for part in np.array_split(flat, count)]


def _dims(entry):
    return list(entry.array.shape)


def _write_ckpt(f, entries, crc_check):
    crc = 0
    for entry in entries:
        if entry.text is not None:
            pieces = [entry.text.encode("utf-32-le")]
            dims, tensor_type = [0], _STR_TYPE
        else:
            pieces, dims, tensor_type = _pieces(entry), _dims(entry), entry.dtype.tensor_type
        for piece in pieces:
            msg = checkpoint_pb2.Checkpoint()
            value = msg.value.add()
            value.tag = entry.name
            value.tensor.dims.extend(dims)
            value.tensor.tensor_type = tensor_type
            value.tensor.tensor_content = piece
            data = msg.SerializeToString()
            if crc_check:
                crc = zlib.crc32(data, crc)
            f.write(data)
    if crc_check:
        f.write(_CRC_TAG + crc.to_bytes(_CRC_LEN, "big"))


def _st_crc(items, metadata):
    """CRC-32 over (name, dtype code, shape, bytes) of each tensor, in name order, then over
    every other ``__metadata__`` entry (the appended strings among them), in key order."""
    crc = 0
    for name, code, shape, data in sorted(items, key=lambda t: t[0]):
        head = f"{name}\0{code}\0{','.join(str(s) for s in shape)}\0".encode()
        crc = zlib.crc32(data, zlib.crc32(head, crc))
    for key in sorted(k for k in metadata if k != _ST_CRC_KEY):
        crc = zlib.crc32(json.dumps([key, metadata[key]]).encode(), crc)
    return crc


def _write_safetensors(f, entries, crc_check):
    import safetensors
    metadata, specs, keep, items = {}, {}, [], []
    for entry in entries:
        if entry.text is not None:
            metadata[_ST_STR_PREFIX + entry.name] = entry.text
            continue
        arr = np.asarray(entry.array, order="C")
        if sys.byteorder == "big" and arr.dtype.itemsize > 1:
            arr = arr.byteswap().view(arr.dtype.newbyteorder("<"))
        keep.append(arr)
        shape = list(arr.shape)
        if hasattr(safetensors, "TensorSpec"):  # safetensors >= 0.7
            specs[entry.name] = safetensors.TensorSpec(
                dtype=entry.dtype.np_dtype.name if entry.dtype is not mdt.bool_ else "bool",
                shape=shape, data_ptr=arr.ctypes.data, data_len=arr.nbytes)
        else:
            specs[entry.name] = {"dtype": entry.dtype.np_dtype.name, "shape": shape,
                                 "data": arr.tobytes()}
        if crc_check:
            items.append((entry.name, _ST_CODES[entry.dtype], shape,
                          _le_bytes_view(arr).tobytes()))
    if crc_check:
        metadata[_ST_CRC_KEY] = f"{_st_crc(items, metadata):08x}"
    f.write(safetensors.serialize(specs, metadata=metadata or None))
    del keep


def _bad_file(path, why):
    return ValueError(f"load_checkpoint: {path!r} is not a valid checkpoint file: {why}")


def _split_crc_footer(path, data, crc_check):
    """The protobuf body of a .ckpt file, its CRC footer checked when present."""
    if len(data) >= _FOOTER_LEN and data[-_FOOTER_LEN:-_CRC_LEN] == _CRC_TAG:
        body = data[:-_FOOTER_LEN]
        stored = int.from_bytes(data[-_CRC_LEN:], "big")
        if zlib.crc32(body) != stored:
            raise _bad_file(path, "the CRC check failed (the file is damaged)")
        return body
    if crc_check:
        raise _bad_file(path, "crc_check=True but the file has no CRC footer (it was saved "
                              "without crc_check, or it is truncated)")
    return data


def _decode_tensor(path, tag, tensor_type, dims, content):
    """A numpy array (or a str) for one checkpoint entry; ValueError when inconsistent."""
    if tensor_type == _STR_TYPE:
        if len(content) % 4:
            raise _bad_file(path, f"string entry {tag!r} has {len(content)} bytes, not a "
                                  f"multiple of 4")
        try:
            return content.decode("utf-32-le").rstrip("\x00")
        except UnicodeDecodeError:
            raise _bad_file(path, f"string entry {tag!r} is not valid UTF-32 text") from None
    try:
        dtype = mdt.from_tensor_type(tensor_type)
    except ValueError:
        raise _bad_file(path, f"entry {tag!r} has unsupported tensor_type {tensor_type!r}; "
                              f"supported: {[d.tensor_type for d in mdt.ALL_DTYPES]}") from None
    if any(d < 0 for d in dims):
        raise _bad_file(path, f"entry {tag!r} has negative dims {dims}")
    size = dtype.itemsize
    if math.prod(max(d, 1) for d in dims) * size > sys.maxsize:
        raise _bad_file(path, f"entry {tag!r} has dims {dims}, a shape no array can have "
                              f"(over {sys.maxsize} bytes)")
    if dims == [0]:  # MindSpore's 0-d tensor; an empty 1-d tensor has no bytes
        if len(content) == 0:
            return np.zeros((0,), dtype.np_dtype)
        shape, count = (), 1
    else:
        shape, count = tuple(dims), math.prod(dims)
    if dtype is mdt.bfloat16 and len(content) == 4 * count and count:
        values = np.frombuffer(content, "<f4", count).astype(np.float32)
        return values.astype(dtype.np_dtype).reshape(shape)
    if len(content) != count * size:
        raise _bad_file(path, f"entry {tag!r} ({tensor_type}, dims {dims}) needs "
                              f"{count * size} bytes, the file holds {len(content)}")
    return _from_le_bytes(content, dtype, count).reshape(shape)


def _text(path, value, what):
    """A proto2 ``string`` field as str: protobuf hands back bytes when they are not UTF-8."""
    if isinstance(value, str):
        return value
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        raise _bad_file(path, f"{what} is not valid UTF-8 text") from None


def _check_known_fields(path, message, what):
    """A ValueError when ``message`` holds fields its schema does not know: the bytes are
    some other protobuf (a strategy or print file), not checkpoint entries."""
    unknown = unknown_field_numbers(message)
    if unknown:
        hint = (" (a MindSpore MapTensor entry, which mscore does not load)"
                if what.startswith("entry") and unknown == [3] else "")
        raise _bad_file(path, f"{what} holds protobuf fields {unknown} that are not part of "
                              f"a checkpoint{hint}")


def _read_ckpt(path, data, crc_check):
    """[(name, numpy array or str)] from the bytes of a .ckpt file."""
    from google.protobuf.message import DecodeError
    body = _split_crc_footer(path, data, crc_check)
    msg = checkpoint_pb2.Checkpoint()
    try:
        msg.ParseFromString(body)
    except (DecodeError, ValueError, TypeError, RuntimeError) as exc:
        raise _bad_file(path, f"protobuf parse error ({exc})") from None
    _check_known_fields(path, msg, "the file")
    if not msg.value:
        raise _bad_file(path, "it holds no parameter entries")
    groups = []  # [tag, tensor_type, dims, [content pieces]]
    for value in msg.value:
        tag = _text(path, value.tag, "a tag")
        if not tag:
            raise _bad_file(path, "an entry has an empty name")
        _check_known_fields(path, value, f"entry {tag!r}")
        tensor = value.tensor
        _check_known_fields(path, tensor, f"the tensor of entry {tag!r}")
        tensor_type = _text(path, tensor.tensor_type, f"the tensor_type of {tag!r}")
        dims = list(tensor.dims)
        content = tensor.tensor_content
        if groups and groups[-1][0] == tag:  # the next piece of a split tensor
            if groups[-1][1] != tensor_type or groups[-1][2] != dims:
                raise _bad_file(path, f"the pieces of entry {tag!r} disagree on dtype or dims")
            groups[-1][3].append(content)
        else:
            groups.append([tag, tensor_type, dims, [content]])
    out, seen = [], set()
    for tag, tensor_type, dims, pieces in groups:
        if tag in seen:
            raise _bad_file(path, f"entry {tag!r} appears twice")
        seen.add(tag)
        if tag in _SKIPPED_TAGS:
            continue
        content = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        out.append((tag, _decode_tensor(path, tag, tensor_type, dims, content)))
    return out


def _read_safetensors(path, data, crc_check):
    import safetensors
    try:
        items = sorted(safetensors.deserialize(data), key=lambda t: t[0])
        header_len = int.from_bytes(data[:8], "little")
        header = json.loads(bytes(data[8:8 + header_len]).decode("utf-8"))
    except Exception as exc:  # SafetensorError derives from Exception only
        raise _bad_file(path, f"safetensors parse error ({exc})") from None
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict):
        raise _bad_file(path, "the safetensors __metadata__ is not a mapping")
    out, crc_items = [], []
    for name, info in items:
        code, shape, raw = info["dtype"], list(info["shape"]), bytes(info["data"])
        dtype = _ST_DTYPES.get(code)
        if dtype is None:
            raise _bad_file(path, f"tensor {name!r} has unsupported safetensors dtype {code!r}; "
                                  f"supported: {sorted(_ST_DTYPES)}")
        count = math.prod(shape)
        if len(raw) != count * dtype.itemsize:
            raise _bad_file(path, f"tensor {name!r} needs {count * dtype.itemsize} bytes, "
                                  f"the file holds {len(raw)}")
        out.append((name, _from_le_bytes(raw, dtype, count).reshape(shape)))
        crc_items.append((name, code, shape, raw))
    stored = metadata.get(_ST_CRC_KEY)
    if stored is not None:
        if f"{_st_crc(crc_items, metadata):08x}" != stored:
            raise _bad_file(path, "the CRC check failed (the file is damaged)")
    elif crc_check:
        raise _bad_file(path, "crc_check=True but the file holds no CRC (it was saved without "
                              "crc_check)")
    tensor_names = {name for name, _ in out}
    for key, value in metadata.items():
        if isinstance(key, str) and key.startswith(_ST_STR_PREFIX):
            name = key[len(_ST_STR_PREFIX):]
            if not isinstance(value, str):
                raise _bad_file(path, f"metadata entry {key!r} is not a string")
            if name in tensor_names:
                raise _bad_file(path, f"the name {name!r} is both a tensor and a string entry "
                                      f"(metadata {key!r})")
            out.append((name, value))
    return out
