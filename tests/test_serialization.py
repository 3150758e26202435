"""Checkpoints: exact round trips on every backend and dtype, cross-backend loading, files
made by other tools (hand-encoded protobuf wire bytes, google.protobuf descriptors, the
safetensors package), large-tensor splitting, CRC footers, atomic and asynchronous saving,
load_param_into_net, and argument checks."""
import binascii
import os
import pickle
import signal
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest
from _helpers import numpy_context_each_test, use_backend

import mscore as ms
from mscore import nn
from mscore.common import dtype as mdt
from mscore.plugin.registry import get_registry
from mscore.train import serialization as ser
from mscore.train.serialization import (
    _checkpoint,
    _ckpt_format,
    load_checkpoint,
    load_param_into_net,
    save_checkpoint,
)

DATA = os.path.join(os.path.dirname(__file__), "data")
BACKENDS = get_registry().names()
DTYPES = list(mdt.ALL_DTYPES)
FORMATS = ["ckpt", "safetensors"]




_numpy_context = numpy_context_each_test()


class CNN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 4 * 4, 10)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.bn(self.conv(x))))))


def _bits(arr):
    """The exact bit pattern of a numpy array (so nan payloads and -0.0 compare too)."""
    arr = np.asarray(arr)
    if arr.dtype == np.bool_:
        return arr.view(np.uint8)
    return arr.view(f"u{arr.dtype.itemsize}") if arr.dtype.itemsize > 1 else arr.view(np.uint8)


def _sample(dtype, shape, rng):
    """Values of ``dtype`` that exercise every bit: random bit patterns for floats (nan
    payloads, infinities, subnormals, -0.0 included), the full range for ints."""
    if dtype is mdt.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    np_dtype = dtype.np_dtype
    size = np_dtype.itemsize
    raw = rng.integers(0, 256, (int(np.prod(shape, dtype=np.int64)) * size,), dtype=np.uint8)
    arr = raw.view(np_dtype).reshape(shape).copy()
    if dtype.is_floating and arr.size >= 4:
        flat = arr.reshape(-1)
        flat[:4] = np.array([np.inf, -np.inf, -0.0, 1e-40 if size >= 4 else 1e-7],
                            dtype=np.float64).astype(np_dtype)
    return arr


def _save_load(obj, path, fmt, **kw):
    save_checkpoint(obj, str(path), format=fmt, **kw)
    return load_checkpoint(f"{path}.{fmt}", format=fmt)


# -- exact round trips on every backend and dtype -------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_round_trip_every_dtype_is_exact(backend, fmt, tmp_path):
    spec = use_backend(backend)
    rng = np.random.default_rng(0)
    items, expected = [], {}
    for dtype in DTYPES:
        if dtype.name not in spec.dtypes:
            continue
        for shape in [(), (0,), (1,), (3, 5), (2, 1, 4)]:
            name = f"p.{dtype.name}.{'x'.join(map(str, shape)) or 'scalar'}"
            arr = _sample(dtype, shape, rng)
            t = ms.Tensor(arr)
            if t.dtype is not dtype:
                pytest.fail(f"{backend}: Tensor({dtype}) came back as {t.dtype}")
            items.append({"name": name, "data": ms.Parameter(t, name=name)})
            expected[name] = t.asnumpy()  # what the backend holds (it may canonicalise nans)
    loaded = _save_load(items, tmp_path / "rt", fmt)
    assert list(loaded) == list(expected) or set(loaded) == set(expected)
    for name, want in expected.items():
        got = loaded[name]
        assert isinstance(got, ms.Parameter) and got.name == name
        assert got.dtype is mdt.from_numpy_dtype(want.dtype), name
        assert tuple(got.shape) == want.shape, name
        np.testing.assert_array_equal(_bits(got.asnumpy()), _bits(want), err_msg=name)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_cell_round_trip_into_a_fresh_network(backend, fmt, tmp_path):
    use_backend(backend)
    ms.set_seed(1)
    net = CNN()
    net.set_train(True)
    net(ms.Tensor(np.random.default_rng(0).standard_normal((2, 1, 8, 8)).astype(np.float32)))
    want = {p.name: p.asnumpy() for p in net.get_parameters()}
    save_checkpoint(net, str(tmp_path / "cnn"), format=fmt,
                    append_dict={"epoch_num": 7, "lr": 0.25, "note": "ünïcode ✓", "ok": True})
    ms.set_seed(2)
    fresh = CNN()
    assert any(not np.array_equal(p.asnumpy(), want[p.name]) for p in fresh.get_parameters())
    loaded = load_checkpoint(str(tmp_path / f"cnn.{fmt}"), net=fresh, format=fmt)
    for p in fresh.get_parameters():
        np.testing.assert_array_equal(p.asnumpy(), want[p.name], err_msg=p.name)
    assert loaded["note"] == "ünïcode ✓"
    assert loaded["epoch_num"].dtype is mdt.int64 and int(loaded["epoch_num"]) == 7
    assert loaded["lr"].dtype is mdt.float32 and float(loaded["lr"]) == 0.25
    assert loaded["ok"].dtype is mdt.bool_ and bool(loaded["ok"]) is True


_PAIRS = [(s, d) for s in BACKENDS for d in BACKENDS]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("src,dst", _PAIRS)
def test_checkpoint_written_on_one_backend_loads_on_another(src, dst, fmt, tmp_path):
    use_backend(src)
    ms.set_seed(3)
    net = CNN()
    half = ms.Parameter(ms.Tensor(np.linspace(-2, 2, 12).astype(ml_dtypes.bfloat16)),
                        name="extra.bf16")
    want = {p.name: p.asnumpy() for p in net.get_parameters()}
    want["extra.bf16"] = half.asnumpy()
    items = [{"name": p.name, "data": p} for p in net.get_parameters()]
    save_checkpoint(items + [{"name": "extra.bf16", "data": half}], str(tmp_path / "x"),
                    format=fmt)
    use_backend(dst)
    ms.set_seed(4)
    fresh = CNN()
    loaded = load_checkpoint(str(tmp_path / f"x.{fmt}"), format=fmt)
    not_loaded, unused = load_param_into_net(fresh, loaded)
    assert not_loaded == [] and unused == ["extra.bf16"]
    for p in fresh.get_parameters():
        np.testing.assert_array_equal(p.asnumpy(), want[p.name], err_msg=p.name)
    assert loaded["extra.bf16"].dtype is mdt.bfloat16
    np.testing.assert_array_equal(_bits(loaded["extra.bf16"].asnumpy()), _bits(want["extra.bf16"]))


# -- files written by other tools ------------------------------------------------------------------
def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number, wire_type, payload):
    key = _varint(number << 3 | wire_type)
    if wire_type == 2:
        return key + _varint(len(payload)) + payload
    return key + payload


def _hand_value(tag, dims, tensor_type, content, packed=False):
    """One serialized Checkpoint{value: Value{tag, TensorProto}} from the field facts:
    Checkpoint.value = 1; Value.tag = 1, Value.tensor = 2; TensorProto.dims = 1 (int64),
    tensor_type = 2, tensor_content = 3."""
    if packed:
        dims_bytes = _field(1, 2, b"".join(_varint(d) for d in dims)) if dims else b""
    else:
        dims_bytes = b"".join(_field(1, 0, _varint(d)) for d in dims)
    tensor = dims_bytes + _field(2, 2, tensor_type.encode()) + _field(3, 2, content)
    value = _field(1, 2, tag.encode()) + _field(2, 2, tensor)
    return _field(1, 2, value)


def _hand_checkpoint():
    """A MindSpore-style file encoded byte by byte, and the values it holds."""
    w = np.arange(12, dtype="<f4").reshape(3, 4) / 8
    big = np.arange(10, dtype="<i8") - 5
    bf = np.array([1.5, -2.0, 0.0078125], dtype=ml_dtypes.bfloat16)
    pieces = [
        _hand_value("fc.weight", [3, 4], "Float32", w.tobytes()),
        # a "large" tensor split MindSpore's way: full dims in each piece, flat byte slices
        _hand_value("table", [2, 5], "Int64", big[:4].tobytes()),
        _hand_value("table", [2, 5], "Int64", big[4:7].tobytes()),
        _hand_value("table", [2, 5], "Int64", big[7:].tobytes()),
        _hand_value("step", [0], "Int32", np.array(42, "<i4").tobytes()),  # a 0-d tensor
        _hand_value("half", [3], "BFloat16", bf.view("<u2").tobytes(), packed=True),
        _hand_value("mask", [4], "Bool", bytes([1, 0, 0, 1])),
        _hand_value("random_op", [1], "Int64", np.array(9, "<i8").tobytes()),  # skipped
        _hand_value("name", [0], "str", "résumé".encode("utf-32-le")),
    ]
    body = b"".join(pieces)
    expected = {"fc.weight": w, "table": big.reshape(2, 5), "step": np.array(42, np.int32),
                "half": bf, "mask": np.array([True, False, False, True]), "name": "résumé"}
    return body, expected


def _check_expected(loaded, expected):
    assert set(loaded) == set(expected)
    for name, want in expected.items():
        if isinstance(want, str):
            assert loaded[name] == want
            continue
        got = loaded[name].asnumpy()
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=name)


def test_loads_a_checkpoint_encoded_by_hand_from_the_wire_format(tmp_path):
    body, expected = _hand_checkpoint()
    path = tmp_path / "hand.ckpt"
    path.write_bytes(body)
    _check_expected(load_checkpoint(str(path)), expected)
    # MindSpore's CRC footer: b"crc_num" + crc32 of everything before it, 10 bytes big-endian.
    path.write_bytes(body + b"crc_num" + binascii.crc32(body).to_bytes(10, "big"))
    _check_expected(load_checkpoint(str(path), crc_check=True), expected)


def test_golden_file_in_tests_data_still_loads():
    body, expected = _hand_checkpoint()
    path = os.path.join(DATA, "handmade_mindspore_layout.ckpt")
    with open(path, "rb") as f:
        assert f.read() == body, "the hand encoder and the checked-in golden file disagree"
    _check_expected(load_checkpoint(path), expected)


def test_writes_the_same_bytes_as_the_field_facts(tmp_path):
    # mscore's output, byte for byte, is what a MindSpore writer produces from the schema.
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    save_checkpoint([{"name": "w", "data": ms.Tensor(w)}, {"name": "s", "data": "hi"},
                     {"name": "k", "data": ms.Tensor(np.int64(5))}], str(tmp_path / "o"),
                    crc_check=True)
    body = (_hand_value("w", [2, 3], "Float32", w.astype("<f4").tobytes())
            + _hand_value("s", [0], "str", "hi".encode("utf-32-le"))
            # a 0-d tensor has no dims, as MindSpore 2.10 writes it (the plain bytes of
            # tests/data/crypto/ms_*.ckpt; test_crypto_checkpoint.py compares them whole)
            + _hand_value("k", [], "Int64", np.array(5, "<i8").tobytes()))
    want = body + b"crc_num" + binascii.crc32(body).to_bytes(10, "big")
    assert (tmp_path / "o.ckpt").read_bytes() == want


def test_loads_a_checkpoint_built_with_protobuf_descriptor_apis(tmp_path):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    fdp = descriptor_pb2.FileDescriptorProto(name="foreign_tool/ckpt.proto",
                                             package="foreign.tool", syntax="proto2")
    F = descriptor_pb2.FieldDescriptorProto
    tensor = fdp.message_type.add(name="TensorProto")
    tensor.field.add(name="dims", number=1, type=F.TYPE_INT64, label=F.LABEL_REPEATED)
    tensor.field.add(name="tensor_type", number=2, type=F.TYPE_STRING, label=F.LABEL_REQUIRED)
    tensor.field.add(name="tensor_content", number=3, type=F.TYPE_BYTES, label=F.LABEL_REQUIRED)
    ckpt = fdp.message_type.add(name="Checkpoint")
    value = ckpt.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_REQUIRED)
    value.field.add(name="tensor", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_REQUIRED,
                    type_name=".foreign.tool.TensorProto")
    ckpt.field.add(name="value", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                   type_name=".foreign.tool.Checkpoint.Value")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    Checkpoint = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("foreign.tool.Checkpoint"))
    msg = Checkpoint()
    rng = np.random.default_rng(5)
    values = {"conv.weight": rng.standard_normal((4, 1, 3, 3)).astype(np.float16),
              "fc.bias": rng.standard_normal(10).astype(np.float64),
              "ids": rng.integers(-100, 100, (2, 3)).astype(np.int16)}
    types = {np.float16: "Float16", np.float64: "Float64", np.int16: "Int16"}
    for name, arr in values.items():
        v = msg.value.add(tag=name)
        v.tensor.dims.extend(arr.shape)
        v.tensor.tensor_type = types[arr.dtype.type]
        v.tensor.tensor_content = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    path = tmp_path / "foreign.ckpt"
    path.write_bytes(msg.SerializeToString())
    loaded = load_checkpoint(str(path))
    for name, arr in values.items():
        np.testing.assert_array_equal(_bits(loaded[name].asnumpy()), _bits(arr))
        assert loaded[name].asnumpy().dtype == arr.dtype


def test_loads_safetensors_written_by_the_safetensors_package(tmp_path):
    from safetensors.numpy import save_file
    rng = np.random.default_rng(7)
    tensors = {"fc.weight": rng.standard_normal((5, 3)).astype(np.float32),
               "emb": rng.standard_normal((4, 2)).astype(np.float16),
               "count": np.array(3, dtype=np.int64),
               "mask": np.array([True, False]),
               "u8": np.arange(6, dtype=np.uint8).reshape(2, 3)}
    save_file(tensors, str(tmp_path / "st.safetensors"), metadata={"format": "np"})
    loaded = load_checkpoint(str(tmp_path / "st.safetensors"), format="safetensors")
    assert set(loaded) == set(tensors)  # metadata of other tools is not an entry
    for name, arr in tensors.items():
        got = loaded[name].asnumpy()
        assert got.dtype == arr.dtype and got.shape == arr.shape
        np.testing.assert_array_equal(got, arr)
    golden = load_checkpoint(os.path.join(DATA, "safetensors_package.safetensors"),
                             format="safetensors")
    np.testing.assert_array_equal(golden["w"].asnumpy(),
                                  np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(golden["b"].asnumpy(), np.array([1, -1], np.int32))


def test_safetensors_written_by_mscore_load_in_the_safetensors_package(tmp_path):
    from safetensors.numpy import load_file
    w = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    save_checkpoint({"w": ms.Tensor(w), "i": ms.Tensor(np.arange(5, dtype=np.int32))},
                    str(tmp_path / "m"), format="safetensors")
    got = load_file(str(tmp_path / "m.safetensors"))
    np.testing.assert_array_equal(got["w"], w)
    np.testing.assert_array_equal(got["i"], np.arange(5, dtype=np.int32))


# -- large tensors ---------------------------------------------------------------------------------
def test_large_tensor_is_split_like_mindspore_and_joined_on_load(tmp_path, monkeypatch):
    from mscore.train.proto import checkpoint_pb2
    monkeypatch.setattr(_ckpt_format, "SLICE_BYTES", 64)
    big = np.arange(103, dtype=np.float32).reshape(103, 1) * 0.5  # 412 bytes -> 7 pieces
    small = np.ones(4, np.float32)
    save_checkpoint([{"name": "big", "data": ms.Tensor(big)},
                     {"name": "small", "data": ms.Tensor(small)}], str(tmp_path / "s"))
    msg = checkpoint_pb2.Checkpoint()
    msg.ParseFromString((tmp_path / "s.ckpt").read_bytes())
    tags = [v.tag for v in msg.value]
    assert tags == ["big"] * 7 + ["small"]
    sizes = [len(v.tensor.tensor_content) for v in msg.value[:7]]
    assert sum(sizes) == big.nbytes and all(s % 4 == 0 and s <= 64 for s in sizes)
    assert all(list(v.tensor.dims) == [103, 1] for v in msg.value[:7])
    loaded = load_checkpoint(str(tmp_path / "s.ckpt"))
    np.testing.assert_array_equal(loaded["big"].asnumpy(), big)
    np.testing.assert_array_equal(loaded["small"].asnumpy(), small)


def test_pieces_that_do_not_add_up_are_an_error(tmp_path):
    body = (_hand_value("t", [2, 3], "Float32", np.zeros(4, "<f4").tobytes())
            + _hand_value("t", [2, 3], "Float32", np.zeros(1, "<f4").tobytes()))
    (tmp_path / "b.ckpt").write_bytes(body)
    with pytest.raises(ValueError, match="b.ckpt.*'t'.*24 bytes"):
        load_checkpoint(str(tmp_path / "b.ckpt"))
    body = (_hand_value("t", [2, 3], "Float32", np.zeros(3, "<f4").tobytes())
            + _hand_value("t", [6], "Float32", np.zeros(3, "<f4").tobytes()))
    (tmp_path / "b.ckpt").write_bytes(body)
    with pytest.raises(ValueError, match="disagree"):
        load_checkpoint(str(tmp_path / "b.ckpt"))


def test_bfloat16_saved_as_float32_values_is_accepted(tmp_path):
    vals = np.array([1.0, 0.5, -3.25], np.float32)
    (tmp_path / "b.ckpt").write_bytes(
        _hand_value("h", [3], "BFloat16", vals.astype("<f4").tobytes()))
    got = load_checkpoint(str(tmp_path / "b.ckpt"))["h"]
    assert got.dtype is mdt.bfloat16
    np.testing.assert_array_equal(got.asnumpy().astype(np.float32), vals)


# -- CRC -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_crc_detects_a_flipped_byte(tmp_path, fmt):
    w = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    save_checkpoint({"w": ms.Tensor(w)}, str(tmp_path / "c"), crc_check=True, format=fmt)
    path = tmp_path / f"c.{fmt}"
    data = bytearray(path.read_bytes())
    loaded = load_checkpoint(str(path), crc_check=True, format=fmt)
    np.testing.assert_array_equal(loaded["w"].asnumpy(), w)
    # a byte inside the tensor data: the file still parses, only the CRC can tell
    offset = bytes(data).find(w[4].tobytes()) + 1
    assert offset > 0
    data[offset] ^= 0x10
    path.write_bytes(bytes(data))
    for crc_check in (True, False):  # a CRC that is present is always verified
        with pytest.raises(ValueError, match=rf"c\.{fmt}.*CRC"):
            load_checkpoint(str(path), crc_check=crc_check, format=fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_crc_check_requires_a_crc(tmp_path, fmt):
    save_checkpoint({"w": ms.Tensor(np.ones(3, np.float32))}, str(tmp_path / "n"), format=fmt)
    path = str(tmp_path / f"n.{fmt}")
    assert load_checkpoint(path, format=fmt)["w"].shape == (3,)
    with pytest.raises(ValueError, match="no CRC|holds no CRC"):
        load_checkpoint(path, crc_check=True, format=fmt)


# -- atomic and asynchronous saving ----------------------------------------------------------------
def test_failed_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    save_checkpoint({"w": ms.Tensor(np.ones(4, np.float32))}, str(tmp_path / "a"))
    before = (tmp_path / "a.ckpt").read_bytes()

    def broken(f, entries, crc_check):
        f.write(b"\x0a\x05partial")
        raise OSError("disk full")
    monkeypatch.setattr(_checkpoint, "_write_ckpt", broken)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint({"w": ms.Tensor(np.zeros(4, np.float32))}, str(tmp_path / "a"))
    assert (tmp_path / "a.ckpt").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["a.ckpt"]


_KILL_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    import mscore as ms
    from mscore.train.serialization import _checkpoint, save_checkpoint
    path = sys.argv[1]
    save_checkpoint({"w": ms.Tensor(np.full(1000, 1.0, np.float32))}, path)
    real = _checkpoint._write_ckpt
    def dying(f, entries, crc_check):
        real(f, entries[:1], crc_check)   # half the entries reach the disk...
        f.flush(); os.fsync(f.fileno())
        os.kill(os.getpid(), signal.SIGKILL)  # ...then the process dies mid-save
    _checkpoint._write_ckpt = dying
    save_checkpoint({"w": ms.Tensor(np.full(1000, 2.0, np.float32)),
                     "v": ms.Tensor(np.full(1000, 2.0, np.float32))}, path)
    print("not reached")
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_process_killed_mid_save_never_leaves_a_broken_file(tmp_path):
    path = str(tmp_path / "k.ckpt")
    proc = subprocess.run([sys.executable, "-c", _KILL_SCRIPT, path], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "not reached" not in proc.stdout
    loaded = load_checkpoint(path)
    assert list(loaded) == ["w"]
    np.testing.assert_array_equal(loaded["w"].asnumpy(), np.full(1000, 1.0, np.float32))
    leftovers = [n for n in os.listdir(tmp_path) if n != "k.ckpt"]
    assert all(n.startswith("mscore-partial.") and n.endswith(".tmp") for n in leftovers)


def test_async_save_snapshots_values_and_later_saves_wait(tmp_path, monkeypatch):
    import threading
    import time
    real = _checkpoint._write_ckpt
    started = threading.Event()

    def slow(f, entries, crc_check):
        started.set()
        time.sleep(0.3)
        real(f, entries, crc_check)
    monkeypatch.setattr(_checkpoint, "_write_ckpt", slow)
    p = ms.Parameter(ms.Tensor(np.full(5, 1.0, np.float32)), name="p")
    save_checkpoint([{"name": "p", "data": p}], str(tmp_path / "a"), async_save=True)
    p.set_data(ms.Tensor(np.full(5, 9.0, np.float32)))  # training goes on meanwhile
    assert started.wait(5)
    assert _checkpoint._pending, "the save should still be running in the background"
    save_checkpoint([{"name": "p", "data": p}], str(tmp_path / "b"))  # waits for the first
    assert not _checkpoint._pending
    np.testing.assert_array_equal(load_checkpoint(str(tmp_path / "a.ckpt"))["p"].asnumpy(),
                                  np.full(5, 1.0, np.float32))
    np.testing.assert_array_equal(load_checkpoint(str(tmp_path / "b.ckpt"))["p"].asnumpy(),
                                  np.full(5, 9.0, np.float32))


def test_async_save_failure_is_reported_by_the_next_save(tmp_path, monkeypatch):
    def broken(f, entries, crc_check):
        raise OSError("no space left")
    monkeypatch.setattr(_checkpoint, "_write_ckpt", broken)
    save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, str(tmp_path / "a"),
                    async_save=True)
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match="asynchronous save_checkpoint failed.*no space"):
        save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, str(tmp_path / "b"))
    assert not (tmp_path / "a.ckpt").exists()


def test_wait_async_save_blocks_until_written_and_reports_failures(tmp_path, monkeypatch):
    import time
    real = _checkpoint._write_ckpt

    def slow(f, entries, crc_check):
        time.sleep(0.2)
        real(f, entries, crc_check)
    monkeypatch.setattr(_checkpoint, "_write_ckpt", slow)
    save_checkpoint({"w": ms.Tensor(np.arange(3, dtype=np.float32))}, str(tmp_path / "w"),
                    async_save=True)
    assert not (tmp_path / "w.ckpt").exists()
    ser.wait_async_save()
    assert (tmp_path / "w.ckpt").exists() and not _checkpoint._pending

    def broken(f, entries, crc_check):
        raise OSError("device gone")
    monkeypatch.setattr(_checkpoint, "_write_ckpt", broken)
    save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, str(tmp_path / "v"),
                    async_save=True)
    with pytest.raises(RuntimeError, match="device gone"):
        ser.wait_async_save()
    ser.wait_async_save()  # reported once


_EXIT_SCRIPT = textwrap.dedent("""
    import sys, time
    import numpy as np
    import mscore as ms
    from mscore.train.serialization import _checkpoint, save_checkpoint
    real = _checkpoint._write_ckpt
    def slow(f, entries, crc_check):
        time.sleep(1.0)
        real(f, entries, crc_check)
    _checkpoint._write_ckpt = slow
    save_checkpoint({"w": ms.Tensor(np.arange(100, dtype=np.float32))}, sys.argv[1],
                    async_save=True)
    # the interpreter exits at once; the pending save must still complete
""")


def test_exit_waits_for_an_async_save(tmp_path):
    path = str(tmp_path / "e.ckpt")
    proc = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT, path], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(load_checkpoint(path)["w"].asnumpy(),
                                  np.arange(100, dtype=np.float32))


# -- load_param_into_net and filtering -------------------------------------------------------------
def _small_net():
    ms.set_seed(0)
    return nn.SequentialCell(nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2))


def test_load_param_into_net_reports_what_was_not_loaded():
    net = _small_net()
    d = {"0.weight": ms.Parameter(ms.Tensor(np.ones((4, 3), np.float32)), name="0.weight"),
         "unused": ms.Parameter(ms.Tensor(np.ones(1, np.float32)), name="unused"),
         "text": "hello"}
    param_not_load, ckpt_not_load = load_param_into_net(net, d)
    assert param_not_load == ["0.bias", "2.weight", "2.bias"]
    assert ckpt_not_load == ["unused", "text"]
    np.testing.assert_array_equal(net[0].weight.asnumpy(), np.ones((4, 3), np.float32))


def test_load_param_into_net_shape_mismatch_names_the_parameter():
    net = _small_net()
    d = {"0.weight": ms.Parameter(ms.Tensor(np.ones((3, 4), np.float32)), name="0.weight")}
    with pytest.raises(RuntimeError,
                       match=r"0\.weight in the argument 'net'.*\(4, 3\).*\(3, 4\)"):
        load_param_into_net(net, d)


def test_load_param_into_net_dtype_rules():
    net = _small_net()
    w16 = np.arange(12, dtype=np.float16).reshape(4, 3)
    d = {"0.weight": ms.Parameter(ms.Tensor(w16), name="0.weight")}
    with pytest.raises(RuntimeError, match=r"0\.weight in .*Float32.*Float16"):
        load_param_into_net(net, d, strict_load=True)
    load_param_into_net(net, d)  # float -> float converts without strict_load
    assert net[0].weight.dtype is mdt.float32
    np.testing.assert_array_equal(net[0].weight.asnumpy(), w16.astype(np.float32))
    d = {"0.weight": ms.Parameter(ms.Tensor(np.ones((4, 3), np.int32)), name="0.weight")}
    with pytest.raises(RuntimeError, match=r"0\.weight in .*Int32"):
        load_param_into_net(net, d)


def test_load_param_into_net_matches_a_common_prefix_unless_strict():
    net = _small_net()
    want = {p.name: p.asnumpy() + 1 for p in net.get_parameters()}
    d = {"backbone." + k: ms.Parameter(ms.Tensor(v), name="backbone." + k) for k, v in want.items()}
    assert load_param_into_net(net, d, strict_load=True)[0] == list(want)
    param_not_load, ckpt_not_load = load_param_into_net(net, d)
    assert param_not_load == [] and ckpt_not_load == []
    for p in net.get_parameters():
        np.testing.assert_array_equal(p.asnumpy(), want[p.name])


def test_filter_prefix_and_choice_func(tmp_path):
    net = _small_net()
    save_checkpoint(net, str(tmp_path / "f"), append_dict={"epoch": 1})
    path = str(tmp_path / "f.ckpt")
    assert list(load_checkpoint(path, filter_prefix="0.")) == ["2.weight", "2.bias", "epoch"]
    assert list(load_checkpoint(path, filter_prefix=["0.", "epoch"])) == ["2.weight", "2.bias"]
    assert list(load_checkpoint(path, choice_func=lambda n: n.endswith("bias"))) == \
        ["0.bias", "2.bias"]


# -- bad files -------------------------------------------------------------------------------------
def _good_file(tmp_path):
    save_checkpoint({"w": ms.Tensor(np.arange(64, dtype=np.float32))}, str(tmp_path / "g"))
    return (tmp_path / "g.ckpt").read_bytes()


def test_truncated_and_foreign_files_are_value_errors(tmp_path):
    data = _good_file(tmp_path)
    bad = tmp_path / "bad.ckpt"
    cases = {"truncated": data[: len(data) // 2], "empty": b"", "text": b"hello world\n",
             "png": b"\x89PNG\r\n\x1a\n" + bytes(40), "zeros": bytes(100)}
    for _what, content in cases.items():
        bad.write_bytes(content)
        with pytest.raises(ValueError, match="bad.ckpt"):
            load_checkpoint(str(bad))
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint(str(tmp_path / "missing.ckpt"))
    with pytest.raises(ValueError, match="must end with '.ckpt'"):
        load_checkpoint(str(tmp_path / "g.bin"))
    (tmp_path / "bad.safetensors").write_bytes(data)  # a .ckpt file read as safetensors
    with pytest.raises(ValueError, match="bad.safetensors"):
        load_checkpoint(str(tmp_path / "bad.safetensors"), format="safetensors")


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch PWNED_BY_PICKLE",))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_pickle_file_is_rejected_without_running_it(tmp_path, monkeypatch, fmt):
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"evil.{fmt}").write_bytes(pickle.dumps({"w": _Exploit()}))
    with pytest.raises(ValueError, match=rf"evil\.{fmt}"):
        load_checkpoint(str(tmp_path / f"evil.{fmt}"), format=fmt)
    assert not (tmp_path / "PWNED_BY_PICKLE").exists()


def test_unknown_tensor_type_is_a_value_error(tmp_path):
    (tmp_path / "u.ckpt").write_bytes(_hand_value("x", [2], "Complex64", bytes(16)))
    with pytest.raises(ValueError, match="u.ckpt.*Complex64"):
        load_checkpoint(str(tmp_path / "u.ckpt"))


# -- argument checks -------------------------------------------------------------------------------
def test_save_checkpoint_argument_checks(tmp_path):
    t = ms.Tensor(np.ones(2, np.float32))
    f = str(tmp_path / "x")
    with pytest.raises(TypeError, match="save_obj"):
        save_checkpoint(3, f)
    with pytest.raises(TypeError, match=r"save_obj\[0\]"):
        save_checkpoint([("w", t)], f)
    with pytest.raises(TypeError, match=r"save_obj\[0\]\['data'\]"):
        save_checkpoint([{"name": "w", "data": [1, 2]}], f)
    with pytest.raises(TypeError, match="ckpt_file_name"):
        save_checkpoint({"w": t}, 5)
    with pytest.raises(ValueError, match="ckpt_file_name"):
        save_checkpoint({"w": t}, "")
    for arg in ("integrated_save", "async_save"):
        with pytest.raises(TypeError, match=arg):
            save_checkpoint({"w": t}, f, **{arg: 1})
    with pytest.raises(ValueError, match="crc_check"):  # MindSpore's check_isinstance
        save_checkpoint({"w": t}, f, crc_check=1)
    with pytest.raises(ValueError, match="format"):
        save_checkpoint({"w": t}, f, format="pt")
    with pytest.raises(TypeError, match="append_dict"):
        save_checkpoint({"w": t}, f, append_dict=[("a", 1)])
    with pytest.raises(TypeError, match=r"append_dict\['a'\]"):
        save_checkpoint({"w": t}, f, append_dict={"a": object()})
    with pytest.raises(ValueError, match="'w' appears twice"):
        save_checkpoint({"w": t}, f, append_dict={"w": 1})
    with pytest.raises(ValueError, match="nothing to save"):
        save_checkpoint([], f)
    assert not os.listdir(tmp_path)
    save_checkpoint({"w": t}, f)  # the suffix is added, as MindSpore does
    assert os.listdir(tmp_path) == ["x.ckpt"]


def test_load_argument_checks(tmp_path):
    net = _small_net()
    save_checkpoint(net, str(tmp_path / "a"))
    f = str(tmp_path / "a.ckpt")
    with pytest.raises(TypeError, match="ckpt_file_name"):
        load_checkpoint(None)
    with pytest.raises(TypeError, match="net"):
        load_checkpoint(f, net="net")
    with pytest.raises(TypeError, match="strict_load"):
        load_checkpoint(f, strict_load=None)
    with pytest.raises(TypeError, match="filter_prefix"):
        load_checkpoint(f, filter_prefix=3)
    with pytest.raises(TypeError, match="filter_prefix"):
        load_checkpoint(f, filter_prefix=["a", 3])
    with pytest.raises(ValueError, match="filter_prefix"):
        load_checkpoint(f, filter_prefix="")
    with pytest.raises(TypeError, match="choice_func"):
        load_checkpoint(f, choice_func="0.")
    with pytest.raises(ValueError, match="crc_check"):  # MindSpore's check_isinstance
        load_checkpoint(f, crc_check="yes")
    with pytest.raises(ValueError, match="format"):
        load_checkpoint(f, format="CKPT")
    with pytest.raises(TypeError, match="net"):
        load_param_into_net("net", {})
    with pytest.raises(TypeError, match="parameter_dict"):
        load_param_into_net(net, [])
    with pytest.raises(TypeError, match=r"parameter_dict\['w'\]"):
        load_param_into_net(net, {"w": np.ones(3)})
    with pytest.raises(TypeError, match="strict_load"):
        load_param_into_net(net, {}, strict_load=1)


def test_public_names_are_exported():
    for name in ("save_checkpoint", "load_checkpoint", "load_param_into_net",
                 "merge_sliced_parameter", "build_searched_strategy", "parse_print", "export"):
        assert getattr(ser, name) is getattr(ms, name) is getattr(ms.train, name)

