"""Pipeline parallelism (``Cell.pipeline_stage``, ``nn.PipelineCell``,
``nn.PipelineGradReducer``, ``nn.MicroBatchInterleaved``, ``AutoParallel.pipeline``).

MindSpore's argument checks come from tests/data/pipeline_oracle.json (recorded by
tests/data/make_pipeline_oracle.py). The 2-process job runs tests/pipeline_worker.py under
``mscore run`` on 127.0.0.1 (bounded in time): a float64 MLP cut into 2 stages trains with
the losses and final weights of one process (to 1e-10), each rank holding only its stage's
Parameters (and, with the context's ``pipeline_stages``, their optimizer state), by
``set_auto_parallel_context`` (a ``value_and_grad`` step and ``Model.train``) and by
``AutoParallel(...).pipeline``; GRAPH_MODE is refused.
"""
from __future__ import annotations

import gc
import json
import os
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends
from test_data_parallel import free_port, run_job

import mscore as ms
from conftest import subprocess_env
from mscore import nn
from mscore.parallel.auto_parallel import AutoParallel

HERE = Path(__file__).resolve().parent
ORACLE = json.loads((HERE / "data" / "pipeline_oracle.json").read_text())
WORKER = HERE / "pipeline_worker.py"
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"


@pytest.fixture(autouse=True)
def _clean_context():
    ms.reset_auto_parallel_context()
    yield
    ms.reset_auto_parallel_context()


def _outcome(expr):
    try:
        value = eval(expr, {"nn": nn, "ms": ms, "AutoParallel": AutoParallel})
        return ["OK", repr(value)]
    except Exception as exc:
        return ["ERR", type(exc).__name__, str(exc)]


@pytest.mark.parametrize("case", sorted(ORACLE))
def test_arguments_are_checked_as_mindspore(case):
    ms.set_context(backend="numpy")
    assert _outcome(case) == ORACLE[case]


def test_pipeline_cell_outside_a_job_sums_its_micro_batches():
    ms.set_context(backend="numpy")
    ms.set_seed(1)
    dense = nn.Dense(3, 2, dtype=ms.float64)
    x = np.random.default_rng(0).standard_normal((6, 3))
    whole = dense(ms.Tensor(x)).asnumpy()
    for cell in (nn.PipelineCell(dense, 3), nn.MicroBatchInterleaved(dense, 3)):
        got = cell(ms.Tensor(x)).asnumpy()
        np.testing.assert_allclose(got, whole.reshape(3, 2, 2).sum(0), rtol=1e-12)


def test_pipeline_grad_reducer_unscales_the_gradients():
    """MindSpore multiplies the accumulated gradients by ``reciprocal(scale_sense)``."""
    ms.set_context(backend="numpy")
    grads = (ms.Tensor(np.array([1.0, -2.0])), ms.Tensor(np.array([[3.0]], np.float32)))
    out = nn.PipelineGradReducer(None, scale_sense=4.0)(grads)
    np.testing.assert_array_equal(out[0].asnumpy(), [0.25, -0.5])
    np.testing.assert_array_equal(out[1].asnumpy(), [[0.75]])
    assert out[1].dtype == ms.float32


def test_stage_config_places_cells_by_name():
    ms.set_context(backend="numpy")
    net = nn.SequentialCell([nn.Dense(2, 2), nn.Dense(2, 2)])
    nn.PipelineCell(net, 1, stage_config={"0": 0, "1": 1})
    assert (net[0].pipeline_stage, net[1].pipeline_stage) == (0, 1)
    with pytest.raises(KeyError, match="stage_config"):
        nn.PipelineCell(net, 1, stage_config={"nope": 1})


@pytest.fixture
def rank0_of_two(monkeypatch):
    """This process as rank 0 of a 2-process job (no collective is called before a run)."""
    from mscore.communication import management
    monkeypatch.setattr(management, "is_initialized", lambda: True)
    monkeypatch.setattr(management, "get_group_size", lambda group=None: 2)
    monkeypatch.setattr(management, "get_rank", lambda group=None: 0)
    monkeypatch.setattr(management, "collectives", lambda: None)
    ms.set_context(backend="numpy")


def _two_stage_net():
    net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 2)])
    net[0].pipeline_stage = 0
    net[2].pipeline_stage = 1
    return net


def test_a_rank_keeps_only_its_stage_parameters(rank0_of_two):
    net = _two_stage_net()
    other_stage = weakref.ref(net[2].weight)
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL,
                                 pipeline_stages=2)
    nn.PipelineCell(net, 2)
    assert sorted(p.name for p in net.trainable_params()) == ["0.bias", "0.weight"]
    gc.collect()
    assert other_stage() is None   # stage 1's weight is freed on rank 0, not only unlisted


def test_pipelines_the_job_cannot_run_are_refused(rank0_of_two):
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL,
                                 pipeline_stages=3)
    with pytest.raises(ValueError, match="one rank per stage; 'pipeline_stages' is 3"):
        nn.PipelineCell(_two_stage_net(), 2)
    ms.set_auto_parallel_context(pipeline_stages=2)
    outer = nn.SequentialCell([nn.Dense(2, 2)])
    outer.pipeline_stage = 1
    outer[0].pipeline_stage = 0
    with pytest.raises(ValueError, match="on stage 0 inside a cell placed on stage 1"):
        nn.PipelineCell(outer, 1)
    with pytest.raises(ValueError, match="no cell with Parameters is placed on stage 0"):
        nn.PipelineCell(nn.SequentialCell([nn.ReLU()]), 1)
    with pytest.raises(ValueError, match="segment_config"):
        nn.PipelineCell(_two_stage_net(), 2, segment_config={"0": 0})
    with pytest.raises(ValueError, match="opt_shard"):
        nn.PipelineGradReducer(None, opt_shard=True)
    with pytest.raises(ValueError, match="interleave"):
        AutoParallel(nn.Dense(2, 2)).pipeline(stages=2, interleave=True)


# -- two processes ----------------------------------------------------------------------------
BACKENDS = ("torch", "jax") if SLOW else ("torch",)


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_stage_pipeline_matches_one_process(backend, tmp_path):
    if backend not in available_backends():
        pytest.skip(f"backend {backend!r} is not usable here")
    cmd = [sys.executable, "-m", "mscore.launch", "--worker_num=2", "--local_worker_num=2",
           f"--master_port={free_port()}", str(WORKER), "--backend", backend,
           "--out", str(tmp_path)]
    proc = run_job(cmd, 240, env=subprocess_env(OMP_NUM_THREADS=1))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    ranks = [dict(np.load(tmp_path / f"rank{r}.npz")) for r in (0, 1)]
    alone = ranks[0]
    for style in ("context", "model", "auto"):
        for rank in ranks:
            np.testing.assert_allclose(rank[f"{style}/losses"], alone["alone/losses"],
                                       rtol=1e-10, err_msg=style)
        _check_stage_parameters(ranks, style)
    for rank in ranks:
        assert "PYNATIVE_MODE" in str(rank["context/refusal"]), rank["context/refusal"]


STAGE_OF = {"fc1": 0, "fc2": 0, "fc3": 1}


def _check_stage_parameters(ranks, style):
    """The trained weights of one process, each on its stage's rank only; with the context's
    ``pipeline_stages`` (the optimizer built after the ``PipelineCell``) the Adam states
    too; a rank's Parameters are its stage's bytes."""
    whole = 0
    for key in [k for k in ranks[0] if k.startswith("alone/param/")]:
        name = key[len("alone/param/"):]
        ref = ranks[0][key]
        whole += ref.nbytes
        owner = STAGE_OF[name.split(".")[0]]
        np.testing.assert_allclose(ranks[owner][f"{style}/param/{name}"], ref, rtol=1e-10,
                                   atol=1e-10, err_msg=f"{style} {name}")
        assert f"{style}/param/{name}" not in ranks[1 - owner], (style, name)
        assert ranks[owner][f"{style}/state/moment1.{name}"].shape == ref.shape
        if style != "auto":
            assert f"{style}/state/moment1.{name}" not in ranks[1 - owner], name
    held = [sum(v.nbytes for k, v in r.items() if k.startswith(f"{style}/param/"))
            for r in ranks]
    assert sum(held) == whole and max(held) < whole, (held, whole)
