"""uint16, uint32 and uint64 through mscore's public API on every backend, against MindSpore
2.10's recorded casts and wrap-around arithmetic (``tests/data/uint_oracle.json``, made by
``cd /tmp && /tmp/ms/bin/python tests/data/make_uint_oracle.py``). A backend that declares
them computes MindSpore's answers where MindSpore's are defined and the contract's elsewhere;
one that leaves them out (torch) refuses them with its reason."""
import json
import math
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from _helpers import each_backend

import mscore as ms
import mscore.numpy as mnp
from mscore import ops
from mscore.plugin.registry import get_registry

ORACLE = json.loads((Path(__file__).parent / "data" / "uint_oracle.json").read_text())
UINTS = ("uint16", "uint32", "uint64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
# MindSpore 2.10's CPU kernels compute these through float64 and lose uint64's low bits
# (ReduceSum of [2**64 - 1, 7, 0, 9] is 0, FloorDiv of 2**64 - 1 by 1 is 0); the true
# wrap-around result is what mscore must give.
MINDSPORE_CPU_ROUNDS = {("uint64", "sum"), ("uint64", "floor_divide")}

backend = each_backend(scope="module")


@pytest.fixture
def declared(backend):
    """The backend under test; a backend that does not declare the uint dtypes is skipped
    with its reason (``test_declared_or_refused_with_the_reason`` checks its refusal)."""
    spec = get_registry().spec(backend)
    if "uint16" not in spec.dtypes:
        pytest.skip(f"uint16 not declared by {backend}: {spec.undeclared_reason('uint16')}")
    return backend


def test_declared_or_refused_with_the_reason(backend):
    """A backend declares all three uint dtypes and holds them, or none, gives the reason in
    its spec and refuses them with that reason."""
    spec = get_registry().spec(backend)
    declared = [u for u in UINTS if u in spec.dtypes]
    if declared:
        assert declared == list(UINTS), f"{backend} declares only {declared}"
        for u in UINTS:
            assert ms.Tensor(np.array([1, 2], u)).dtype is getattr(ms, u)
        return
    for u in UINTS:
        reason = spec.undeclared_reason(u)
        assert reason, f"{backend} leaves {u} out without saying why"
        with pytest.raises(TypeError, match=rf"does not support {u} \(" + re.escape(reason)):
            ms.Tensor(np.array([1, 2], u))


def _number(v):
    return float(v) if isinstance(v, str) else v


def _tensor(values, dtype):
    if dtype in FLOATS:
        return ms.Tensor(np.array([_number(v) for v in values], np.float64)).astype(
            getattr(ms, dtype))
    return ms.Tensor(np.array(values, dtype=np.dtype(dtype if dtype != "bool" else bool)))


def _values(t):
    a = t.asnumpy()
    if a.dtype.kind in "biu":
        return a.tolist()
    return a.astype(np.float64).tolist()


def _same(got, want):
    if isinstance(want, str) or isinstance(want, float):
        want = float(want)
        return math.isnan(got) if math.isnan(want) else got == want
    return got == want and type(got) is type(want)


def _saturated(value, dtype):
    """The contract's float -> integer cast (truncate, saturate, NaN -> 0)."""
    info = np.iinfo(dtype)
    if math.isnan(value):
        return 0
    return int(min(max(math.trunc(value), int(info.min)), int(info.max))) \
        if math.isfinite(value) else (int(info.max) if value > 0 else int(info.min))


def _in_range(value, dtype):
    info = np.iinfo(dtype)
    return math.isfinite(value) and int(info.min) <= math.trunc(value) <= int(info.max)


@pytest.mark.parametrize("uint", UINTS)
def test_casts_as_mindspore(declared, uint):
    """Integer <-> integer casts wrap and unsigned -> float rounds, as MindSpore; float ->
    unsigned is MindSpore's where the truncated value fits, else it saturates (the contract:
    MindSpore's CPU cast gives platform values there, e.g. 65534 for -2.7 -> uint16)."""
    records = [r for r in ORACLE["casts"] if uint in (r["src"], r["dst"])]
    assert len(records) == 21     # 7 sources into it, 12 targets from it, 2 other uints
    for rec in records:
        got = _values(ops.cast(_tensor(rec["values"], rec["src"]), getattr(ms, rec["dst"])))
        for v, g, w in zip(rec["values"], got, rec["result"], strict=True):
            if rec["src"] in FLOATS and not _in_range(_number(v), rec["dst"]):
                w = _saturated(_number(v), rec["dst"])
            assert _same(g, w), f"{rec['src']} {v} -> {rec['dst']}: got {g!r}, want {w!r}"


def _wrapped(op, x, y, bits):
    m = 1 << bits
    return {"add": lambda: [(a + b) % m for a, b in zip(x, y)],
            "sub": lambda: [(a - b) % m for a, b in zip(x, y)],
            "mul": lambda: [(a * b) % m for a, b in zip(x, y)],
            "neg": lambda: [-a % m for a in x],
            "sum": lambda: [sum(x) % m],
            "invert": lambda: [m - 1 - a for a in x],
            "floor_divide": lambda: [a // b for a, b in zip(x, y)]}[op]()


@pytest.mark.parametrize("i", range(len(ORACLE["arith"])),
                         ids=[f"{r['op']}-{r['dtype']}" for r in ORACLE["arith"]])
def test_arithmetic_wraps_as_mindspore(declared, i):
    """add/sub/mul/neg/sum wrap modulo 2**bits, invert flips every bit and floor division
    of MAX by 1 is MAX, in the operands' dtype."""
    rec = ORACLE["arith"][i]
    dtype, op = rec["dtype"], rec["op"]
    want = _wrapped(op, rec["x"], rec["y"], np.iinfo(dtype).bits)
    if (dtype, op) in MINDSPORE_CPU_ROUNDS:
        assert rec["result"] != want, f"MindSpore now gives the exact {op} on {dtype}"
    else:
        assert rec["result"] == want, (op, dtype, rec["result"])
    x = ms.Tensor(np.array(rec["x"], dtype))
    y = None if rec["y"] is None else ms.Tensor(np.array(rec["y"], dtype))
    out = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
           "neg": lambda: ops.neg(x), "sum": lambda: ops.sum(x),
           "invert": lambda: mnp.invert(x), "floor_divide": lambda: x // y}[op]()
    assert out.dtype.name == rec["result_dtype"]
    assert np.atleast_1d(out.asnumpy()).tolist() == want


def test_is_signed_as_mindspore(declared):
    for name, want in ORACLE["is_signed"].items():
        assert ms.Tensor(np.array([1, 2], name)).is_signed() is want


def test_safetensors_checkpoint_codes_as_mindspore(declared, tmp_path):
    """A safetensors checkpoint names the uint tensors' dtypes as MindSpore's does and loads
    them back exactly."""
    params = {u: np.array([int(np.iinfo(u).max), 0, 7], u) for u in UINTS}
    path = tmp_path / "uints"
    ms.save_checkpoint([{"name": u, "data": ms.Tensor(a)} for u, a in params.items()],
                       str(path), format="safetensors")
    raw = (tmp_path / "uints.safetensors").read_bytes()
    header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
    assert {u: header[u]["dtype"] for u in UINTS} == ORACLE["safetensors_codes"]
    loaded = ms.load_checkpoint(str(tmp_path / "uints.safetensors"), format="safetensors")
    for u, a in params.items():
        assert loaded[u].dtype is getattr(ms, u)
        np.testing.assert_array_equal(loaded[u].asnumpy(), a)
