"""Reading a whole file that a loader parses (checkpoints, strategy and print files), with a
size bound checked before any byte is read: a file that claims more than this machine can
hold (a sparse file of many GiB, a damaged size) is a ``ValueError`` naming the file and the
bound, never a ``MemoryError`` half-way through.

The bound is :data:`MAX_BYTES_ENV` when set (bytes), else half of this machine's physical
memory (a loader holds the bytes and the arrays made from them).
"""
from __future__ import annotations

import os

#: Environment variable overriding the bound (a number of bytes).
MAX_BYTES_ENV = "MSCORE_MAX_FILE_BYTES"
_FALLBACK_BYTES = 8 * 1024 ** 3


def max_file_bytes():
    """The largest file a loader reads (:data:`MAX_BYTES_ENV`, else half the memory)."""
    raw = os.environ.get(MAX_BYTES_ENV)
    if raw is not None:
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"{MAX_BYTES_ENV} must be a number of bytes, got {raw!r}") \
                from None
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (AttributeError, ValueError, OSError):
        return _FALLBACK_BYTES


def read_bounded(path, func, shown=None):
    """The bytes of file ``path``; ``ValueError`` (from ``func``, naming ``shown`` or
    ``path``) when it is larger than :func:`max_file_bytes`."""
    shown = path if shown is None else shown
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        bound = max_file_bytes()
        if size > bound:
            raise ValueError(f"{func}: {shown!r} is {size} bytes, more than the {bound} bytes "
                             f"a file may have to be read here (set {MAX_BYTES_ENV} to a "
                             f"larger number of bytes to read it)")
        try:
            return f.read()
        except MemoryError:
            raise ValueError(f"{func}: {shown!r} ({size} bytes) does not fit in memory") \
                from None
