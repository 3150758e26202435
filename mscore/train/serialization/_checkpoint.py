"""Checkpoints: ``save_checkpoint``, ``load_checkpoint``, ``load_param_into_net``.

Two formats, chosen with ``format=``:

* ``"ckpt"``: MindSpore's protobuf checkpoint (``mscore/train/proto/checkpoint.proto``), the
  same bytes MindSpore writes. Each tensor is one serialized ``Checkpoint`` message holding one
  ``Value``; the file is their concatenation (which protobuf parses as one message). A tensor
  of more than :data:`SLICE_BYTES` bytes is written as several consecutive Values with the same
  tag, each with the full ``dims`` and a slice of the flattened bytes (split on element
  boundaries, as ``numpy.array_split`` does); the loader joins consecutive pieces. Element bytes
  are little-endian; a 0-d tensor (or an appended Python number) has no ``dims``, as MindSpore
  2.10 writes it (``dims == [0]`` with content, older MindSpore's spelling, also loads as 0-d);
  a string has ``tensor_type "str"``, ``dims == [0]`` and UTF-32-LE content. ``BFloat16`` content is the raw 2-byte
  bfloat16 bits; a ``BFloat16`` entry whose content holds 4 bytes per element is read as
  float32 values and rounded to bfloat16.
* ``"safetensors"``: through the ``safetensors`` package. Appended strings go to the header's
  ``__metadata__`` as ``"mscore:str:<name>"``.

``crc_check=True`` adds a footer: ``b"crc_num"`` followed by the CRC-32 (``zlib.crc32``, the
polynomial of ``binascii.crc32``) of every byte before it, as a 10-byte big-endian integer --
MindSpore's layout. For safetensors the CRC-32 of the tensors (names, dtypes, shapes and bytes
in name order) and of every other metadata entry (the appended strings among them) is stored
in the metadata as ``"mscore:crc32"``. A loader verifies a CRC that is present;
``crc_check=True`` also requires one. (A ``.ckpt`` file cut exactly between two entries is
still valid protobuf; only the CRC footer can tell it was truncated there.)

Saving is atomic (:mod:`._atomic`): the bytes go to a temporary file in the target's
directory, which is fsynced and renamed over the target, so a process killed mid-write leaves
the old file (or none) under the target name; the next save into that directory removes the
temporaries such a process left. ``async_save=True`` copies the values to host memory at
once and writes in a background thread; the next save or load, and interpreter exit, wait for
it.

Loading never unpickles: a file is parsed as protobuf or safetensors and nothing else, and a
file that is not a valid checkpoint is a ``ValueError`` naming it.
"""
from __future__ import annotations

import atexit
import contextlib
import contextvars
import json
import logging
import math
import numbers
import os
import sys
import threading
import warnings
import zlib
from collections import OrderedDict

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore import dispatch
from mscore.train.serialization import _crypto
from mscore.train.serialization._args import _check_bool, _check_flag
from mscore.train.serialization._reading import read_bounded
from mscore.train.serialization._into_net import load_param_into_net
from mscore.train.serialization._atomic import atomic_write

logger = logging.getLogger("mscore.serialization")

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
             mdt.uint8: "U8", mdt.bool_: "BOOL"}
_ST_DTYPES = {code: d for d, code in _ST_CODES.items()}




# -- argument checks -------------------------------------------------------------------------------
def _check_path(value, name):
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes) or not isinstance(value, str):
        raise TypeError(f"{name}: expected a str or os.PathLike file name, got "
                        f"{type(value).__name__}")
    if not value:
        raise ValueError(f"{name}: the file name is empty")
    return value


def _check_format(value):
    if not isinstance(value, str):
        raise TypeError(f"format: expected a str, got {type(value).__name__}")
    if value not in FORMATS:
        raise ValueError(f"format: expected one of {FORMATS}, got {value!r}")
    return value


# -- what gets saved ---------------------------------------------------------------------------------
class _Entry:
    """One named item of a checkpoint: a host array with its mscore dtype, or a string."""

    __slots__ = ("name", "dtype", "array", "text")

    def __init__(self, name, dtype=None, array=None, text=None):
        self.name, self.dtype, self.array, self.text = name, dtype, array, text


def _host_array(value, what):
    """A numpy copy of a Tensor / Parameter / numpy array and its mscore dtype."""
    if isinstance(value, Tensor):
        arr = np.asarray(value.asnumpy())
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
    else:
        raise TypeError(f"{what}: expected a Parameter, Tensor or numpy array, got "
                        f"{type(value).__name__}")
    try:
        dtype = mdt.from_numpy_dtype(arr.dtype)
    except TypeError:
        raise TypeError(f"{what}: dtype {arr.dtype} cannot be saved; supported: "
                        f"{[d.name for d in mdt.ALL_DTYPES]}") from None
    return arr, dtype


def _entries_from(save_obj, choice_func=None):
    """The entries of ``save_obj`` whose names ``choice_func`` (if given) accepts."""
    from mscore.nn.cell import Cell
    entries = []
    chosen = (lambda name: True) if choice_func is None else choice_func
    if isinstance(save_obj, Cell):
        for _, param in save_obj.parameters_and_names():
            if chosen(param.name):
                arr, dtype = _host_array(param, f"save_obj: parameter {param.name!r}")
                entries.append(_Entry(param.name, dtype, arr))
    elif isinstance(save_obj, dict):
        for name, value in save_obj.items():
            if not isinstance(name, str):
                raise TypeError(f"save_obj: dict keys must be parameter names (str), got "
                                f"{type(name).__name__}")
            if chosen(name):
                entries.append(_value_entry(name, value, f"save_obj[{name!r}]"))
    elif isinstance(save_obj, list):
        for i, item in enumerate(save_obj):
            if isinstance(item, Parameter):  # a list of Parameters, keyed by their names
                if chosen(item.name):
                    entries.append(_value_entry(item.name, item, f"save_obj[{i}]"))
                continue
            if not isinstance(item, dict) or "name" not in item or "data" not in item:
                raise TypeError(f"save_obj[{i}]: expected a Parameter or a dict {{'name': str, "
                                f"'data': Parameter or Tensor}}, got {item!r:.80}")
            name = item["name"]
            if not isinstance(name, str):
                raise TypeError(f"save_obj[{i}]['name']: expected a str, got "
                                f"{type(name).__name__}")
            if chosen(name):
                entries.append(_value_entry(name, item["data"], f"save_obj[{i}]['data']"))
    else:
        raise TypeError(f"save_obj: expected a Cell, a list of Parameters or of {{'name': ..., "
                        f"'data': ...}} dicts, or a dict of name -> Tensor, got "
                        f"{type(save_obj).__name__}")
    return entries


def _value_entry(name, value, what):
    if isinstance(value, str):
        return _Entry(name, text=value)
    arr, dtype = _host_array(value, what)
    return _Entry(name, dtype, arr)


def _append_entries(append_dict):
    if append_dict is None:
        return []
    if not isinstance(append_dict, dict):
        raise TypeError(f"append_dict: expected a dict or None, got {type(append_dict).__name__}")
    entries = []
    for key, value in append_dict.items():
        if not isinstance(key, str):
            raise TypeError(f"append_dict: keys must be str, got {type(key).__name__}")
        what = f"append_dict[{key!r}]"
        if isinstance(value, str):
            entries.append(_Entry(key, text=value))
        elif isinstance(value, bool):
            entries.append(_Entry(key, mdt.bool_, np.asarray(value, np.bool_)))
        elif isinstance(value, numbers.Integral):
            entries.append(_Entry(key, mdt.int64, np.asarray(int(value), np.int64)))
        elif isinstance(value, numbers.Real):
            entries.append(_Entry(key, mdt.float32, np.asarray(float(value), np.float32)))
        elif isinstance(value, (Tensor, np.ndarray, np.generic)):
            arr, dtype = _host_array(value, what)
            entries.append(_Entry(key, dtype, arr))
        else:
            raise TypeError(f"{what}: expected an int, float, bool, str, Parameter or Tensor, "
                            f"got {type(value).__name__}")
    return entries


def _check_unique(entries):
    seen = set()
    for e in entries:
        if e.name in seen:
            raise ValueError(f"save_checkpoint: the name {e.name!r} appears twice (two "
                             f"parameters with one name, or an append_dict key equal to a "
                             f"parameter name)")
        seen.add(e.name)


# -- raw bytes ---------------------------------------------------------------------------------------
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
    from mscore.train.proto import checkpoint_pb2
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


# -- asynchronous saving ------------------------------------------------------------------------------
_pending: list[threading.Thread] = []
_async_errors: list[BaseException] = []
_pending_lock = threading.Lock()


def _wait_async_saves():
    """Wait for every background save; re-raise the first failure as RuntimeError."""
    with _pending_lock:
        threads = list(_pending)
        _pending.clear()
    for t in threads:
        t.join()
    with _pending_lock:
        errors = list(_async_errors)
        _async_errors.clear()
    if errors:
        raise RuntimeError(f"an asynchronous save_checkpoint failed: "
                           f"{type(errors[0]).__name__}: {errors[0]}") from errors[0]


def wait_async_save():
    """Block until every ``save_checkpoint(..., async_save=True)`` has finished writing.

    A background save that failed is reported here as ``RuntimeError`` (otherwise the next
    save or load reports it). mscore extension; MindSpore waits implicitly.
    """
    _wait_async_saves()


def async_ckpt_thread_status():
    """True while a ``save_checkpoint(..., async_save=True)`` is still writing."""
    with _pending_lock:
        return any(t.is_alive() for t in _pending)


def _wait_at_exit():
    try:
        _wait_async_saves()
    except RuntimeError as exc:
        warnings.warn(str(exc), RuntimeWarning)


atexit.register(_wait_at_exit)


# -- after a file is in place ------------------------------------------------------------------
_after_write = contextvars.ContextVar("mscore_after_checkpoint_write", default=None)


@contextlib.contextmanager
def after_checkpoint_written(callback):
    """Within the block, every :func:`save_checkpoint` call of this thread calls
    ``callback(path)`` once its file is complete under its final name -- in the writer
    thread for an asynchronous save, and never when the save fails. ``ModelCheckpoint``
    rotates old files this way, so a save that dies never costs the previous checkpoint."""
    token = _after_write.set(callback)
    try:
        yield
    finally:
        _after_write.reset(token)


def _write_file(path, writer, entries, crc_check, on_written):
    atomic_write(path, lambda f: writer(f, entries, crc_check))
    if on_written is not None:
        on_written(path)


def _async_job(path, writer, entries, crc_check, on_written):
    try:
        _write_file(path, writer, entries, crc_check, on_written)
    except BaseException as exc:  # reported by the next save/load or at exit
        with _pending_lock:
            _async_errors.append(exc)


def _encrypted_writer(key, mode):
    """A ``writer(f, entries, crc_check)`` that writes the .ckpt bytes encrypted."""
    def write(f, entries, crc_check):
        sink = _crypto.EncryptingWriter(f, key, mode)
        _write_ckpt(sink, entries, crc_check)
        sink.close()
    return write


def _check_async_save(async_save):
    """A bool, ``"thread"`` or ``"process"`` (MindSpore's values) as a bool."""
    if isinstance(async_save, str):
        if async_save not in ("thread", "process"):
            raise ValueError(f"async_save: a str must be 'thread' or 'process', got "
                             f"{async_save!r}")
        return True
    return _check_bool(async_save, "async_save")


# MindSpore keyword arguments of save_checkpoint and the only values that mean something here
_SAVE_KWARGS = {"incremental": (False,), "global_step_num": (None,),
                "remove_redundancy": (None, False)}


def _check_save_kwargs(kwargs):
    for name, value in kwargs.items():
        if name not in _SAVE_KWARGS:
            raise TypeError(f"save_checkpoint() got an unexpected keyword argument {name!r}")
        if name == "remove_redundancy" and value is not None and not isinstance(value, bool):
            raise ValueError(f"remove_redundancy: expected a bool or None, got {value!r}")
        if not any(value is allowed for allowed in _SAVE_KWARGS[name]):
            raise NotImplementedError(f"save_checkpoint: {name}={value!r} is not supported "
                                      f"(MindSpore's default {_SAVE_KWARGS[name][0]!r} is)")


# -- save ---------------------------------------------------------------------------------------------
def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False,
                    append_dict=None, enc_key=None, enc_mode="AES-GCM", choice_func=None,
                    crc_check=False, format="ckpt", **kwargs):  # noqa: A002
    """Save the parameters of ``save_obj`` to ``ckpt_file_name``.

    ``save_obj`` is a Cell (its parameters, keyed by ``Parameter.name``), a list of
    Parameters, a list of ``{"name": str, "data": Parameter | Tensor | str}`` dicts, or a
    dict of name to Parameter/Tensor; ``choice_func(name)`` keeps only the names it accepts.
    ``append_dict`` adds entries (int, float, bool, str, Tensor). The file name gets the
    suffix ``.ckpt`` / ``.safetensors`` of ``format`` when it lacks it. ``integrated_save``
    only matters for model-parallel training and is accepted for compatibility;
    ``async_save`` is a bool or MindSpore's ``"thread"`` / ``"process"`` (both write in a
    background thread here). ``enc_key`` (bytes: 16, 24 or 32 for AES, 16 for SM4) encrypts
    a ``.ckpt`` file with ``enc_mode`` ``"AES-GCM"``, ``"AES-CBC"`` or ``"SM4-CBC"`` in
    MindSpore's layout (:mod:`._crypto`), with mscore's integrity check inside (a keyed MAC
    that MindSpore's reader skips); it excludes ``crc_check``. Of MindSpore's keyword
    arguments, ``incremental`` (False), ``global_step_num`` (None) and
    ``remove_redundancy`` (None/False) are accepted at those values. See the module
    docstring for the format, the CRC footer, atomicity and ``async_save``.
    """
    path = _check_path(ckpt_file_name, "ckpt_file_name")
    _check_bool(integrated_save, "integrated_save")
    async_save = _check_async_save(async_save)
    _check_flag(crc_check, "crc_check", "save_checkpoint")
    fmt = _check_format(format)
    _check_save_kwargs(kwargs)
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"choice_func: expected a callable or None, got "
                        f"{type(choice_func).__name__}")
    enc_key = _crypto.check_key(enc_key, "enc_key", "save_checkpoint")
    enc_mode = _crypto.check_mode(enc_mode, "enc_mode", "save_checkpoint")
    if fmt == "safetensors" and (enc_key is not None or enc_mode != "AES-GCM"):
        raise ValueError("For 'save_checkpoint', when format is 'safetensors', 'enc_key' and "
                         "'enc_mode' must keep their defaults (None, 'AES-GCM'): safetensors "
                         "files are not encrypted")
    if enc_key is not None:
        _crypto.check_key_and_mode(enc_key, enc_mode, "enc_key", "enc_mode", "save_checkpoint")
        if crc_check:
            raise ValueError("For 'save_checkpoint', 'enc_key' and 'crc_check' cannot be used "
                             "together (an encrypted file always carries mscore's integrity "
                             "check instead)")
    entries = _entries_from(save_obj, choice_func) + _append_entries(append_dict)
    if not entries:
        raise ValueError("save_obj: there is nothing to save (no parameters and no "
                         "append_dict entries)")
    _check_unique(entries)
    if not path.endswith("." + fmt):
        path += "." + fmt
    if os.path.isdir(path):
        raise ValueError(f"ckpt_file_name: {path!r} is a directory")
    writer = _write_ckpt if fmt == "ckpt" else _write_safetensors
    if enc_key is not None:
        writer = _encrypted_writer(enc_key, enc_mode)
    on_written = _after_write.get()
    _wait_async_saves()  # a later save waits for an earlier asynchronous one
    if async_save:
        for e in entries:  # own the bytes: the caller may keep training
            if e.array is not None and not e.array.flags.owndata:
                e.array = e.array.copy()
        thread = threading.Thread(target=_async_job,
                                  args=(path, writer, entries, crc_check, on_written),
                                  name="mscore-async-save", daemon=False)
        with _pending_lock:
            _pending.append(thread)
        thread.start()
        return
    _write_file(path, writer, entries, crc_check, on_written)


# -- load ---------------------------------------------------------------------------------------------
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
    from mscore.train.proto import unknown_field_numbers
    unknown = unknown_field_numbers(message)
    if unknown:
        hint = (" (a MindSpore MapTensor entry, which mscore does not load)"
                if what.startswith("entry") and unknown == [3] else "")
        raise _bad_file(path, f"{what} holds protobuf fields {unknown} that are not part of "
                              f"a checkpoint{hint}")


def _read_ckpt(path, data, crc_check):
    """[(name, numpy array or str)] from the bytes of a .ckpt file."""
    from google.protobuf.message import DecodeError
    from mscore.train.proto import checkpoint_pb2
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


def _check_prefixes(value, name):
    """``filter_prefix`` / ``specify_prefix``: None, a str or a list/tuple of str."""
    if value is None:
        return ()
    prefixes = (value,) if isinstance(value, str) else value
    if not isinstance(prefixes, (list, tuple)):
        raise TypeError(f"{name}: expected a str, a list/tuple of str or None, got "
                        f"{type(value).__name__}")
    for p in prefixes:
        if not isinstance(p, str):
            raise TypeError(f"{name}: expected str elements, got {type(p).__name__}")
        if not p:
            raise ValueError(f"{name}: an empty prefix matches every name")
    return tuple(prefixes)


def _selector(specify, filtered, choice_func):
    """Whether a name is loaded: it starts with a ``specify_prefix`` (when given) and with
    no ``filter_prefix``; ``choice_func`` decides only when neither prefix is given (as in
    MindSpore)."""
    def chosen(name):
        if specify and not name.startswith(specify):
            return False
        if filtered and name.startswith(filtered):
            return False
        if not specify and not filtered and choice_func is not None:
            return bool(choice_func(name))
        return True
    return chosen


def _decrypted(path, data, dec_key, dec_mode, crc_check):
    """The plain bytes of a .ckpt file (decrypted with ``dec_key``), or a ValueError naming
    the file: an encrypted file without a key, a plain file with one, a wrong key or mode,
    a tampered or truncated file. With ``dec_key``, ``crc_check=True`` requires mscore's
    integrity check (:mod:`._crypto`), which a file encrypted by MindSpore does not carry."""
    found = _crypto.cipher_mode(data)
    if dec_key is None:
        if found is not None:
            raise _bad_file(path, f"it is encrypted ({found}); pass dec_key (and "
                                  f"dec_mode={found!r})")
        return data

    def warn_unchecked(why):
        warnings.warn(f"load_checkpoint: {path!r}: {why}", UserWarning, stacklevel=6)
    return _crypto.decrypt(data, dec_key, dec_mode, lambda why: _bad_file(path, why),
                           require_mac=crc_check, warn_unchecked=warn_unchecked)


def _check_backend_dtype(path, name, dtype):
    from mscore.plugin.registry import get_registry
    backend = dispatch.backend()
    spec = get_registry().specs.get(getattr(backend, "name", None))
    if spec is not None and dtype.name not in spec.dtypes:
        raise ValueError(f"load_checkpoint: {path!r}: entry {name!r} has dtype {dtype.name}, "
                         f"which backend {spec.name!r} does not support (it declares "
                         f"{list(spec.dtypes)})")


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                    dec_key=None, dec_mode="AES-GCM", specify_prefix=None, choice_func=None,
                    crc_check=False, remove_redundancy=False, format="ckpt"):  # noqa: A002
    """Load a checkpoint file; return ``{name: Parameter}`` (appended strings stay ``str``).

    Only entries whose name starts with a ``specify_prefix`` (when given) and with no
    ``filter_prefix`` are loaded (each a str or a list/tuple of str); without either,
    ``choice_func(name)`` chooses (as in MindSpore, it is ignored when a prefix is given).
    A ``.ckpt`` written with ``enc_key`` loads with ``dec_key`` and ``dec_mode`` (MindSpore's
    encrypted layout, :mod:`._crypto`): mscore's integrity check is verified when the file
    carries it (every file mscore encrypts), and ``crc_check=True`` requires it; a CBC file
    without it (written by MindSpore) loads with a warning. With ``net`` the parameters are also loaded into it
    with :func:`load_param_into_net` (``strict_load`` applies). ``remove_redundancy`` only
    matters for model-parallel files and is accepted. The Parameters hold arrays of the
    active backend, whichever backend wrote the file. A missing, empty, truncated or
    corrupted file, one in another format, one without parameter entries, an encrypted file
    without its key (or with a wrong one) is a ``ValueError`` naming the file; so is a
    selection that leaves nothing to load (as in MindSpore).
    """
    from mscore.nn.cell import Cell
    path = _check_path(ckpt_file_name, "ckpt_file_name")
    if net is not None and not isinstance(net, Cell):
        raise TypeError(f"net: expected a Cell or None, got {type(net).__name__}")
    _check_bool(strict_load, "strict_load")
    prefixes = _check_prefixes(filter_prefix, "filter_prefix")
    specify = _check_prefixes(specify_prefix, "specify_prefix")
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"choice_func: expected a callable or None, got "
                        f"{type(choice_func).__name__}")
    _check_flag(crc_check, "crc_check", "load_checkpoint")
    _check_flag(remove_redundancy, "remove_redundancy", "load_checkpoint")
    fmt = _check_format(format)
    dec_key = _crypto.check_key(dec_key, "dec_key", "load_checkpoint")
    dec_mode = _crypto.check_mode(dec_mode, "dec_mode", "load_checkpoint")
    if fmt == "safetensors" and (dec_key is not None or dec_mode != "AES-GCM"):
        raise ValueError("For 'load_checkpoint', when format is 'safetensors', 'dec_key' and "
                         "'dec_mode' must keep their defaults (None, 'AES-GCM'): safetensors "
                         "files are not encrypted")
    if dec_key is not None:
        _crypto.check_key_and_mode(dec_key, dec_mode, "dec_key", "dec_mode", "load_checkpoint")
    if not path.endswith("." + fmt):
        raise ValueError(f"ckpt_file_name: a {fmt!r} checkpoint file name must end with "
                         f"'.{fmt}', got {path!r}")
    _wait_async_saves()
    if not os.path.isfile(path):
        raise ValueError(f"ckpt_file_name: the checkpoint file {path!r} does not exist")
    data = read_bounded(path, "load_checkpoint")
    if not data:
        raise _bad_file(path, "the file is empty")
    reader = _read_ckpt if fmt == "ckpt" else _read_safetensors
    if fmt == "ckpt":
        data = _decrypted(path, data, dec_key, dec_mode, crc_check)
        if dec_key is not None:  # the integrity check was the MAC, not a CRC footer
            crc_check = False
    try:
        entries = reader(path, data, crc_check)
    except ValueError as exc:
        if repr(path) in str(exc):
            raise
        raise _bad_file(path, f"{type(exc).__name__}: {exc}") from None
    except (TypeError, KeyError, IndexError, OverflowError) as exc:
        raise _bad_file(path, f"{type(exc).__name__}: {exc}") from None
    if not entries:
        raise _bad_file(path, "it holds no parameter entries")
    result = OrderedDict()
    chosen = _selector(specify, prefixes, choice_func)
    for name, value in entries:
        if not chosen(name):
            continue
        if isinstance(value, str):
            result[name] = value
            continue
        dtype = mdt.from_numpy_dtype(value.dtype)
        _check_backend_dtype(path, name, dtype)
        result[name] = Parameter(Tensor(value), name=name)
    if not result:
        given = [n for n, v in (("specify_prefix", specify), ("filter_prefix", prefixes),
                                ("choice_func", choice_func)) if v]
        raise ValueError(f"load_checkpoint: {' and '.join(given)} left no entry of {path!r} "
                         f"to load; check {' and '.join(given)}")
    if net is not None:
        load_param_into_net(net, result, strict_load)
    return result


def load_checkpoint_async(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                          dec_key=None, dec_mode="AES-GCM", specify_prefix=None,
                          choice_func=None):
    """:func:`load_checkpoint` in a background thread; returns a
    :class:`concurrent.futures.Future` whose ``result()`` is what ``load_checkpoint`` returns
    (or raises what it raises). The format follows the file name's suffix."""
    from concurrent.futures import ThreadPoolExecutor
    fmt = "safetensors" if isinstance(ckpt_file_name, str) and \
        ckpt_file_name.endswith(".safetensors") else "ckpt"
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mscore-async-load")
    try:
        return executor.submit(load_checkpoint, ckpt_file_name, net, strict_load, filter_prefix,
                               dec_key, dec_mode, specify_prefix, choice_func, format=fmt)
    finally:
        executor.shutdown(wait=False)

