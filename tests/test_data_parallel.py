"""Data parallelism end to end: real worker processes on 127.0.0.1, started by ``mscore run``
(and by torchrun, an msrun-like and a SLURM-like environment), on the engines of the
backends (torch.distributed/gloo, jax.distributed/gloo; numpy over torch's gloo).

Every launch is bounded in time, picks a free port and kills what it started when it fails
(the workers also die with their launcher). The default run launches the failure case, the
launcher's output handling, and one torch job checking PYNATIVE O0 and GRAPH_MODE O2 with an
injected overflow. ``MSCORE_SLOW_TESTS=1`` adds the whole matrix (torch, jax with its step
compiled over the job's mesh, numpy over gloo) and the other launchers.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends

from conftest import subprocess_env

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKER = HERE / "dp_worker.py"
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
slow = pytest.mark.skipif(not SLOW, reason="set MSCORE_SLOW_TESTS=1 for the whole "
                                           "data-parallel matrix and the other launchers")
FP32_RTOL = 1e-5
# O2 computes in float16: the batch's gradient sum rounds differently when it is split in
# two halves (about 3e-4 relative for 1 x 64 against 2 x 32 rows, with or without any
# communication), so the fp16 runs are compared at float16's precision.
FP16_RTOL = 2e-3


def free_port():
    """A TCP port nothing listens on now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_job(cmd, timeout, cwd=None, env=None):
    """Run a launcher command in its own session; on timeout kill the session and fail."""
    proc = subprocess.Popen(cmd, cwd=str(cwd or ROOT), env=env or subprocess_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{cmd[:6]}... did not finish in {timeout} s\n{out[-3000:]}\n{err[-3000:]}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def mscore_run(*args, workers=2, port=None):
    """The ``mscore run`` command line for ``workers`` local workers."""
    return [sys.executable, "-m", "mscore.launch", f"--worker_num={workers}",
            f"--local_worker_num={workers}", f"--master_port={port or free_port()}",
            *[str(a) for a in args]]


def alive(pids):
    """The pids of ``pids`` that still exist (zombies count as gone)."""
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] != "Z":
                    out.append(pid)
        except FileNotFoundError:
            pass
    return out


# -- the launcher ---------------------------------------------------------------------------------
FAILING = """
import os, sys, time
with open(os.path.join(sys.argv[1], f"pid{os.environ['RANK']}"), "w") as f:
    f.write(str(os.getpid()))
if os.environ["RANK"] == "1":
    time.sleep(0.5)
    print("rank one is about to fail", flush=True)
    raise ValueError("boom from the worker of rank 1")
time.sleep(120)
"""


def test_a_failing_worker_stops_the_job_within_seconds(tmp_path):
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    start = time.monotonic()
    proc = run_job(mscore_run(script, tmp_path), timeout=60)
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr
    assert elapsed < 15, f"took {elapsed:.1f} s"
    assert "worker rank 1" in proc.stderr and "exited with status 1" in proc.stderr
    assert "ValueError: boom from the worker of rank 1" in proc.stderr   # its last lines
    assert "[rank 1] rank one is about to fail" in proc.stdout
    pids = [int((tmp_path / f"pid{r}").read_text()) for r in (0, 1)]
    assert alive(pids) == [], "a worker outlived the launcher"


OUTPUT = """
import os, sys
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
        "MS_WORKER_NUM", "MS_NODE_ID", "RANK_ID", "RANK_SIZE", "DEVICE_ID", "MS_SCHED_HOST",
        "MS_SCHED_PORT", "MS_ROLE"]
print("ENV " + " ".join(f"{k}={os.environ[k]}" for k in keys))
print("ARGS", sys.argv[1:])
"""


def _env_line(text, rank):
    for line in text.splitlines():
        if f"ENV RANK={rank} " in line:
            return dict(kv.split("=") for kv in line.split("ENV ", 1)[1].split())
    raise AssertionError(f"no ENV line of rank {rank} in {text!r}")


def test_launcher_sets_both_conventions_prefixes_output_and_writes_logs(tmp_path):
    script = tmp_path / "show.py"
    script.write_text(OUTPUT)
    port = free_port()
    proc = run_job(mscore_run(f"--log_dir={tmp_path / 'logs'}", "--tail_worker_log=1",
                              script, "--flag", "x y", port=port), timeout=60)
    assert proc.returncode == 0, proc.stderr
    # Only rank 1 is tailed to the console, prefixed; both ranks are in their log files.
    assert "[rank 1] ENV RANK=1 " in proc.stdout and "[rank 0]" not in proc.stdout
    assert "[rank 1] ARGS ['--flag', 'x y']" in proc.stdout
    for rank in (0, 1):
        env = _env_line((tmp_path / "logs" / f"worker_{rank}.log").read_text(), rank)
        assert env == {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2",
                       "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": str(port), "MS_WORKER_NUM": "2", "MS_NODE_ID": str(rank),
                       "RANK_ID": str(rank), "RANK_SIZE": "2", "DEVICE_ID": str(rank),
                       "MS_SCHED_HOST": "127.0.0.1", "MS_SCHED_PORT": str(port),
                       "MS_ROLE": "MS_WORKER"}


def test_launcher_without_join_returns_and_leaves_the_output_in_files(tmp_path):
    script = tmp_path / "show.py"
    script.write_text(OUTPUT)
    logs = tmp_path / "logs"
    proc = run_job(mscore_run("--join=False", f"--log_dir={logs}", script), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "started rank 1" in proc.stdout and str(logs / "worker_1.log") in proc.stdout
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:   # the detached workers finish on their own
        texts = [(logs / f"worker_{r}.log").read_text() for r in (0, 1)]
        if all("ARGS" in t for t in texts):
            break
        time.sleep(0.1)
    assert _env_line(texts[0], 0)["RANK"] == "0" and _env_line(texts[1], 1)["RANK"] == "1"


def test_launcher_rejects_inconsistent_flags(capsys):
    from mscore import launch
    for argv, message in ((["--worker_num=2", "--local_worker_num=3", "x.py"],
                           "--local_worker_num must be in 1..--worker_num (2), got 3"),
                          (["--worker_num=4", "--local_worker_num=2", "x.py"],
                           "--node_rank is required"),
                          (["--worker_num=0", "x.py"], "--worker_num must be greater than 0"),
                          (["--join=yes", "x.py"], "expected True or False")):
        assert launch.main(argv) == 2
        assert message in capsys.readouterr().err


# -- two workers against one process -------------------------------------------------------------
def _launch_equivalence(tmp_path, backend, configs, launcher="mscore", extra_env=None,
                        timeout=420):
    out = tmp_path / f"{backend}-{launcher}"
    out.mkdir()
    worker_args = [WORKER, "--backend", backend, "--configs", ",".join(configs), "--out", out]
    if launcher == "mscore":
        worker_args.append("--checkpoints")
    port = free_port()
    env = subprocess_env(**(extra_env or {}))
    if launcher == "mscore":
        proc = run_job(mscore_run(*worker_args, port=port), timeout, env=env)
        procs = [proc]
    elif launcher == "torchrun":
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node=2",
               "--master-addr=127.0.0.1", f"--master-port={port}",
               *[str(a) for a in worker_args]]
        procs = [run_job(cmd, timeout, env=env)]
    else:  # "slurm" / "msrun": the variables a launcher of that kind would set, by hand
        procs = _by_hand(launcher, worker_args, port, env, timeout)
    for proc in procs:
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out, procs


def _by_hand(kind, worker_args, port, env, timeout):
    started = []
    for rank in (0, 1):
        if kind == "slurm":
            extra = {"SLURM_PROCID": rank, "SLURM_NTASKS": 2, "SLURM_LOCALID": rank,
                     "SLURM_NTASKS_PER_NODE": 2, "SLURM_JOB_NODELIST": "localhost",
                     "MASTER_PORT": port}
        else:
            extra = {"MS_WORKER_NUM": 2, "MS_NODE_ID": rank, "MS_SCHED_HOST": "127.0.0.1",
                     "MS_SCHED_PORT": port, "MS_ROLE": "MS_WORKER", "DEVICE_ID": rank}
        child_env = dict(env, **{k: str(v) for k, v in extra.items()})
        for key in ("RANK", "WORLD_SIZE", "MASTER_ADDR"):
            child_env.pop(key, None)
        started.append(subprocess.Popen(
            [sys.executable, *[str(a) for a in worker_args]], cwd=str(ROOT), env=child_env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True))
    done = []
    try:
        for p in started:
            out, err = p.communicate(timeout=timeout)
            done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{kind} workers did not finish in {timeout} s")
    finally:
        for p in started:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return done


def _assert_equivalent(out, configs):
    ranks = [dict(np.load(out / f"rank{r}.npz")) for r in (0, 1)]
    assert int(ranks[0]["size"]) == 2
    report = {}
    for cfg in configs:
        rtol = FP32_RTOL if cfg.endswith("O0") else FP16_RTOL
        ref_loss = ranks[0][f"{cfg}/ref/losses"]
        dp_loss = (ranks[0][f"{cfg}/dp/losses"] + ranks[1][f"{cfg}/dp/losses"]) / 2
        assert len(ref_loss) == len(dp_loss) == 6
        ref_over = ranks[0][f"{cfg}/ref/overflows"]
        for r in (0, 1):   # every rank skipped exactly the steps the single process skipped
            np.testing.assert_array_equal(ranks[r][f"{cfg}/dp/overflows"], ref_over)
        if cfg.endswith("O2"):
            assert ref_over.tolist() == [False, False, True, False, False, False], ref_over
        finite = np.isfinite(ref_loss)
        assert finite.sum() >= 5
        np.testing.assert_allclose(dp_loss[finite], ref_loss[finite], rtol=rtol, err_msg=cfg)
        worst = 0.0
        for key in [k for k in ranks[0] if k.startswith(f"{cfg}/ref/w/")]:
            name = key.split("/w/")[1]
            ref_w = ranks[0][key]
            w0, w1 = ranks[0][f"{cfg}/dp/w/{name}"], ranks[1][f"{cfg}/dp/w/{name}"]
            np.testing.assert_array_equal(w0, w1, err_msg=f"{cfg} {name}: ranks differ")
            scale = np.abs(ref_w).max()
            np.testing.assert_allclose(w0, ref_w, rtol=rtol, atol=rtol * scale,
                                       err_msg=f"{cfg} {name}")
            worst = max(worst, float(np.abs(w0 - ref_w).max() / scale))
        report[cfg] = worst
    print("max relative weight error:", json.dumps(report))
    return ranks


# One launch in the default run (jax's collectives, eagerly and inside a compiled step, are
# in the conformance kit's default run; its whole train step in the slow matrix).
DEFAULT_RUNS = [("torch", ("pynative:O0", "graph:O2"))]
FULL_CONFIGS = ("pynative:O0", "graph:O0", "pynative:O2", "graph:O2")


def _require(backend):
    if backend not in available_backends():
        pytest.skip(f"backend {backend!r} is not usable here")


@pytest.mark.parametrize("backend,configs", DEFAULT_RUNS, ids=[b for b, _ in DEFAULT_RUNS])
def test_two_workers_of_32_match_one_process_of_64(backend, configs, tmp_path):
    """Same losses and weights; per-rank checkpoints load back with
    load_distributed_checkpoint; LossMonitor names the rank."""
    _require(backend)
    out, (proc,) = _launch_equivalence(tmp_path, backend, configs)
    _assert_equivalent(out, configs)
    ranks = [dict(np.load(out / f"rank{r}.npz")) for r in (0, 1)]
    if "pynative:O0" in configs:
        assert "rank: 0, epoch: 1 step: 6, loss is" in proc.stdout
        assert "rank: 1, epoch: 1 step: 6, loss is" in proc.stdout
    for cfg in configs:
        files = [str(ranks[r][f"{cfg}/ckpt"]) for r in (0, 1)]
        assert [Path(f).parent.name for f in files] == ["rank_0", "rank_1"]
        _check_distributed_load(files, ranks[0], cfg)


def _check_distributed_load(files, rank0, cfg):
    from dp_worker import build

    import mscore as ms
    from mscore import nn
    ms.set_context(backend="numpy")
    net = build(ms, nn, seed=123)
    merged = ms.load_distributed_checkpoint(net, files, return_param_dict=True)
    assert "moments.fc1.weight" in merged   # the optimizer state came along
    for p in net.trainable_params():
        np.testing.assert_array_equal(p.asnumpy(), rank0[f"{cfg}/dp/w/{p.name}"])


@slow
@pytest.mark.parametrize("backend", ["torch", "jax", "numpy"])
def test_full_matrix_two_workers_match_one_process(backend, tmp_path):
    _require(backend)
    configs = FULL_CONFIGS if backend != "numpy" else ("pynative:O0", "pynative:O2")
    out, _ = _launch_equivalence(tmp_path, backend, configs)
    _assert_equivalent(out, configs)


@slow
def test_torch_compiled_step_holds_the_collectives(tmp_path):
    """MSCORE_TORCH_COMPILE=always: the all-reduce is a functional collective inside the
    torch.compile'd step."""
    _require("torch")
    out, (proc,) = _launch_equivalence(tmp_path, "torch", ("graph:O0",), extra_env={
        "MSCORE_TORCH_COMPILE": "always"}, timeout=600)
    assert "torch.compile failed" not in proc.stdout + proc.stderr   # no eager fallback
    _assert_equivalent(out, ("graph:O0",))


@slow
@pytest.mark.parametrize("launcher", ["torchrun", "slurm", "msrun"])
def test_other_launchers(launcher, tmp_path):
    _require("torch")
    out, _ = _launch_equivalence(tmp_path, "torch", ("pynative:O0",), launcher=launcher)
    _assert_equivalent(out, ("pynative:O0",))


@slow
def test_example_trains_on_two_workers(tmp_path):
    _require("torch")
    proc = run_job(mscore_run(ROOT / "examples" / "data_parallel.py", "--backend", "torch",
                              "--epochs", "2", "--min-accuracy", "0.8", "--ckpt-dir",
                              tmp_path / "ckpt"), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "[rank 0] test accuracy" in proc.stdout and "[rank 1] test accuracy" in proc.stdout


def test_example_reruns_in_a_folder_an_earlier_job_wrote_to(tmp_path):
    """A rerun with another worker count: the folder of rank 0 holds an earlier run's
    checkpoint, the new rank 1's folder none, so ``ModelCheckpoint`` (MindSpore's rule)
    renames rank 0's prefix only; every rank's own file is reloaded, at the level the
    network was trained at (the same accuracy), and the job says where it saved."""
    _require("torch")                       # numpy's collectives ride on torch's gloo
    ckpt = tmp_path / "ckpt"
    (ckpt / "rank_0").mkdir(parents=True)
    (ckpt / "rank_0" / "digits-1_22.ckpt").write_bytes(b"an earlier run's file")
    proc = run_job(mscore_run(ROOT / "examples" / "data_parallel.py", "--backend", "numpy",
                              "--epochs", "1", "--ckpt-dir", ckpt), timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert "| 1 epoch of " in out and f"checkpoints: {ckpt}" in out
    saved = {int(line.split("rank ")[-1].split(":")[0]): line.split(": ", 1)[1].strip()
             for line in out.splitlines() if "]   rank " in line}
    assert saved == {0: str(ckpt / "rank_0" / "digits_1-1_23.ckpt"),
                     1: str(ckpt / "rank_1" / "digits-1_23.ckpt")}
    assert all(os.path.getsize(path) > 100_000 for path in saved.values())
    trained = {line.split("test accuracy: ")[1].split()[0] for line in out.splitlines()
               if "] test accuracy: " in line}
    reloaded = out.split("checkpoints: test accuracy ")[1].split()[0]
    assert len(trained) == 1 and reloaded == trained.pop()
