"""Turning numpy values into summary protobufs: scalars, histograms, PNG images, tensors.

Everything here runs on the background writer thread (see :mod:`.writer`), so the training
thread pays only for the host copy of each value.
"""
from __future__ import annotations

import math
import struct
import zlib

import numpy as np

from mscore.train.summary.proto import summary_pb2 as pb

FILE_VERSION = "brain.Event:2"
PLUGINS = ("scalar", "image", "histogram", "tensor")
DEFAULT_BINS = 30
IMAGE_COLUMNS = 8            # a batch of images is laid out as a grid this many wide
_MAX_DIMS = 32               # numpy's limit on the number of axes (numpy 1.x)

_DTYPES = {
    np.dtype(np.float32): pb.DT_FLOAT, np.dtype(np.float64): pb.DT_DOUBLE,
    np.dtype(np.float16): pb.DT_HALF, np.dtype(np.int8): pb.DT_INT8,
    np.dtype(np.int16): pb.DT_INT16, np.dtype(np.int32): pb.DT_INT32,
    np.dtype(np.int64): pb.DT_INT64, np.dtype(np.uint8): pb.DT_UINT8,
    np.dtype(np.uint16): pb.DT_UINT16, np.dtype(np.uint32): pb.DT_UINT32,
    np.dtype(np.uint64): pb.DT_UINT64, np.dtype(np.bool_): pb.DT_BOOL,
}
try:
    import ml_dtypes
    _DTYPES[np.dtype(ml_dtypes.bfloat16)] = pb.DT_BFLOAT16
except ImportError:  # pragma: no cover - ml_dtypes is a core dependency
    pass


def _as_float(value: np.ndarray) -> np.ndarray:
    if value.dtype.kind == "f" and value.dtype.itemsize >= 4:
        return value
    return value.astype(np.float64 if value.dtype.kind in "iu" else np.float32)


def version_event(wall_time: float) -> pb.Event:
    """The event that opens every file."""
    return pb.Event(wall_time=wall_time, step=0, file_version=FILE_VERSION)


def graph_event(wall_time: float, graph_def: bytes) -> pb.Event:
    """The event that carries a network's serialized GraphDef (TensorBoard's Graphs tab)."""
    return pb.Event(wall_time=wall_time, step=0, graph_def=graph_def)


def scalar_value(tag: str, value: np.ndarray) -> pb.Summary.Value:
    """A ``simple_value`` summary (float32 on the wire, as TensorBoard stores it)."""
    return pb.Summary.Value(tag=tag, simple_value=float(_as_float(value).reshape(-1)[0]))


def histogram_proto(values: np.ndarray, bins: int = DEFAULT_BINS) -> pb.HistogramProto:
    """A histogram of the finite entries of ``values`` over ``bins`` equal buckets from min to
    max. Bucket ``i`` counts ``(limit[i-1], limit[i]]`` and the last limit is the maximum;
    NaN and infinities are left out of every field."""
    flat = np.asarray(values).reshape(-1)
    if flat.dtype != np.float64:
        flat = _as_float(flat).astype(np.float64)
    finite = np.isfinite(flat)
    if not finite.all():
        flat = flat[finite]
    if flat.size == 0:
        return pb.HistogramProto(min=0.0, max=0.0, num=0.0, sum=0.0, sum_squares=0.0)
    lo, hi = float(flat.min()), float(flat.max())
    if lo == hi:
        limits, counts = [hi], [float(flat.size)]
    else:
        counts, edges = np.histogram(flat, bins=bins, range=(lo, hi))
        limits, counts = edges[1:].tolist(), counts.astype(np.float64).tolist()
        limits[-1] = hi
    return pb.HistogramProto(min=lo, max=hi, num=float(flat.size), sum=float(flat.sum()),
                             sum_squares=float(np.dot(flat, flat)), bucket_limit=limits,
                             bucket=counts)


def histogram_value(tag: str, value: np.ndarray) -> pb.Summary.Value:
    """A ``histo`` summary of ``value``."""
    return pb.Summary.Value(tag=tag, histo=histogram_proto(value))


def image_grid(batch: np.ndarray) -> np.ndarray:
    """NCHW images as one HWC uint8 canvas, ``IMAGE_COLUMNS`` images wide.

    uint8 input is used as is; other integers are clipped to [0, 255]; floats within [0, 1]
    are scaled by 255 (TensorBoard's convention). A float batch with finite values outside
    [0, 1] (normalised network inputs) is first min-max rescaled to [0, 1] as a whole; NaN
    and infinities are drawn as 0 and 1."""
    batch = np.asarray(batch)
    if batch.dtype == np.uint8:
        pixels = batch
    elif batch.dtype.kind in "iub":
        pixels = np.clip(batch.astype(np.int64), 0, 255).astype(np.uint8)
    else:
        f = _as_float(batch).astype(np.float32)
        finite = f[np.isfinite(f)]
        if finite.size and (finite.min() < 0.0 or finite.max() > 1.0):
            lo, hi = float(finite.min()), float(finite.max())
            f = (f - lo) / (hi - lo) if hi > lo else np.zeros_like(f)
        f = np.nan_to_num(f, nan=0.0, posinf=1.0, neginf=0.0)
        pixels = np.rint(np.clip(f, 0.0, 1.0) * 255.0).astype(np.uint8)
    n, c, h, w = pixels.shape
    cols = min(n, IMAGE_COLUMNS)
    rows = -(-n // cols)
    canvas = np.zeros((rows * h, cols * w, c), dtype=np.uint8)
    for i in range(n):
        r, q = divmod(i, cols)
        canvas[r * h:(r + 1) * h, q * w:(q + 1) * w] = pixels[i].transpose(1, 2, 0)
    return canvas


def encode_png(image: np.ndarray) -> bytes:
    """A PNG file of an HWC (or HW) uint8 array with 1 to 4 channels."""
    image = np.asarray(image)
    if image.ndim == 2:
        image = image[:, :, None]
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in (1, 2, 3, 4):
        raise ValueError(f"image: expected an HxWxC uint8 array with C in 1..4, got "
                         f"{image.dtype} {image.shape}")
    h, w, c = image.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    raw = np.zeros((h, 1 + w * c), dtype=np.uint8)   # filter byte 0 (None) on every row
    raw[:, 1:] = image.reshape(h, w * c)

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))


def image_value(tag: str, value: np.ndarray) -> pb.Summary.Value:
    """An ``image`` summary of an NCHW batch (C in 1..4), PNG-encoded as a grid."""
    canvas = image_grid(value)
    h, w, c = canvas.shape
    return pb.Summary.Value(tag=tag, image=pb.Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=encode_png(canvas)))


def tensor_proto(value: np.ndarray) -> pb.TensorProto:
    """A TensorProto with the raw little-endian bytes of ``value``."""
    value = np.asarray(value)
    code = _DTYPES.get(value.dtype.newbyteorder("=") if value.dtype.byteorder == ">"
                       else value.dtype)
    if code is None:
        raise ValueError(f"value: dtype {value.dtype} cannot be stored in a tensor summary")
    le = value.astype(value.dtype.newbyteorder("<"), copy=False)
    proto = pb.TensorProto(dtype=code, tensor_content=np.ascontiguousarray(le).tobytes())
    for d in value.shape:
        proto.tensor_shape.dim.add(size=int(d))
    return proto


def tensor_value(tag: str, value: np.ndarray) -> pb.Summary.Value:
    """A ``tensor`` summary (TensorBoard's event reader lists it under Tensors)."""
    return pb.Summary.Value(tag=tag, tensor=tensor_proto(value))


_BUILDERS = {"scalar": scalar_value, "histogram": histogram_value, "image": image_value,
             "tensor": tensor_value}


def summary_event(step: int, wall_time: float, items) -> pb.Event:
    """One Event holding a Value per ``(plugin, tag, numpy value)`` of ``items``."""
    event = pb.Event(wall_time=wall_time, step=step)
    values = event.summary.value
    for plugin, tag, value in items:
        values.append(_BUILDERS[plugin](tag, value))
    return event


def tensor_to_numpy(proto) -> np.ndarray:
    """The numpy array of a TensorProto written by :func:`tensor_proto`."""
    inverse = {code: dt for dt, code in _DTYPES.items()}
    dt = inverse.get(proto.dtype)
    if dt is None:
        raise ValueError(f"tensor summary: unsupported dtype code {proto.dtype}")
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    if any(d < 0 for d in shape) or len(shape) > _MAX_DIMS:
        raise ValueError(f"tensor summary: invalid shape {shape[:_MAX_DIMS + 1]}")
    need = math.prod(shape) * dt.itemsize
    if len(proto.tensor_content) != need:
        raise ValueError(f"tensor summary: shape {shape} of {dt} needs {need} bytes, the "
                         f"record holds {len(proto.tensor_content)}")
    return np.frombuffer(proto.tensor_content, dtype=dt.newbyteorder("<")).astype(
        dt).reshape(shape)
