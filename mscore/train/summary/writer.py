"""Event files: length-prefixed records with masked CRC32C, written by a background thread.

Record layout (TFRecord): ``uint64 length`` (little-endian), ``uint32 masked_crc32c(length
bytes)``, ``length`` bytes of a serialized ``Event``, ``uint32 masked_crc32c(data)``.

:class:`EventWriter` owns one output directory. The caller (the training thread) only
queues host copies of the values; building protobufs, PNG encoding, checksums and disk
writes happen on the writer thread. The queue is bounded, so a disk slower than the
training loop applies back-pressure instead of growing memory without limit. Any write
failure (a full disk, a revoked permission) stops the writer and is raised, with the number
of events that could not be written, by the next ``write``/``flush``/``close``: data is
never dropped silently.
"""
from __future__ import annotations

import json
import os
import platform
import queue
import struct
import threading
import time
import urllib.parse
import warnings

import numpy as np

from mscore import _state
from mscore.train.summary import events as _events
from mscore.train.summary.crc32c import masked_crc32c

QUEUE_SIZE = 64              # pending record() batches before record() waits for the disk


class SummaryWriteError(RuntimeError):
    """Writing summary data failed (disk full, permission revoked, ...); data was lost."""


def frame(data: bytes) -> bytes:
    """One record around ``data``: length, CRC of the length, data, CRC of the data."""
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))


def event_file_name(prefix: str, suffix: str, seconds: int, hostname: str, seq: int = 0):
    """``{prefix}.out.tfevents.{seconds}.{hostname}{suffix}``, then ``.{seq:04d}`` for the
    files that follow it (rotation). "tfevents" makes TensorBoard load the file, and the
    names sort in writing order, which is the order TensorBoard reads them in."""
    name = f"{prefix}.out.tfevents.{seconds}.{hostname}{suffix}"
    return name if seq == 0 else f"{name}.{seq:04d}"


def lineage_file_name(prefix: str, suffix: str, seconds: int, hostname: str, seq: int = 0):
    """The JSON-lines lineage file beside the events (no "tfevents": TensorBoard skips it);
    ``seq`` > 0 numbers the names tried when the first is taken."""
    more = f".{seq:04d}" if seq else ""
    return f"{prefix}.out.lineage.{seconds}.{hostname}{suffix}{more}.jsonl"


_CREATE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0))


def create_exclusively(directory, name_for, seq=0):
    """Create a new file ``directory/name_for(k)`` for the first ``k`` = seq, seq + 1, ...
    whose name is free; returns ``(fd, path, k)``. Never opens an existing file or follows a
    symlink planted under the name (``O_EXCL``), so nobody can redirect what is written."""
    while True:
        path = os.path.join(directory, name_for(seq))
        try:
            return os.open(path, _CREATE_FLAGS, 0o640), path, seq
        except FileExistsError:
            seq += 1


_open_writers = _state.process.summary_writers


@_state.finisher("summary_writers")
def close_open_writers():
    """Close every open :class:`EventWriter` (what is queued is written first); a writer
    that fails is reported as a RuntimeWarning and the others are still closed. Run at exit
    and by ``mscore._state.reset()``."""
    for w in list(_open_writers):
        try:
            w.close()
        except Exception as exc:  # nothing else can report it now
            warnings.warn(f"summary writer: {exc}", RuntimeWarning, stacklevel=2)


class EventWriter:
    """Writes summary events and lineage records of one ``SummaryRecord``.

    The first event file is created and its version record written here, in the caller's
    thread, so a directory that cannot be written fails at construction.
    """

    def __init__(self, directory, prefix="events", suffix="_MS", max_file_size=None,
                 queue_size=QUEUE_SIZE, export_tensors=False):
        self.directory = directory
        self.export_tensors = export_tensors   # also save 'tensor' values as .npy files
        self.max_file_size = max_file_size
        self._prefix, self._suffix = prefix, suffix
        self._seconds = int(time.time())
        self._host = platform.node() or "localhost"
        self._seq = 0
        self._file = None
        self._size = 0
        self._records_in_file = 0
        self.paths = []             # every event file written, in order
        self._lineage = None
        self.lineage_path = os.path.join(
            directory, lineage_file_name(prefix, suffix, self._seconds, self._host))
        self._error = None          # first failure on the writer thread
        self._error_reported = False
        self._lost = 0              # events queued but not written because of the failure
        self._lost_steps = []
        self._buffered = []         # (step, end offset) of events written since the last flush
        self._item_written = False  # the summary item being handled reached _write_record
        self._current_path = directory
        self._closed = False
        self._queue = queue.Queue(maxsize=queue_size)
        self._open_next_file()
        self._thread = threading.Thread(target=self._run, name="mscore-summary-writer",
                                        daemon=True)
        self._thread.start()
        _open_writers.add(self)

    @property
    def path(self):
        """The event file being written now."""
        return self.paths[-1]

    # -- caller side ---------------------------------------------------------------------
    def write_summary(self, step, wall_time, items):
        """Queue one Event of ``[(plugin, tag, numpy value)]`` at ``step``."""
        self._check()
        self._queue.put(("summary", step, wall_time, items))

    def write_graph(self, wall_time, graph_def: bytes):
        """Queue one Event carrying the serialized GraphDef ``graph_def``."""
        self._check()
        self._queue.put(("graph", wall_time, graph_def))

    def write_lineage(self, record: dict):
        """Queue one JSON object for the lineage file."""
        self._check()
        self._queue.put(("lineage", record))

    def flush(self):
        """Block until everything queued so far is on disk (``fsync``)."""
        self._check()
        done = threading.Event()
        self._queue.put(("flush", done))
        done.wait()
        self._check()

    def close(self):
        """Write what is queued, close the files and stop the thread (idempotent). Raises
        :class:`SummaryWriteError` if a failure has not been raised to the caller yet."""
        if not self._closed:
            self._closed = True
            _open_writers.discard(self)
            done = threading.Event()
            self._queue.put(("close", done))
            done.wait()
            self._thread.join()
        if self._error is not None and not self._error_reported:
            self._check()

    def failed(self):
        """The exception that stopped the writer thread, or None."""
        return self._error

    def raise_if_failed(self):
        """Raise :class:`SummaryWriteError` if the writer thread has stopped on a failure."""
        if self._error is not None:
            self._check()

    def _check(self):
        if self._error is None:
            if self._closed:
                raise SummaryWriteError("summary writer: already closed")
            return
        self._error_reported = True
        steps = ""
        if self._lost_steps:
            steps = (f" (steps {min(self._lost_steps)}..{max(self._lost_steps)})"
                     if len(self._lost_steps) > 1 else f" (step {self._lost_steps[0]})")
        raise SummaryWriteError(
            f"summary writer: writing {self._error_path!r} failed: {self._error}; "
            f"{self._lost} summary event(s){steps} were not written and no more will be; "
            f"free disk space or choose another log_dir") from self._error

    # -- writer thread -------------------------------------------------------------------
    def _run(self):
        while True:
            item = self._queue.get()
            kind = item[0]
            try:
                if kind == "close":
                    self._shutdown()
                    item[1].set()
                    return
                if kind == "flush":
                    if self._error is None:
                        self._sync()
                    item[1].set()
                    continue
                if self._error is not None:
                    self._count_lost(item)
                    continue
                if kind == "summary":
                    _, step, wall_time, items = item
                    self._item_written = False
                    event = _events.summary_event(step, wall_time, items)
                    self._write_record(event.SerializeToString(), step)
                    if self.export_tensors:
                        self._export_npy(step, items)
                elif kind == "graph":
                    _, wall_time, graph_def = item
                    self._write_record(_events.graph_event(wall_time, graph_def)
                                       .SerializeToString())
                else:
                    self._write_lineage(item[1])
                if self._queue.empty():
                    self._flush_files()
            except BaseException as exc:  # stop writing; the caller sees it on next call
                self._fail(exc)
                if kind == "summary" and not self._item_written:
                    self._count_lost(item)
                self._count_unflushed_lost()
                if kind in ("close", "flush"):
                    item[1].set()
                    if kind == "close":
                        return

    def _fail(self, exc):
        if self._error is None:
            self._error = exc
            self._error_path = self._current_path

    def _count_lost(self, item):
        if item[0] == "summary":
            self._lost += 1
            self._lost_steps.append(item[1])

    def _count_unflushed_lost(self):
        """After a failure: count the events written since the last flush whose bytes did
        not all reach the file (the buffer may have been flushed in part before it failed)."""
        try:
            on_disk = os.fstat(self._file.fileno()).st_size
        except (OSError, ValueError):  # closed or gone: assume none of it arrived
            on_disk = 0
        for step, end in self._buffered:
            if end > on_disk:
                self._lost += 1
                self._lost_steps.append(step)
        self._buffered = []

    def _flush_files(self):
        self._file.flush()
        self._buffered = []          # events written but maybe still in the file buffer
        if self._lineage is not None:
            self._lineage.flush()

    def _open_next_file(self):
        fd, path, used = create_exclusively(self.directory, lambda k: event_file_name(
            self._prefix, self._suffix, self._seconds, self._host, k), self._seq)
        self._seq = used + 1
        self._current_path = path
        self._file = os.fdopen(fd, "wb")
        self.paths.append(path)
        self._size = 0
        self._records_in_file = 0
        self._write_record(_events.version_event(time.time()).SerializeToString())
        self._file.flush()

    def _write_record(self, data: bytes, step=None):
        record = frame(data)
        limit = self.max_file_size
        if (limit is not None and self._records_in_file > 1
                and self._size + len(record) > limit):
            self._file.close()
            self._buffered = []
            self._open_next_file()
        if limit is not None and self._size + len(record) > limit and self._records_in_file:
            warnings.warn(f"summary: an event of {len(record)} bytes does not fit "
                          f"max_file_size={limit}; it is written alone in "
                          f"{os.path.basename(self._current_path)}", RuntimeWarning)
        if step is not None:
            self._buffered.append((step, self._size + len(record)))
            self._item_written = True
        self._file.write(record)
        self._size += len(record)
        self._records_in_file += 1

    def _export_npy(self, step, items):
        """``export_<seconds>/tensor/<quoted tag>_<step>.npy`` for each 'tensor' value (the
        tag is percent-quoted, '/' included, so it names one file inside that folder)."""
        folder = os.path.join(self.directory, f"export_{self._seconds}", "tensor")
        for plugin, tag, value in items:
            if plugin != "tensor":
                continue
            os.makedirs(folder, mode=0o700, exist_ok=True)
            path = os.path.join(folder, f"{urllib.parse.quote(tag, safe='')}_{int(step)}.npy")
            self._current_path = path
            with open(path, "wb") as f:
                np.save(f, value, allow_pickle=False)
        self._current_path = self.paths[-1]

    def _write_lineage(self, record):
        if self._lineage is None:
            self._current_path = self.lineage_path
            fd, self.lineage_path, _ = create_exclusively(self.directory, lambda k: (
                lineage_file_name(self._prefix, self._suffix, self._seconds, self._host, k)))
            self._current_path = self.lineage_path
            self._lineage = os.fdopen(fd, "w", encoding="utf-8")
        self._lineage.write(json.dumps(record, sort_keys=True) + "\n")
        self._current_path = self.paths[-1]

    def _sync(self):
        self._flush_files()
        for f in (self._file, self._lineage):
            if f is not None and not f.closed:
                os.fsync(f.fileno())

    def _shutdown(self):
        try:
            if self._error is None:
                self._sync()
        finally:
            for f in (self._file, self._lineage):
                if f is not None and not f.closed:
                    try:
                        f.close()
                    except OSError as exc:
                        self._fail(exc)
