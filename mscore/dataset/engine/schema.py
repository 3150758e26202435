"""``Schema`` (column names, types and shapes, as MindSpore's JSON schema files hold them) and
``RandomDataset`` (random rows of a schema)."""
from __future__ import annotations

import json
import os

import numpy as np

from mscore.common import dtype as mdt
from mscore.dataset import config
from mscore.dataset.engine import validators as v
from mscore.dataset.engine.mappable import MappableDataset

__all__ = ["Schema", "RandomDataset", "type_name"]

_TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "string", "bytes")


def type_name(de_type):
    """MindSpore's schema name (``'int32'``, ``'string'``, ...) of an mscore dtype, a numpy
    dtype or a name; ``TypeError`` for anything else."""
    if isinstance(de_type, str):
        name = {"str": "string", "bool_": "bool"}.get(de_type, de_type)
        if name in _TYPES:
            return name
        raise TypeError(f"de_type: unknown column type {de_type!r}")
    if isinstance(de_type, mdt.DType):
        return type_name(np.dtype(de_type.np_dtype).name)
    try:
        dt = np.dtype(de_type)
    except TypeError:
        raise TypeError(f"de_type: unknown column type {de_type!r}") from None
    if dt.kind == "U":
        return "string"
    if dt.kind == "S":
        return "bytes"
    return type_name(dt.name)


def _check_shape(shape):
    if shape is None:
        return None
    if not isinstance(shape, list):
        raise TypeError(f"shape: expected a list of ints, got {type(shape).__name__}")
    for i, dim in enumerate(shape):
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"shape: shape[{i}] must be an int, got {dim!r}")
        if dim < -1 or dim == 0:
            raise ValueError(f"shape: shape[{i}] must be -1 (any size) or positive, got {dim}")
    return list(shape)


class Schema:
    """Column names, types and shapes; read from a JSON schema file (``{"columns": {name:
    {"type": ..., "rank": ..., "shape": [...]}}, "numRows": n}``) or built with
    :meth:`add_column`."""

    def __init__(self, schema_file=None):
        self.columns = []
        self.num_rows = None
        self.dataset_type = ""
        self.schema_file = schema_file
        if schema_file is not None:
            v.check_type(schema_file, str, "schema_file")
            if not os.path.isfile(schema_file):
                raise ValueError(f"schema_file: the file {schema_file} does not exist or "
                                 f"cannot be read")
            try:
                with open(schema_file, encoding="utf-8") as f:
                    obj = json.load(f)
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ValueError(f"{schema_file}: not a JSON schema file ({exc})") from None
            try:
                self.from_json(obj)
            except (TypeError, ValueError, RuntimeError) as exc:
                raise ValueError(f"{schema_file}: {exc}") from None

    def add_column(self, name, de_type, shape=None):
        """Add column ``name`` of type ``de_type`` (an mscore/numpy dtype or a name such as
        ``'int32'``) and ``shape`` (a list; -1 for a dimension of any size)."""
        v.check_type(name, str, "name")
        self.columns.append({"name": name, "type": type_name(de_type),
                             "shape": _check_shape(shape)})

    def parse_columns(self, columns):
        """Set the columns from ``{name: {"type": ..., "shape": [...]}}`` or a list of
        ``{"name": ..., "type": ..., "shape": [...]}``."""
        if isinstance(columns, dict):
            items = [dict(spec, name=name) for name, spec in columns.items()]
        elif isinstance(columns, list):
            items = columns
        else:
            raise TypeError(f"columns: expected a dict or a list, got {type(columns).__name__}")
        self.columns = []
        for spec in items:
            if not isinstance(spec, dict) or "name" not in spec or "type" not in spec:
                raise RuntimeError(f"columns: every column needs a name and a type, got {spec!r}")
            self.add_column(spec["name"], spec["type"], spec.get("shape"))

    def from_json(self, json_obj):
        """Set the schema from a parsed JSON object (``columns``, ``numRows``,
        ``datasetType``)."""
        if not isinstance(json_obj, dict) or "columns" not in json_obj:
            raise RuntimeError("the schema needs a 'columns' entry")
        self.parse_columns(json_obj["columns"])
        if "numRows" in json_obj:
            self.num_rows = v.check_int(json_obj["numRows"], "numRows", 0)
        self.dataset_type = str(json_obj.get("datasetType", ""))

    def _json_obj(self):
        cols = []
        for c in self.columns:
            entry = {"name": c["name"], "type": c["type"],
                     "rank": 1 if c["shape"] is None else len(c["shape"])}
            if c["shape"] is not None:
                entry["shape"] = c["shape"]
            cols.append(entry)
        obj = {"columns": cols}
        if self.num_rows is not None:
            obj["numRows"] = self.num_rows
        if self.dataset_type:
            obj["datasetType"] = self.dataset_type
        return obj

    def to_json(self):
        """The schema as a JSON string."""
        return json.dumps(self._json_obj(), indent=2, sort_keys=True)

    def __str__(self):
        return self.to_json()



def _random_value(rng, type_, shape):
    shape = [int(rng.integers(1, 33)) if d == -1 else d for d in (shape or [])]
    if type_ in ("string", "bytes"):
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        words = ["".join(rng.choice(letters, int(rng.integers(1, 9)))) for _ in
                 range(int(np.prod(shape)) if shape else 1)]
        arr = np.array(words).reshape(shape)
        return arr.astype(np.bytes_) if type_ == "bytes" else arr
    dt = np.dtype(type_)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    return rng.standard_normal(size=shape).astype(dt)


class RandomDataset(MappableDataset):
    """``total_rows`` random rows of ``schema`` (a ``Schema`` or a schema file; without one,
    a few random columns). ``columns_list`` keeps only those columns. Row ``i`` is the same
    for the same pipeline seed."""

    def __init__(self, total_rows=None, schema=None, columns_list=None, num_samples=None,
                 num_parallel_workers=None, cache=None, shuffle=None, num_shards=None,
                 shard_id=None):
        self._seed = config.get_seed()
        meta = np.random.default_rng([self._seed, 2 ** 31])
        if total_rows is not None:
            v.check_int(total_rows, "total_rows", 0, v.INT32_MAX)
        if schema is not None and not isinstance(schema, Schema):
            schema = Schema(schema)
        if schema is None:
            schema = Schema()
            for i in range(int(meta.integers(1, 5))):
                schema.add_column(f"c{i}", str(meta.choice(["uint8", "int32", "float32"])),
                                  [int(d) for d in meta.integers(1, 9, int(meta.integers(1, 4)))])
        self.schema = schema
        cols = schema.columns
        if columns_list is not None:
            columns_list = v.check_columns(columns_list, "columns_list")
            v.missing_columns(columns_list, [c["name"] for c in cols], "columns_list")
            cols = [c for c in cols if c["name"] in columns_list]
        self._cols = cols
        self.total_rows = total_rows or schema.num_rows or int(meta.integers(1, 1025))
        super().__init__(num_samples, shuffle, None, num_shards, shard_id, num_parallel_workers)

    def _columns(self):
        return [c["name"] for c in self._cols]

    def _len(self):
        return self.total_rows

    def _get(self, index):
        rng = np.random.default_rng([self._seed, index])
        return tuple(_random_value(rng, c["type"], c["shape"]) for c in self._cols)
