"""Worker processes of the dataset pipeline (``python_multiprocessing=True``): what runs in
them (checked against MindSpore 2.10's behaviour recorded in
``tests/data/dataset_workers_oracle.json`` by ``tests/data/make_dataset_workers_oracle.py``),
rows in order and seeded per row, a dying worker named, and no process left behind."""
import copy
import gc
import glob
import json
import multiprocessing
import multiprocessing.forkserver
import multiprocessing.resource_tracker
import os
import pathlib
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from _dataset_worker_ops import (
    Broken,
    Locked,
    die,
    hang_on_row_2,
    kill_self,
    noisy,
    pid_of,
    plus_ten,
    segfault,
    to_none,
    unloadable,
    unsendable,
)

import mscore as ms
import mscore.dataset as ds
from conftest import subprocess_env
from mscore import _state
from mscore.dataset import config, vision
from mscore.dataset.engine import map_workers
from mscore.train.dataset_helper import DatasetHelper

ORACLE = json.loads((pathlib.Path(__file__).parent / "data" /
                     "dataset_workers_oracle.json").read_text())
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _fresh_state():
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    ds.config.set_seed(7)
    yield
    ds.config.set_multiprocessing_start_method("fork")
    _state.reset()


def _infrastructure():
    """multiprocessing's own helper processes (the fork server, the resource tracker)."""
    pids = set()
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    if server is not None and getattr(server, "_forkserver_pid", None):
        pids.add(server._forkserver_pid)
    tracker = multiprocessing.resource_tracker._resource_tracker
    if getattr(tracker, "_pid", None):
        pids.add(tracker._pid)
    return pids


def _live_processes():
    """``(pid, fields)`` of every process that is not a zombie, from /proc: ``fields`` are
    its stat fields after the command name (state, parent, group, session, ...)."""
    for path in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if fields[0] != "Z":
            yield int(text.split()[0]), fields


def _descendants():
    """The pids of every process below this one, read from /proc."""
    parent = {pid: int(fields[1]) for pid, fields in _live_processes()}
    found, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        kids = [p for p, pp in parent.items() if pp == pid]
        found.update(kids)
        todo.extend(kids)
    return found


def _workers_alive():
    """Worker processes still running (below the fork server or this process)."""
    return _descendants() - _infrastructure()


@pytest.fixture
def no_leftovers():
    """The test leaves no worker process running."""
    gc.collect()
    before = _workers_alive()
    yield
    gc.collect()
    left = _workers_alive() - before
    assert not left, f"worker processes left running: {sorted(left)}"


def _src(n=6):
    return ds.NumpySlicesDataset({"x": np.arange(n, dtype=np.int64)}, shuffle=False)


def _col(dataset, i=0, epochs=1):
    it = dataset.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    out = [[np.asarray(r[i]).tolist() for r in it] for _ in range(epochs)]
    return out[0] if epochs == 1 else out


# -- the recorded MindSpore behaviour ----------------------------------------------------------
def _run_case(name):
    pytest.importorskip("cloudpickle", reason="the snippets' lambdas travel with cloudpickle")
    ns = {"ds": ds, "np": np, "os": os, "__name__": "dataset_workers_snippet"}
    exec(ORACLE["prelude"], ns)
    try:
        exec(ORACLE["cases"][name]["code"], ns)
    except Exception as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    return {"result": json.loads(json.dumps(ns["result"], default=lambda a: a.tolist()))}


_COMPARED = sorted(n for n, c in ORACLE["cases"].items() if not c["differs"])


@pytest.mark.parametrize("name", _COMPARED)
def test_matches_mindspore(name, no_leftovers):
    want, got = ORACLE["cases"][name], _run_case(name)
    if "result" in want:
        assert got == {"result": want["result"]}
        return
    assert got.get("error") == want["error"], got
    if "max_rowsize" in name:
        assert got["message"] == want["message"]
    if want["error"] == "RuntimeError":   # MindSpore's message names neither: mscore's does
        assert "map operation <lambda> on column(s) ['x']" in got["message"]


def test_oracle_records_what_mscore_does_otherwise():
    differs = {n for n, c in ORACLE["cases"].items() if c["differs"]}
    assert differs == {"map_returns_dict", "map_returns_dict_mp", "map_worker_exits",
                       "map_worker_killed", "map_mp_more_workers_than_cpus"}
    # MindSpore ends the whole program when a worker dies; mscore raises, naming the worker
    assert ORACLE["cases"]["map_worker_exits"]["crash"] == -signal.SIGTERM
    assert ORACLE["cases"]["map_returns_dict"]["result"][0] == {"dict": {"a": 0}}


# -- seeds, order, epochs ------------------------------------------------------------------------
def _expected_noise(seed, epoch, n):
    out = []
    for row in range(n):
        s = int(np.random.SeedSequence([seed, epoch, row]).generate_state(1)[0])
        random.seed(s)
        np.random.seed(s)
        out.append(row * 1000 + np.random.randint(1000) + random.randrange(7) * 10 ** 6)
    return out


@pytest.mark.parametrize("workers", [1, 3])
def test_rows_seeded_per_row_whatever_the_worker_count(workers, no_leftovers):
    data = _src(7).map(noisy, python_multiprocessing=True, num_parallel_workers=workers)
    epochs = _col(data, epochs=2)
    assert epochs == [_expected_noise(7, 0, 7), _expected_noise(7, 1, 7)]


def test_random_transforms_do_not_depend_on_the_worker_count(no_leftovers):
    images = np.arange(8 * 2 * 3 * 1, dtype=np.uint8).reshape(8, 2, 3, 1)
    runs = []
    for workers in (1, 2, 2):
        data = ds.NumpySlicesDataset({"image": images}, shuffle=False).map(
            vision.RandomHorizontalFlip(0.5), python_multiprocessing=True,
            num_parallel_workers=workers)
        runs.append(np.asarray(_col(data, epochs=2)))
    flipped = (runs[0] == images[None, :, :, ::-1]).all(axis=(2, 3, 4))
    kept = (runs[0] == images[None]).all(axis=(2, 3, 4))
    assert (flipped | kept).all() and flipped.any() and kept.any()
    assert (flipped[0] != flipped[1]).any()          # another draw in the next epoch
    assert (runs[1] == runs[0]).all() and (runs[2] == runs[0]).all()


def test_workers_kept_across_epochs_then_stopped(no_leftovers):
    data = _src(8).map(pid_of, python_multiprocessing=True, num_parallel_workers=2)
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=3)
    pids = [{int(r[0]) for r in it} for _ in range(3)]
    assert len(pids[0]) == 2 and pids[0] == pids[1] == pids[2]
    assert os.getpid() not in pids[0]
    gc.collect()
    assert not (pids[0] & _workers_alive())     # the iterator read its 3 epochs


def test_a_training_loop_keeps_its_workers_across_epochs(no_leftovers):
    data = _src(6).map(pid_of, python_multiprocessing=True, num_parallel_workers=2)
    helper = DatasetHelper(data, dataset_sink_mode=False)
    pids = [{int(row[0].asnumpy()) for row in helper} for _ in range(3)]
    assert len(pids[0]) == 2 and pids[0] == pids[1] == pids[2]
    assert pids[0] <= _workers_alive()
    map_workers.release_workers(helper.dataset)
    assert not (pids[0] & _workers_alive())


class _PidsSeen(ms.nn.Cell):
    """The worker pids a step or evaluation receives, kept in ``pids``."""

    def __init__(self):
        super().__init__()
        self.pids = set()

    def construct(self, pid):
        self.pids.add(int(pid.asnumpy()))
        return ms.ops.cast(pid, ms.float32)


def test_model_train_and_eval_leave_no_idle_workers(no_leftovers):
    data = _src(6).map(pid_of, python_multiprocessing=True, num_parallel_workers=2)
    net = _PidsSeen()
    model = ms.train.Model(net, eval_network=net, metrics={"loss"})
    model.train(2, data)
    assert len(net.pids) == 2 and os.getpid() not in net.pids
    assert not (net.pids & _workers_alive())     # ended with the run, not at collection
    trained = set(net.pids)
    model.eval(data)
    assert len(net.pids - trained) == 2          # evaluation started its own
    assert not (net.pids & _workers_alive())


def test_workers_stop_when_the_iterator_is_dropped_mid_epoch(no_leftovers):
    data = _src(40).map(pid_of, python_multiprocessing=True, num_parallel_workers=2)
    it = data.create_tuple_iterator(output_numpy=True)
    pids = {int(next(it)[0]), int(next(it)[0])}
    assert pids <= _workers_alive()
    del it
    gc.collect()
    assert not (pids & _workers_alive())


def _loop_that_raises(data):
    for _ in data:
        raise KeyError("the training loop failed")


def test_workers_stop_when_the_main_process_raises(no_leftovers):
    data = _src(40).map(plus_ten, python_multiprocessing=True, num_parallel_workers=2)
    with pytest.raises(KeyError):
        _loop_that_raises(data)


def test_two_passes_at_once_get_their_own_rows(no_leftovers):
    data = _src(5).map(plus_ten, python_multiprocessing=True, num_parallel_workers=2)
    a = data.create_tuple_iterator(output_numpy=True, num_epochs=1)
    b = data.create_tuple_iterator(output_numpy=True, num_epochs=1)
    got = [(int(next(a)[0]), int(next(b)[0])) for _ in range(5)]
    assert got == [(i + 10, i + 10) for i in range(5)]
    del a, b


def test_a_copied_pipeline_starts_its_own_workers(no_leftovers):
    data = _src(4).map(pid_of, python_multiprocessing=True, num_parallel_workers=2)
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=2)
    mine = {int(r[0]) for r in it}
    theirs = set(_col(copy.deepcopy(data)))
    assert len(theirs) == 2 and not (mine & theirs)
    assert {int(r[0]) for r in it} == mine
    del it


def test_spawn_start_method(no_leftovers):
    ds.config.set_multiprocessing_start_method("spawn")
    data = _src(4).map(pid_of, python_multiprocessing=True, num_parallel_workers=2)
    pids = _col(data)
    assert os.getpid() not in pids and len(set(pids)) == 2


# -- failures are named --------------------------------------------------------------------------
@pytest.mark.parametrize("fn, how", [(die, "exited with code 3"),
                                     (kill_self, r"was killed by SIGKILL \(signal 9\)"),
                                     (segfault, r"was killed by SIGSEGV \(signal 11\)")])
def test_a_worker_that_dies_is_named(fn, how, no_leftovers):
    data = _src().map(fn, python_multiprocessing=True, num_parallel_workers=2)
    with pytest.raises(RuntimeError, match=rf"^map\({fn.__name__}\): worker process 1 of 2 "
                                           rf"\(pid \d+\) {how} while processing row 3"):
        _col(data)


def test_a_dying_generator_worker_is_named(no_leftovers):
    class Dies:
        def __getitem__(self, i):
            if i == 2:
                os._exit(5)
            return np.array(i)

        def __len__(self):
            return 4
    pytest.importorskip("cloudpickle", reason="a local class travels with cloudpickle")
    data = ds.GeneratorDataset(Dies(), ["x"], shuffle=False, num_parallel_workers=2)
    with pytest.raises(RuntimeError, match=r"GeneratorDataset\(source Dies\): worker process 0 "
                                           r"of 2 .* exited with code 5"):
        _col(data)


def test_map_returning_none_in_a_worker_names_map_and_column(no_leftovers):
    data = _src().map(to_none, python_multiprocessing=True, num_parallel_workers=2)
    with pytest.raises(RuntimeError, match=r"map operation to_none on column\(s\) \['x'\] "
                                           r"returned None"):
        _col(data)


def test_an_operation_that_cannot_be_sent_is_named():
    with pytest.raises(TypeError, match=r"map\(Locked\): cannot be sent to a worker process "
                                        r"\(python_multiprocessing=True\) \(operation Locked "
                                        r"cannot be pickled\)"):
        _src().map(Locked(), python_multiprocessing=True, num_parallel_workers=2)


def test_without_cloudpickle_a_lambda_is_refused_with_a_hint(monkeypatch):
    import pickle
    monkeypatch.setattr(map_workers, "_pickler", lambda: pickle)
    with pytest.raises(TypeError, match="define it at module level of an importable module, "
                                        "install cloudpickle; or pass "
                                        "python_multiprocessing=False"):
        _src().map(lambda x: x, python_multiprocessing=True, num_parallel_workers=2)


def test_batch_sampler_source_failure_in_a_worker_is_wrapped(no_leftovers):
    data = ds.GeneratorDataset(Broken(), ["x"], batch_sampler=[[0, 1], [2, 3]],
                               num_parallel_workers=2)
    with pytest.raises(RuntimeError, match="GeneratorDataset source raised KeyError") as info:
        _col(data)
    assert isinstance(info.value.__cause__, KeyError)


def test_python_multiprocessing_false_stays_in_this_process():
    data = _src().map(pid_of, num_parallel_workers=2)
    assert set(_col(data)) == {os.getpid()}
    assert config.get_multiprocessing_start_method() == "fork"


def test_an_unguarded_main_script_is_explained(tmp_path, run_py):
    script = tmp_path / "unguarded.py"
    script.write_text("import numpy as np\nimport mscore.dataset as ds\n"
                      "d = ds.NumpySlicesDataset({'x': np.arange(4)}, shuffle=False).map(\n"
                      "    np.negative, python_multiprocessing=True, num_parallel_workers=2)\n"
                      "print(list(d.create_tuple_iterator(output_numpy=True, num_epochs=1)))\n")
    proc = run_py([str(script)], cwd=str(tmp_path), timeout=60)
    assert proc.returncode == 1
    assert "exited with code 1 while starting" in proc.stderr
    assert "if __name__ == '__main__':" in proc.stderr


_HOLDS_WORKERS = """
import os, sys, time
import numpy as np
import mscore.dataset as ds

def pid_of(x):
    return np.array(os.getpid(), np.int64)

if __name__ == "__main__":
    data = ds.NumpySlicesDataset({"x": np.arange(50)}, shuffle=False).map(
        pid_of, python_multiprocessing=True, num_parallel_workers=2)
    it = data.create_tuple_iterator(output_numpy=True)
    print(int(next(it)[0]), int(next(it)[0]), flush=True)
    time.sleep(120)
"""


def test_workers_end_when_the_main_process_is_killed(tmp_path):
    script = tmp_path / "holds_workers.py"
    script.write_text(_HOLDS_WORKERS)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            cwd=str(tmp_path), env=subprocess_env())
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(set(pids)) == 2 and all(os.path.exists(f"/proc/{p}") for p in pids)
        proc.kill()
        proc.wait(10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
            time.sleep(0.1)
        assert not [p for p in pids if os.path.exists(f"/proc/{p}")]
    finally:
        proc.kill()
        proc.wait(10)
        proc.stdout.close()


# -- results that cannot travel, rows that never end -------------------------------------------
@pytest.mark.parametrize("op, words", [
    (unsendable, r"the result of worker process \d \(while processing row 0\) cannot be "
                 r"pickled to be sent back: TypeError: this array refuses to be pickled"),
    (unloadable, r"what worker process \d sent back \(while processing row 0\) cannot be "
                 r"unpickled in the main process: ValueError: this array refuses to be "
                 r"unpickled")])
def test_a_result_that_cannot_travel_names_the_map_and_the_row(op, words, no_leftovers):
    data = _src().map(op, python_multiprocessing=True, num_parallel_workers=2)
    with pytest.raises(RuntimeError, match=rf"map\({op.__name__}\): {words}"):
        _col(data)


def test_an_object_array_from_a_map_is_refused_in_a_worker(no_leftovers):
    data = _src().map(lambda x: np.array([x, None], dtype=object), python_multiprocessing=True,
                      num_parallel_workers=2)
    with pytest.raises(RuntimeError, match=r"map operation <lambda> on column\(s\) \['x'\] "
                                           r"returned an array of dtype object"):
        _col(data)


def test_a_row_past_the_timeout_is_named_and_the_workers_stopped(no_leftovers, caplog):
    config.set_multiprocessing_timeout(2.5)
    config.set_multiprocessing_timeout_interval(1)
    data = _src().map(hang_on_row_2, python_multiprocessing=True, num_parallel_workers=2)
    started = time.monotonic()
    with caplog.at_level("WARNING", logger="mscore.dataset"):
        with pytest.raises(RuntimeError, match=r"map\(hang_on_row_2\): worker process 0 of 2 "
                                               r"\(pid \d+\) took more than 2.5 s while "
                                               r"processing row 2"):
            _col(data)
    assert 2.5 <= time.monotonic() - started < 20
    assert "has been busy while processing row 2" in caplog.text


def test_the_timeout_is_checked():
    assert config.get_multiprocessing_timeout() == 0
    for bad in (-1, float("nan"), "3", True):
        with pytest.raises(ValueError, match="seconds: expected a finite number >= 0"):
            config.set_multiprocessing_timeout(bad)


_STUCK = """
import sys
sys.path.insert(0, {tests!r})
import mscore.dataset as ds
import numpy as np
from _dataset_worker_ops import hang_on_row_2
data = ds.NumpySlicesDataset({{"x": np.arange(6)}}, shuffle=False).map(
    hang_on_row_2, python_multiprocessing=True, num_parallel_workers=2)
try:
    for row in data.create_tuple_iterator(output_numpy=True, num_epochs=1):
        print("row", int(row[0]), flush=True)
except KeyboardInterrupt as exc:
    print("INTERRUPTED", exc, flush=True)
"""


def _session_members(sid):
    return [pid for pid, fields in _live_processes() if int(fields[3]) == sid]


@pytest.mark.skipif(sys.platform != "linux", reason="sessions read from /proc")
def test_ctrl_c_on_a_stuck_row_names_it_and_leaves_no_worker():
    script = _STUCK.format(tests=str(pathlib.Path(__file__).parent))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=subprocess_env())
    try:
        assert proc.stdout.readline().strip() == "row 0"
        assert proc.stdout.readline().strip() == "row 1"
        time.sleep(0.5)    # the main process waits for row 2 now
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        deadline = time.monotonic() + 10
        while _session_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = _session_members(proc.pid)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for pid in _session_members(proc.pid):
            os.kill(pid, signal.SIGKILL)
    assert "INTERRUPTED map(hang_on_row_2): interrupted after" in out, (out, err)
    assert "waiting for worker process 0 of 2" in out and "while processing row 2" in out
    assert left == []
