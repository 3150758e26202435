"""SIGTERM to one rank of a two-rank job ends the job promptly, naming that rank, with no
process left: on jax too, whose preemption service would otherwise catch the signal and let
the rank train on (two-rank jobs over 127.0.0.1, about 10 s)."""
import importlib.util
import os
import signal
import subprocess
import sys
import time

import pytest
from _helpers import free_port, pids_with_tag

from conftest import subprocess_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOUND_S = 30          # from the signal to the job's end (jax's slowest path is ~5 s)

WORKER = """
import os, signal, sys, time
import numpy as np
import mscore as ms
from mscore.communication import comm_func, get_rank, init
ms.set_context(backend=sys.argv[1])
init()
rank = get_rank()
x = ms.Tensor(np.ones(4, np.float32))
for step in range(3000):
    if step == 5 and rank == 1:
        print("ACTING", flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
    comm_func.all_reduce(x)
    time.sleep(0.02)
print("FINISHED", rank, flush=True)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="process groups, /proc")
@pytest.mark.parametrize("backend", [
    pytest.param("jax", marks=pytest.mark.skipif(importlib.util.find_spec("mscore_jax") is None,
                                                 reason="the jax backend is not installed"))])
def test_sigterm_to_one_rank_ends_the_job_naming_it(backend, tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    tag = f"mscore-sigterm-test-{os.getpid()}-{time.monotonic_ns()}"
    cmd = [sys.executable, "-m", "mscore.cli", "run", "--worker_num=2", "--local_worker_num=2",
           f"--master_port={free_port()}", f"--log_dir={tmp_path / 'logs'}", str(script),
           backend, tag]
    launcher = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, cwd=str(tmp_path), start_new_session=True,
                                env=subprocess_env(ROOT, PYTHONUNBUFFERED="1"))
    lines, acted = [], None
    try:
        for line in launcher.stdout:
            lines.append(line)
            if "ACTING" in line:
                acted = time.monotonic()
                break
        assert acted is not None, "".join(lines)
        rest, _ = launcher.communicate(timeout=BOUND_S)
        elapsed = time.monotonic() - acted
        lines.append(rest)
        deadline = time.monotonic() + 10
        while pids_with_tag(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = pids_with_tag(tag)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.communicate()
        for pid in pids_with_tag(tag):
            os.kill(pid, signal.SIGKILL)
    text = "".join(lines)
    assert launcher.returncode != 0, text
    assert "FINISHED" not in text, text
    assert "worker rank 1 " in text and "killed by signal 15 first" in text, text[-3000:]
    assert elapsed < BOUND_S
    assert left == []
