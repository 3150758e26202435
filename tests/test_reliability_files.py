"""Summary and dataset files under attack or failure.

6. The lineage file is created exclusively and never through a symlink planted in the log
   directory.
7. The MNIST reader reads the IDX header first and decompresses at most what it declares.
8. Readers turn malformed input into ``ValueError``s naming the file (or the argument) and
   check declared sizes against the file before allocating.
9. ``SummaryWriteError`` names exactly the steps that did not reach the file.
"""
import errno
import gzip
import io
import json
import os
import platform
import struct
import threading
import time
import tracemalloc

import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore.dataset import MnistDataset, read_idx
from mscore.train.proto import print_pb2
from mscore.train.serialization import merge_sliced_parameter, parse_print
from mscore.train.summary import SummaryRecord, SummaryWriteError, events, load_summaries, writer
from mscore.train.summary.reader import read_events
from mscore.train.summary.writer import frame

_numpy_context = numpy_context_each_test()


# -- 6. lineage file and symlinks -------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_lineage_file_never_follows_a_planted_symlink(tmp_path):
    log_dir, victim = tmp_path / "logs", tmp_path / "victim.txt"
    log_dir.mkdir()
    victim.write_text("precious\n")
    now = int(time.time())
    host = platform.node() or "localhost"
    for seconds in range(now - 1, now + 30):  # every name the writer could pick soon
        name = writer.lineage_file_name("events", "_MS", seconds, host)
        os.symlink(victim, log_dir / name)
    with SummaryRecord(str(log_dir)) as sr:
        sr.add_value("custom_lineage_data", "c", {"version": "v1"})
        sr.record(1)
    lineage = sr.lineage_file  # the name actually created, known once it is written
    assert victim.read_text() == "precious\n"
    assert not os.path.islink(lineage)
    assert [json.loads(line)["value"] for line in open(lineage)] == [{"version": "v1"}]


# -- 7. MNIST decompression bomb -----------------------------------------------------------
def _gz(path, header, body_size):
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(header)
        f.write(bytes(body_size))


def test_mnist_gz_reader_decompresses_no_more_than_the_header_declares(tmp_path):
    path = str(tmp_path / "train-images-idx3-ubyte.gz")
    header = bytes([0, 0, 8, 3]) + struct.pack(">III", 2, 28, 28)  # 1568 bytes declared
    _gz(path, header, 32 * 1024 * 1024)                             # 32 MiB follow
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="train-images-idx3-ubyte.gz"):
            read_idx(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024, peak


def test_idx_header_declaring_more_than_the_file_can_hold_is_refused_before_reading(tmp_path):
    header = bytes([0, 0, 8, 3]) + struct.pack(">III", 60000, 10000, 10000)  # 6 TB
    gz = str(tmp_path / "big.gz")
    _gz(gz, header, 1000)
    raw = tmp_path / "big-idx3-ubyte"
    raw.write_bytes(header + bytes(1000))
    for path in (gz, str(raw)):
        with pytest.raises(ValueError, match=r"big.*declares"):
            read_idx(path)


@pytest.mark.parametrize("data", [b"\x1f\x8b\x08\x00garbage", b"\x1f\x8b"])
def test_broken_gzip_is_a_value_error_naming_the_file(tmp_path, data):
    path = tmp_path / "t10k-labels-idx1-ubyte.gz"
    path.write_bytes(data)
    with pytest.raises(ValueError, match="t10k-labels-idx1-ubyte.gz"):
        read_idx(str(path))


def test_mnist_reads_valid_gz_files(tmp_path):
    images = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    with gzip.open(tmp_path / "train-images-idx3-ubyte.gz", "wb") as f:
        f.write(bytes([0, 0, 8, 3]) + struct.pack(">III", 2, 28, 28) + images.tobytes())
    with gzip.open(tmp_path / "train-labels-idx1-ubyte.gz", "wb") as f:
        f.write(bytes([0, 0, 8, 1]) + struct.pack(">I", 2) + bytes([3, 7]))
    rows = list(MnistDataset(str(tmp_path), usage="train", shuffle=False)
                .create_tuple_iterator(output_numpy=True))
    np.testing.assert_array_equal(rows[1][0][..., 0], images[1])
    assert [int(r[1]) for r in rows] == [3, 7]


# -- 8. loaders leak no library exception ----------------------------------------------------
def test_valid_record_around_bad_protobuf_is_a_value_error(tmp_path):
    path = tmp_path / "events.out.tfevents.1.h_MS"
    path.write_bytes(frame(b"\xff\xff\xff"))
    with pytest.raises(ValueError, match="events.out.tfevents.1.h_MS.*record 0"):
        list(read_events(str(path)))
    with pytest.raises(ValueError, match="events.out.tfevents.1.h_MS"):
        load_summaries(str(tmp_path))


@pytest.mark.parametrize("length", [2 ** 62, 2 ** 40, 10_000])
def test_huge_record_length_is_checked_against_the_file_size(tmp_path, length):
    from mscore.train.summary.crc32c import masked_crc32c
    head = struct.pack("<Q", length)
    path = tmp_path / "events.out.tfevents.2.h_MS"
    path.write_bytes(head + struct.pack("<I", masked_crc32c(head)) + b"\x00" * 16)
    with pytest.raises(ValueError, match=r"events.out.tfevents.2.h_MS.*length"):
        list(read_events(str(path)))


def test_bad_tensor_summary_is_a_value_error_naming_the_file(tmp_path):
    from mscore.train.summary.proto import summary_pb2 as pb
    event = pb.Event(step=1)
    value = event.summary.value.add(tag="t")
    value.tensor.dtype = pb.DT_FLOAT
    value.tensor.tensor_content = b"\x00" * 6  # not a whole float32
    value.tensor.tensor_shape.dim.add(size=2)
    path = tmp_path / "events.out.tfevents.3.h_MS"
    path.write_bytes(frame(events.version_event(0.0).SerializeToString()) +
                     frame(event.SerializeToString()))
    with pytest.raises(ValueError, match="events.out.tfevents.3.h_MS"):
        load_summaries(str(tmp_path))


def test_merge_sliced_parameter_missing_layout_names_the_argument():
    oracle = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                         "mindspore_reliability.json")))
    assert oracle["merge_sliced_parameter_missing_name"]["exception"] == "KeyError"
    p = ms.Parameter(ms.Tensor(np.ones((2, 2), np.float32)), name="w")
    with pytest.raises(ValueError, match="strategy.*'w'") as info:
        merge_sliced_parameter([p, p], {"other": None})
    assert isinstance(info.value, KeyError)  # MindSpore's type, still caught as KeyError
    assert "'w'" in str(info.value) and not str(info.value).startswith('"')


@pytest.mark.parametrize("dims", [[0, 2 ** 40, 2 ** 40], [1] * 40, [2 ** 62, 2 ** 62]])
def test_parse_print_with_absurd_dims_names_the_file(tmp_path, dims):
    msg = print_pb2.Print()
    t = msg.value.add().tensor
    t.dims.extend(dims)
    t.tensor_type = "Float32"
    t.tensor_content = b""
    path = tmp_path / "absurd.pb"
    path.write_bytes(msg.SerializeToString())
    with pytest.raises(ValueError, match="absurd.pb"):
        parse_print(str(path))


# -- 9. the steps SummaryWriteError reports are exactly those not on disk -------------------
class _DiskFillsUp(io.RawIOBase):
    """A raw file that accepts ``budget`` bytes, then fails with ENOSPC; its first write
    waits for ``gate`` so that every event is queued before the writer thread runs."""

    def __init__(self, path, budget, gate):
        super().__init__()
        self._f = open(path, "ab", buffering=0)
        self.budget, self.gate = budget, gate

    def writable(self):
        return True

    def fileno(self):
        return self._f.fileno()

    def write(self, b):
        self.gate.wait(30)
        if self.budget <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = min(len(b), self.budget)
        self._f.write(bytes(b[:n]))
        self.budget -= n
        return n

    def close(self):
        self._f.close()
        super().close()


def test_summary_write_error_names_only_the_steps_not_on_disk(tmp_path):
    sr = SummaryRecord(str(tmp_path))
    w = sr._writer
    sr.flush()  # the writer thread now waits for the next item
    one = len(frame(events.summary_event(1, 1.0, [("scalar", "loss", np.float32(1))])
                    .SerializeToString()))
    gate = threading.Event()
    w._file.close()
    w._file = io.BufferedWriter(_DiskFillsUp(w.path, int(5.5 * one), gate), buffer_size=1)
    for step in range(1, 11):
        sr.add_value("scalar", "loss", ms.Tensor(np.float32(step)))
        sr.record(step)
    gate.set()
    with pytest.raises(SummaryWriteError) as info:
        sr.flush()
    on_disk = [e.step for e in read_events(w.path, allow_truncated_tail=True)][1:]
    assert on_disk == [1, 2, 3, 4, 5]
    message = str(info.value)
    assert "5 summary event(s) (steps 6..10)" in message, message
    sr.close()


# -- lineage files that mscore did not write -----------------------------------------------------
@pytest.mark.parametrize("line", [
    "[" * 100000 + "]" * 100000,                                      # nested past the parser
    json.dumps({"plugin": "train_lineage", "value": {"network": {"a": 1}, "optimizer": ["x"],
                                                     "loss_function": "L"}})])
def test_plot_title_ignores_lineage_it_cannot_name(tmp_path, line):
    from mscore.train.summary import plot
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "events.out.lineage.1.h_MS.jsonl").write_text(line + "\n")
    lineage = plot.train_lineage(tmp_path / "r")
    title = plot.describe_training([lineage, lineage])
    assert title == (None if line.startswith("[") else "L")


def test_mscore_plot_of_a_run_with_odd_lineage_draws(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from mscore.cli import main
    run = tmp_path / "runs" / "r1"
    with SummaryRecord(str(run)) as sr:
        for step, loss in enumerate([2.0, 1.0], 1):
            sr.add_value("scalar", "loss/auto", ms.Tensor(np.float32(loss)))
            sr.record(step)
    with open(run / "events.out.lineage.1.h_MS.jsonl", "a") as f:
        f.write("[" * 100000 + "]" * 100000 + "\n")
        f.write(json.dumps({"plugin": "train_lineage", "value": {"network": ["N"]}}) + "\n")
    assert main(["plot", str(tmp_path / "runs"), "-o", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").stat().st_size > 0
