"""Text-file sources: ``TextFileDataset`` (one row per non-empty line) and ``CSVDataset``.

Rows are read file by file and interleaved (one row of each file in turn, as MindSpore's
file readers give them). ``num_shards`` splits the rows of all files, in file order, into
equal contiguous blocks (wrapping round to pad the last). ``shuffle``: ``False``, ``True`` /
``Shuffle.GLOBAL`` (file order and rows), ``Shuffle.FILES`` (file order), ``Shuffle.INFILE``
(rows within each file); a new order each epoch.
"""
from __future__ import annotations

import csv
import glob
import io
import os

import numpy as np

from mscore.dataset import config
from mscore.dataset.engine import validators as v
from mscore.dataset.engine.datasets import Dataset
from mscore.dataset.engine.mappable import check_shards, job_shard
from mscore.dataset.engine.samplers import Shuffle

__all__ = ["TextFileDataset", "CSVDataset"]


def _find_files(dataset_files):
    if isinstance(dataset_files, str):
        patterns = [dataset_files]
    elif isinstance(dataset_files, list):
        patterns = dataset_files
        for p in patterns:
            v.check_type(p, str, "dataset_files")
    else:
        raise TypeError(f"dataset_files: expected a str or a list of str, got "
                        f"{type(dataset_files).__name__}")
    if not patterns:
        raise ValueError("dataset_files: cannot be empty")
    files, unmatched = [], []
    for p in patterns:
        found = sorted(glob.glob(p)) if glob.has_magic(p) else ([p] if os.path.isfile(p) else [])
        if not found:
            unmatched.append(p)
        files.extend(found)
    if unmatched:
        raise ValueError(f"dataset_files: these patterns did not match any files: {unmatched}")
    return files


def _check_shuffle(shuffle):
    if isinstance(shuffle, Shuffle):
        return shuffle
    if isinstance(shuffle, bool):
        return Shuffle.GLOBAL if shuffle else None
    raise TypeError(f"shuffle: expected a bool or a Shuffle mode (Shuffle.GLOBAL, Shuffle.FILES, "
                    f"Shuffle.INFILE), got {shuffle!r}")


def _interleave(per_file):
    """One row of each file in turn."""
    out = []
    longest = max((len(rows) for rows in per_file), default=0)
    for i in range(longest):
        out.extend(rows[i] for rows in per_file if i < len(rows))
    return out


class _FileRowsDataset(Dataset):
    """Rows read from a list of files (see the module docstring)."""

    def __init__(self, dataset_files, num_samples, num_parallel_workers, shuffle, num_shards,
                 shard_id):
        super().__init__(num_parallel_workers=num_parallel_workers)
        self.files = _find_files(dataset_files)
        self.num_samples = v.check_optional_int(num_samples, "num_samples", 0,
                                                v.INT64_MAX) or None
        self.shuffle = _check_shuffle(shuffle)
        self.num_shards, self.shard_id = check_shards(num_shards, shard_id)
        self._cache = {}

    def _read_file(self, path):
        raise NotImplementedError

    def _file_rows(self, path):
        stat = os.stat(path)
        key = (path, stat.st_size, stat.st_mtime_ns)
        if key not in self._cache:
            self._cache[key] = self._read_file(path)
        return self._cache[key]

    def _shard(self):
        if self.num_shards is not None:
            return self.num_shards, self.shard_id
        return job_shard()

    def _epoch_rows(self, epoch):
        rng = np.random.default_rng([config.get_seed(), epoch])
        files = list(self.files)
        if self.shuffle in (Shuffle.GLOBAL, Shuffle.ADAPTIVE, Shuffle.PARTIAL, Shuffle.FILES):
            files = [files[i] for i in rng.permutation(len(files))]
        tagged = [(f, r) for f, path in enumerate(files) for r in self._file_rows(path)]
        num_shards, shard_id = self._shard()
        if num_shards is not None and tagged:
            per = -(-len(tagged) // num_shards)
            block = np.resize(np.arange(len(tagged)), per * num_shards)
            tagged = [tagged[i] for i in block[shard_id * per:(shard_id + 1) * per]]
        per_file = [[r for f, r in tagged if f == k] for k in range(len(files))]
        if self.shuffle is Shuffle.INFILE:
            per_file = [[rows[i] for i in rng.permutation(len(rows))] for rows in per_file]
        rows = _interleave(per_file)
        if self.shuffle in (Shuffle.GLOBAL, Shuffle.ADAPTIVE, Shuffle.PARTIAL):
            rows = [rows[i] for i in rng.permutation(len(rows))]
        return rows[:self.num_samples] if self.num_samples else rows

    def _size(self):
        return len(self._epoch_rows(0))

    def _rows(self, epoch):
        yield from self._epoch_rows(epoch)


class TextFileDataset(_FileRowsDataset):
    """The non-empty lines of text files as rows of one string column, ``text``."""

    def __init__(self, dataset_files, num_samples=None, num_parallel_workers=None,
                 shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, cache=None):
        super().__init__(dataset_files, num_samples, num_parallel_workers, shuffle, num_shards,
                         shard_id)

    def _columns(self):
        return ["text"]

    def _read_file(self, path):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text ({exc})") from None
        return [(np.array(line),) for line in lines if line]


def _check_defaults(column_defaults):
    if column_defaults is None:
        return None
    if not isinstance(column_defaults, list):
        raise TypeError(f"column_defaults: expected a list, got "
                        f"{type(column_defaults).__name__}")
    for d in column_defaults:
        if isinstance(d, bool) or not isinstance(d, (int, float, str)):
            raise TypeError(f"column_defaults: a default must be an int, a float or a str, got "
                            f"{d!r}")
    return list(column_defaults)


class CSVDataset(_FileRowsDataset):
    """Rows of CSV files. ``column_names`` (default: the first line of each file) names the
    columns; ``column_defaults`` (one per column: an int, a float or a str) makes a column
    int32, float32 or str and fills its empty fields; without it every column is str."""

    def __init__(self, dataset_files, field_delim=",", column_defaults=None, column_names=None,
                 num_samples=None, num_parallel_workers=None, shuffle=Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, cache=None):
        v.check_type(field_delim, str, "field_delim")
        if len(field_delim) != 1 or field_delim in '"\r\n':
            raise ValueError(f"field_delim: expected one character other than a quote or a line "
                             f"break, got {field_delim!r}")
        self.field_delim = field_delim
        self.column_defaults = _check_defaults(column_defaults)
        self._given_names = v.check_optional_columns(column_names, "column_names")
        self._names = self._given_names
        if self._names is not None and self.column_defaults is not None and \
                len(self.column_defaults) != len(self._names):
            raise ValueError(f"column_defaults: {len(self.column_defaults)} default(s) for "
                             f"{len(self._names)} column(s)")
        super().__init__(dataset_files, num_samples, num_parallel_workers, shuffle, num_shards,
                         shard_id)

    def _records(self, path):
        try:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
            return list(csv.reader(io.StringIO(text), delimiter=self.field_delim, strict=True))
        except (UnicodeDecodeError, csv.Error) as exc:
            raise ValueError(f"{path}: not a valid CSV file ({exc})") from None

    def _columns(self):
        if self._names is None:
            records = self._records(self.files[0])
            if not records:
                raise ValueError(f"{self.files[0]}: empty; give column_names")
            self._names = records[0]
        return list(self._names)

    def _parse(self, field, column, path, line):
        if self.column_defaults is None:
            return np.array(field)
        default = self.column_defaults[column]
        if isinstance(default, str):
            return np.array(field)
        kind = np.int32 if isinstance(default, int) else np.float32
        if field == "":
            return kind(default)
        try:
            return kind(int(field) if kind is np.int32 else float(field))
        except ValueError:
            raise ValueError(f"{path}: line {line}, column {column}: {field!r} is not a "
                             f"{'int' if kind is np.int32 else 'float'}") from None

    def _read_file(self, path):
        names = self._columns()
        records = self._records(path)
        first = 1 if self._given_names is None else 0
        rows = []
        for line, record in enumerate(records[first:], start=first + 1):
            if not record:
                continue
            if len(record) != len(names):
                raise ValueError(f"{path}: line {line} has {len(record)} field(s), expected "
                                 f"{len(names)} ({names})")
            rows.append(tuple(self._parse(f, c, path, line) for c, f in enumerate(record)))
        return rows
