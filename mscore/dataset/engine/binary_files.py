"""Reading the binary files of the vision corpora, bounded by what the file can hold.

- IDX (MNIST, Fashion-MNIST, KMNIST; ``.gz`` too): the header is read first; the data size
  it declares is checked against what the file can hold before anything is allocated.
- CIFAR binary records (a label byte or two, then a 3 x 32 x 32 image): the file size must
  be a whole number of records; the records are mapped from the file, not read into memory.

A malformed, truncated or oversized file is a ``ValueError`` naming it.
"""
from __future__ import annotations

import gzip
import math
import os
import struct
import zlib

import numpy as np

__all__ = ["read_idx", "write_idx", "map_records"]

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4",
              0x0E: ">f8"}
_IDX_CODES = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09, np.dtype(">i2"): 0x0B,
              np.dtype(">i4"): 0x0C, np.dtype(">f4"): 0x0D, np.dtype(">f8"): 0x0E}

# deflate expands at most about 1032:1, so a .gz file of n bytes holds at most this many times
# n bytes of data: a header declaring more is a lie, refused before anything is allocated.
_GZIP_MAX_RATIO = 1032


def read_idx(path):
    """Read an IDX file (the MNIST format; ``.gz`` too) into a numpy array.

    The header is read first; the data size it declares is checked against what the file
    can hold, and no more than that is read (or decompressed). A malformed, truncated or
    oversized file is a ``ValueError`` naming it."""
    name = os.fspath(path)
    compressed = name.endswith(".gz")
    size = os.path.getsize(name)
    try:
        with (gzip.open if compressed else open)(name, "rb") as f:
            return _read_idx_stream(name, f, size, compressed)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ValueError(f"{name}: not a valid gzip-compressed IDX file ({exc})") from None


def _read_idx_stream(name, f, file_size, compressed):
    magic = f.read(4)
    if len(magic) < 4 or magic[0] != 0 or magic[1] != 0 or magic[2] not in _IDX_TYPES:
        raise ValueError(f"{name}: not an IDX file (bad magic number)")
    dtype, ndim = np.dtype(_IDX_TYPES[magic[2]]), magic[3]
    raw_dims = f.read(4 * ndim)
    if len(raw_dims) < 4 * ndim:
        raise ValueError(f"{name}: truncated IDX header")
    dims = struct.unpack(f">{ndim}I", raw_dims)
    need = math.prod(dims) * dtype.itemsize
    room = (file_size * _GZIP_MAX_RATIO if compressed else file_size - 4 - 4 * ndim)
    if need > room:
        raise ValueError(f"{name}: the header declares shape {dims} ({need} data bytes), more "
                         f"than the {file_size}-byte file can hold")
    data = f.read(need)
    if len(data) != need:
        raise ValueError(f"{name}: expected {need} data bytes for shape {dims}, found "
                         f"{len(data)}")
    if f.read(1):
        raise ValueError(f"{name}: more data than the header declares for shape {dims}")
    return np.frombuffer(data, dtype, count=need // dtype.itemsize).reshape(dims).astype(
        dtype.newbyteorder("="))


def write_idx(path, array):
    """Write ``array`` (uint8, int8, int16, int32, float32 or float64) as an IDX file."""
    arr = np.asarray(array)
    big = arr.dtype.newbyteorder(">") if arr.dtype.itemsize > 1 else arr.dtype
    if big not in _IDX_CODES:
        raise TypeError(f"array: dtype {arr.dtype} has no IDX type code")
    header = bytes([0, 0, _IDX_CODES[big], arr.ndim]) + np.asarray(arr.shape, ">u4").tobytes()
    with open(path, "wb") as f:
        f.write(header + arr.astype(big).tobytes())


def map_records(path, record_size):
    """The file's fixed-size records as a read-only ``(n, record_size)`` uint8 array mapped
    from the file. Its size must be a whole, non-zero number of records."""
    name = os.fspath(path)
    size = os.path.getsize(name)
    if size == 0 or size % record_size:
        raise ValueError(f"{name}: {size} bytes is not a whole number of {record_size}-byte "
                         f"records")
    return np.memmap(name, dtype=np.uint8, mode="r", shape=(size // record_size, record_size))
