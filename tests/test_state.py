"""``mscore._state.reset()`` returns every piece of state to its import-time value."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import mscore as ms
from mscore import _state
from mscore.dataset import config as ds_config


def _snapshot():
    """What a fresh process reports for each piece of state (read through public APIs)."""
    return {
        "mode": ms.get_context("mode"),
        "device_target": ms.get_context("device_target"),
        "device_id": ms.get_context("device_id"),
        "deterministic": ms.get_context("deterministic"),
        "seed": ms.get_seed(),
        "dataset_seed_set": ds_config.seed_is_set(),
        "prefetch": ds_config.get_prefetch_size(),
        "parallel_mode": ms.get_auto_parallel_context("parallel_mode"),
        "device_num": ms.get_auto_parallel_context("device_num"),
        "fusion": ms.get_auto_parallel_context("all_reduce_fusion_config"),
    }


def test_reset_restores_defaults_after_changes():
    _state.reset()
    fresh = _snapshot()
    assert fresh == {"mode": ms.PYNATIVE_MODE, "device_target": "CPU", "device_id": 0,
                     "deterministic": "OFF", "seed": None, "dataset_seed_set": False,
                     "prefetch": 4, "parallel_mode": "stand_alone", "device_num": 1,
                     "fusion": []}
    ms.set_context(backend="numpy", mode=ms.GRAPH_MODE, device_id=1)
    ms.set_deterministic(True)
    ms.set_seed(7)
    ds_config.set_seed(3)
    ds_config.set_prefetch_size(9)
    ms.set_auto_parallel_context(parallel_mode="data_parallel", device_num=4,
                                 all_reduce_fusion_config=[2])
    ms.ops.rand(2)   # makes the global random stream
    thread = _state.thread
    thread.exporting, thread.tracing_depth = True, 2
    changed = _snapshot()
    assert [k for k in fresh if changed[k] == fresh[k]] == ["device_target"]
    _state.reset()
    assert _snapshot() == fresh
    assert _state.process.backend is None and _state.process.context["backend"] is None
    assert _state.process.random_stream == {"param": None, "backend": None}
    assert (thread.exporting, thread.tracing_depth, thread.compiled_depth) == (False, 0, 0)
    assert ms.context.current_backend() is not None   # the next op selects a backend again


def test_reset_restarts_the_random_stream_from_the_new_seed():
    _state.reset()
    ms.set_context(backend="numpy")
    ms.set_seed(11)
    first = ms.ops.rand(3).asnumpy()
    _state.reset()
    ms.set_seed(11)
    np.testing.assert_array_equal(ms.ops.rand(3).asnumpy(), first)
    _state.reset()


def test_reset_clears_only_the_calling_threads_state():
    _state.reset()
    seen = {}

    def other():
        _state.thread.exporting = True
        ready.set()
        done.wait(5)
        seen["exporting"] = _state.thread.exporting

    ready, done = threading.Event(), threading.Event()
    worker = threading.Thread(target=other)
    worker.start()
    ready.wait(5)
    _state.reset()
    done.set()
    worker.join(5)
    assert seen == {"exporting": True}
    assert _state.thread.exporting is False


def test_reset_finishes_writers_and_saves_and_forgets_the_rest(tmp_path, monkeypatch):
    """Each piece of process state kept outside the context: planted, then reset(); each is
    checked by what the public API shows afterwards."""
    import time

    from mscore.communication import GlobalComm, get_group_size
    from mscore.compile import graph
    from mscore.ops import summary as summary_ops
    from mscore.train import ModelCheckpoint
    from mscore.train.callback import _checkpoint_cb_for_save_op, _set_cur_net
    from mscore.train.serialization import _checkpoint
    from mscore.train.summary import SummaryRecord, SummaryWriteError, load_summaries

    _state.reset()
    # a summary operator's value, waiting for the next SummaryRecord.record
    ms.ops.ScalarSummary()("loss", ms.Tensor(np.array(2.5, np.float32)))
    # an open summary writer with a recorded step
    record = SummaryRecord(str(tmp_path / "summary"))
    record.add_value("scalar", "acc", ms.Tensor(np.float32(0.75)))
    record.record(1)
    # an asynchronous checkpoint save still writing
    real, started = _checkpoint._write_ckpt, threading.Event()

    def slow(f, entries, crc_check):
        started.set()
        time.sleep(0.5)
        real(f, entries, crc_check)
    monkeypatch.setattr(_checkpoint, "_write_ckpt", slow)
    ms.save_checkpoint({"w": ms.Tensor(np.arange(3, dtype=np.float32))},
                       str(tmp_path / "net.ckpt"), async_save=True)
    assert started.wait(5) and ms.async_ckpt_thread_status()
    # a checkpoint prefix claimed by this process
    ModelCheckpoint("net", str(tmp_path / "ckpt"))
    assert os.listdir(tmp_path / "ckpt") != []
    # the save operator's registered network
    _set_cur_net(ms.nn.Dense(2, 2))
    # a joined communication job (as far as mscore can tell)
    _state.process.communication.update(collectives=object(), backend=None, env=None)
    assert GlobalComm.INITED

    _state.reset()
    monkeypatch.undo()
    assert summary_ops.consume_pending() == []          # the operator's value is gone
    # the writer was closed: what it was given is on disk, and it takes no more
    assert load_summaries(str(tmp_path / "summary"))["scalar"]["acc"][0][:1] == (1,)
    record.add_value("scalar", "acc", ms.Tensor(np.float32(0.5)))
    with pytest.raises(SummaryWriteError, match="closed"):
        record.record(2)
    record.close()
    # the save was waited for: complete, without wait_async_save()
    assert not ms.async_ckpt_thread_status()
    np.testing.assert_array_equal(ms.load_checkpoint(str(tmp_path / "net.ckpt"))["w"].asnumpy(),
                                  np.arange(3, dtype=np.float32))
    assert os.listdir(tmp_path / "ckpt") == []         # the claim was given up
    no_net = [{"name": "weight", "data": ms.Tensor(np.zeros((2, 2), np.float32))}]
    assert _checkpoint_cb_for_save_op(no_net) is False  # no registered network
    assert not GlobalComm.INITED and GlobalComm.BACKEND == "hccl" and get_group_size() == 1
    assert graph.trace_count == 0


def test_reset_reports_a_failed_async_save_once(tmp_path, monkeypatch):
    from mscore.train.serialization import _checkpoint

    _state.reset()

    def broken(f, entries, crc_check):
        raise OSError("no space left")
    monkeypatch.setattr(_checkpoint, "_write_ckpt", broken)
    ms.save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, str(tmp_path / "a"),
                       async_save=True)
    monkeypatch.undo()
    with pytest.warns(RuntimeWarning, match="asynchronous save_checkpoint failed.*no space"):
        _state.reset()
    ms.save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, str(tmp_path / "b"))
    assert (tmp_path / "b.ckpt").exists() and not (tmp_path / "a.ckpt").exists()


def test_reset_restarts_the_trace_count_and_the_compiled_programs():
    """GRAPH_MODE's trace count (``mscore.compile.graph.trace_count``) goes back to 0 and the
    next call of a compiled cell traces again."""
    from mscore.compile import graph
    pytest.importorskip("mscore_jax", reason="needs a backend that compiles GRAPH_MODE "
                                             "programs (jax)")
    _state.reset()
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    net = ms.nn.Dense(3, 2)
    x = ms.Tensor(np.ones((4, 3), np.float32))
    net(x)
    net(x)
    assert graph.trace_count == 1
    _state.reset()
    assert graph.trace_count == 0
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    net(x)
    assert graph.trace_count == 1
    _state.reset()


def test_reset_restores_a_plugins_section():
    """A backend plugin keeps its process state in a section of its own (the JAX plugin's
    collectives); reset() restores it: no active job, no step being probed for collectives."""
    pytest.importorskip("jax")
    collectives = pytest.importorskip("mscore_jax.collectives")
    import jax
    import jax.numpy as jnp

    _state.reset()
    job = collectives.JaxCollectives(ms.context.current_backend())
    plugin_state = _state.section("mscore_jax.collectives", {})
    used = []
    plugin_state.update(active=job, probe=used)
    assert collectives.active() is job
    jax.make_jaxpr(lambda v: job.all_reduce(v))(jnp.ones(2))   # probed: the use is noted
    assert used == ["all_reduce"]
    _state.reset()
    assert collectives.active() is None
    with pytest.raises(RuntimeError, match="outside mscore's GRAPH_MODE step"):
        jax.make_jaxpr(lambda v: job.all_reduce(v))(jnp.ones(2))


def test_reset_puts_back_the_excepthook_a_joined_job_installed(tmp_path, monkeypatch):
    """A process that joined a job ends at its first uncaught exception (the fail-fast
    hook); reset() forgets the job, and with it that hook and the rank it notes."""
    import sys

    from mscore.communication import _failfast
    monkeypatch.setenv(_failfast.EVENTS_ENV, str(tmp_path))
    before = sys.excepthook
    _failfast.install(lambda: None, rank=3)
    try:
        assert sys.excepthook is not before
        _failfast.note_leaving("test")
        assert (tmp_path / "rank_3").exists()
        _state.reset()
        assert sys.excepthook is before
        (tmp_path / "rank_3").unlink()
        _failfast.note_leaving("test")     # no rank any more: nothing noted
        assert list(tmp_path.iterdir()) == []
    finally:
        sys.excepthook = before


_EXIT_SCRIPT = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import mscore as ms
    from mscore.train import ModelCheckpoint
    from mscore.train.serialization import _checkpoint
    from mscore.train.summary import SummaryRecord
    out = sys.argv[1]
    ModelCheckpoint("net", os.path.join(out, "ckpt"))
    record = SummaryRecord(os.path.join(out, "summary"))
    record.add_value("scalar", "loss", ms.Tensor(np.float32(1.5)))
    record.record(3)
    real = _checkpoint._write_ckpt
    def slow(f, entries, crc_check):
        time.sleep(0.5)
        real(f, entries, crc_check)
    _checkpoint._write_ckpt = slow
    ms.save_checkpoint({"w": ms.Tensor(np.arange(3, dtype=np.float32))},
                       os.path.join(out, "net.ckpt"), async_save=True)
    # exits at once: nothing is closed, waited for or released by the script
""")


def test_exit_finishes_the_pending_work(tmp_path):
    """At exit the one handler completes the async save, closes the summary writer (its
    recorded step is on disk) and gives up the prefix claim."""
    from mscore.train.summary import load_summaries
    proc = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT, str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(ms.load_checkpoint(str(tmp_path / "net.ckpt"))["w"].asnumpy(),
                                  np.arange(3, dtype=np.float32))
    assert load_summaries(str(tmp_path / "summary"))["scalar"]["loss"][0][::2] == (3, 1.5)
    assert os.listdir(tmp_path / "ckpt") == []
