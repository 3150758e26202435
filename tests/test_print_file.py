"""``set_context(print_file_path=...)``: the Print primitive writes MindSpore's print-file
format, which ``parse_print`` reads. Judged by MindSpore 2.10's own print schema
(``tests/data/print/``, made by ``tests/data/make_print_fixtures.py``)."""
import json
import os

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore.ops import operations as P

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "print")
with open(os.path.join(DATA, "expected.json")) as _f:
    EXPECTED = json.load(_f)


@pytest.fixture(autouse=True)
def _screen_again():
    yield
    ms.set_context(print_file_path=None)


def _calls():
    """The fixtures' two Print calls (make_print_fixtures.calls)."""
    return [["loss is", np.array(0.25, np.float32), "weights:",
             np.arange(6, dtype=np.float32).reshape(2, 3) / 4],
            [np.array([[1, -2], [3, 4]], np.int32), "mask", np.array([True, False]),
             np.array(7, np.int64), np.array([1.5, -0.5], np.float16)]]


def _record(values):
    out = []
    for v in values:
        if isinstance(v, str):
            out.append({"str": v})
        else:
            arr = v.asnumpy()
            out.append({"dtype": str(arr.dtype), "shape": list(arr.shape),
                        "value": arr.astype(np.float64).tolist()})
    return out


def test_parse_print_reads_what_mindsporess_schema_writes():
    assert _record(ms.parse_print(os.path.join(DATA, "ms_print.pb"))) == EXPECTED


@pytest.mark.parametrize("backend", available_backends())
def test_print_writes_mindspores_bytes_on_every_backend(backend, tmp_path):
    use_backend(backend)
    path = str(tmp_path / "out" / "print.pb")
    ms.set_context(print_file_path=path)
    assert ms.get_context("print_file_path") == os.path.realpath(path)
    for call in _calls():
        P.Print()(*[v if isinstance(v, str) else ms.Tensor(v) for v in call])
    if backend == "numpy":
        with open(path, "rb") as f, open(os.path.join(DATA, "ms_print.pb"), "rb") as g:
            assert f.read() == g.read()
    got = _record(ms.parse_print(path))
    for g, want in zip(got, EXPECTED):  # a backend may narrow int64 (jax without x64)
        if "dtype" in want and g.get("dtype") != want["dtype"]:
            assert np.dtype(g["dtype"]).kind == np.dtype(want["dtype"]).kind
            g["dtype"] = want["dtype"]
    assert got == EXPECTED
    # MindSpore's classes parsed the checked-in mscore file into the same values
    with open(os.path.join(DATA, "ms_read_mscore.json")) as f:
        read = json.load(f)["values"]
    assert [{k: v for k, v in r.items() if k != "tensor_type"} for r in read] == EXPECTED


def test_print_file_path_as_mindspore_resolves_it(tmp_path, capsys):
    with pytest.raises(TypeError, match="print_file_path"):  # MindSpore: TypeError
        ms.set_context(print_file_path=1)
    with pytest.raises(OSError, match="directory"):
        ms.set_context(print_file_path=str(tmp_path))
    existing = tmp_path / "p.pb"
    existing.write_bytes(b"keep")
    ms.set_context(print_file_path=str(existing))
    stamped = ms.get_context("print_file_path")
    assert stamped.startswith(str(existing) + ".") and stamped.rsplit(".", 1)[1].isdigit()
    P.Print()("x", 1.5, (ms.Tensor(np.zeros((0,), np.float32)),))
    assert existing.read_bytes() == b"keep"  # never overwritten
    values = ms.parse_print(stamped)
    assert values[0] == "x" and float(values[1].asnumpy()) == 1.5
    assert values[1].dtype == ms.float32 and values[2].shape == (0,)
    assert capsys.readouterr().out == ""  # the file, not the screen
    ms.set_context(print_file_path="")
    assert ms.get_context("print_file_path") == ""
    P.Print()("on screen")
    assert capsys.readouterr().out == "on screen\n"


def _pb2_record(values):
    """The same record built with protobuf's generated classes (the reference encoder)."""
    from mscore.train.proto import print_pb2
    msg = print_pb2.Print()
    for v in values:
        item = msg.value.add()
        if isinstance(v, str):
            item.desc = v
            continue
        item.tensor.dims.extend(v.shape)
        dtype = ms.common.dtype.from_numpy_dtype(v.dtype.newbyteorder("="))
        item.tensor.tensor_type = dtype.tensor_type
        item.tensor.tensor_content = v.astype(v.dtype.newbyteorder("<")).tobytes()
    return msg.SerializeToString()


def test_print_record_is_what_protobuf_serializes():
    """Print's own encoder gives protobuf's bytes: every dtype, 0-d, empty and large shapes
    (multi-byte varints), big-endian input, long and non-ASCII text."""
    from ml_dtypes import bfloat16

    from mscore.common.printing import print_record
    rng = np.random.default_rng(5)
    values = ["loss", "é" * 100, np.array(1.5, np.float32), np.zeros((0,), np.float64),
              rng.standard_normal((3, 200)).astype(">f4"), np.array([1.5, -2], bfloat16),
              np.array([[True, False]]), rng.integers(-9, 9, (2, 130)).astype(np.int64)]
    values += [np.arange(4, dtype=d).reshape(2, 2) for d in
               (np.float16, np.float64, np.int8, np.int16, np.int32, np.uint8)]
    assert print_record(values) == _pb2_record(values)
    # Python numbers become 0-d bool, int64 and float32 tensors
    assert print_record([True, 3, 2.5]) == _pb2_record(
        [np.array(True), np.array(3, np.int64), np.array(2.5, np.float32)])
