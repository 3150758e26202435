"""Summary files: CRC32C, record framing, SummaryRecord, TensorBoard's reader, corruption,
rotation, a full disk, and the background writer."""
import io
import os
import struct
import time

import numpy as np
import pytest

import mscore as ms
import mscore.train.summary.crc32c as crc_module
from mscore.train.summary import (
    CorruptRecordError,
    SummaryRecord,
    SummaryWriteError,
    event_files,
    iter_records,
    load_summaries,
    read_events,
)
from mscore.train.summary import events as events_module
from mscore.train.summary import writer as writer_module
from mscore.train.summary.crc32c import crc32c, masked_crc32c

ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


@pytest.fixture(autouse=True)
def _no_pending_operator_values():
    # values left by summary operators of other tests would join our first record
    from mscore.train.summary import summary_ops
    summary_ops.discard_pending()
    yield


def _accumulator(log_dir):
    acc = ea.EventAccumulator(log_dir, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0,
                                                      ea.IMAGES: 0, ea.TENSORS: 0})
    acc.Reload()
    return acc


# -- CRC32C ---------------------------------------------------------------------------------
@pytest.mark.parametrize("data, expected", [
    (b"", 0x00000000),
    (b"123456789", 0xE3069283),
    (bytes(32), 0x8A9136AA),                    # RFC 3720 B.4 test vectors
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
])
def test_crc32c_known_vectors(data, expected):
    assert crc32c(data) == expected


@pytest.mark.parametrize("n", [1, 63, 4095, 4096, 4097, 10_007, 70_000, 300_001])
def test_crc32c_fast_path_matches_bytewise_loop(n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8).tobytes()
    slow = crc_module._update_small(0xFFFFFFFF, data) ^ 0xFFFFFFFF
    assert crc32c(data) == slow
    # continuing a CRC over two pieces equals the CRC of the whole
    cut = n // 3
    assert crc32c(data[cut:], crc32c(data[:cut])) == slow


def test_masked_crc_matches_tensorboard_and_unmasks():
    stub = pytest.importorskip("tensorboard.compat.tensorflow_stub.pywrap_tensorflow")
    rng = np.random.default_rng(1)
    for n in (0, 5, 1000, 5000):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert masked_crc32c(data) == stub.masked_crc32c(data)
        assert crc_module.unmask(masked_crc32c(data)) == crc32c(data)
    crc = crc32c(b"abc")
    assert crc_module.mask(crc) == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) % 2 ** 32


def test_crc32c_argument_checks():
    with pytest.raises(TypeError, match="data"):
        crc32c("text")
    with pytest.raises(ValueError, match="crc"):
        crc32c(b"x", -1)


def test_frame_layout():
    data = b"hello event"
    rec = writer_module.frame(data)
    assert len(rec) == 8 + 4 + len(data) + 4
    assert struct.unpack("<Q", rec[:8])[0] == len(data)
    assert struct.unpack("<I", rec[8:12])[0] == masked_crc32c(rec[:8])
    assert rec[12:-4] == data
    assert struct.unpack("<I", rec[-4:])[0] == masked_crc32c(data)


# -- writing and reading with TensorBoard -------------------------------------------------
def _grid(batch_u8, columns=8):
    n, c, h, w = batch_u8.shape
    cols = min(n, columns)
    rows = -(-n // cols)
    out = np.zeros((rows * h, cols * w, c), np.uint8)
    for i in range(n):
        r, q = divmod(i, cols)
        out[r * h:(r + 1) * h, q * w:(q + 1) * w] = batch_u8[i].transpose(1, 2, 0)
    return out


def test_tensorboard_reads_every_scalar_histogram_image_and_tensor(tmp_path):
    from PIL import Image
    from tensorboard.util import tensor_util
    rng = np.random.default_rng(0)
    steps = [1, 2, 5, 10]
    written = {"loss": {}, "lr": {}, "w": {}, "img_f": {}, "img_u8": {}, "t": {}}
    with SummaryRecord(str(tmp_path)) as sr:
        for s in steps:
            loss = np.float32(1.0 / s + 0.25)
            w = rng.normal(size=(6, 7)).astype(np.float32)
            img_f = rng.integers(0, 256, (3, 3, 5, 4)).astype(np.float32) / 255.0
            img_u8 = rng.integers(0, 256, (10, 1, 3, 2), dtype=np.uint8)
            t = rng.integers(-50, 50, (2, 3)).astype(np.int32)
            sr.add_value("scalar", "loss", ms.Tensor(loss))
            sr.add_value("scalar", "lr", ms.Tensor(np.array([0.5 ** s], np.float32)))
            sr.add_value("histogram", "w", ms.Tensor(w))
            sr.add_value("image", "img_f", ms.Tensor(img_f))
            sr.add_value("image", "img_u8", ms.Tensor(img_u8))
            sr.add_value("tensor", "t", ms.Tensor(t))
            assert sr.record(s) is True
            written["loss"][s], written["lr"][s], written["w"][s] = loss, 0.5 ** s, w
            written["img_f"][s], written["img_u8"][s], written["t"][s] = img_f, img_u8, t
        files = sr.event_files
    assert len(files) == 1 and "tfevents" in os.path.basename(files[0])
    acc = _accumulator(str(tmp_path))
    tags = acc.Tags()
    assert set(tags["scalars"]) == {"loss", "lr"}
    assert set(tags["histograms"]) == {"w"}
    assert set(tags["images"]) == {"img_f", "img_u8"}
    assert set(tags["tensors"]) == {"t"}
    for tag in ("loss", "lr"):
        events = acc.Scalars(tag)
        assert [e.step for e in events] == steps
        for e in events:
            assert e.value == float(np.float32(written[tag][e.step]))
    hist = acc.Histograms("w")
    assert [h.step for h in hist] == steps
    for h in hist:
        v = written["w"][h.step].astype(np.float64).ravel()
        hv = h.histogram_value
        assert hv.min == v.min() and hv.max == v.max() and hv.num == v.size
        assert hv.sum == pytest.approx(v.sum(), rel=1e-12, abs=1e-12)
        assert hv.sum_squares == pytest.approx((v * v).sum(), rel=1e-12)
        counts, edges = np.histogram(v, bins=30, range=(v.min(), v.max()))
        assert list(hv.bucket) == counts.tolist()
        np.testing.assert_allclose(hv.bucket_limit, edges[1:], rtol=0, atol=0)
    for tag, to_u8 in (("img_f", lambda a: np.rint(a * 255).astype(np.uint8)),
                       ("img_u8", lambda a: a)):
        images = acc.Images(tag)
        assert [im.step for im in images] == steps
        for im in images:
            expected = _grid(to_u8(written[tag][im.step]))
            decoded = np.array(Image.open(io.BytesIO(im.encoded_image_string)))
            if decoded.ndim == 2:
                decoded = decoded[:, :, None]
            assert (im.height, im.width) == expected.shape[:2]
            np.testing.assert_array_equal(decoded, expected)
    tensors = acc.Tensors("t")
    assert [t.step for t in tensors] == steps
    for t in tensors:
        np.testing.assert_array_equal(tensor_util.make_ndarray(t.tensor_proto),
                                      written["t"][t.step])


def test_own_reader_matches_what_was_written(tmp_path):
    with SummaryRecord(str(tmp_path), file_prefix="run", file_suffix="_x") as sr:
        sr.add_value("scalar", "a", ms.Tensor(np.float32(3.5)))
        sr.add_value("tensor", "bf", ms.Tensor(np.array([1.5, -2.0], np.float32),
                                               dtype=ms.bfloat16))
        sr.add_value("tensor", "h", ms.Tensor(np.array([[1, 2]], np.float16)))
        sr.record(7)
        path = sr.log_dir
    name = os.path.basename(path)
    assert name.startswith("run.out.tfevents.") and name.endswith("_x")
    events = list(read_events(path))
    assert events[0].file_version == "brain.Event:2"
    assert [e.step for e in events[1:]] == [7]
    got = load_summaries(str(tmp_path))
    assert got["scalar"]["a"][0][0] == 7 and got["scalar"]["a"][0][2] == 3.5
    bf = got["tensor"]["bf"][0][2]
    assert bf.dtype.name == "bfloat16"
    np.testing.assert_array_equal(bf.astype(np.float32), [1.5, -2.0])
    np.testing.assert_array_equal(got["tensor"]["h"][0][2], np.array([[1, 2]], np.float16))


def test_histogram_ignores_non_finite_values(tmp_path):
    values = np.array([1.0, np.nan, 3.0, np.inf, -np.inf, 2.0], np.float32)
    with SummaryRecord(str(tmp_path)) as sr:
        sr.add_value("histogram", "h", ms.Tensor(values))
        sr.add_value("histogram", "c", ms.Tensor(np.full(4, 2.5, np.float32)))
        sr.record(1)
    got = load_summaries(str(tmp_path))["histogram"]
    h = got["h"][0][2]
    assert (h["min"], h["max"], h["num"], h["sum"], h["sum_squares"]) == (1, 3, 3, 6, 14)
    assert sum(h["bucket"]) == 3 and h["bucket_limit"][-1] == 3.0
    c = got["c"][0][2]
    assert c["bucket_limit"] == [2.5] and c["bucket"] == [4.0]


# -- corruption ---------------------------------------------------------------------------
def _write_three(tmp_path):
    with SummaryRecord(str(tmp_path)) as sr:
        for s in (1, 2, 3):
            sr.add_value("scalar", "loss", ms.Tensor(np.float32(s)))
            sr.record(s)
        return sr.log_dir


def _record_offsets(path):
    offsets, pos, blob = [], 0, open(path, "rb").read()
    while pos < len(blob):
        (n,) = struct.unpack("<Q", blob[pos:pos + 8])
        offsets.append((pos, n))
        pos += 16 + n
    return offsets


def test_corrupt_data_crc_is_detected(tmp_path):
    path = _write_three(tmp_path)
    offset, n = _record_offsets(path)[2]
    blob = bytearray(open(path, "rb").read())
    blob[offset + 12 + n] ^= 0x01                       # the stored data CRC of record 2
    open(path, "wb").write(bytes(blob))
    with pytest.raises(CorruptRecordError, match=r"record 2 at byte offset "
                       rf"{offset}: data checksum mismatch") as info:
        list(read_events(path))
    assert isinstance(info.value, ValueError) and info.value.index == 2
    # the records before the damage are still readable one by one
    it = iter_records(path)
    assert len([next(it), next(it)]) == 2


def test_corrupt_payload_and_length_are_detected(tmp_path):
    path = _write_three(tmp_path)
    offsets = _record_offsets(path)
    blob = bytearray(open(path, "rb").read())
    blob[offsets[1][0] + 14] ^= 0x40                    # a byte of record 1's data
    open(path, "wb").write(bytes(blob))
    with pytest.raises(CorruptRecordError, match="record 1 .*data checksum mismatch"):
        list(read_events(path))
    blob[offsets[1][0] + 14] ^= 0x40
    blob[offsets[3][0]] ^= 0x01                         # record 3's length
    open(path, "wb").write(bytes(blob))
    with pytest.raises(CorruptRecordError, match="record 3 .*length checksum mismatch"):
        load_summaries(str(tmp_path))


def test_truncated_tail(tmp_path):
    path = _write_three(tmp_path)
    blob = open(path, "rb").read()
    open(path, "wb").write(blob[:-7])
    with pytest.raises(CorruptRecordError, match="truncated data"):
        list(read_events(path))
    steps = [e.step for e in read_events(path, allow_truncated_tail=True)]
    assert steps == [0, 1, 2]


# -- rotation -----------------------------------------------------------------------------
def test_max_file_size_rotates_files(tmp_path):
    limit = 1300
    values = np.linspace(-1, 1, 20, dtype=np.float32)
    with SummaryRecord(str(tmp_path), max_file_size=limit) as sr:
        for s in range(1, 13):
            sr.add_value("scalar", "loss", ms.Tensor(np.float32(s)))
            sr.add_value("histogram", "w", ms.Tensor(values * s))
            sr.record(s)
        sr.flush()
        files = sr.event_files
    assert len(files) > 2
    assert files == event_files(str(tmp_path))          # names sort in writing order
    for f in files:
        assert os.path.getsize(f) <= limit
        assert next(read_events(f)).file_version == "brain.Event:2"
    got = load_summaries(str(tmp_path))
    assert [s for s, _, _ in got["scalar"]["loss"]] == list(range(1, 13))
    acc = _accumulator(str(tmp_path))
    assert [e.step for e in acc.Scalars("loss")] == list(range(1, 13))
    assert [e.value for e in acc.Scalars("loss")] == [float(s) for s in range(1, 13)]
    assert [h.step for h in acc.Histograms("w")] == list(range(1, 13))


def test_event_larger_than_max_file_size_is_kept_with_a_warning(tmp_path):
    with SummaryRecord(str(tmp_path), max_file_size=200) as sr:
        sr.add_value("tensor", "big", ms.Tensor(np.arange(100, dtype=np.float32)))
        sr.record(1)
        with pytest.warns(RuntimeWarning, match="does not fit max_file_size"):
            sr.flush()
    got = load_summaries(str(tmp_path))["tensor"]["big"]
    np.testing.assert_array_equal(got[0][2], np.arange(100, dtype=np.float32))


# -- failures and the background writer -----------------------------------------------------
def _fill_disk(sr):
    """Point the open event file at /dev/full: every later write fails with ENOSPC."""
    w = sr._writer
    sr.flush()                  # the writer thread is now idle, waiting for the next item
    w._file.close()
    w._file = open("/dev/full", "wb")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_disk_is_a_clear_error(tmp_path):
    sr = SummaryRecord(str(tmp_path))
    _fill_disk(sr)
    sr.add_value("scalar", "loss", ms.Tensor(np.float32(1)))
    sr.record(11)
    sr.add_value("scalar", "loss", ms.Tensor(np.float32(2)))
    with pytest.raises(RuntimeError, match="No space left on device"):
        sr.flush()
    with pytest.raises(SummaryWriteError, match=r"not written") as info:
        sr.record(12)
    assert "step 11" in str(info.value) or "steps 11" in str(info.value)
    sr.close()                      # already reported: closing does not raise again


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_disk_reported_by_close(tmp_path):
    sr = SummaryRecord(str(tmp_path))
    _fill_disk(sr)
    sr.add_value("scalar", "loss", ms.Tensor(np.float32(1)))
    sr.record(3)
    with pytest.raises(SummaryWriteError, match="No space left on device.*step 3"):
        sr.close()


def test_log_dir_that_cannot_be_created_is_runtime_error(tmp_path):
    blocker = tmp_path / "plain_file"
    blocker.write_text("x")
    with pytest.raises(RuntimeError, match="log_dir: cannot create directory"):
        SummaryRecord(str(blocker / "sub"))


def test_unwritable_log_dir_is_runtime_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        with pytest.raises(RuntimeError, match="log_dir"):
            SummaryRecord(str(d))
    finally:
        d.chmod(0o700)


def test_record_does_not_wait_for_the_disk(tmp_path, monkeypatch):
    real = events_module.summary_event

    def slow(*args):
        time.sleep(0.4)
        return real(*args)
    monkeypatch.setattr(events_module, "summary_event", slow)
    with SummaryRecord(str(tmp_path)) as sr:
        start = time.perf_counter()
        for s in range(1, 4):
            sr.add_value("scalar", "loss", ms.Tensor(np.float32(s)))
            sr.record(s)
        queued = time.perf_counter() - start
        sr.flush()
        flushed = time.perf_counter() - start
    assert queued < 0.3, queued                       # the steps did not wait
    assert flushed >= 1.2                             # the writer did the slow work
    assert [s for s, _, _ in load_summaries(str(tmp_path))["scalar"]["loss"]] == [1, 2, 3]


# -- the SummaryRecord API ------------------------------------------------------------------
def test_summary_record_argument_checks(tmp_path):
    d = str(tmp_path)
    for kwargs, exc, word in [
        (dict(log_dir=1), TypeError, "log_dir"),
        (dict(log_dir="  "), ValueError, "log_dir"),
        (dict(log_dir=d, file_prefix=1), TypeError, "file_prefix"),
        (dict(log_dir=d, file_suffix=None), TypeError, "file_suffix"),
        (dict(log_dir=d, file_prefix="bad name"), ValueError, "file_prefix"),
        (dict(log_dir=d, file_suffix="a/b"), ValueError, "file_suffix"),
        (dict(log_dir=d, max_file_size="1"), TypeError, "max_file_size"),
        (dict(log_dir=d, max_file_size=1.5), TypeError, "max_file_size"),
        (dict(log_dir=d, raise_exception=1), TypeError, "raise_exception"),
        (dict(log_dir=d, export_options={"tensor_format": "csv"}), ValueError,
         "tensor_format"),
    ]:  # the rest of MindSpore's checks: tests/test_summary_api.py
        with pytest.raises(exc, match=word):
            SummaryRecord(**kwargs)
    f = tmp_path / "a_file"
    f.write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file"):
        SummaryRecord(str(f))
    assert not any("tfevents" in n for n in os.listdir(d))   # nothing half-made


def test_log_dir_is_created_and_names_the_event_file(tmp_path):
    target = tmp_path / "new" / "dir"
    with SummaryRecord(str(target)) as sr:
        assert os.path.isdir(target)
        assert os.path.dirname(sr.log_dir) == str(target)
        assert os.path.isfile(sr.log_dir)


def test_add_value_and_record_checks(tmp_path):
    with SummaryRecord(str(tmp_path)) as sr:
        t = ms.Tensor(np.ones((2, 2), np.float32))
        with pytest.raises(ValueError, match="plugin"):
            sr.add_value("audio", "x", t)
        with pytest.raises(ValueError, match="plugin"):      # MindSpore's types
            sr.add_value(3, "x", t)
        with pytest.raises(ValueError, match="name"):
            sr.add_value("scalar", 3, t)
        with pytest.raises(TypeError, match="Tensor"):
            sr.add_value("scalar", "x", np.float32(1))
        with pytest.raises(ValueError, match="name"):
            sr.add_value("scalar", "", t)
        with pytest.raises(TypeError, match="value"):
            sr.add_value("histogram", "x", "not a tensor")
        with pytest.raises(ValueError, match="scalar"):
            sr.add_value("scalar", "x", t)
        with pytest.raises(ValueError, match="4-d"):
            sr.add_value("image", "x", t)
        with pytest.raises(ValueError, match="channels"):
            sr.add_value("image", "x", ms.Tensor(np.ones((1, 5, 2, 2), np.float32)))
        with pytest.raises(ValueError, match="dimension"):
            sr.add_value("histogram", "x", ms.Tensor(np.float32(1)))
        with pytest.raises(ValueError, match="dimension"):
            sr.add_value("tensor", "x", ms.Tensor(np.float32(1)))
        with pytest.raises(TypeError, match="dict"):
            sr.add_value("custom_lineage_data", "c", [1])
        with pytest.raises(ValueError, match="JSON"):
            sr.add_value("train_lineage", "c", {"x": object()})
        with pytest.raises(TypeError, match="step"):
            sr.record("1")
        with pytest.raises(TypeError, match="step"):
            sr.record(True)
        with pytest.raises(TypeError, match="train_network"):
            sr.record(1, train_network="net")
        with pytest.raises(TypeError, match="plugin_filter"):
            sr.record(1, plugin_filter="scalar")
        with pytest.raises(ValueError, match="mode"):
            sr.set_mode("test")
    assert sr.record(1) is False                       # closed: MindSpore returns False
    sr.flush()                                         # closed: a logged no-op
    sr.close()
    with pytest.raises(ValueError, match="closed"):
        with sr:
            pass


def test_plugin_filter_duplicates_and_lineage(tmp_path):
    import json
    with SummaryRecord(str(tmp_path)) as sr:
        sr.add_value("scalar", "a", ms.Tensor(np.float32(1)))
        sr.add_value("scalar", "a", ms.Tensor(np.float32(2)))      # newest wins
        sr.add_value("histogram", "h", ms.Tensor(np.arange(3, dtype=np.float32)))
        sr.add_value("custom_lineage_data", "custom", {"version": "v1", "depth": 3})
        sr.record(4, plugin_filter=lambda p: p != "histogram")
        sr.add_value("scalar", "b", ms.Tensor(np.float64(0.5)))
        sr.record(5)
        lineage_path = sr.lineage_file
    got = load_summaries(str(tmp_path))
    assert got["scalar"]["a"] == [(4, got["scalar"]["a"][0][1], 2.0)]
    assert got["histogram"] == {}
    assert got["scalar"]["b"][0][0] == 5
    lines = [json.loads(x) for x in open(lineage_path)]
    assert lines == [{"plugin": "custom_lineage_data", "name": "custom", "step": 4,
                      "mode": "train", "wall_time": lines[0]["wall_time"],
                      "value": {"version": "v1", "depth": 3}}]
    assert "tfevents" not in os.path.basename(lineage_path)


def test_exception_inside_with_is_not_hidden(tmp_path):
    with pytest.raises(KeyError):
        with SummaryRecord(str(tmp_path)) as sr:
            sr.add_value("scalar", "a", ms.Tensor(np.float32(1)))
            sr.record(1)
            raise KeyError("boom")
    assert load_summaries(str(tmp_path))["scalar"]["a"][0][2] == 1.0


def test_image_scaling_rules(tmp_path):
    from PIL import Image
    normalised = np.array([[[[-1.0, 0.0], [1.0, 3.0]]]], np.float32)      # outside [0, 1]
    inside = np.array([[[[0.0, 0.2], [0.6, 1.0]]]], np.float32)
    ints = np.array([[[[-5, 7], [300, 255]]]], np.int32)
    special = np.array([[[[np.nan, np.inf], [-np.inf, 0.5]]]], np.float32)
    with SummaryRecord(str(tmp_path)) as sr:
        for tag, value in (("n", normalised), ("i", inside), ("k", ints), ("s", special)):
            sr.add_value("image", tag, ms.Tensor(value))
        sr.record(1)
    got = load_summaries(str(tmp_path))["image"]
    decode = {tag: np.array(Image.open(io.BytesIO(v[0][2]["png"]))) for tag, v in got.items()}
    np.testing.assert_array_equal(decode["n"], np.rint((normalised[0, 0] + 1) / 4 * 255))
    np.testing.assert_array_equal(decode["i"], np.rint(inside[0, 0] * 255))
    np.testing.assert_array_equal(decode["k"], [[0, 7], [255, 255]])
    np.testing.assert_array_equal(decode["s"], [[0, 255], [0, 128]])


def test_seed_examples(tmp_path, monkeypatch, capsys):
    from mscore import Tensor
    monkeypatch.chdir(tmp_path)
    with SummaryRecord(log_dir="./summary_dir") as summary_record:
        pass
    try:
        summary_record = SummaryRecord(log_dir="./summary_dir")
    finally:
        summary_record.close()
    with SummaryRecord(log_dir="./summary_dir", file_prefix="xxx_",
                       file_suffix="_yyy") as summary_record:
        summary_record.add_value('scalar', 'loss', Tensor(0.1))
        summary_record.record(step=2)
        summary_record.flush()
        print(summary_record.log_dir)
        summary_record.set_mode('eval')
    printed = capsys.readouterr().out.strip()
    assert printed == os.path.join(str(tmp_path), "summary_dir", os.path.basename(printed))
    assert os.path.basename(printed).startswith("xxx_.out.tfevents.")
    names = sorted(os.listdir(tmp_path / "summary_dir"))
    assert len(names) == 3 and all("tfevents" in n for n in names)   # none overwritten
    got = load_summaries(printed)["scalar"]["loss"]
    assert [(s, v) for s, _, v in got] == [(2, float(np.float32(0.1)))]


# -- the schema -----------------------------------------------------------------------------
def test_proto_schema_matches_tensorboard():
    from tensorboard.compat.proto import (
        event_pb2,
        histogram_pb2,
        summary_pb2,
        tensor_pb2,
        tensor_shape_pb2,
        types_pb2,
    )

    from mscore.train.summary.proto import summary_pb2 as ours
    pairs = [(ours.Event, event_pb2.Event), (ours.Summary, summary_pb2.Summary),
             (ours.Summary.Value, summary_pb2.Summary.Value),
             (ours.Summary.Image, summary_pb2.Summary.Image),
             (ours.SummaryMetadata, summary_pb2.SummaryMetadata),
             (ours.SummaryMetadata.PluginData, summary_pb2.SummaryMetadata.PluginData),
             (ours.HistogramProto, histogram_pb2.HistogramProto),
             (ours.TensorProto, tensor_pb2.TensorProto),
             (ours.TensorShapeProto, tensor_shape_pb2.TensorShapeProto),
             (ours.TensorShapeProto.Dim, tensor_shape_pb2.TensorShapeProto.Dim)]
    for mine, theirs in pairs:
        for field in mine.DESCRIPTOR.fields:
            ref = theirs.DESCRIPTOR.fields_by_name[field.name]
            assert (field.number, field.type, field.is_repeated) == \
                (ref.number, ref.type, ref.is_repeated), f"{mine.DESCRIPTOR.name}.{field.name}"
            if field.is_repeated and field.type not in (field.TYPE_MESSAGE, field.TYPE_BYTES,
                                                        field.TYPE_STRING):
                assert field.is_packed == ref.is_packed
    for value in ours.DataType.DESCRIPTOR.values:
        assert types_pb2.DataType.Value(value.name) == value.number
    for value in ours.DataClass.DESCRIPTOR.values:
        assert summary_pb2.DataClass.Value(value.name) == value.number

