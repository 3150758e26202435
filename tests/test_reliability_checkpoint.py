"""Checkpoints survive crashes and refuse what is not a checkpoint.

1. ``ModelCheckpoint`` writes the new file before it rotates old ones away, so a save that
   dies leaves the previous checkpoint; with async saves the count never exceeds
   ``keep_checkpoint_max`` once a save completes.
2. Temporaries have visible names saying what they are, and the next save into the folder
   removes those a dead process left behind (never one a live process still writes).
3. A file without checkpoint entries (or with entries that are not checkpoint entries) is a
   ``ValueError`` naming it, for ``load_checkpoint`` and ``parse_print`` alike.
4. Safetensors: ``crc_check`` covers the string entries of the header metadata, and a
   metadata entry never replaces a tensor of the same name.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import nn
from mscore.dataset import NumpySlicesDataset
from mscore.train import Callback, CheckpointConfig, Model, ModelCheckpoint
from mscore.train.proto import checkpoint_pb2, node_strategy_pb2, print_pb2
from mscore.train.serialization import (
    _checkpoint,
    build_searched_strategy,
    load_checkpoint,
    parse_print,
    save_checkpoint,
    wait_async_save,
)

DATA = os.path.join(os.path.dirname(__file__), "data")


_numpy_context = numpy_context_each_test(seed=0)


class _Crash(BaseException):
    """Stands in for the process dying inside a save."""


def _model():
    net = nn.Dense(4, 3)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    return Model(net, nn.CrossEntropyLoss(), opt), net


def _dataset(steps=6):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2 * steps, 4)).astype(np.float32)
    y = x[:, :3].argmax(1).astype(np.int32)
    return NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(2)


def _crash_on_save(monkeypatch, number):
    """Make the ``number``-th checkpoint write (counting from 1) die half-way through."""
    real = _checkpoint._write_ckpt
    count = [0]

    def write(f, entries, crc_check):
        count[0] += 1
        if count[0] == number:
            f.write(b"\x0a\x05half")
            f.flush()
            raise _Crash()
        real(f, entries, crc_check)

    monkeypatch.setattr(_checkpoint, "_write_ckpt", write)


def _ckpts(folder):
    return sorted(n for n in os.listdir(folder) if n.endswith(".ckpt"))


# -- 1. write first, then rotate -------------------------------------------------------------
@pytest.mark.parametrize("async_save", [False, True])
def test_a_save_that_dies_leaves_the_previous_checkpoint(tmp_path, monkeypatch, async_save):
    model, net = _model()
    _crash_on_save(monkeypatch, 3)
    cfg = CheckpointConfig(save_checkpoint_steps=1, keep_checkpoint_max=1, async_save=async_save)
    with pytest.raises((_Crash, RuntimeError)):
        model.train(1, _dataset(), callbacks=[ModelCheckpoint("c", str(tmp_path), cfg)])
        wait_async_save()  # an async save reports the failure here
    assert _ckpts(tmp_path) == ["c-1_2.ckpt"]
    assert set(load_checkpoint(str(tmp_path / "c-1_2.ckpt"))) >= {"weight", "bias"}
    assert os.listdir(tmp_path) == ["c-1_2.ckpt"]  # the dead save's temporary is gone too


class _CountAfterSave(Callback):
    """After ModelCheckpoint's save of each step completes, record the files on disk."""

    def __init__(self, folder):
        super().__init__()
        self.folder, self.counts = folder, []

    def on_train_step_end(self, run_context):
        wait_async_save()
        self.counts.append(_ckpts(self.folder))


def test_async_saves_never_keep_more_than_the_maximum(tmp_path):
    model, _ = _model()
    cfg = CheckpointConfig(save_checkpoint_steps=1, keep_checkpoint_max=2, async_save=True)
    counter = _CountAfterSave(str(tmp_path))
    model.train(1, _dataset(), callbacks=[ModelCheckpoint("a", str(tmp_path), cfg), counter])
    assert [len(files) for files in counter.counts] == [1, 2, 2, 2, 2, 2]
    assert counter.counts[-1] == ["a-1_5.ckpt", "a-1_6.ckpt"]


def test_keep_one_per_n_minutes_rotates_after_writing_too(tmp_path, monkeypatch):
    # MindSpore's policy: of the files of the last n minutes only the oldest stays, plus the
    # newest; a save that dies leaves the previous newest
    model, _ = _model()
    cfg = CheckpointConfig(save_checkpoint_steps=1, keep_checkpoint_max=0,
                           keep_checkpoint_per_n_minutes=5)
    model.train(1, _dataset(), callbacks=[ModelCheckpoint("m", str(tmp_path / "a"), cfg)])
    assert _ckpts(tmp_path / "a") == ["m-1_1.ckpt", "m-1_6.ckpt"]
    _crash_on_save(monkeypatch, 6)
    with pytest.raises(_Crash):
        model.train(1, _dataset(), callbacks=[ModelCheckpoint("m", str(tmp_path / "b"), cfg)])
    assert _ckpts(tmp_path / "b") == ["m-1_1.ckpt", "m-1_5.ckpt"]


# -- 2. visible temporaries, stale ones cleaned ----------------------------------------------
def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temporaries_have_visible_names_that_say_what_they_are(tmp_path, monkeypatch):
    seen = []
    real = _checkpoint._write_ckpt

    def write(f, entries, crc_check):
        seen.extend(os.listdir(tmp_path))
        real(f, entries, crc_check)

    monkeypatch.setattr(_checkpoint, "_write_ckpt", write)
    save_checkpoint({"w": ms.Tensor(np.ones(3, np.float32))}, str(tmp_path / "m.ckpt"))
    assert len(seen) == 1
    name = seen[0]
    assert not name.startswith(".")
    assert name.startswith("mscore-partial.") and name.endswith(".tmp")
    assert f".{os.getpid()}." in name and len(name) < 48


def test_the_next_save_removes_temporaries_of_dead_processes_only(tmp_path):
    from mscore.train.serialization._atomic import _old_host, temporary_prefix
    dead = tmp_path / (temporary_prefix(_dead_pid()) + "abc123.tmp")
    live = tmp_path / (temporary_prefix(os.getppid()) + "def456.tmp")
    other_host = tmp_path / (temporary_prefix(_dead_pid(), "0123abcd") + "g7.tmp")
    # the older form, with the target's name and the host's name, is cleaned up alike
    dead_old = tmp_path / f"old.ckpt.mscore-partial.{_old_host()}.{_dead_pid()}.x1.tmp"
    unrelated = tmp_path / "notes.tmp"
    for f in (dead, live, other_host, dead_old, unrelated):
        f.write_bytes(b"\x00" * 64)
    save_checkpoint({"w": ms.Tensor(np.ones(3, np.float32))}, str(tmp_path / "new.ckpt"))
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["new.ckpt", live.name, other_host.name, unrelated.name])


_KILLED_SAVE = r"""
import os, signal, sys
import numpy as np
import mscore as ms
from mscore.train.serialization import _checkpoint, save_checkpoint
real = _checkpoint._write_ckpt
def dying(f, entries, crc_check):
    f.write(b"\x0a" * 4096); f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
_checkpoint._write_ckpt = dying
save_checkpoint({"w": ms.Tensor(np.ones(4, np.float32))}, sys.argv[1])
"""


@pytest.mark.skipif(not hasattr(os, "kill") or sys.platform == "win32", reason="POSIX kill")
def test_a_killed_save_leaves_a_visible_temporary_that_the_next_save_removes(tmp_path):
    target = str(tmp_path / "k.ckpt")
    proc = subprocess.run([sys.executable, "-c", _KILLED_SAVE, target], capture_output=True,
                          timeout=120)
    assert proc.returncode == -9, proc.stderr
    left = os.listdir(tmp_path)
    assert len(left) == 1 and left[0].startswith("mscore-partial.")
    save_checkpoint({"w": ms.Tensor(np.ones(4, np.float32))}, target)
    assert os.listdir(tmp_path) == ["k.ckpt"]


# -- 3. files that are not checkpoints --------------------------------------------------------
def _strategy_bytes():
    msg = node_strategy_pb2.ParallelStrategyMap(current_stage=0)
    item = msg.parallel_layout_item.add(param_name="w")
    lay = item.parallel_layouts
    lay.dev_matrix.add().dim.extend([2])
    lay.tensor_map.add().dim.extend([0])
    lay.field, lay.opt_weight_shard_step, lay.opt_weight_shard_size = 0, 0, 0
    return msg.SerializeToString()


def _print_bytes():
    msg = print_pb2.Print()
    msg.value.add(desc="loss:")
    t = msg.value.add().tensor
    t.dims.append(2)
    t.tensor_type = "Float32"
    t.tensor_content = np.ones(2, "<f4").tobytes()
    return msg.SerializeToString()


def _entry_without_tensor():
    msg = checkpoint_pb2.Checkpoint()
    msg.value.add(tag="w")
    return msg.SerializePartialToString()


NOT_CHECKPOINTS = {
    "two_bytes": b"\x08\x01",
    "crc_footer_only": b"crc_num" + (0).to_bytes(10, "big"),
    "strategy": _strategy_bytes(),
    "print_file": _print_bytes(),
    "entry_without_tensor": _entry_without_tensor(),
    "unknown_field": b"\x10\x05" + b"\x0a\x00",
}


@pytest.mark.parametrize("kind", sorted(NOT_CHECKPOINTS))
def test_a_file_without_checkpoint_entries_is_refused(tmp_path, kind):
    path = tmp_path / f"{kind}.ckpt"
    path.write_bytes(NOT_CHECKPOINTS[kind])
    with pytest.raises(ValueError, match=f"{kind}.ckpt"):
        load_checkpoint(str(path))
    net = nn.Dense(2, 2)
    with pytest.raises(ValueError, match=f"{kind}.ckpt"):
        load_checkpoint(str(path), net, strict_load=True)


def test_a_filter_that_leaves_nothing_is_a_value_error_as_in_mindspore(tmp_path):
    oracle = json.load(open(os.path.join(DATA, "mindspore_reliability.json")))
    assert oracle["load_checkpoint_empty"]["exception"] == "ValueError"
    path = str(tmp_path / "f.ckpt")
    save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, path)
    with pytest.raises(ValueError, match="filter_prefix"):
        load_checkpoint(path, filter_prefix="w")
    with pytest.raises(ValueError, match="choice_func"):
        load_checkpoint(path, choice_func=lambda name: False)


@pytest.mark.parametrize("kind", ["two_bytes", "checkpoint", "strategy", "unknown_field"])
def test_parse_print_refuses_other_files(tmp_path, kind):
    data = {"two_bytes": b"\x08\x01", "strategy": _strategy_bytes(),
            "unknown_field": _print_bytes() + b"\x18\x07"}.get(kind)
    if kind == "checkpoint":
        save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, str(tmp_path / "c.ckpt"))
        data = (tmp_path / "c.ckpt").read_bytes()
    path = tmp_path / f"{kind}.pb"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=f"{kind}.pb"):
        parse_print(str(path))


def test_build_searched_strategy_refuses_a_checkpoint(tmp_path):
    save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, str(tmp_path / "c.ckpt"))
    with pytest.raises(ValueError, match="c.ckpt"):
        build_searched_strategy(str(tmp_path / "c.ckpt"))


# -- 4. safetensors metadata -----------------------------------------------------------------
def _rewrite_header(path, edit):
    data = path.read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    edit(header)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + data[8 + n:])


def test_safetensors_crc_covers_string_entries(tmp_path):
    path = tmp_path / "s.safetensors"
    save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, str(path), format="safetensors",
                    append_dict={"note": "trained on A"}, crc_check=True)
    assert load_checkpoint(str(path), format="safetensors", crc_check=True)["note"] == \
        "trained on A"

    def tamper(header):
        header["__metadata__"]["mscore:str:note"] = "trained on B"

    _rewrite_header(path, tamper)
    with pytest.raises(ValueError, match="s.safetensors.*CRC"):
        load_checkpoint(str(path), format="safetensors", crc_check=True)
    with pytest.raises(ValueError, match="CRC"):  # a stored CRC is always verified
        load_checkpoint(str(path), format="safetensors")


def test_a_metadata_entry_never_replaces_a_tensor(tmp_path):
    from safetensors.numpy import save_file
    path = tmp_path / "clash.safetensors"
    save_file({"w": np.ones(2, np.float32)}, str(path), metadata={"mscore:str:w": "text"})
    with pytest.raises(ValueError, match="clash.safetensors.*'w'"):
        load_checkpoint(str(path), format="safetensors")


def test_longest_file_names_save_and_errors_name_the_users_path(tmp_path):
    w = {"w": ms.Tensor(np.ones(3, np.float32))}
    longest = tmp_path / ("n" * 250 + ".ckpt")  # 255 bytes, the usual file-name limit
    save_checkpoint(w, str(longest))
    assert os.listdir(tmp_path) == [longest.name]
    np.testing.assert_array_equal(ms.load_checkpoint(str(longest))["w"].asnumpy(), np.ones(3))
    too_long = str(tmp_path / ("n" * 251 + ".ckpt"))
    with pytest.raises(OSError) as info:
        save_checkpoint(w, too_long)
    assert info.value.filename == too_long and "mscore-partial" not in str(info.value)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        with pytest.raises(OSError) as info:
            save_checkpoint(w, str(locked / "m.ckpt"))
        assert info.value.filename == str(locked / "m.ckpt")
    finally:
        locked.chmod(0o700)


def test_model_checkpoint_refuses_a_nul_or_over_long_prefix_at_once(tmp_path):
    from mscore.train.callback import ModelCheckpoint
    with pytest.raises(ValueError, match="NUL"):
        ModelCheckpoint(prefix="net\0x", directory=str(tmp_path))
    with pytest.raises(ValueError, match="at most 200"):
        ModelCheckpoint(prefix="p" * 201, directory=str(tmp_path))
    ModelCheckpoint(prefix="p" * 200, directory=str(tmp_path))


# -- 5. trainings sharing a folder never share a prefix ------------------------------------------
_SHARED_FOLDER = """
import os, sys, time
import numpy as np
import mscore as ms
from mscore import nn
from mscore.dataset import NumpySlicesDataset
from mscore.train import CheckpointConfig, Model, ModelCheckpoint
folder, ready, index, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ms.set_context(backend="numpy")
net = nn.Dense(4, 3)
model = Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9))
x = np.ones((16, 4), np.float32)
data = NumpySlicesDataset((x, np.zeros(16, np.int32)), ["x", "y"], shuffle=False).batch(2)
open(os.path.join(ready, index), "w").close()
deadline = time.monotonic() + 60
while len(os.listdir(ready)) < count and time.monotonic() < deadline:
    time.sleep(0.001)   # every process is ready: all choose their prefix at once
cb = ModelCheckpoint("CKP", folder, CheckpointConfig(save_checkpoint_steps=1,
                                                     keep_checkpoint_max=2))
model.train(1, data, callbacks=[cb])
print("PREFIX", cb.prefix)
"""


def test_trainings_starting_together_in_one_folder_get_their_own_prefixes(tmp_path):
    folder, ready = tmp_path / "ckpt", tmp_path / "ready"
    folder.mkdir()
    ready.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", _SHARED_FOLDER, str(folder), str(ready),
                               str(i), "4"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(4)]
    outs = []
    try:
        for proc in procs:
            outs.append(proc.communicate(timeout=120))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert [p.returncode for p in procs] == [0] * 4, outs
    prefixes = sorted(line.split()[1] for out, _ in outs for line in out.splitlines()
                      if line.startswith("PREFIX"))
    assert prefixes == ["CKP", "CKP_1", "CKP_2", "CKP_3"], outs
    # each kept its own two newest files (8 steps), and no claim is left behind
    assert sorted(os.listdir(folder)) == sorted(f"{p}-1_{s}.ckpt" for p in prefixes
                                                for s in (7, 8))


def test_a_claim_of_a_live_process_renames_one_of_an_ended_process_does_not(tmp_path):
    import socket
    claim = tmp_path / ".CKP.mscore-claim"
    claim.write_text(f"{socket.gethostname()} {os.getppid()}\n")   # alive: pytest's parent
    assert ModelCheckpoint("CKP", str(tmp_path)).prefix == "CKP_1"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    other = tmp_path / "other"
    other.mkdir()
    (other / ".CKP.mscore-claim").write_text(f"{socket.gethostname()} {dead}\n")
    assert ModelCheckpoint("CKP", str(other)).prefix == "CKP"


def test_the_prefix_lock_of_an_ended_process_is_taken_over_and_a_held_one_not_waited_on_forever(
        tmp_path, monkeypatch, caplog):
    import socket

    from mscore.train.callback import _checkpoint
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    lock = tmp_path / ".mscore-prefix.lock"
    lock.write_text(f"{socket.gethostname()} {dead}\n")
    start = time.monotonic()
    assert ModelCheckpoint("CKP", str(tmp_path)).prefix == "CKP"
    assert time.monotonic() - start < 5
    assert not lock.exists()   # taken over, then released
    other = tmp_path / "other"
    other.mkdir()
    held = other / ".mscore-prefix.lock"
    held.write_text(f"{socket.gethostname()} {os.getppid()}\n")   # alive: pytest's parent
    monkeypatch.setattr(_checkpoint, "_LOCK_WAIT_S", 0.2)
    with caplog.at_level("WARNING", logger="mscore.callback"):
        assert ModelCheckpoint("CKP", str(other)).prefix == "CKP"
    assert "held by another process" in caplog.text
    assert held.exists()   # not ours: left alone


def test_rotation_survives_a_file_another_process_removed(tmp_path):
    from mscore.train.callback import _checkpoint_manager
    for step in (1, 2, 3):
        (tmp_path / f"net-1_{step}.ckpt").write_bytes(b"x")
        os.utime(tmp_path / f"net-1_{step}.ckpt", (step, step))
    manager = _checkpoint_manager.CheckpointManager()
    manager.update_ckpoint_filelist(str(tmp_path), "net")
    os.remove(tmp_path / "net-1_2.ckpt")   # another process rotated it away meanwhile
    manager.remove_oldest_ckpoint_file()   # the missing file counts as the oldest, gone
    manager.remove_oldest_ckpoint_file()
    assert manager.ckpoint_filelist == [str(tmp_path / "net-1_3.ckpt")]
    assert os.listdir(tmp_path) == ["net-1_3.ckpt"]
    manager.keep_one_ckpoint_per_minutes(1, 10.0)
