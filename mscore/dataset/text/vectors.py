"""Pre-trained word vectors (``Vectors``, ``GloVe``, ``FastText``, ``CharNGram``) and the
``ToVectors`` transform of ``mindspore.dataset.text``.

Files are read as MindSpore 2.10 reads them: UTF-8 lines of a token and its values split at
single spaces; while the vector size is still unknown, a line of exactly two fields is a
header (``count dim``) and is skipped; the first data line fixes the size; a later token that
repeats an earlier one is ignored; ``max_vectors`` (``0`` or ``None``: all) keeps the first
lines. Where MindSpore reads a field that is no number as 0, mscore refuses the file: every
problem with a file is a ``ValueError`` naming it (MindSpore raises ``RuntimeError`` with the
same first words).
"""
from __future__ import annotations

import os
import re

import numpy as np

from mscore.dataset.text._checks import (
    INT32_MAX,
    check_filename,
    check_range,
    string_array,
    type_check,
)
from mscore.dataset.text.transforms import ascii_lower
from mscore.dataset.transforms.transforms import PyTensorOperation

__all__ = ["Vectors", "GloVe", "FastText", "CharNGram", "ToVectors"]

_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                     re.IGNORECASE)


def _fields(line):
    """The fields of a line split at each space, as C++'s ``getline(stream, field, ' ')``
    gives them (no empty field after a final space)."""
    fields = line.split(" ")
    if fields[-1] == "":
        fields.pop()
    return fields


def _lines(path, who):
    """The lines of the text file at ``path`` (without line ends)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ValueError(f"{who}: invalid file, failed to read {path} ({exc.strerror}).") \
            from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{who}: invalid file, {path} is not UTF-8 text (byte "
                         f"{exc.start}).") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _values(fields, path, number):
    """The float32 values of one data line."""
    for field in fields:
        if not _NUMBER.fullmatch(field):
            raise ValueError(f"Vectors: invalid file {path}, line {number}: {field!r} is not "
                             f"a number.")
    with np.errstate(over="ignore"):
        return np.array([float(field) for field in fields], dtype=np.float64).astype(
            np.float32)


def _parse(path, max_vectors):
    """``({token: row}, matrix)`` of the vectors file at ``path``."""
    lines = _lines(path, "Vectors")
    first = 0
    while first < len(lines) and len(_fields(lines[first])) == 2:
        first += 1
    data = lines[first:]
    if not data:
        raise ValueError(f"Vectors: invalid file, file is empty. ({path})")
    if max_vectors:
        data = data[:max_vectors]
    dim = len(_fields(data[0])) - 1
    lines = [_fields(line) for line in data]
    for number, fields in enumerate(lines, start=first + 1):
        if len(fields) <= 1:
            raise ValueError(f"Vectors: token with 1-dimensional vector. ({path}, line "
                             f"{number})")
        if len(fields) - 1 != dim:
            raise ValueError(f"Vectors: all vectors must have the same number of dimensions, "
                             f"but got dim {len(fields) - 1} while expecting {dim} ({path}, "
                             f"line {number})")
    index, rows = {}, []
    for number, fields in enumerate(lines, start=first + 1):
        values = _values(fields[1:], path, number)
        if fields[0] not in index:
            index[fields[0]] = len(rows)
            rows.append(values)
    return index, np.stack(rows)


def _check_from_file(file_path, max_vectors):
    type_check(file_path, (str,), "file_path")
    check_filename(file_path)
    if max_vectors is not None:
        type_check(max_vectors, (int,), "max_vectors")
        check_range(max_vectors, 0, INT32_MAX, "max_vectors")


class Vectors:
    """Pre-trained word embeddings: a token-to-vector table read by :meth:`from_file`, used
    by :class:`ToVectors`."""

    def __init__(self, index=None, matrix=None):
        self._index = dict(index or {})
        self._matrix = (np.zeros((0, 0), np.float32) if matrix is None
                        else np.asarray(matrix, np.float32))

    @property
    def dim(self):
        """The size of each vector."""
        return self._matrix.shape[1]

    @classmethod
    def _open(cls, file_path):
        """Refuse a path that is no readable file (the message of MindSpore's class)."""
        if not os.path.exists(os.path.realpath(file_path)):
            raise ValueError(f"Vectors: get real path failed, path: {file_path}")

    @classmethod
    def from_file(cls, file_path, max_vectors=None):
        """Read the vectors file at ``file_path`` (lines ``token v1 v2 ...``), keeping the
        first ``max_vectors`` vectors (``None`` or 0: all)."""
        _check_from_file(file_path, max_vectors)
        cls._open(file_path)
        return cls(*_parse(file_path, max_vectors))

    def lookup(self, token, unk, lower_case_backup):
        """The vector of ``token`` (``unk`` when it is unknown). With ``lower_case_backup``
        MindSpore 2.10 looks up the token with A-Z lower-cased, and only that."""
        if lower_case_backup:
            token = ascii_lower(token)
        row = self._index.get(token)
        return unk if row is None else self._matrix[row]


class _NamedFile(Vectors):
    """Vectors whose file must exist and carry a name of the expected form."""
    _pattern = None
    _expected = ""

    @classmethod
    def _open(cls, file_path):
        who = cls.__name__
        if not os.path.isfile(os.path.realpath(file_path)):
            raise ValueError(f"{who}: invalid file, failed to open {who} file. ({file_path})")
        if not cls._pattern.fullmatch(os.path.basename(file_path)):
            raise ValueError(f"{who}: invalid file, can not find file '{cls._expected}', but "
                             f"got: {file_path}")


class GloVe(_NamedFile):
    """Global Vectors (GloVe) pre-trained word embeddings: a file named
    ``glove.6B.<anything without a dot>.txt``."""
    _pattern = re.compile(r"glove\.6B\.[^.]*\.txt")
    _expected = "glove.6B.*.txt"


class FastText(_NamedFile):
    """FastText pre-trained word embeddings: a file whose name ends in ``vec`` after its
    last dot (``wiki.en.vec``)."""
    _pattern = re.compile(r"(?:.*\.)?vec")
    _expected = "*.vec"


class CharNGram(Vectors):
    """CharNGram pre-trained embeddings: a token's vector is the mean of the vectors of its
    character 2-, 3- and 4-grams (keys ``"2gram-ab"``, with ``#BEGIN#`` / ``#END#`` around
    the token; the characters are UTF-8 bytes, as in MindSpore), or the unknown vector when
    none is known."""

    def lookup(self, token, unk, lower_case_backup):
        """The mean of the known n-gram vectors of ``token``."""
        if token == "<unk>":
            return unk
        if lower_case_backup:
            token = ascii_lower(token)
        chars = [b"#BEGIN#"] + [bytes([b]) for b in token.encode("utf-8")] + [b"#END#"]
        total, count = np.zeros(self.dim, np.float32), 0
        for n in (2, 3, 4):
            for i in range(len(chars) - n + 1):
                key = f"{n}gram-".encode() + b"".join(chars[i:i + n])
                row = self._byte_index.get(key)
                if row is not None:
                    total += self._matrix[row]
                    count += 1
        return total / np.float32(count) if count else unk

    @property
    def _byte_index(self):
        if not hasattr(self, "_bytes"):
            self._bytes = {token.encode("utf-8"): row for token, row in self._index.items()}
        return self._bytes


class ToVectors(PyTensorOperation):
    """Look up the vector of each token of a string tensor in ``vectors``: a float32
    ``(tokens, dim)`` array, or ``(dim,)`` for a single token (as MindSpore gives it). An
    unknown token gets ``unk_init`` (zeros by default); ``lower_case_backup`` looks the
    tokens up with A-Z lower-cased."""

    def __init__(self, vectors, unk_init=None, lower_case_backup=False):
        type_check(vectors, (Vectors,), "vectors")
        if unk_init is not None:
            type_check(unk_init, (list, tuple), "unk_init")
            for i, value in enumerate(unk_init):
                type_check(value, (int, float), f"unk_init[{i}]")
        type_check(lower_case_backup, (bool,), "lower_case_backup")
        self.vectors, self.unk_init = vectors, unk_init
        self.lower_case_backup = lower_case_backup

    def _unknown(self):
        dim = self.vectors.dim
        if not self.unk_init:
            return np.zeros(dim, np.float32)
        if len(self.unk_init) != dim:
            raise RuntimeError(f"ToVectors: unk_init must be the same length as vectors, but "
                               f"got unk_init: {len(self.unk_init)} and vectors: {dim}")
        return np.array(self.unk_init, np.float32)

    def __call__(self, tokens):
        arr = string_array(tokens, "ToVectors: input tensor type should be string.")
        unk = self._unknown()
        rows = [self.vectors.lookup(token, unk, self.lower_case_backup)
                for token in arr.reshape(-1).tolist()]
        out = np.array(rows, np.float32).reshape(len(rows), self.vectors.dim)
        return out[0] if len(rows) == 1 else out
