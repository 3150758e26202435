"""Reading event files back: every record's length and data checksums are verified.

``read_events(path)`` yields the ``Event`` messages of one file; ``load_summaries(log_dir)``
gathers scalars, histograms, images and tensors of every event file in a directory (the
``mscore plot`` command uses it). A damaged record raises :class:`CorruptRecordError`
naming the file, the record number, its byte offset and which checksum failed.
"""
from __future__ import annotations

import os
import struct

from mscore.train.summary import events as _events
from mscore.train.summary.crc32c import masked_crc32c
from mscore.train.summary.proto import summary_pb2 as pb


class CorruptRecordError(ValueError):
    """An event file record whose checksum or length is wrong."""

    def __init__(self, path, index, offset, reason):
        self.path, self.index, self.offset, self.reason = path, index, offset, reason
        super().__init__(f"corrupt summary record in {path!r}: record {index} at byte "
                         f"offset {offset}: {reason}")


def _records(path, allow_truncated_tail):
    """``(index, offset, data)`` of every record of ``path`` (see :func:`iter_records`)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: expected a str or path, got {type(path).__name__}")
    with open(path, "rb") as f:
        index = 0
        while True:
            offset = f.tell()
            header = f.read(12)
            if not header:
                return
            if len(header) < 12:
                if allow_truncated_tail:
                    return
                raise CorruptRecordError(path, index, offset,
                                         f"truncated header ({len(header)} of 12 bytes)")
            length_bytes, length_crc = header[:8], struct.unpack("<I", header[8:])[0]
            expected = masked_crc32c(length_bytes)
            if length_crc != expected:
                raise CorruptRecordError(path, index, offset,
                                         f"length checksum mismatch (stored 0x{length_crc:08x}"
                                         f", computed 0x{expected:08x})")
            (length,) = struct.unpack("<Q", length_bytes)
            remaining = os.fstat(f.fileno()).st_size - f.tell()
            if length + 4 > remaining:  # checked before anything of that size is read
                if allow_truncated_tail:
                    return
                raise CorruptRecordError(path, index, offset,
                                         f"truncated data: the record length {length} (plus "
                                         f"4 checksum bytes) exceeds the {remaining} bytes "
                                         f"left in the file")
            body = f.read(length + 4)
            data, data_crc = body[:length], struct.unpack("<I", body[length:])[0]
            expected = masked_crc32c(data)
            if data_crc != expected:
                raise CorruptRecordError(path, index, offset,
                                         f"data checksum mismatch (stored 0x{data_crc:08x}, "
                                         f"computed 0x{expected:08x})")
            yield index, offset, data
            index += 1


def iter_records(path, allow_truncated_tail=False):
    """Yield the data of every record of the event file ``path``, checking both CRCs and
    each declared length against the bytes left in the file.

    A record cut short at the end of the file (a writer still running, or killed) is an
    error unless ``allow_truncated_tail``, which then ends the iteration quietly."""
    for _, _, data in _records(path, allow_truncated_tail):
        yield data


def read_events(path, allow_truncated_tail=False):
    """Yield the ``Event`` messages of the event file ``path`` (see :func:`iter_records`); a
    record whose checksums hold but whose data is not an ``Event`` is a
    :class:`CorruptRecordError` too."""
    from google.protobuf.message import DecodeError
    for index, offset, data in _records(path, allow_truncated_tail):
        try:
            event = pb.Event.FromString(data)
        except (DecodeError, ValueError, RuntimeError) as exc:
            raise CorruptRecordError(path, index, offset,
                                     f"the data is not a valid Event protobuf ({exc})") from None
        yield event


def event_files(log_dir):
    """The event files (names containing "tfevents") directly in ``log_dir``, in the order
    they were written. A path to one file gives that file."""
    if not isinstance(log_dir, (str, os.PathLike)):
        raise TypeError(f"log_dir: expected a str or path, got {type(log_dir).__name__}")
    if os.path.isfile(log_dir):
        return [os.fspath(log_dir)]
    if not os.path.isdir(log_dir):
        raise ValueError(f"log_dir: {os.fspath(log_dir)!r} is neither a directory nor a file")
    return [os.path.join(log_dir, n) for n in sorted(os.listdir(log_dir))
            if "tfevents" in n and os.path.isfile(os.path.join(log_dir, n))]


def load_summaries(log_dir, allow_truncated_tail=False):
    """Everything recorded under ``log_dir``, as
    ``{plugin: {tag: [(step, wall_time, value), ...]}}`` for the plugins ``scalar`` (float),
    ``histogram`` (a dict of the histogram fields), ``image`` (a dict of height, width,
    colorspace and the PNG bytes) and ``tensor`` (a numpy array), in file order."""
    out = {"scalar": {}, "histogram": {}, "image": {}, "tensor": {}}
    for path in event_files(log_dir):
        for event in read_events(path, allow_truncated_tail):
            if event.WhichOneof("what") != "summary":
                continue
            for v in event.summary.value:
                kind = v.WhichOneof("value")
                if kind == "simple_value":
                    plugin, value = "scalar", v.simple_value
                elif kind == "histo":
                    h = v.histo
                    plugin, value = "histogram", {
                        "min": h.min, "max": h.max, "num": h.num, "sum": h.sum,
                        "sum_squares": h.sum_squares, "bucket_limit": list(h.bucket_limit),
                        "bucket": list(h.bucket)}
                elif kind == "image":
                    im = v.image
                    plugin, value = "image", {
                        "height": im.height, "width": im.width, "colorspace": im.colorspace,
                        "png": im.encoded_image_string}
                elif kind == "tensor":
                    plugin, value = "tensor", _tensor_value(path, event.step, v)
                else:
                    continue
                out[plugin].setdefault(v.tag, []).append((event.step, event.wall_time, value))
    return out


def _tensor_value(path, step, value):
    """The numpy array of a tensor summary; a malformed one is a ValueError naming the file."""
    try:
        return _events.tensor_to_numpy(value.tensor)
    except ValueError as exc:
        raise ValueError(f"summary file {path!r}: the tensor {value.tag!r} at step {step} is "
                         f"malformed: {exc}") from None
