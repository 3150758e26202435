"""Records MindSpore 2.10's casts to and from uint16/uint32/uint64, its wrap-around
arithmetic on them and their safetensors dtype codes into ``uint_oracle.json`` beside this script (``tests/test_uint_dtypes.py``
reads it; it never imports MindSpore).

Run with the separate MindSpore venv, from /tmp:
``cd /tmp && /tmp/ms/bin/python <repo>/tests/data/make_uint_oracle.py`` (MindSpore 2.10, CPU).
"""
import json
import math
import os
import shutil
import struct
import tempfile
import warnings

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

warnings.filterwarnings("ignore")
UINTS = ("uint16", "uint32", "uint64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
# Float sources: in range of every uint (fractions truncate), then out of range of some.
FLOAT_VALUES = [0.0, 2.7, 300.0, 65535.0, 70000.0, -0.5, -2.7, -5.0, -1e10, 1e10,
                4294967296.0, 3e19, math.nan, math.inf, -math.inf]
INT_VALUES = {"int8": [-1, -128, 5, 127], "int16": [-1, -300, 5, 32767],
              "int32": [-1, -300, 5, 70000], "int64": [-1, -300, 5, -2 ** 31, 2 ** 40],
              "uint8": [255, 1, 5, 0]}


def num(v):
    """A JSON value: ints exact, floats with nan/inf as text."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    v = float(v)
    return "nan" if math.isnan(v) else "inf" if v == math.inf else "-inf" if v == -math.inf \
        else v


def run(src_dtype, values, dst_dtype):
    x = Tensor(np.array(values, dtype=np.float64)).astype(getattr(ms, src_dtype)) \
        if src_dtype in FLOATS else Tensor(np.array(values, dtype=src_dtype))
    out = ops.cast(x, getattr(ms, dst_dtype))
    if out.dtype == ms.bfloat16:
        out = out.astype(ms.float32)
    return [num(v) for v in out.asnumpy().tolist()]


def uint_sources(name):
    info = np.iinfo(name)
    return [int(info.max), int(info.max) // 2 + 2, 7, 0]


casts = []
for u in UINTS:
    for f in ("float32", "float64"):
        casts.append({"src": f, "dst": u, "values": [num(v) for v in FLOAT_VALUES],
                      "result": run(f, FLOAT_VALUES, u)})
    for s, vals in INT_VALUES.items():
        casts.append({"src": s, "dst": u, "values": vals, "result": run(s, vals, u)})
    for d in FLOATS + ("int8", "int16", "int32", "int64", "uint8", "bool") + UINTS:
        if d != u:
            vals = uint_sources(u)
            casts.append({"src": u, "dst": d, "values": vals, "result": run(u, vals, d)})

arith = []
for u in UINTS:
    top = int(np.iinfo(u).max)
    big, small = [top, 7, 0, 9], [1, 2, 5, 3]
    for name, x, y in (("add", big, small), ("sub", small, big), ("mul", big, [2, 3, 5, 7]),
                       ("neg", big, None), ("sum", big, None), ("invert", big, None),
                       ("floor_divide", big, small)):
        a = Tensor(np.array(x, u))
        b = None if y is None else Tensor(np.array(y, u))
        out = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b,
               "mul": lambda a, b: a * b, "neg": lambda a, b: ops.neg(a),
               "sum": lambda a, b: ops.sum(a), "invert": lambda a, b: ops.invert(a),
               "floor_divide": lambda a, b: a // b}[name](a, b)
        arith.append({"dtype": u, "op": name, "x": x, "y": y,
                      "result_dtype": str(out.dtype).lower(),
                      "result": [num(v) for v in np.atleast_1d(out.asnumpy()).tolist()]})



def safetensors_codes():
    """The dtype codes MindSpore's safetensors checkpoints give the uint tensors."""
    scratch = tempfile.mkdtemp(prefix="uint_oracle_")
    try:
        path = os.path.join(scratch, "uints")
        ms.save_checkpoint([{"name": u, "data": Tensor(np.arange(3, dtype=u))} for u in UINTS],
                           path, format="safetensors")
        with open(path + ".safetensors", "rb") as f:
            raw = f.read()
        header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
        return {u: header[u]["dtype"] for u in UINTS}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


record = {"made_by": "cd /tmp && /tmp/ms/bin/python tests/data/make_uint_oracle.py",
          "mindspore_version": ms.__version__, "casts": casts, "arith": arith,
          "is_signed": {u: Tensor(np.array([1], u)).is_signed() for u in UINTS},
          "safetensors_codes": safetensors_codes()}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "uint_oracle.json"),
          "w") as f:
    json.dump(record, f, indent=1)
    f.write("\n")
