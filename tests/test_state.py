"""``mscore._state.reset()`` returns every piece of state to its import-time value."""
from __future__ import annotations

import threading

import numpy as np

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


def test_reset_forgets_summary_values_writers_and_async_saves(tmp_path):
    """Each piece of state the summary operators, the summary writers and asynchronous
    checkpoint saves keep lives in ``_state.process``; reset() forgets it."""
    from mscore.ops import summary as summary_ops
    from mscore.train.summary.record import SummaryRecord

    _state.reset()
    ms.ops.ScalarSummary()("loss", ms.Tensor(np.array(2.5, np.float32)))
    record = SummaryRecord(str(tmp_path / "summary"))
    net = ms.nn.Dense(3, 2)
    ms.save_checkpoint(net, str(tmp_path / "net.ckpt"), async_save=True)
    saves = list(_state.process.async_saves)
    assert list(_state.process.summary_slots) == [("scalar", "loss")]
    assert len(_state.process.summary_writers) == 1 and saves
    _state.reset()
    try:
        assert summary_ops.consume_pending() == []   # the recorded value is gone
        assert len(_state.process.summary_writers) == 0
        assert _state.process.async_saves == [] and _state.process.async_save_errors == []
        assert not ms.async_ckpt_thread_status()
    finally:
        for thread in saves:
            thread.join()
        record.close()
    assert (tmp_path / "net.ckpt").exists()
