"""mscore.communication, the auto-parallel context, the launcher's environment conventions,
gradient buckets, DistributedGradReducer, load_distributed_checkpoint and the rank-aware
pieces, in one process.

MindSpore's names, defaults and errors come from tests/data/communication_oracle.json
(recorded with MindSpore 2.10 by tests/data/make_communication_oracle.py). The job itself is
either a one-process job on the real engine (numpy over torch.distributed's gloo, world size
1) or :class:`FakeJob`, a stand-in for the collectives of a 2-process job in which the other
rank contributes known values; the real 2-process jobs are in test_data_parallel.py and the
conformance kit.
"""
from __future__ import annotations

import ast
import json
import socket
from pathlib import Path

import numpy as np
import pytest

import mscore as ms
from mscore import _state, nn
from mscore.communication import _env, management
from mscore.communication.management import GlobalComm
from mscore.nn.wrap.grad_reducer import DistributedGradReducer, plan_buckets
from mscore.plugin.collectives import Collectives, JobEnv

ORACLE = json.loads((Path(__file__).parent / "data" / "communication_oracle.json").read_text())
SINGLE, JOB = ORACLE["single"], ORACLE["job"]


@pytest.fixture(autouse=True)
def _clean_state():
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    ms.reset_auto_parallel_context()
    yield
    management.release()
    ms.reset_auto_parallel_context()


def _outcome(fn, *args, **kwargs):
    try:
        return ["OK", repr(fn(*args, **kwargs))]
    except Exception as exc:
        return ["ERR", type(exc).__name__, str(exc)]


def _same_as_oracle(recorded, ours, message=True):
    assert ours[0] == recorded[0], (recorded, ours)
    if recorded[0] == "OK":
        assert ours[1] == recorded[1]
    else:
        assert ours[1] == recorded[1], (recorded, ours)
        if message:
            assert ours[2] == recorded[2]


# -- before init: MindSpore's answers -------------------------------------------------------------
@pytest.mark.parametrize("label,call", [
    ("get_rank()", lambda c: c.get_rank()), ("get_group_size()", lambda c: c.get_group_size()),
    ("get_local_rank()", lambda c: c.get_local_rank()),
    ("get_local_rank_size()", lambda c: c.get_local_rank_size()),
    ("get_rank(1)", lambda c: c.get_rank(1)), ("release()", lambda c: c.release()),
    ("create_group before init", lambda c: c.create_group("g", [0, 1])),
    ("destroy_group before init", lambda c: c.destroy_group("g")),
    ("get_process_group_ranks before init", lambda c: c.get_process_group_ranks()),
    ("init(3)", lambda c: c.init(3)), ("init('nccl') on CPU", lambda c: c.init("nccl"))])
def test_before_init_as_mindspore(label, call):
    from mscore import communication
    _same_as_oracle(SINGLE[label], _outcome(call, communication))


def test_init_rejects_unknown_names_and_a_missing_launcher(monkeypatch):
    from mscore.communication import init
    # MindSpore lists 'hccl', 'nccl' and 'mccl'; mscore adds 'gloo' (same type, same start)
    ours = _outcome(init, "foo")
    assert ours[:2] == SINGLE["init('foo')"][:2] and "but got 'backend_name' : foo" in ours[2]
    for key in ("RANK", "WORLD_SIZE", "MS_WORKER_NUM", "SLURM_PROCID"):
        monkeypatch.delenv(key, raising=False)
    ours = _outcome(init)
    assert ours[:2] == SINGLE["init() without launcher"][:2]
    assert "mscore run --worker_num=N" in ours[2] and "torchrun" in ours[2]
    assert not GlobalComm.INITED


def test_numpy_collectives_without_torch_name_what_to_install(monkeypatch):
    from mscore.backends.numpy import collectives
    from mscore.communication import init
    monkeypatch.setattr(collectives, "torch_installed", lambda: False)
    for key, value in TORCHRUN.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(RuntimeError, match=r"install torch \(pip install torch\)"):
        init()
    assert not GlobalComm.INITED


def test_constants_and_global_comm_before_init():
    from mscore import communication as c
    assert repr((c.HCCL_WORLD_COMM_GROUP, c.NCCL_WORLD_COMM_GROUP,
                 c.MCCL_WORLD_COMM_GROUP)) == SINGLE["constants"][1]
    assert repr((GlobalComm.BACKEND, GlobalComm.WORLD_COMM_GROUP,
                 GlobalComm.INITED)) == SINGLE["GlobalComm before init"][1]


# -- the auto-parallel context --------------------------------------------------------------------
def test_parallel_mode_values_and_exports():
    recorded = ast.literal_eval(SINGLE["ParallelMode"][1])
    for name, value in recorded.items():
        assert getattr(ms.ParallelMode, name) == value
    from mscore.context import ParallelMode
    assert ParallelMode is ms.ParallelMode is ms.parallel.ParallelMode


@pytest.mark.parametrize("key", ["parallel_mode", "gradients_mean", "device_num", "global_rank",
                                 "gradient_fp32_sync", "loss_repeated_mean",
                                 "parameter_broadcast", "full_batch", "dataset_strategy",
                                 "all_reduce_fusion_config", "enable_parallel_optimizer",
                                 "strategy_ckpt_load_file", "strategy_ckpt_save_file",
                                 "search_mode", "pipeline_stages", "grad_accumulation_step",
                                 "nope"])
def test_auto_parallel_context_defaults(key):
    _same_as_oracle(SINGLE[f"get_auto_parallel_context({key})"],
                    _outcome(ms.get_auto_parallel_context, key))


SET_CASES = ["parallel_mode='foo'", "parallel_mode=1", "gradients_mean=1",
             "gradient_fp32_sync=1", "loss_repeated_mean=1", "parameter_broadcast=1",
             "full_batch=1", "device_num=0", "device_num='2'", "device_num=True",
             "global_rank=-1", "global_rank=4096", "global_rank='1'", "dataset_strategy='foo'",
             "all_reduce_fusion_config='x'", "strategy_ckpt_load_file=1", "nope=1"]


@pytest.mark.parametrize("case", SET_CASES)
def test_set_auto_parallel_context_errors_as_mindspore(case):
    key, _, value = case.partition("=")
    _same_as_oracle(SINGLE[f"set_auto_parallel_context({case})"],
                    _outcome(ms.set_auto_parallel_context, **{key: ast.literal_eval(value)}))


def test_set_get_reset_round_trip():
    assert _outcome(ms.set_auto_parallel_context, parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                    gradients_mean=True, device_num=2) == SINGLE["set DATA_PARALLEL"]
    assert repr([ms.get_auto_parallel_context(k) for k in (
        "parallel_mode", "gradients_mean", "device_num")]) == SINGLE["after set"][1]
    ms.set_auto_parallel_context(all_reduce_fusion_config=[2, 4])
    assert repr(ms.get_auto_parallel_context("all_reduce_fusion_config")) == \
        SINGLE["all_reduce_fusion_config after set"][1]
    ms.reset_auto_parallel_context()
    assert repr([ms.get_auto_parallel_context(k) for k in (
        "parallel_mode", "gradients_mean", "device_num",
        "all_reduce_fusion_config")]) == SINGLE["after reset"][1]


def test_model_parallel_options_are_refused_not_ignored():
    for kwargs in ({"parallel_mode": "auto_parallel"}, {"search_mode": "dynamic_programming"},
                   {"dataset_strategy": ((2, 1),)}):
        with pytest.raises(ValueError, match="not implemented|mscore implements"):
            ms.set_auto_parallel_context(**kwargs)
    ms.set_auto_parallel_context(gradients_mean=True)
    with pytest.raises(TypeError):   # nothing changes unless every key is valid
        ms.set_auto_parallel_context(gradients_mean=False, device_num="x")
    assert ms.get_auto_parallel_context("gradients_mean") is True


# -- the launcher's environment -------------------------------------------------------------------
TORCHRUN = {"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
            "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}


def test_job_env_conventions():
    assert _env.job_env_from({}) is None
    assert _env.job_env_from(TORCHRUN) == JobEnv(1, 4, 1, 2, "10.0.0.1", 29500, "env", 600.0)
    assert _env.job_env_from(dict(TORCHRUN, TORCHELASTIC_RUN_ID="x")) == JobEnv(
        1, 4, 1, 2, "10.0.0.1", 29500, "torchrun", 600.0, master_port_taken=True)
    ours = _env.job_env_from(dict(TORCHRUN, MSCORE_LAUNCHER="mscore run",
                                  MSCORE_INIT_TIMEOUT="30"))
    assert ours.launcher == "mscore run" and ours.timeout == 30.0
    msrun = {"MS_WORKER_NUM": "2", "MS_NODE_ID": "1", "MS_SCHED_HOST": "127.0.0.1",
             "MS_SCHED_PORT": "8118", "DEVICE_ID": "1", "MS_TOPO_TIMEOUT": "-1"}
    assert _env.job_env_from(msrun) == JobEnv(1, 2, 1, 2, "127.0.0.1", 8118, "msrun",
                                              86400.0)
    slurm = {"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1",
             "SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_JOB_NODELIST": "gpu[07-08],cpu1",
             "SLURM_JOB_ID": "123456"}
    assert _env.job_env_from(slurm) == JobEnv(3, 4, 1, 2, "gpu07", 15000 + 123456 % 5000,
                                              "slurm", 600.0)


@pytest.mark.parametrize("env,message", [
    ({"RANK": "0", "WORLD_SIZE": "2"}, "MASTER_ADDR and MASTER_PORT are not"),
    (dict(TORCHRUN, RANK="4"), "RANK=4 is outside [0, WORLD_SIZE=4)"),
    (dict(TORCHRUN, MASTER_PORT="x"), "MASTER_PORT: expected an int, got 'x'"),
    ({"MS_WORKER_NUM": "2", "MS_ROLE": "MS_SCHED"}, "msrun's scheduler"),
    ({"MS_WORKER_NUM": "2", "MS_SCHED_HOST": "h", "MS_SCHED_PORT": "1"}, "MS_NODE_ID"),
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "2"}, "neither MASTER_ADDR nor SLURM_JOB_NODELIST"),
])
def test_job_env_errors_name_the_variable(env, message):
    with pytest.raises(RuntimeError) as exc:
        _env.job_env_from(env)
    assert message in str(exc.value)


def test_first_host_of_a_slurm_host_list():
    assert _env.first_host("node1") == "node1"
    assert _env.first_host("node[03-05,9],gpu1") == "node03"
    assert _env.first_host("a-b[2]") == "a-b2"


def test_launcher_command_environment_and_log_names(tmp_path):
    import sys

    from mscore import launch
    assert launch.worker_command("train.py", ["-x"]) == [sys.executable, "train.py", "-x"]
    assert launch.worker_command("python", ["-m", "m"]) == [sys.executable, "-m", "m"]
    assert launch.worker_command("pytest", ["t.py"]) == [sys.executable, "-m", "pytest", "t.py"]
    args = launch.build_parser().parse_args(
        ["--worker_num=4", "--local_worker_num=2", "--node_rank=1", f"--log_dir={tmp_path}",
         "--worker_log_name=w_{hostname}", "s.py", "--lr", "0.1"])
    assert launch.check_args(args) == [2, 3]
    assert args.task_script_args == ["--lr", "0.1"]
    env = launch.worker_env({"KEEP": "1"}, 3, 1, args, 1)
    assert (env["KEEP"], env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"], env["RANK_ID"],
            env["DEVICE_ID"], env["GROUP_RANK"]) == ("1", "3", "1", "4", "3", "1", "1")
    assert _env.job_env_from(env).rank == 3
    assert launch.log_file_name(args, 3) == str(tmp_path / f"w_{socket.gethostname()}_3.log")
    assert launch.tailed_ranks("-1", [2, 3]) == {2, 3}
    assert launch.tailed_ranks("0,3", [2, 3]) == {0, 3}


# -- buckets --------------------------------------------------------------------------------------
def test_buckets_group_one_dtype_up_to_the_cap():
    f32, f16 = ms.float32, ms.float16
    sizes = [10, 20, 5, 30, 7, 100]
    dtypes = [f32, f32, f16, f32, f16, f32]
    # 4-byte entries: 40, 80, 120 (fits in 200 with the first two? 40+80=120, +120=240 > 200)
    assert plan_buckets(sizes, dtypes, 200) == [[0, 1], [2, 4], [3], [5]]
    assert plan_buckets(sizes, dtypes, 10 ** 9) == [[0, 1, 3, 5], [2, 4]]
    assert plan_buckets(sizes, dtypes, 1) == [[0], [1], [2], [3], [4], [5]]
    # explicit boundaries (all_reduce_fusion_config) replace the cap
    assert plan_buckets(sizes, dtypes, 1, boundaries=[3]) == [[0, 1], [2], [3, 5], [4]]


class FakeJob(Collectives):
    """The collectives of rank ``rank`` in a 2-process job whose other rank holds
    ``other(array)``; counts the calls."""

    engine = "fake"

    def __init__(self, rank=0, other=lambda a: a * 3):
        self.rank, self.other = rank, other
        self.calls = []

    def all_reduce(self, array, op="sum", group=None):
        self.calls.append(("all_reduce", op, array.shape))
        b = self.other(array)
        return {"sum": array + b, "mean": (array + b) / 2, "max": np.maximum(array, b),
                "min": np.minimum(array, b)}[op].astype(array.dtype)

    def broadcast(self, array, root=0, group=None):
        self.calls.append(("broadcast", root, array.shape))
        return array if root == self.rank else self.other(array).astype(array.dtype)

    def all_gather(self, array, group=None):
        parts = [array, self.other(array)] if self.rank == 0 else [self.other(array), array]
        return np.concatenate(parts)

    def barrier(self, group=None):
        self.calls.append(("barrier",))

    def new_group(self, ranks):
        return tuple(ranks)


@pytest.fixture
def fake_job():
    """Make this process rank 1 of a 2-process job whose collectives are a FakeJob (from a
    fresh process state: no seeds set)."""
    _state.reset()
    job = FakeJob(rank=1)
    backend = ms.context.current_backend()
    # the job this process joined is process state (mscore._state); reset() forgets it
    _state.process.communication.update(
        collectives=job, backend=backend, env=JobEnv(1, 2, 1, 2, "127.0.0.1", 1), groups={},
        seed=1234)
    assert GlobalComm.INITED      # joined, as far as mscore can tell
    yield job
    _state.reset()


def test_reducer_sums_in_buckets_and_averages(fake_job):
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                 gradients_mean=True)
    net = nn.SequentialCell(nn.Dense(3, 4), nn.Dense(4, 2))
    params = net.trainable_params()
    grads = tuple(ms.Tensor(np.full(p.shape, i + 1.0, np.float32)) for i, p in enumerate(params))
    reducer = DistributedGradReducer(params)          # mean from the context, degree 2
    out = reducer(grads)
    for g, o in zip(grads, out):   # (mine + 3 * mine) / 2
        np.testing.assert_array_equal(o.asnumpy(), 2 * g.asnumpy())
    assert [c[0] for c in fake_job.calls] == ["all_reduce"]   # one bucket for 4 gradients
    assert fake_job.calls[0][2] == (sum(p.size for p in params),)
    assert reducer.bytes_per_step(grads) == 4 * sum(p.size for p in params)
    quarter = DistributedGradReducer(params, mean=True, degree=4)(grads)   # (g + 3g) / 4
    np.testing.assert_array_equal(quarter[0].asnumpy(), grads[0].asnumpy())
    assert fake_job.calls[-1][:2] == ("all_reduce", "sum")
    fake_job.calls.clear()
    summed = DistributedGradReducer(params, mean=False, bucket_cap_mb=12 * 4 / 2 ** 20)(grads)
    np.testing.assert_array_equal(summed[0].asnumpy(), 4 * grads[0].asnumpy())
    assert len(fake_job.calls) == 3   # a cap of 12 floats: [w1], [b1 w2], [b2]


def test_reducer_skips_layerwise_parallel_parameters_and_checks_degree(fake_job):
    w = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="w")
    s = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="s", layerwise_parallel=True)
    out = DistributedGradReducer([w, s], mean=False)((ms.Tensor(np.ones(2, np.float32)),) * 2)
    np.testing.assert_array_equal(out[0].asnumpy(), [4, 4])
    np.testing.assert_array_equal(out[1].asnumpy(), [1, 1])     # its own slice's gradient
    for degree in (-1, 0, "2"):
        recorded = SINGLE[f"DistributedGradReducer(degree={degree!r})"]
        _same_as_oracle(recorded, _outcome(DistributedGradReducer, [w], True, degree))


def test_reducer_needs_init():
    w = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="w")
    with pytest.raises(RuntimeError, match="communication.init"):
        DistributedGradReducer([w])
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL)
    with pytest.raises(RuntimeError, match="communication.init"):
        nn.TrainOneStepCell(nn.WithLossCell(nn.Dense(2, 1), nn.MSELoss()),
                            nn.SGD([w], 0.1))


def test_train_cells_broadcast_once_reduce_and_agree_on_overflow(fake_job):
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                 gradients_mean=True)
    net = nn.Dense(2, 1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(
        net.trainable_params(), 0.5))
    assert step.reducer_flag and isinstance(step.grad_reducer, DistributedGradReducer)
    w0 = net.weight.asnumpy().copy()
    step.grad_reducer.broadcast_once(step)     # rank 1 takes rank 0's values (3x in the fake)
    np.testing.assert_allclose(net.weight.asnumpy(), 3 * w0)
    broadcasts = len(fake_job.calls)
    assert broadcasts >= 1 and {c[0] for c in fake_job.calls} == {"broadcast"}
    x, y = ms.Tensor(np.ones((4, 2), np.float32)), ms.Tensor(np.zeros((4, 1), np.float32))
    step(x, y)
    step(x, y)
    assert [c[0] for c in fake_job.calls[broadcasts:]] == ["all_reduce", "all_reduce"]
    from mscore.amp import DynamicLossScaleManager
    scaled = nn.TrainOneStepWithLossScaleCell(
        nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.5),
        DynamicLossScaleManager(2 ** 8, 2, 10).get_update_cell())
    fake_job.other = lambda a: a             # in sync: the broadcast changes nothing
    scaled.grad_reducer.broadcast_once(scaled)
    # now the other rank's gradients overflow (and so does its flag): this rank skips too
    fake_job.other = lambda a: np.full_like(a, np.inf)
    fake_job.calls.clear()
    before = net.weight.asnumpy().copy()
    loss, overflow, scale = scaled(x, y)
    assert bool(overflow.asnumpy()) and float(scale.asnumpy()) == 256.0
    np.testing.assert_array_equal(net.weight.asnumpy(), before)   # the step was skipped
    assert [c[:2] for c in fake_job.calls] == [("all_reduce", "mean"), ("all_reduce", "max")]


def test_rank_aware_pieces_in_a_job(fake_job, tmp_path, capsys):
    from mscore.dataset import NumpySlicesDataset
    from mscore.train import LossMonitor, ModelCheckpoint
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL)
    rows = NumpySlicesDataset({"x": np.arange(10)}, shuffle=False)
    assert [int(r["x"]) for r in rows.create_dict_iterator(output_numpy=True)] == [1, 3, 5, 7, 9]
    explicit = NumpySlicesDataset({"x": np.arange(4)}, shuffle=False, num_shards=1, shard_id=0)
    assert explicit.get_dataset_size() == 4
    ms.set_auto_parallel_context(dataset_strategy="full_batch")
    assert NumpySlicesDataset({"x": np.arange(10)}, shuffle=False).get_dataset_size() == 10
    from mscore.dataset import config
    assert config.get_seed() == 1234      # no seed is set: the one rank 0 drew for the job
    ckpt = ModelCheckpoint("net", str(tmp_path))
    assert ckpt.directory == str(tmp_path / "rank_1")
    from mscore.train.summary import SummaryRecord
    with SummaryRecord(str(tmp_path / "summary")) as record:
        assert Path(record.log_dir).parent == tmp_path / "summary" / "rank_1"
    from mscore.train.callback._callback import CallbackParam, RunContext
    params = CallbackParam(cur_epoch_num=1, cur_step_num=1, batch_num=1,
                           net_outputs=ms.Tensor(np.float32(0.5)))
    monitor = LossMonitor(1)
    monitor.on_train_begin(RunContext(CallbackParam(cur_step_num=0)))
    monitor.on_train_step_end(RunContext(params))
    assert capsys.readouterr().out == "rank: 1, epoch: 1 step: 1, loss is 0.5\n"


# -- a real one-process job (numpy over torch.distributed's gloo) ---------------------------------
@pytest.fixture
def one_process_job(monkeypatch):
    pytest.importorskip("torch")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for key in ("MS_WORKER_NUM", "SLURM_PROCID"):
        monkeypatch.delenv(key, raising=False)
    for key, value in {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": str(port), "MSCORE_INIT_TIMEOUT": "30"}.items():
        monkeypatch.setenv(key, value)
    from mscore.communication import init
    init()
    yield
    management.release()


def test_one_process_job_on_the_real_engine(one_process_job):
    from mscore import communication as c
    from mscore.communication import comm_func
    assert (GlobalComm.BACKEND, GlobalComm.WORLD_COMM_GROUP, GlobalComm.INITED) == (
        "mccl", "mccl_world_group", True)
    assert management.collectives().engine == "torch.distributed/gloo"
    assert (c.get_rank(), c.get_group_size(), c.get_local_rank(),
            c.get_local_rank_size()) == (0, 1, 0, 1)
    c.init()   # joined already: nothing happens
    assert c.get_rank("hccl_world_group") == 0          # MindSpore's default name works
    _same_as_oracle(JOB["get_rank(unknown)"], _outcome(c.get_rank, "nope"), message=False)
    assert "The group nope does not exist." in _outcome(c.get_rank, "nope")[2]
    _same_as_oracle(JOB["create_group(rank out of range)"],
                    _outcome(c.create_group, "gbad", [0, 5]), message=False)
    c.create_group("g0", [0])
    c.create_group("g0", [0])                           # again, same ranks: no-op
    assert (c.get_group_size("g0"), c.get_rank("g0"), c.get_process_group_ranks("g0"),
            c.get_world_rank_from_group_rank("g0", 0),
            c.get_group_rank_from_world_rank(0, "g0")) == (1, 0, [0], 0, 0)
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    out, handle = comm_func.all_reduce(x, "sum", "g0")
    assert handle is None
    np.testing.assert_array_equal(out.asnumpy(), x.asnumpy())
    gathered, _ = comm_func.all_gather_into_tensor(x)
    assert gathered.shape == (2, 3)
    with pytest.raises(ValueError, match="'op' must be one of"):
        comm_func.all_reduce(x, "prod")
    c.destroy_group("g0")
    with pytest.raises(RuntimeError, match="does not exist"):
        c.get_group_size("g0")
    c.release()
    assert not GlobalComm.INITED and c.get_group_size() == 1


# -- load_distributed_checkpoint ------------------------------------------------------------------
def _save_rank_files(tmp_path, values_by_rank):
    from mscore.train.serialization import save_checkpoint
    files = []
    for rank, values in enumerate(values_by_rank):
        path = tmp_path / f"rank_{rank}" / "net.ckpt"
        path.parent.mkdir()
        save_checkpoint([{"name": k, "data": ms.Tensor(v)} for k, v in values.items()],
                        str(path))
        files.append(str(path))
    return files


def test_load_distributed_checkpoint_merges_slices_and_checks_replicas(tmp_path):
    from mscore.train.proto import node_strategy_pb2
    full = np.arange(8, dtype=np.float32).reshape(4, 2)
    bias = np.array([1.0, -1.0], np.float32)
    files = _save_rank_files(tmp_path, [{"weight": full[:2], "bias": bias},
                                        {"weight": full[2:], "bias": bias}])
    msg = node_strategy_pb2.ParallelStrategyMap(current_stage=0)
    item = msg.parallel_layout_item.add(param_name="weight")
    lay = item.parallel_layouts
    lay.dev_matrix.add().dim.extend([2])
    lay.tensor_map.add().dim.extend([0, -1])
    lay.field, lay.opt_weight_shard_step, lay.opt_weight_shard_size = 0, 0, 0
    strategy = tmp_path / "strategy.ckpt"
    strategy.write_bytes(msg.SerializeToString())
    holder = nn.Cell()
    holder.weight = ms.Parameter(ms.Tensor(np.zeros((4, 2), np.float32)), name="weight")
    holder.bias = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name="bias")
    ms.load_distributed_checkpoint(holder, files, train_strategy_filename=str(strategy))
    np.testing.assert_array_equal(holder.weight.asnumpy(), full)
    np.testing.assert_array_equal(holder.bias.asnumpy(), bias)
    # without the strategy the slices differ: a clear error instead of rank 0's half
    with pytest.raises(ValueError, match="'weight' differs between .*rank_0.* and "
                                         ".*rank_1.*train_strategy_filename"):
        ms.load_distributed_checkpoint(holder, files)
    # the context's strategy_ckpt_load_file is the default
    ms.set_auto_parallel_context(strategy_ckpt_load_file=str(strategy))
    merged = ms.load_distributed_checkpoint(holder, files, return_param_dict=True,
                                            name_map={"bias": "b"})
    assert sorted(merged) == ["b", "weight"] and merged["b"].name == "b"


@pytest.mark.parametrize("kwargs,error,match", [
    ({"checkpoint_filenames": "a.ckpt"}, TypeError, "list of file names"),
    ({"checkpoint_filenames": []}, ValueError, "is empty"),
    ({"checkpoint_filenames": [1]}, TypeError, r"checkpoint_filenames\[0\]"),
    ({"predict_strategy": {}}, ValueError, "model parallelism"),
    ({"dec_key": b"k" * 16}, ValueError, "encrypted"),
    ({"format": "onnx"}, ValueError, "'format' must be one of"),
    ({"checkpoint_filenames": ["/no/such.ckpt"]}, ValueError, "/no/such.ckpt"),
])
def test_load_distributed_checkpoint_argument_errors(kwargs, error, match):
    args = {"checkpoint_filenames": ["x.ckpt"], **kwargs}
    with pytest.raises(error, match=match):
        ms.load_distributed_checkpoint(nn.Dense(2, 2), **args)
    with pytest.raises(TypeError, match="'network' must be a Cell"):
        ms.load_distributed_checkpoint(None, ["x.ckpt"])


def test_files_of_ranks_with_different_entries_are_refused(tmp_path):
    files = _save_rank_files(tmp_path, [{"a": np.ones(2, np.float32)},
                                        {"b": np.ones(2, np.float32)}])
    with pytest.raises(ValueError, match="hold different entries"):
        ms.load_distributed_checkpoint(nn.Dense(2, 2), files)


def test_the_job_facts_of_global_comm_are_not_assigned():
    for name in ("BACKEND", "WORLD_COMM_GROUP", "INITED"):
        with pytest.raises(AttributeError, match=f"GlobalComm.{name} follows the job"):
            setattr(GlobalComm, name, True)
    assert not GlobalComm.INITED and GlobalComm.BACKEND == "hccl"
