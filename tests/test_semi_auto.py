"""SEMI_AUTO_PARALLEL across processes: shard strategies cut operators and Parameters over
the ranks of a job (mscore.ops._layout, mscore.ops._sharded_ops, AutoParallel).

MindSpore's checks at ``shard()`` time come from tests/data/semi_auto_oracle.json (recorded
by tests/data/make_semi_auto_oracle.py). The 2-process jobs run tests/semi_auto_worker.py
under ``mscore run`` on 127.0.0.1 (bounded in time): the operator-parallel network trained
alone and across 2 ranks in the same job gives the same losses, and each rank holds its
slices of the cut weights and of their optimizer states.
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
from mscore import nn, ops
from mscore.ops._layout import TensorLayout, reshaped
from mscore.ops._sharded_ops import plan
from mscore.parallel.auto_parallel import AutoParallel

HERE = Path(__file__).resolve().parent
ORACLE = json.loads((HERE / "data" / "semi_auto_oracle.json").read_text())
WORKER = HERE / "semi_auto_worker.py"
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
FP32_RTOL = 1e-5


@pytest.fixture(autouse=True)
def _clean_context():
    ms.reset_auto_parallel_context()
    yield
    ms.reset_auto_parallel_context()


def _outcome(fn):
    try:
        result = fn()
        return ["OK", repr(getattr(result, "in_strategy", None))]
    except Exception as exc:
        return ["ERR", type(exc).__name__, str(exc)]


SHARD_CASES = sorted(k for k in ORACLE if ".shard(" in k and not k.startswith("Cell"))


@pytest.mark.parametrize("case", SHARD_CASES)
def test_shard_checks_its_arguments_as_mindspore(case):
    ms.set_context(backend="numpy")
    name, _, rest = case.partition(".shard(")
    strategy, out_strategy = ast.literal_eval("(" + rest[:-1] + ")")
    prim = getattr(ops, name)()
    got = _outcome(lambda: prim.shard(strategy, out_strategy))
    assert got == ORACLE[case]


def test_cell_shard_and_auto_parallel_arguments_as_mindspore():
    ms.set_context(backend="numpy")
    net = nn.Dense(4, 4)
    assert ORACLE["Cell.shard(((1, 2),))"][0] == "OK"
    net.shard(((1, 2),))
    assert ORACLE["Cell.shard([[1, 2]])"][0] == "OK"
    net.shard([[1, 2]])
    assert net._in_strategy == ((1, 2),)
    assert _outcome(lambda: AutoParallel(net, parallel_mode="semi")) == \
        ORACLE["AutoParallel(mode='semi')"]
    assert ORACLE["AutoParallel(mode='semi_auto')"][0] == "OK"
    AutoParallel(net, parallel_mode="semi_auto")
    # MindSpore's strategy searches are refused (differences.md), not run as semi_auto
    with pytest.raises(ValueError, match="strategy search"):
        AutoParallel(net, parallel_mode="sharding_propagation")
    for key in ("full_batch=1", "dataset_strategy='bad'"):
        name, _, value = key.partition("=")
        assert _outcome(lambda name=name, value=value: ms.set_auto_parallel_context(
            **{name: ast.literal_eval(value)})) == ORACLE[f"set_auto_parallel_context({key})"]


CELL_ORACLE = json.loads((HERE / "data" / "cell_shard_oracle.json").read_text())


def test_dense_computes_through_its_primitives_once_they_have_strategies():
    """MindSpore's Dense holds MatMul(transpose_b=True) and BiasAdd (what strategies cut);
    with strategies set the layer computes through them: the same numbers and gradients
    as x @ w.T + b (stand-alone mode: the strategies do nothing)."""
    import inspect
    ms.set_context(backend="numpy")
    dense = nn.Dense(4, 6)
    assert [type(dense.matmul).__name__, dense.matmul.transpose_a,
            dense.matmul.transpose_b] == CELL_ORACLE["Dense.matmul"]
    assert type(dense.bias_add).__name__ == CELL_ORACLE["Dense.bias_add"]
    assert str(inspect.signature(nn.Cell.shard)) == CELL_ORACLE["Cell.shard"]
    assert str(inspect.signature(ms.parallel.shard)) == CELL_ORACLE["parallel.shard"]
    assert (ms.parallel.shard(dense, ((1, 2),)) is dense) == \
        CELL_ORACLE["parallel.shard(Dense) is Dense (one device)"]
    dense.matmul.shard(((1, 1), (2, 1)))
    dense.bias_add.shard(((1, 2), (2,)))
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    w, b = dense.weight.asnumpy(), dense.bias.asnumpy()
    got = dense(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, x @ w.T + b, rtol=1e-6, atol=1e-6)
    grads = ms.grad(lambda t: dense(t).sum(), None, dense.trainable_params())(ms.Tensor(x))
    np.testing.assert_allclose(grads[0].asnumpy(), np.ones((6, 1)) @ x.reshape(-1, 4).sum(
        0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(grads[1].asnumpy(), np.full(6, 6.0), rtol=1e-6)
    with pytest.raises(ValueError, match="last axis of 'x' must be 4"):
        dense(ms.Tensor(np.ones((2, 5), np.float32)))


LAYOUT_CASES = sorted(k for k in CELL_ORACLE if k.startswith("Layout("))


@pytest.mark.parametrize("case", LAYOUT_CASES)
def test_layout_as_mindspore(case):
    from mscore.parallel import Layout
    try:
        d = eval(case, {"Layout": Layout}).to_dict()   # each key is what the oracle ran
        got = ["OK", json.loads(json.dumps({k: d[k] for k in ("device_matrix", "tensor_map",
                                                               "alias_name")}))]
    except Exception as exc:
        got = ["ERR", type(exc).__name__, str(exc)]
    assert got == CELL_ORACLE[case]


def test_layout_enters_cell_shard_as_pieces_per_axis():
    """Each tensor axis cut into the product of its named device axes' sizes."""
    from mscore.parallel import Layout
    layout = Layout((2, 4), ("dp", "mp"))
    dense = nn.Dense(8, 8).shard((layout("dp", "mp"),),
                                 parameter_plan={"self.weight": layout("None", "mp")})
    assert dense._in_strategy == ((2, 4),)
    assert layout(("dp", "mp"), "None").pieces_per_axis() == (8, 1)
    assert layout("mp", "dp").pieces_per_axis() == (4, 2)


def test_auto_parallel_runs_its_network_in_semi_auto_mode_only():
    ms.set_context(backend="numpy")
    seen = []

    def network(x):
        seen.append(ms.get_auto_parallel_context("parallel_mode"))
        return x * 2
    out = AutoParallel(network)(ms.Tensor(np.ones(3, np.float32)))
    np.testing.assert_array_equal(out.asnumpy(), np.full(3, 2.0))
    assert seen == ["semi_auto_parallel"]
    assert ms.get_auto_parallel_context("parallel_mode") == "stand_alone"


def test_a_job_of_one_process_computes_the_strategies_whole(monkeypatch):
    """``mscore run --worker_num=1``: nothing to cut over, the primitives compute whole (the
    one-process run a 2-process job is compared with)."""
    from types import SimpleNamespace

    from mscore import _state
    ms.set_context(backend="numpy")
    monkeypatch.setitem(_state.process.communication, "collectives", object())
    monkeypatch.setitem(_state.process.communication, "env",
                        SimpleNamespace(rank=0, world_size=1))
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = np.ones((4, 6), np.float32)
    out = ops.MatMul().shard(((1, 2), (2, 1)))(ms.Tensor(a), ms.Tensor(b))
    assert type(out) is ms.Tensor
    np.testing.assert_array_equal(out.asnumpy(), a @ b)


# -- the partition of an operator (no job needed: a pure function of shapes and strategy) -----
def _pieces(layout, world=2):
    return [layout.slices(r) for r in range(world)]


def test_column_and_row_parallel_matmul_partitions():
    column = plan(ops.MatMul(), [(8, 6), (6, 4)], ((1, 1), (1, 2)), [], 2)
    assert column.dev_matrix == (1, 1, 1, 2) and not column.partial
    a, b = column.inputs
    assert a.is_replicated()
    assert _pieces(b) == [(slice(0, 6), slice(0, 2)), (slice(0, 6), slice(2, 4))]
    assert _pieces(column.output) == [(slice(0, 8), slice(0, 2)), (slice(0, 8), slice(2, 4))]
    row = plan(ops.MatMul(), [(8, 4), (4, 3)], ((1, 2), (2, 1)), [], 2)
    assert row.partial and row.output.is_replicated()
    # the row-parallel input is cut as the column-parallel output: no move between them
    assert row.inputs[0].same_pieces(column.output)
    # transpose_b: the weight (out, in) is cut along its rows for a column-parallel layer
    dense = plan(ops.MatMul(transpose_b=True), [(8, 6), (4, 6)], ((1, 1), (2, 1)), [], 2)
    assert _pieces(dense.inputs[1]) == [(slice(0, 2), slice(0, 6)), (slice(2, 4), slice(0, 6))]
    # a repeated calculation: 2 of 4 devices cut the columns, the other factor repeats
    repeated = plan(ops.MatMul(), [(8, 6), (6, 4)], ((1, 1), (1, 2)), [], 4)
    assert repeated.repeat == 2
    assert [repeated.inputs[1].piece_index(r) for r in range(4)] == [(0, 0), (0, 1)] * 2


def test_layouts_in_mindspore_strategy_file_terms_name_the_same_pieces():
    """A cut as MindSpore's strategy file writes it (dev_matrix, tensor_map counted from
    the right) gives, through the checkpoint code's slicing, each rank's piece."""
    from mscore.train.proto import node_strategy_pb2
    from mscore.train.serialization._parallel import slice_parameter
    whole = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    for layout in (TensorLayout((1, 1, 1, 2), (2, 3), (8, 6)),     # MatMul's b, columns cut
                   TensorLayout((1, 2, 1, 1), (2, 3), (8, 6)),     # rows cut by dev axis 1
                   TensorLayout((2, 1, 1, 1), (1, 2), (8, 6))):    # whole, 2 repeats
        dev_matrix, tensor_map = layout.mindspore_layout()
        proto = node_strategy_pb2.ParallelLayouts()
        proto.dev_matrix.add().dim.extend(dev_matrix)
        proto.tensor_map.add().dim.extend(tensor_map)
        proto.field, proto.opt_weight_shard_step, proto.opt_weight_shard_size = 0, 0, 0
        for rank in (0, 1):
            np.testing.assert_array_equal(slice_parameter(whole, proto, rank, "w"),
                                          whole[layout.slices(rank)])


def test_layouts_compare_by_the_pieces_ranks_hold():
    a = TensorLayout((1, 2), (-1, 1), (4, 6))
    b = TensorLayout((1, 1, 2), (1, 2), (4, 6))
    c = TensorLayout((2, 1), (-1, 0), (4, 6))
    assert a.same_pieces(b) and a.same_pieces(c)
    assert not a.same_pieces(TensorLayout((1, 2), (1, -1), (4, 6)))
    assert a.sharers(0) == (0,) and TensorLayout((2, 1), (1, -1), (4, 6)).sharers(1) == (0, 1)


def test_a_cut_tensor_reshapes_by_pieces_when_its_cut_axis_stays_outermost():
    cut_columns = TensorLayout((1, 1, 2), (-1, 2), (64, 512))
    heads = reshaped(cut_columns, (8, 8, 8, 64))          # (B * S, H * d) -> (B, S, H, d)
    assert heads.parts == (1, 1, 2, 1) and heads.local_shape == (8, 8, 4, 64)
    # each rank's piece reshaped alone is its piece of the reshaped whole
    whole = np.arange(64 * 512).reshape(64, 512)
    for rank in (0, 1):
        piece = whole[cut_columns.slices(rank)].reshape(heads.local_shape)
        np.testing.assert_array_equal(piece, whole.reshape(8, 8, 8, 64)[heads.slices(rank)])
    back = reshaped(TensorLayout((1, 1, 1, 2, 1), (-1, -1, 3, -1), (8, 8, 8, 64)), (64, 512))
    assert back.parts == (1, 2)
    # the cut axis inside a merge (not outermost), or a split that does not divide: refused
    assert reshaped(TensorLayout((1, 2), (-1, 1), (4, 6)), (8, 3)) is None
    assert reshaped(TensorLayout((1, 2), (1, -1), (2, 6)), (12,)).parts == (2,)
    assert reshaped(TensorLayout((1, 2), (-1, 1), (4, 6)), (4, 3, 2)) is None


def test_no_init_parameters_gives_the_values_of_an_eager_initialisation():
    from mscore.nn.utils import no_init_parameters
    ms.set_context(backend="numpy")
    ms.set_seed(4)
    eager = nn.Dense(3, 2).weight.asnumpy()
    ms.set_seed(4)
    with no_init_parameters():
        deferred = nn.Dense(3, 2)
    np.testing.assert_array_equal(deferred.weight.asnumpy(), eager)


def test_auto_parallel_dataset_strategy_is_checked():
    ms.set_context(backend="numpy")
    net = AutoParallel(nn.Dense(2, 2))
    net.dataset_strategy("full_batch")
    net.dataset_strategy("data_parallel")
    with pytest.raises(ValueError, match="must be 'full_batch' or 'data_parallel'"):
        net.dataset_strategy("rows")
    with pytest.raises(ValueError, match="not implemented"):
        net.dataset_strategy(((2, 1),))


@pytest.mark.parametrize("prim,shapes,strategy,extra,message", [
    (ops.MatMul(), [(8, 6), (6, 4)], ((1, 2), (1, 2)), [], "contracted dimension"),
    (ops.MatMul(), [(8, 8), (8, 4)], ((1, 4), (4, 1)), [], "uses 4 devices"),
    (ops.MatMul(), [(8, 5), (5, 4)], ((1, 2), (2, 1)), [], "cannot be cut into 2"),
    (ops.MatMul(), [(8, 6), (6, 4)], ((1, 1),), [], "has 1 entries"),
    (ops.Add(), [(8, 8), (8, 8)], ((1, 2), (1, 4)), [], "differently"),
    (ops.Add(), [(8, 6), (8, 6)], ((1, 2), (1, 1)), [], "must agree"),
    (ops.Softmax(), [(8, 6)], ((1, 2),), [], "normalises over"),
    (ops.Gather(), [(10, 4), (4,)], ((2, 1), (2,)), [0], "indices cannot be cut"),
    (ops.ReduceMax(), [(8, 6)], ((1, 2),), [1], "max over a cut dimension"),
    (ops.Conv2D(2, 3), [(1, 2, 4, 4), (2, 2, 3, 3)], ((1, 1, 1, 1), (1, 1, 1, 1)), [],
     "not supported"),
])
def test_strategies_the_layouts_cannot_run_are_refused(prim, shapes, strategy, extra,
                                                       message):
    prim.add_prim_attr("in_strategy", strategy)
    with pytest.raises((ValueError, NotImplementedError), match=message):
        plan(prim, shapes, strategy, extra, 2)


def test_reductions_and_vocabulary_parallel_gather_partitions():
    mean = plan(ops.ReduceMean(keep_dims=False), [(8, 6)], ((1, 2),), [1], 2)
    assert mean.partial and mean.factor == 0.5 and mean.output.shape == (8,)
    gather = plan(ops.Gather(), [(10, 4), (3, 5)], ((2, 1), (1, 1)), [0], 2)
    assert gather.partial and gather.output.shape == (3, 5, 4)
    assert _pieces(gather.inputs[0]) == [(slice(0, 5), slice(0, 4)), (slice(5, 10),
                                                                       slice(0, 4))]


# -- two processes ----------------------------------------------------------------------------
DEFAULT = {"torch": ("shards:pynative:adam", "dense:pynative:adam", "decoder:pynative:f64"),
           "jax": ("func:graph:momentum",)}
THOROUGH = ("func:pynative:momentum", "func:graph:adam", "shards:pynative:adam",
            "shards:graph:momentum", "model:pynative:adam", "model:graph:momentum",
            "dense:pynative:adam", "dense:graph:momentum", "decoder:pynative:f64",
            "decoder:graph:f32")
JOBS = [(b, THOROUGH if SLOW else DEFAULT[b]) for b in ("torch", "jax")]


_DONE_JOBS = {}   # backend -> (folder, per-rank results): one job serves both tests


def _two_rank_job(backend, configs, tmp_path_factory):
    """Run the worker's 2-process job for ``backend`` once (bounded in time, 127.0.0.1):
    its folder (the per-rank checkpoints of the first configuration) and the ranks'
    results."""
    if backend not in available_backends():
        pytest.skip(f"backend {backend!r} is not usable here")
    if backend not in _DONE_JOBS:
        folder = tmp_path_factory.mktemp(f"semi_auto_{backend}")
        cmd = [sys.executable, "-m", "mscore.launch", "--worker_num=2",
               "--local_worker_num=2", f"--master_port={free_port()}", str(WORKER),
               "--backend", backend, "--configs", ",".join(configs), "--out", str(folder),
               "--save", str(folder / "ckpt")]
        proc = run_job(cmd, 300, env=subprocess_env(OMP_NUM_THREADS=1))
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
        _DONE_JOBS[backend] = (folder, [dict(np.load(folder / f"rank{r}.npz"))
                                        for r in (0, 1)])
    return _DONE_JOBS[backend]


@pytest.mark.parametrize("backend,configs", JOBS, ids=[b for b, _ in JOBS])
def test_operator_parallel_network_on_two_ranks_matches_one_process(backend, configs,
                                                                     tmp_path_factory):
    _, ranks = _two_rank_job(backend, configs, tmp_path_factory)
    for cfg in configs:
        if cfg.startswith("decoder:"):
            _check_decoder(ranks, cfg)
            continue
        ref_losses = ranks[0][f"{cfg}/ref_losses"]
        # the net learns: the last loss (dense: the first batch's after the 3 steps) is lower
        assert len(ref_losses) == (4 if cfg.startswith("dense:") else 3) and \
            ref_losses[-1] < ref_losses[0] - 0.3, ref_losses
        for rank in ranks:
            np.testing.assert_allclose(rank[f"{cfg}/losses"], ref_losses, rtol=FP32_RTOL,
                                       err_msg=cfg)
        _check_slices(ranks, cfg)


# the axis each weight is cut along by the worker's strategies (None: whole on every rank)
CUT = {"w1": 1, "w2": 0, "w3": None}
# build_dense's: fc1 column-parallel by its primitives' strategies, fc2 row-parallel by
# Cell.shard (its bias whole), fc3 whole
DENSE_CUT = {"fc1.weight": 0, "fc1.bias": 0, "fc2.weight": 1, "fc2.bias": None,
             "fc3.weight": None, "fc3.bias": None}


def _check_slices(ranks, cfg):
    cuts = DENSE_CUT if cfg.startswith("dense:") else CUT
    for name, axis in cuts.items():
        ref = ranks[0][f"{cfg}/ref/{name}"]
        mine = [rank[f"{cfg}/mine/{name}"] for rank in ranks]
        atol = FP32_RTOL * np.abs(ref).max()
        if axis is None:
            for m in mine:
                np.testing.assert_allclose(m, ref, rtol=FP32_RTOL, atol=atol, err_msg=name)
            continue
        assert mine[0].shape[axis] * 2 == ref.shape[axis], (cfg, name, mine[0].shape)
        np.testing.assert_allclose(np.concatenate(mine, axis), ref, rtol=FP32_RTOL,
                                   atol=atol, err_msg=f"{cfg} {name}")
        # the optimizer states of a cut weight are cut alike
        for key in [k for k in ranks[0] if k.startswith(f"{cfg}/state/")
                    and k.endswith("." + name)]:
            assert ranks[0][key].shape == mine[0].shape, (cfg, key)


def _check_decoder(ranks, cfg):
    """The Megatron-style decoder: the losses of one process (float64: to 1e-10, float32:
    1e-5), the cut weights each rank's half, the rest whole; a rank's Parameters are half the
    cut ones' bytes plus the whole others'."""
    tol = 1e-10 if cfg.endswith("f64") else FP32_RTOL
    ref_losses = ranks[0][f"{cfg}/ref_losses"]
    assert ref_losses[-1] < ref_losses[0], ref_losses
    for rank in ranks:
        np.testing.assert_allclose(rank[f"{cfg}/losses"], ref_losses, rtol=tol, err_msg=cfg)
    cut = {"embedding": 0, "fc1": 1, "fc2": 0, "wq": 1, "wk": 1, "wv": 1, "wo": 0}
    whole = held = expected = 0
    for key in [k for k in ranks[0] if k.startswith(f"{cfg}/ref/")]:
        name = key.split("/ref/")[1]
        ref = ranks[0][key]
        mine = [rank[f"{cfg}/mine/{name}"] for rank in ranks]
        axis = cut.get(name.rsplit(".", 1)[-1])
        got = mine[0] if axis is None else np.concatenate(mine, axis)
        np.testing.assert_allclose(got, ref, rtol=tol * 10, atol=tol * 10 * np.abs(ref).max(),
                                   err_msg=f"{cfg} {name}")
        whole += ref.nbytes
        held += mine[0].nbytes
        expected += ref.nbytes if axis is None else ref.nbytes // 2
    assert held == expected and held < 0.6 * whole, (held, expected, whole)


# -- the ranks' checkpoints --------------------------------------------------------------------
CKPT_JOBS = [(b, c) for b, c in JOBS if b == "torch" or SLOW]


def _one_process_optimizer(opt_kind):
    """The worker's network and optimizer, built whole in this process."""
    import semi_auto_worker as worker
    ms.set_context(backend="numpy")
    return worker.optimizer(nn, worker.build(ms, nn, ops, np.float32), opt_kind)


def _whole(ranks, cfg):
    """``{name: value}`` of the one-process run: the weights and their optimizer states."""
    ref = {k.split("/ref/")[1]: v for k, v in ranks[0].items() if k.startswith(f"{cfg}/ref/")}
    ref.update({k.split("/ref_state/")[1]: v for k, v in ranks[0].items()
                if k.startswith(f"{cfg}/ref_state/")})
    return ref


def _assert_values(got, ref, what):
    for name, value in ref.items():
        np.testing.assert_allclose(got[name], value, rtol=FP32_RTOL,
                                   atol=FP32_RTOL * np.abs(value).max(),
                                   err_msg=f"{what}: {name}")


def _cut_for(world):
    """The strategy file layouts a ``world``-rank run of the worker's strategies widened to
    ``world`` ranks records: w1 cut in columns, w2 in rows (and their states alike)."""
    col = plan(ops.MatMul().shard(((1, 1), (1, world))), [(8, 12), (12, 16)],
               ((1, 1), (1, world)), [], world).inputs[1]
    row = plan(ops.MatMul().shard(((1, world), (world, 1))), [(8, 16), (16, 16)],
               ((1, world), (world, 1)), [], world).inputs[1]
    return {"w1": col, "w2": row}



def _write_strategy(path, cuts, names):
    from mscore.train.proto import node_strategy_pb2
    from mscore.train.serialization._parallel import strategy_layout, write_strategy_file
    layouts = {}
    for name in names:
        cut = cuts.get(name.rsplit(".", 1)[-1])
        if cut is not None:
            layouts[name] = node_strategy_pb2.ParallelLayouts()
            strategy_layout(layouts[name], cut)
    write_strategy_file(str(path), layouts)


@pytest.mark.parametrize("backend,configs", CKPT_JOBS, ids=[b for b, _ in CKPT_JOBS])
def test_two_rank_checkpoints_merge_and_recut_as_the_one_process_model(backend, configs,
                                                                       tmp_path_factory,
                                                                       tmp_path):
    folder, ranks = _two_rank_job(backend, configs, tmp_path_factory)
    cfg = configs[0]
    ckpt = folder / "ckpt"
    files = [str(ckpt / f"rank_{r}" / "net.ckpt") for r in (0, 1)]
    strategy = str(ckpt / "strategy_0.ckpt")
    ref = _whole(ranks, cfg)
    assert any("." in name for name in ref), "the optimizer states are compared too"
    # every rank wrote the same layouts: the cut weights and their states, in columns/rows
    saved = ms.build_searched_strategy(strategy)
    assert saved == ms.build_searched_strategy(str(ckpt / "strategy_1.ckpt"))
    assert sorted(saved) == sorted(n for n in ref if n.rsplit(".", 1)[-1] in ("w1", "w2"))
    # each file holds the rank's slices: merged by the strategy file, the one-process model
    opt = _one_process_optimizer(cfg.split(":")[2])
    merged = ms.load_distributed_checkpoint(opt, files, train_strategy_filename=strategy,
                                            return_param_dict=True)
    params = {p.name: p.asnumpy() for p in opt.get_parameters()}
    _assert_values(params, ref, "merged into one process")
    assert merged["w1"].shape == (12, 16) and merged["w2"].shape == (16, 16)
    # a missing shard, the files out of rank order, no strategy file: refused, naming a file
    for bad, strat, match in (([files[0]], strategy, "rank files|2 ranks"),
                              (files[::-1], strategy, "rank order|rank 1"),
                              (files, None, "strategy file")):
        with pytest.raises(ValueError, match=match) as info:
            ms.load_distributed_checkpoint(_one_process_optimizer(cfg.split(":")[2]), bad,
                                           train_strategy_filename=strat)
        assert "net.ckpt" in str(info.value)
    # re-cut to 4 ranks (the strategies widened): each rank's file its quarter, and the 4
    # files merge back to the one-process model
    four = tmp_path / "four.ckpt"
    _write_strategy(four, _cut_for(4), saved)
    ms.transform_checkpoints(str(ckpt), str(tmp_path / "four"), "net", strategy, str(four))
    quarters = [ms.load_checkpoint(str(tmp_path / "four" / f"rank_{r}" / f"net{r}.ckpt"))
                for r in range(4)]
    for name in saved:
        axis = 1 if name.rsplit(".", 1)[-1] == "w1" else 0
        got = np.concatenate([q[name].asnumpy() for q in quarters], axis)
        assert quarters[0][name].shape[axis] * 4 == ref[name].shape[axis], name
        _assert_values({name: got}, {name: ref[name]}, "re-cut to 4 ranks")
    opt = _one_process_optimizer(cfg.split(":")[2])
    ms.load_distributed_checkpoint(
        opt, [str(tmp_path / "four" / f"rank_{r}" / f"net{r}.ckpt") for r in range(4)],
        train_strategy_filename=str(four))
    _assert_values({p.name: p.asnumpy() for p in opt.get_parameters()}, ref, "4 ranks merged")
    # re-cut to 2 ranks of another run: its rank 1 file does not merge with the job's rank 0
    ms.transform_checkpoints(str(ckpt), str(tmp_path / "again"), "net", strategy, strategy)
    other = str(tmp_path / "again" / "rank_1" / "net1.ckpt")
    with pytest.raises(ValueError, match="another run") as info:
        ms.load_distributed_checkpoint(_one_process_optimizer(cfg.split(":")[2]),
                                       [files[0], other], train_strategy_filename=strategy)
    assert "net1.ckpt" in str(info.value)
    # resumed from the files re-cut to one whole checkpoint, a fresh network and optimizer
    # on each rank take the next step as the trained ones do, and hold the same slices
    for rank in ranks:
        keys = [k for k in rank if k.startswith(f"{cfg}/resume/continued/")]
        assert len(keys) > 4, keys
        for key in keys:
            np.testing.assert_allclose(rank[key.replace("/continued/", "/resumed/")],
                                       rank[key], rtol=FP32_RTOL, atol=1e-7, err_msg=key)
        assert rank[f"{cfg}/resume/resumed/w1"].shape == (12, 8)
    # re-cut to one process: the whole model
    ms.transform_checkpoints(str(ckpt), str(tmp_path / "one"), "net", strategy, None)
    whole = ms.load_checkpoint(str(tmp_path / "one" / "rank_0" / "net0.ckpt"))
    _assert_values({n: p.asnumpy() for n, p in whole.items() if n in ref}, ref,
                   "re-cut to one process")
