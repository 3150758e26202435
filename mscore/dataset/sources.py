"""Source datasets: ``NumpySlicesDataset``, ``GeneratorDataset``, ``MnistDataset``."""
from __future__ import annotations

import gzip
import math
import os
import struct
import zlib

import numpy as np

from mscore.dataset.engine import Dataset, _as_row, _check_columns, _check_int

__all__ = ["NumpySlicesDataset", "GeneratorDataset", "MnistDataset", "read_idx", "write_idx"]


class _RandomAccessDataset(Dataset):
    """A source whose rows can be read by index; handles shuffle, sampler, sharding and
    ``num_samples`` like MindSpore's mappable sources (``shuffle=None`` means shuffled)."""

    def __init__(self, num_samples=None, shuffle=None, sampler=None, num_shards=None,
                 shard_id=None):
        super().__init__()
        if num_samples is not None:
            num_samples = _check_int(num_samples, "num_samples", 0)
        self.num_samples = num_samples or None
        if shuffle is not None and not isinstance(shuffle, bool):
            raise TypeError(f"shuffle: expected a bool or None, got {type(shuffle).__name__}")
        if sampler is not None and shuffle is not None:
            raise ValueError("shuffle: cannot be given together with sampler")
        if sampler is not None and (isinstance(sampler, (str, bytes)) or
                                    not hasattr(sampler, "__iter__")):
            raise TypeError(f"sampler: expected an iterable of row indices, got "
                            f"{type(sampler).__name__}")
        self.shuffle_flag = True if shuffle is None else shuffle
        self.sampler = sampler
        if (num_shards is None) != (shard_id is None):
            raise ValueError("num_shards and shard_id: give both or neither")
        if num_shards is None:
            num_shards, shard_id = _job_shard()
        if num_shards is not None:
            num_shards = _check_int(num_shards, "num_shards", 1)
            shard_id = _check_int(shard_id, "shard_id", 0)
            if shard_id >= num_shards:
                raise ValueError(f"shard_id: expected a value in [0, {num_shards}), got "
                                 f"{shard_id}")
        self.num_shards, self.shard_id = num_shards, shard_id

    def _len(self):
        raise NotImplementedError

    def _get(self, index):
        raise NotImplementedError

    def _indices(self, epoch):
        n = self._len()
        if self.sampler is not None:
            idx = np.asarray(list(self.sampler), dtype=np.int64)
            if idx.size and (idx.min() < -n or idx.max() >= n):
                raise IndexError(f"sampler: index out of range for {n} rows")
        elif self.shuffle_flag:
            idx = self._rng(epoch).permutation(n)
        else:
            idx = np.arange(n)
        if self.num_shards is not None:
            # every shard gets the same number of rows: pad by wrapping around, as MindSpore
            per = -(-len(idx) // self.num_shards)
            if len(idx):
                idx = np.resize(idx, per * self.num_shards)
            idx = idx[self.shard_id::self.num_shards]
        if self.num_samples is not None:
            idx = idx[:self.num_samples]
        return idx

    def _size(self):
        return len(self._indices(0))

    def _rows(self, epoch):
        for i in self._indices(epoch):
            yield self._get(int(i))


def _job_shard():
    """``(num_shards, shard_id)`` of this process in a data-parallel job (the communication
    is initialised, the parallel mode reduces gradients, the dataset strategy is
    'data_parallel' and full_batch is off), else ``(None, None)``."""
    from mscore.communication import management
    from mscore.parallel import _context
    if not (management.is_initialized() and _context.reduces_gradients()):
        return None, None
    if _context.get_auto_parallel_context("full_batch") or \
            _context.get_auto_parallel_context("dataset_strategy") != "data_parallel":
        return None, None
    size = management.get_group_size()
    return (size, management.get_rank()) if size > 1 else (None, None)


def _default_names(n):
    return [f"column_{i}" for i in range(n)]


class NumpySlicesDataset(_RandomAccessDataset):
    """Rows sliced along the first axis of in-memory data.

    ``data``: a dict ``{column: array}``; a tuple of arrays (one column each); or a list /
    numpy array (one column). ``column_names`` names the columns (default ``column_0``, ...;
    the keys for a dict). ``shuffle=None`` (default) shuffles, as in MindSpore.
    """

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None):
        super().__init__(num_samples, shuffle, sampler, num_shards, shard_id)
        if isinstance(data, dict):
            names = [str(k) for k in data]
            cols = [np.asarray(v) for v in data.values()]
        elif isinstance(data, tuple):
            cols = [np.asarray(v) for v in data]
            names = None
        elif isinstance(data, (list, np.ndarray)):
            cols = [np.asarray(data)]
            names = None
        else:
            raise TypeError(f"data: expected a dict, tuple, list or numpy array, got "
                            f"{type(data).__name__}")
        if not cols:
            raise ValueError("data: expected at least one column")
        for i, c in enumerate(cols):
            if c.ndim == 0:
                raise ValueError(f"data: column {i} is a scalar; expected something to slice")
            if c.dtype == object:
                raise TypeError(f"data: column {i} has ragged or non-numeric values")
        lengths = {len(c) for c in cols}
        if len(lengths) != 1:
            raise ValueError(f"data: columns must have the same length, got "
                             f"{[len(c) for c in cols]}")
        if column_names is not None:
            column_names = _check_columns(column_names, "column_names")
            if len(column_names) != len(cols):
                raise ValueError(f"column_names: expected {len(cols)} names, got "
                                 f"{len(column_names)}")
            names = column_names
        self._names = names or _default_names(len(cols))
        self._data = cols

    def _columns(self):
        return list(self._names)

    def _len(self):
        return len(self._data[0])

    def _get(self, index):
        return tuple(c[index] for c in self._data)


class GeneratorDataset(Dataset):
    """Rows from Python: a random-accessible object (``__getitem__`` and ``__len__``), a
    callable returning an iterator (a generator function), or an iterable.

    Each item is a tuple of arrays (one per column) or a single array. ``shuffle``,
    ``sampler``, ``num_shards`` and ``num_samples`` need a random-accessible source
    (``shuffle=None`` shuffles it, as in MindSpore); workers are not used (rows are read in
    the calling thread).
    """

    def __init__(self, source, column_names=None, column_types=None, schema=None,
                 num_samples=None, num_parallel_workers=1, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, python_multiprocessing=True, max_rowsize=None):
        super().__init__()
        if column_names is not None:
            column_names = _check_columns(column_names, "column_names")
        self._names = column_names
        if column_types is not None:
            from mscore.common import dtype as mdt
            if not isinstance(column_types, (list, tuple)):
                raise TypeError("column_types: expected a list of dtypes")
            column_types = [np.dtype(mdt.as_dtype(t, "column_types").np_dtype)
                            for t in column_types]
        self._types = column_types
        self._random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if self._random_access:
            self._inner = _IndexedSource(source, num_samples, shuffle, sampler, num_shards,
                                         shard_id)
        else:
            if not (callable(source) or hasattr(source, "__iter__")):
                raise TypeError(f"source: expected a random-accessible object, a callable or "
                                f"an iterable, got {type(source).__name__}")
            if shuffle or sampler is not None or num_shards is not None:
                raise ValueError("shuffle, sampler and num_shards need a random-accessible "
                                 "source (with __getitem__ and __len__)")
            self._inner = None
            self._num_samples = None if num_samples is None else \
                _check_int(num_samples, "num_samples", 0) or None
        self._source = source
        self._one_shot_used = False
        self._ncols = None

    def _iter_items(self, epoch):
        if self._inner is not None:
            yield from self._inner._rows(epoch)
            return
        src = self._source
        if callable(src) and not hasattr(src, "__iter__"):
            it = src()
        else:
            it = iter(src)
            if it is src:
                if self._one_shot_used:
                    raise RuntimeError("source: a one-shot iterator can be read once; pass a "
                                       "generator function instead")
                self._one_shot_used = True
        for i, item in enumerate(it):
            if self._num_samples is not None and i >= self._num_samples:
                return
            yield item

    def _rows(self, epoch):
        for item in self._iter_items(epoch):
            row = _as_row(item, where="GeneratorDataset source")
            if self._ncols is None:
                self._ncols = len(row)
            if self._names is not None and len(row) != len(self._names):
                raise RuntimeError(f"GeneratorDataset: the source gave {len(row)} column(s) "
                                   f"but column_names has {len(self._names)}")
            if self._types is not None:
                row = tuple(a.astype(t, copy=False) for a, t in zip(row, self._types))
            yield row

    def _columns(self):
        if self._names is None:
            if self._ncols is None:
                if self._inner is not None:
                    n = len(_as_row(self._source[0])) if len(self._source) else 1
                else:
                    n = len(next(iter(self._peek_rows())))
                self._ncols = n
            self._names = _default_names(self._ncols)
        return list(self._names)

    def _peek_rows(self):
        if not callable(self._source) or hasattr(self._source, "__iter__"):
            if iter(self._source) is self._source:
                raise ValueError("column_names: required for a one-shot iterator source")
        for row in self._rows(0):
            yield row
            return

    def _size(self):
        if self._inner is not None:
            return self._inner.get_dataset_size()
        return sum(1 for _ in self._iter_items(0))


class _IndexedSource(_RandomAccessDataset):
    def __init__(self, source, num_samples, shuffle, sampler, num_shards, shard_id):
        super().__init__(num_samples, shuffle, sampler, num_shards, shard_id)
        self._source = source

    def _len(self):
        return len(self._source)

    def _get(self, index):
        return self._source[index]

    def _columns(self):
        return []


# -- MNIST ---------------------------------------------------------------------------------
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


_MNIST_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
                "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


class MnistDataset(_RandomAccessDataset):
    """The MNIST IDX files of folder ``dataset_dir``: columns ``image`` (uint8, H x W x 1)
    and ``label`` (uint32 scalar).

    ``usage``: ``'train'`` (``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte``),
    ``'test'`` (``t10k-*``) or ``'all'`` (both; the default). ``.gz`` files are read too.
    """

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        super().__init__(num_samples, shuffle, sampler, num_shards, shard_id)
        if not isinstance(dataset_dir, (str, os.PathLike)):
            raise TypeError(f"dataset_dir: expected a path, got {type(dataset_dir).__name__}")
        if not os.path.isdir(dataset_dir):
            raise ValueError(f"dataset_dir: {os.fspath(dataset_dir)!r} is not a directory")
        usage = "all" if usage is None else usage
        if usage not in ("train", "test", "all"):
            raise ValueError(f"usage: expected 'train', 'test' or 'all', got {usage!r}")
        parts = ["train", "test"] if usage == "all" else [usage]
        images, labels = [], []
        for part in parts:
            img_name, lbl_name = _MNIST_FILES[part]
            img_path = _find(dataset_dir, img_name)
            lbl_path = _find(dataset_dir, lbl_name)
            if img_path is None or lbl_path is None:
                if usage == "all":
                    continue
                raise ValueError(f"dataset_dir: {img_name} and {lbl_name} not found in "
                                 f"{os.fspath(dataset_dir)!r}")
            img, lbl = read_idx(img_path), read_idx(lbl_path)
            if img.ndim != 3 or lbl.ndim != 1 or len(img) != len(lbl):
                raise ValueError(f"{img_path}: expected N x H x W images and N labels, got "
                                 f"{img.shape} and {lbl.shape}")
            images.append(img.astype(np.uint8, copy=False))
            labels.append(lbl.astype(np.uint32))
        if not images:
            raise ValueError(f"dataset_dir: no MNIST IDX files in {os.fspath(dataset_dir)!r}")
        self._images = np.concatenate(images)[..., None]
        self._labels = np.concatenate(labels)

    def _columns(self):
        return ["image", "label"]

    def _len(self):
        return len(self._labels)

    def _get(self, index):
        return self._images[index], self._labels[index]


def _find(folder, name):
    for candidate in (name, name + ".gz", name.replace("-idx", ".idx")):
        path = os.path.join(folder, candidate)
        if os.path.isfile(path):
            return path
    return None
