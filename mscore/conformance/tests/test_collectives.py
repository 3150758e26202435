"""Level collectives: two processes on 127.0.0.1, started with ``mscore run``, join a job on
the backend's own engine (``mscore.communication.init``) and run ``all_reduce`` (sum, max,
min, mean), ``broadcast``, ``all_gather`` and ``barrier`` on arrays that depend on their rank;
the results must equal numpy's on both ranks, eagerly and, for a backend that compiles,
inside one GRAPH_MODE Cell. A backend that does not declare ``collectives`` is skipped with
that reason. One job per backend and device runs for the whole level (bounded in time, its
processes killed if it hangs); every test below checks one part of its results.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from mscore.conformance._collectives_worker import REDUCTIONS, rank_input, scatter_input

pytestmark = pytest.mark.mscore_needs("collectives")

WORLD = 2
JOB_TIMEOUT = 240
_JOBS: dict = {}        # (backend, device) -> (results of rank 0, of rank 1) or an error text


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dtypes(kit):
    return [d for d in ("float32", "int32", "float16") if kit.has_dtype(d)]


def _launch(kit, plugins):
    """Both ranks' results of the 2-process job, or why it failed; the job's folder is
    removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="mscore-kit-collectives-") as out:
        return _launch_into(kit, plugins, out)


def _launch_into(kit, plugins, out):
    cmd = [sys.executable, "-m", "mscore.launch", f"--worker_num={WORLD}",
           f"--local_worker_num={WORLD}", f"--master_port={_free_port()}",
           f"--cluster_time_out={JOB_TIMEOUT}", "python", "-m",
           "mscore.conformance._collectives_worker", "--backend", kit.name,
           "--device", kit.device, "--dtypes", ",".join(_dtypes(kit)), "--out", out]
    if kit.has("compile"):
        cmd.append("--graph")
    for name in plugins:
        cmd += ["--plugin", name]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] +
                                        [env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=JOB_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        log, _ = proc.communicate()
        return f"the 2-process job did not finish in {JOB_TIMEOUT} s:\n{log[-3000:]}"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if proc.returncode != 0:
        return f"the 2-process job failed (status {proc.returncode}):\n{log[-3000:]}"
    results = []
    for rank in range(WORLD):
        with open(os.path.join(out, f"rank{rank}.json")) as f:
            results.append(json.load(f))
    return tuple(results)


@pytest.fixture
def job(kit, request):
    """Both ranks' results of the backend's job (launched once per backend and device)."""
    if kit.device.startswith("GPU"):
        count = sum(1 for d in (kit.spec.probe()[2] if kit.spec.probe else [])
                    if d.startswith("GPU"))
        if count < WORLD:
            pytest.skip(f"the collectives level needs {WORLD} GPUs, {count} found")
    key = (kit.name, kit.device)
    if key not in _JOBS:
        _JOBS[key] = _launch(kit, request.config.getoption("mscore_plugin") or [])
    found = _JOBS[key]
    if isinstance(found, str):
        pytest.fail(found, pytrace=False)
    return found


def _check(kit, ranks, key, expected, dtype):
    for rank, res in enumerate(ranks):
        got = res[key]
        assert tuple(got["shape"]) == expected.shape, (key, rank, got["shape"])
        actual = np.asarray(got["values"], np.float64).reshape(expected.shape)
        kit.assert_close(actual, expected.astype(np.float64), dtype, f"{key} on rank {rank}")


def _inputs(dtype):
    return [rank_input(r, dtype).astype(np.float64) for r in range(WORLD)]


ALL_REDUCE_CASES = [(op, d) for d, ops in REDUCTIONS.items() for op in ops] + [
    ("sum", "float16")]


@pytest.mark.parametrize("case,dtype", ALL_REDUCE_CASES,
                         ids=[f"{op}-{d}" for op, d in ALL_REDUCE_CASES])
def test_all_reduce(kit, job, case, dtype):
    xs = _inputs(dtype)
    expected = {"sum": xs[0] + xs[1], "max": np.maximum(*xs), "min": np.minimum(*xs),
                "avg": (xs[0] + xs[1]) / 2}[case]
    sizes, ranks = [j["size"] for j in job], [j["rank"] for j in job]
    assert sizes == [WORLD, WORLD] and ranks == [0, 1], (
        f"the 2-process job saw group sizes {sizes} and ranks {ranks}")
    _check(kit, job, f"all_reduce/{case}/{dtype}", expected, dtype)


@pytest.mark.parametrize("dtype", ("float32", "int32"))
def test_broadcast(kit, job, dtype):
    _check(kit, job, f"broadcast/{dtype}", _inputs(dtype)[1], dtype)


@pytest.mark.parametrize("dtype", ("float32", "int32"))
def test_all_gather(kit, job, dtype):
    _check(kit, job, f"all_gather/{dtype}", np.concatenate(_inputs(dtype)), dtype)
    if dtype == "float32":   # 0-d values gather into a vector
        _check(kit, job, "all_gather/scalar", np.array([0.5, 1.5]), "float32")


def _check_scattered(kit, ranks, key, total, dtype):
    """Rank ``r`` holds block ``r`` of ``total``'s rows."""
    blocks = np.split(total, len(ranks))
    for rank, res in enumerate(ranks):
        got = res[key]
        assert tuple(got["shape"]) == blocks[rank].shape, (key, rank, got["shape"])
        actual = np.asarray(got["values"], np.float64).reshape(blocks[rank].shape)
        kit.assert_close(actual, blocks[rank], dtype, f"{key} on rank {rank}")


@pytest.mark.parametrize("dtype", ("float32", "int32"))
@pytest.mark.parametrize("op", ("sum", "max"))
def test_reduce_scatter(kit, job, op, dtype):
    xs = [scatter_input(r, dtype).astype(np.float64) for r in range(WORLD)]
    total = xs[0] + xs[1] if op == "sum" else np.maximum(*xs)
    _check_scattered(kit, job, f"reduce_scatter/{op}/{dtype}", total, dtype)


def test_all_reduce_coalesced(kit, job):
    """The optional coalesced all-reduce (a bucket of arrays in one collective)."""
    if "all_reduce_coalesced" not in job[0]:
        pytest.skip(f"{kit.name} leaves all_reduce_coalesced to the core (optional)")
    xs = _inputs("float32")
    for rank, res in enumerate(job):
        first, second = res["all_reduce_coalesced"]
        for got, want in ((first, xs[0] + xs[1]), (second, xs[0][0] + xs[1][0])):
            assert tuple(got["shape"]) == want.shape, (
                f"rank {rank}: result shape {tuple(got['shape'])}, expected {want.shape}")
            kit.assert_close(np.asarray(got["values"]).reshape(want.shape), want, "float32",
                             f"all_reduce_coalesced on rank {rank}")


def test_barrier(kit, job):
    passed = [j["barrier"] for j in job]
    assert passed == [True, True], f"the barrier returned {passed} on ranks 0 and 1"


@pytest.mark.mscore_needs("collectives", "compile")
def test_inside_a_compiled_step(kit, job):
    """all_reduce, all_gather and broadcast traced into one GRAPH_MODE program."""
    xs = _inputs("float32")
    _check(kit, job, "graph/sum_times_2", 2 * (xs[0] + xs[1]), "float32")
    _check(kit, job, "graph/max", np.maximum(*xs), "float32")
    _check(kit, job, "graph/mean", (xs[0] + xs[1]) / 2, "float32")
    _check(kit, job, "graph/all_gather", np.concatenate(xs), "float32")
    _check(kit, job, "graph/broadcast", xs[1], "float32")
    _check_scattered(kit, job, "graph/reduce_scatter",
                     scatter_input(0, "float32") + scatter_input(1, "float32"), "float32")
