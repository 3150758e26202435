"""The memory side of scale-out: the parallel optimizer (optimizer state sharded over the
ranks), gradient accumulation over ``grad_accumulation_step`` calls, and their settings.

MindSpore's checks of the settings come from tests/data/parallel_optimizer_oracle.json
(recorded by tests/data/make_parallel_optimizer_oracle.py). The 2-process jobs run
tests/scaleout_worker.py under ``mscore run`` on 127.0.0.1 (bounded in time, the process
group killed on the way out): one torch job by default, jax's behind ``MSCORE_SLOW_TESTS=1``.
"""
from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends
from test_data_parallel import free_port, run_job

import mscore as ms
from conftest import subprocess_env
from mscore import nn
from mscore.nn.wrap.parallel_optimizer import ShardPlan
from mscore.parallel import _context
from mscore.train.serialization._shard_identity import IDENTITY_KEY

HERE = Path(__file__).resolve().parent
ORACLE = json.loads((HERE / "data" / "parallel_optimizer_oracle.json").read_text())
WORKER = HERE / "scaleout_worker.py"
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
FP32_RTOL = 1e-5
FP16_RTOL = 2e-3   # O2: the halves of a batch round differently in float16
# the order of the collectives counted by the worker
KINDS = ("all_reduce", "all_reduce_coalesced", "reduce_scatter", "all_gather")


@pytest.fixture(autouse=True)
def _clean_context():
    ms.reset_auto_parallel_context()
    yield
    ms.reset_auto_parallel_context()


def _outcome(fn, *args, **kwargs):
    try:
        return ["OK", repr(fn(*args, **kwargs))]
    except Exception as exc:
        return ["ERR", type(exc).__name__, str(exc)]


# MindSpore 2.10 refuses grad_accumulation_step > 1 (deprecated there); mscore implements it
# (docs/differences.md), so that one case differs on purpose.
DIFFERS = {"grad_accumulation_step=2": ["OK", "None"]}


@pytest.mark.parametrize("case", sorted(k for k in ORACLE if not k.startswith("get(")))
def test_settings_are_checked_as_mindspore_checks_them(case):
    key, _, value = case.partition("=")
    expected = DIFFERS.get(case, ORACLE[case])
    assert _outcome(ms.set_auto_parallel_context, **{key: ast.literal_eval(value)}) == expected


@pytest.mark.parametrize("key", ["grad_accumulation_step", "enable_parallel_optimizer",
                                 "parallel_optimizer_config"])
def test_defaults_as_mindspore(key):
    assert _outcome(ms.get_auto_parallel_context, key) == ORACLE[f"get({key})"]


def test_optimizer_config_keeps_the_given_keys_and_defaults():
    ms.set_auto_parallel_context(parallel_optimizer_config={"parallel_optimizer_threshold": 8,
                                                            "optimizer_level": "level2"})
    assert _context.optimizer_config() == {
        "gradient_accumulation_shard": True, "parallel_optimizer_threshold": 8,
        "optimizer_weight_shard_size": -1, "optimizer_level": "level2"}
    with pytest.raises(ValueError, match="level3"):
        ms.set_auto_parallel_context(parallel_optimizer_config={"optimizer_level": "level3"})
    ms.reset_auto_parallel_context()
    assert _context.optimizer_config()["parallel_optimizer_threshold"] == 64


def test_shard_plan_cuts_axis_zero_and_rebuilds_the_parameter():
    ms.set_context(backend="numpy")
    big = ms.Parameter(ms.Tensor(np.arange(56, dtype=np.float32).reshape(8, 7)), name="w")
    small = ms.Parameter(ms.Tensor(np.ones(4, np.float32)), name="b")
    frozen = ms.Parameter(ms.Tensor(np.ones((8, 8), np.float32)), name="f")
    frozen.parallel_optimizer = False
    odd = ms.Parameter(ms.Tensor(np.ones((6, 8), np.float32)), name="o")
    # threshold 0.1 KB = 102.4 bytes: the 224-byte weight is cut, the 16-byte bias is not;
    # 6 rows do not divide over 4 ranks
    plan = ShardPlan([big, small, frozen, odd], size=4, rank=3, threshold_kb=0.1)
    assert plan.sharded == [True, False, False, False]
    assert plan.piece[0] == 14 and plan.slice_shape(0) == (2, 7) and plan.buckets == [[0]]
    piece = ms.Tensor._wrap(plan.local_piece(0, big._data)).asnumpy()
    np.testing.assert_array_equal(piece, np.arange(42, 56).reshape(2, 7))
    rows = plan.rows(0, big._data)
    np.testing.assert_array_equal(ms.Tensor._wrap(rows).asnumpy()[3], piece.reshape(-1))
    back = ms.Tensor._wrap(plan.whole(0, rows)).asnumpy()
    np.testing.assert_array_equal(back, big.asnumpy())


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_accumulating_four_calls_equals_one_step_on_the_four_times_batch(mode):
    backend = "jax" if "jax" in available_backends() and mode == "graph" else "numpy"
    ms.set_context(backend=backend, mode=ms.GRAPH_MODE if mode == "graph" else
                   ms.PYNATIVE_MODE)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 6)).astype(np.float32)
    y = rng.integers(0, 3, 32).astype(np.int32)

    def train(k):
        ms.reset_auto_parallel_context()
        ms.set_auto_parallel_context(grad_accumulation_step=k)
        ms.set_seed(3)
        net = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3)])
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
            sparse=True, reduction="mean")), nn.Momentum(net.trainable_params(), 0.1, 0.9))
        losses = []
        for update in range(2):
            n = 16 // k
            for m in range(k):
                rows = slice(update * 16 + m * n, update * 16 + (m + 1) * n)
                losses.append(float(step(ms.Tensor(x[rows]), ms.Tensor(y[rows])).asnumpy()))
        return [p.asnumpy() for p in net.trainable_params()], losses, step
    try:
        whole, _, _ = train(1)
        accumulated, losses, step = train(4)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert len(losses) == 8
    for a, b in zip(whole, accumulated):
        np.testing.assert_allclose(b, a, rtol=FP32_RTOL, atol=FP32_RTOL * np.abs(a).max())
    # the sums are cleared after each update
    for acc in step.micro_step.sums:
        assert acc.name.startswith("accu_grads.") and not acc.asnumpy().any()


def test_accumulation_refuses_return_grad():
    ms.set_context(backend="numpy")
    ms.set_auto_parallel_context(grad_accumulation_step=2)
    net = nn.Dense(2, 1)
    with pytest.raises(ValueError, match="return_grad"):
        nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                            nn.SGD(net.trainable_params()), return_grad=True)


# -- two processes ----------------------------------------------------------------------------
DEFAULT_CONFIGS = ("po:pynative:momentum", "po:pynative:adam", "po_o2", "acc", "acc_po",
                   "acc_po_shard")
SLOW_CONFIGS = DEFAULT_CONFIGS + ("po:graph:momentum", "po:graph:adam", "po_o2:graph")
JOBS = [("torch", DEFAULT_CONFIGS if not SLOW else SLOW_CONFIGS)] + (
    [("jax", SLOW_CONFIGS)] if SLOW else [])


def _launch(tmp_path, backend, configs, timeout=400):
    out = tmp_path / backend
    out.mkdir()
    cmd = [sys.executable, "-m", "mscore.launch", "--worker_num=2", "--local_worker_num=2",
           f"--master_port={free_port()}", str(WORKER), "--backend", backend,
           "--configs", ",".join(configs), "--out", str(out),
           "--checkpoint", str(out / "ckpt")]
    proc = run_job(cmd, timeout, env=subprocess_env())
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return [dict(np.load(out / f"rank{r}.npz")) for r in (0, 1)]


@pytest.mark.parametrize("backend,configs", JOBS, ids=[b for b, _ in JOBS])
def test_two_ranks_with_the_parallel_optimizer_match_one_process(backend, configs, tmp_path):
    if backend not in available_backends():
        pytest.skip(f"backend {backend!r} is not usable here")
    ranks = _launch(tmp_path, backend, configs)
    _check_sharded_checkpoints(tmp_path / backend / "ckpt", ranks, tmp_path / "transformed")
    _check_rank_files_are_checked(tmp_path / backend / "ckpt", tmp_path / "tampered")
    _check_checkpoints_between_updates(tmp_path / backend / "ckpt", ranks[0],
                                       tmp_path / "recut")
    report = {}
    for cfg in configs:
        rtol = FP16_RTOL if cfg.startswith("po_o2") else FP32_RTOL
        worst = 0.0
        for key in [k for k in ranks[0] if k.startswith(f"{cfg}/ref/")]:
            name = key.split("/ref/")[1]
            ref = ranks[0][key]
            if name.startswith("s/"):
                continue   # states are compared piecewise below
            got0, got1 = ranks[0][f"{cfg}/dp/{name}"], ranks[1][f"{cfg}/dp/{name}"]
            np.testing.assert_array_equal(got0, got1, err_msg=f"{cfg} {name}: ranks differ")
            scale = np.abs(ref).max()
            np.testing.assert_allclose(got0, ref, rtol=rtol, atol=rtol * scale,
                                       err_msg=f"{cfg} {name}")
            worst = max(worst, float(np.abs(got0 - ref).max() / scale))
        report[cfg] = worst
        if cfg.startswith("po_o2"):   # the step rank 1 overflowed is skipped everywhere
            expected = [i == 1 for i in range(4)]
            for rank in ranks:
                assert rank[f"{cfg}/overflows"].tolist() == [expected, expected], cfg
        if cfg.startswith("po:"):
            _check_state_pieces(ranks, cfg)
            full, mine = ranks[0][f"{cfg}/state_bytes"]
            assert mine <= full * (0.5 + 0.05), (cfg, full, mine)
    print("max relative weight error:", json.dumps(report))
    counts = {cfg: dict(zip(KINDS, ranks[0][f"{cfg}/counts"].tolist()))
              for cfg in configs if f"{cfg}/counts" in ranks[0] and "graph" not in cfg}
    # 4 updates of one bucket each: one all-reduce (plain) or one reduce-scatter and one
    # all-gather (parallel optimizer) per update, never one per micro-batch
    assert counts["acc"] == {"all_reduce": 0, "all_reduce_coalesced": 4, "reduce_scatter": 0,
                             "all_gather": 0} or counts["acc"] == {
        "all_reduce": 4, "all_reduce_coalesced": 0, "reduce_scatter": 0, "all_gather": 0}
    assert counts["acc_po"] == {"all_reduce": 0, "all_reduce_coalesced": 0,
                                "reduce_scatter": 4, "all_gather": 4}
    # gradient_accumulation_shard: a reduce-scatter per micro-batch (16), a gather per update
    assert counts["acc_po_shard"] == {"all_reduce": 0, "all_reduce_coalesced": 0,
                                      "reduce_scatter": 16, "all_gather": 4}
    # ... and its accumulated gradients are this rank's slices: half the bytes
    assert 2 * int(ranks[0]["acc_po_shard/accu_bytes"]) == int(ranks[0]["acc_po/accu_bytes"])
    assert counts["po:pynative:momentum"]["reduce_scatter"] == 4


def _check_state_pieces(ranks, cfg):
    """Each rank's optimizer state is its piece of the single process's state."""
    for key in [k for k in ranks[0] if k.startswith(f"{cfg}/ref/s/")]:
        name = key.split("/ref/s/")[1]
        ref = ranks[0][key].reshape(-1)
        pieces = [ranks[r][f"{cfg}/dp/s/{name}"].reshape(-1) for r in (0, 1)]
        if pieces[0].size == ref.size:      # a replicated state (beta powers, ...)
            np.testing.assert_allclose(pieces[0], ref, rtol=FP32_RTOL, atol=1e-7)
            continue
        joined = np.concatenate(pieces)
        np.testing.assert_allclose(joined, ref, rtol=FP32_RTOL,
                                   atol=FP32_RTOL * (np.abs(ref).max() + 1e-30),
                                   err_msg=f"{cfg} state {name}")


def test_accumulation_with_a_loss_scale_is_refused_not_ignored():
    ms.set_context(backend="numpy")
    ms.set_auto_parallel_context(grad_accumulation_step=2)
    net = nn.Dense(2, 1)
    with pytest.raises(NotImplementedError, match="TrainOneStepWithLossScaleCell"):
        nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()),
                                         nn.SGD(net.trainable_params()), ms.Tensor(1.0))


def _adam_cell():
    """A stand-alone train cell of the worker's network and Adam (its weights replaced by
    what is loaded)."""
    import scaleout_worker as worker
    net = worker.build(ms, nn, 0)
    return nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), worker.make_optimizer(nn, net, "adam"))


def _assert_matches_single_process(cell, rank0, cfg="po:pynative:adam"):
    values = {p.name: p.asnumpy() for p in cell.get_parameters()}
    checked = 0
    for key in [k for k in rank0 if k.startswith(f"{cfg}/ref/")]:
        name = key.split("/", 3)[3]
        ref = rank0[key]
        np.testing.assert_allclose(values[name], ref, rtol=FP32_RTOL,
                                   atol=FP32_RTOL * (np.abs(ref).max() + 1e-30), err_msg=name)
        checked += 1
    assert checked >= 12   # 4 weights, 8 moments


def _check_sharded_checkpoints(directory, ranks, transformed):
    """2 ranks saved their slices and the strategy file: the files load into one process
    (load_distributed_checkpoint, transform_checkpoints) and back into 2 ranks (the workers
    checked their own reload) with the single process's weights and Adam moments."""
    ms.set_context(backend="numpy")
    for rank in ranks:
        assert float(rank["reload_difference"]) == 0.0
    files = [str(directory / f"rank_{r}" / "net.ckpt") for r in (0, 1)]
    strategy = ms.build_searched_strategy(str(directory / "strategy.ckpt"))
    # the sliced entries are the states of the sharded weights (the master shards are
    # slices of the whole weights for the length of a step, not saved)
    assert "moment1.0.weight" in strategy and not any(k.startswith("opt_shard") for k in strategy)
    layout = strategy["moment1.0.weight"]
    assert list(layout.dev_matrix[0].dim) == [2] and list(layout.tensor_map[0].dim) == [0, -1]
    assert layout.opt_weight_shard_size == 2
    sliced = ms.load_checkpoint(files[0])["moment1.0.weight"]
    assert tuple(sliced.shape) == (16, 20)          # rank 0 holds half of the 32 rows
    cell = _adam_cell()
    ms.load_distributed_checkpoint(cell, files, train_strategy_filename=str(
        directory / "strategy.ckpt"))
    _assert_matches_single_process(cell, ranks[0])
    ms.transform_checkpoints(str(directory), str(transformed), "net",
                             src_strategy_file=str(directory / "strategy.ckpt"))
    cell = _adam_cell()
    ms.load_param_into_net(cell, ms.load_checkpoint(str(transformed / "rank_0" / "net0.ckpt")))
    _assert_matches_single_process(cell, ranks[0])
    # and re-cut for 2 ranks again: the slices each rank saved
    ms.transform_checkpoints(str(transformed), str(transformed / "two"), "net",
                             dst_strategy_file=str(directory / "strategy.ckpt"))
    for r in (0, 1):
        again = ms.load_checkpoint(str(transformed / "two" / f"rank_{r}" / f"net{r}.ckpt"))
        saved = ms.load_checkpoint(files[r])
        assert sorted(again) == sorted(saved)
        # the re-cut files say who they are (a run of their own)
        assert json.loads(again.pop(IDENTITY_KEY))["rank"] == r
        assert json.loads(saved.pop(IDENTITY_KEY))["rank"] == r
        for name in saved:
            np.testing.assert_array_equal(again[name].asnumpy(), saved[name].asnumpy())


def _check_rank_files_are_checked(directory, tampered):
    """Each rank's file says who it is: files in another order, one rank's file twice, a
    file of another run, a missing file, or rank folders swapped are refused by name."""
    ms.set_context(backend="numpy")
    files = [str(directory / f"rank_{r}" / "net.ckpt") for r in (0, 1)]
    strategy = str(directory / "strategy.ckpt")

    def load(given):
        ms.load_distributed_checkpoint(_adam_cell(), given, train_strategy_filename=strategy)
    with pytest.raises(ValueError, match="holds the slices of rank 1, but it is given as "
                                         "rank 0's file") as info:
        load([files[1], files[0]])
    assert files[1] in str(info.value) and "rank order" in str(info.value)
    with pytest.raises(ValueError, match="holds the slices of rank 0, but it is given as "
                                         "rank 1's file"):
        load([files[0], files[0]])
    with pytest.raises(ValueError, match="2 ranks, but 1 files are given"):
        load([files[0]])
    # rank 1's file as another run of the job would have written it
    entries = ms.load_checkpoint(files[1])
    identity = json.loads(entries.pop(IDENTITY_KEY))
    identity["run"] = "0" * 16
    other = str(tampered / "other_run.ckpt")
    tampered.mkdir()
    ms.save_checkpoint(list(entries.values()), other,
                       append_dict={IDENTITY_KEY: json.dumps(identity)})
    with pytest.raises(ValueError, match="saved by another run") as info:
        load([files[0], other])
    assert other in str(info.value)
    # the rank folders swapped
    for r in (0, 1):
        (tampered / "swapped" / f"rank_{1 - r}").mkdir(parents=True)
        (tampered / "swapped" / f"rank_{1 - r}" / "net.ckpt").write_bytes(
            Path(files[r]).read_bytes())
    with pytest.raises(ValueError, match="belongs in 'rank_1'"):
        ms.transform_checkpoints(str(tampered / "swapped"), str(tampered / "out"), "net",
                                 src_strategy_file=strategy)
    assert not (tampered / "out").exists()


def _momentum_cell_accumulating():
    """A stand-alone train cell of the worker's network and Momentum accumulating over 4
    calls (its weights and sums replaced by what is loaded)."""
    import scaleout_worker as worker
    ms.set_auto_parallel_context(grad_accumulation_step=worker.ACC)
    net = worker.build(ms, nn, 0)
    return nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), worker.make_optimizer(nn, net, "momentum"))


def _check_checkpoints_between_updates(directory, rank0, recut):
    """A checkpoint saved between two updates of accumulation (level1: each rank's own sums;
    level2: slices of the reduced sums) merges into one process with the sums one process
    accumulating whole micro-batches holds, and re-cuts for 2 ranks and back unchanged."""
    for cfg in ("acc_po", "acc_po_shard"):
        src = directory / cfg
        files = [str(src / f"rank_{r}" / "net.ckpt") for r in (0, 1)]
        strategy = str(src / "strategy.ckpt")
        cell = _momentum_cell_accumulating()
        ms.load_distributed_checkpoint(cell, files, train_strategy_filename=strategy)
        values = {p.name: p.asnumpy() for p in cell.get_parameters()}
        checked = 0
        for key in [k for k in rank0 if k.startswith(f"{cfg}/mid/")]:
            name, ref = key.split("/", 3)[3], rank0[key]
            np.testing.assert_allclose(values[name], ref, rtol=FP32_RTOL,
                                       atol=FP32_RTOL * (np.abs(ref).max() + 1e-30),
                                       err_msg=f"{cfg} {name}")
            checked += 1
        assert checked == 8 and np.abs(values["accu_grads.0.weight"]).max() > 0, cfg
        ms.transform_checkpoints(str(src), str(recut / cfg), "net", src_strategy_file=strategy,
                                 dst_strategy_file=strategy)
        again = _momentum_cell_accumulating()
        ms.load_distributed_checkpoint(again, [str(recut / cfg / f"rank_{r}" / f"net{r}.ckpt")
                                               for r in (0, 1)],
                                       train_strategy_filename=strategy)
        for p in again.get_parameters():
            np.testing.assert_allclose(p.asnumpy(), values[p.name], rtol=1e-6, atol=1e-7,
                                       err_msg=f"{cfg} {p.name} after a re-cut")
        ms.reset_auto_parallel_context()


# -- two launchers as two nodes -------------------------------------------------------------------
NODE_JOB = """
import sys
import numpy as np
import mscore as ms
from mscore.communication import comm_func, get_group_size, get_local_rank, get_rank, init
ms.set_context(backend=sys.argv[1])
init()
total, _ = comm_func.all_reduce(ms.Tensor(np.array([get_rank() + 1.0], np.float32)))
print(f"RESULT {get_rank()} {get_group_size()} {get_local_rank()} {float(total.asnumpy()[0])}",
      flush=True)
"""


def test_two_launchers_of_two_workers_form_one_job_of_four(tmp_path):
    """``mscore run --worker_num=4 --local_worker_num=2 --node_rank=0|1`` started twice on
    this machine behaves as two nodes: ranks node by node, one all-reduce over all four."""
    if "torch" not in available_backends():
        pytest.skip("backend 'torch' is not usable here")
    import signal
    import subprocess
    script = tmp_path / "node_job.py"
    script.write_text(NODE_JOB)
    port = free_port()

    def launcher(node):
        return [sys.executable, "-m", "mscore.launch", "--worker_num=4",
                "--local_worker_num=2", f"--node_rank={node}", "--master_addr=127.0.0.1",
                f"--master_port={port}", str(script), "torch"]
    first = subprocess.Popen(launcher(0), env=subprocess_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        second = run_job(launcher(1), 120)
        out0, err0 = first.communicate(timeout=60)
    finally:
        try:
            os.killpg(first.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert first.returncode == 0 and second.returncode == 0, err0[-2000:] + second.stderr[-2000:]
    results = {}
    for node, text in ((0, out0), (1, second.stdout)):
        for line in text.splitlines():
            if "RESULT" in line:
                rank, size, local, total = line.split("RESULT ")[1].split()
                results[int(rank)] = (node, int(size), int(local), float(total))
    # ranks 0, 1 on node 0 and 2, 3 on node 1; the sum of 1 + 2 + 3 + 4 everywhere
    assert results == {0: (0, 4, 0, 10.0), 1: (0, 4, 1, 10.0), 2: (1, 4, 0, 10.0),
                       3: (1, 4, 1, 10.0)}


# -- jax: the sharded update in one process over simulated devices ---------------------------------
SIMULATED_STEP = """
import numpy as np
import jax
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from mscore_jax.collectives import AXIS, _gatherer, _scatterer, _shard_map

assert len(jax.devices("cpu")) == 2, jax.devices()
mesh = Mesh(np.array(jax.devices("cpu")), (AXIS,))
rows, cols = 6, 5                       # a (6, 5) weight: 3 rows per device
piece = rows // 2 * cols

def step(grads, weight):
    # the parallel optimizer's step on one device: its gradient (a leading axis of 1, the
    # device's row of the global array), the mean's slice by reduce-scatter, the update of
    # this device's rows, the whole weight back by all-gather
    mine = _scatterer("mean", grads.dtype, piece)(grads[0].reshape(-1))
    start = lax.axis_index(AXIS) * piece
    updated = lax.dynamic_slice_in_dim(weight.reshape(-1), start, piece) - 0.1 * mine
    return _gatherer(1)(updated).reshape(rows, cols)

program = jax.jit(_shard_map(step, mesh=mesh, in_specs=(P(AXIS), P()), out_specs=P(),
                             check_vma=False))
rng = np.random.default_rng(0)
g = rng.standard_normal((2, rows, cols)).astype(np.float32)    # one gradient per device
w = rng.standard_normal((rows, cols)).astype(np.float32)
out = program(jax.device_put(g, NamedSharding(mesh, P(AXIS))),
              jax.device_put(w, NamedSharding(mesh, P())))
np.save(__import__("sys").argv[1], np.stack([np.asarray(out), w - 0.1 * g.mean(axis=0)]))
"""


def test_jax_sharded_update_over_two_simulated_devices_in_one_process(tmp_path):
    """The jax plugin's reduce-scatter and all-gather bodies, composed as the parallel
    optimizer composes them, in one jit over 2 simulated CPU devices (NamedSharding inputs):
    the weight after the step is the weight minus the mean gradient's step."""
    if "jax" not in available_backends():
        pytest.skip("backend 'jax' is not usable here")
    script = tmp_path / "simulated.py"
    script.write_text(SIMULATED_STEP)
    result = tmp_path / "result.npy"
    proc = run_job([sys.executable, str(script), str(result)], 120, env=subprocess_env(
        XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got, want = np.load(result)
    np.testing.assert_allclose(got, want, rtol=FP32_RTOL, atol=1e-6)


# -- SEMI_AUTO_PARALLEL: shard strategies over simulated devices (jax, GSPMD) ----------------------
SEMI_AUTO = """
import json, sys
import numpy as np
import mscore as ms
from mscore import nn, ops

ms.set_context(backend="jax", mode=ms.GRAPH_MODE if sys.argv[1] == "graph" else
               ms.PYNATIVE_MODE)
rng = np.random.default_rng(0)
a = rng.standard_normal((4, 6)).astype(np.float32)
b = rng.standard_normal((6, 8)).astype(np.float32)
x = rng.standard_normal((16, 6)).astype(np.float32)
y = rng.integers(0, 3, 16).astype(np.int32)


def train(mode):
    ms.reset_auto_parallel_context()
    ms.set_auto_parallel_context(parallel_mode=mode)
    ms.set_seed(1)
    net = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3)])
    net[0].shard(((1, 1),), parameter_plan={"0.weight": (2, 1)})   # column parallel
    net[2].shard(((1, 2),), parameter_plan={"self.2.weight": (1, 2)})   # row parallel
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9))
    for _ in range(3):
        step(ms.Tensor(x), ms.Tensor(y))
    return net


out = {}
ref = train("stand_alone")
net = train("semi_auto_parallel")
out["weights"] = max(float(np.max(np.abs(p.asnumpy() - q.asnumpy())) / np.max(np.abs(q.asnumpy())))
                     for p, q in zip(net.trainable_params(), ref.trainable_params()))
out["w0"] = repr(tuple(net[0].weight._data.sharding.spec))
out["w2"] = repr(tuple(net[2].weight._data.sharding.spec))
for name, strategy in (("column", ((1, 1), (1, 2))), ("row", ((1, 2), (2, 1)))):
    got = ops.MatMul().shard(strategy)(ms.Tensor(a), ms.Tensor(b))
    out[name] = float(np.max(np.abs(got.asnumpy() - a @ b)))
    out[name + "_spec"] = repr(tuple(got._data.sharding.spec))
with open(sys.argv[2], "w") as f:
    json.dump(out, f)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_semi_auto_dense_column_and_row_split_over_two_simulated_devices(mode, tmp_path):
    """Megatron-style column- then row-parallel Dense layers (Cell.shard) and sharded
    MatMuls (Primitive.shard) on jax with 2 simulated devices in one process: the same
    numbers as one device, the weights kept cut as planned after training."""
    if "jax" not in available_backends():
        pytest.skip("backend 'jax' is not usable here")
    if mode == "graph" and not SLOW:
        pytest.skip("GRAPH_MODE run: set MSCORE_SLOW_TESTS=1")
    script = tmp_path / "semi_auto.py"
    script.write_text(SEMI_AUTO)
    result = tmp_path / "result.json"
    proc = run_job([sys.executable, str(script), mode, str(result)], 180, env=subprocess_env(
        XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(result.read_text())
    assert out["weights"] < FP32_RTOL, out
    assert out["column"] < 1e-5 and out["row"] < 1e-5, out
    assert out["column_spec"] == "(None, 'mscore_mp')"   # output columns cut
    assert out["row_spec"] in ("()", "(None, None)")     # partial sums reduced
    assert out["w0"] == "('mscore_mp', None)"
    assert out["w2"] == "(None, 'mscore_mp')"


def test_shard_strategies_are_checked_and_need_a_backend_that_lays_arrays_out():
    ms.set_context(backend="numpy")
    matmul = ms.ops.MatMul()
    with pytest.raises(TypeError, match="in_strategy must be tuple type"):
        matmul.shard([[1, 2], [2, 1]])
    with pytest.raises(TypeError, match="the value of strategy must be int type"):
        matmul.shard(((1, 2.0), (2, 1)))
    matmul.shard(((1, 2), (2, 1)))
    assert matmul.in_strategy == ((1, 2), (2, 1))
    a = ms.Tensor(np.ones((2, 4), np.float32))
    b = ms.Tensor(np.ones((4, 3), np.float32))
    np.testing.assert_array_equal(matmul(a, b).asnumpy(), np.full((2, 3), 4.0))  # ignored
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL)
    with pytest.raises(NotImplementedError, match="supported: jax"):
        matmul(a, b)
    with pytest.raises(ValueError, match="cannot be cut into 3 equal pieces"):
        ms.ops.MatMul().shard(((1, 3), (1, 1)))(a, b)

