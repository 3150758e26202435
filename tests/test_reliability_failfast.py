"""A process of a job fails at once: an uncaught exception ends it after its traceback and
the other exit work, without the engine's leaving handshake (which waits for every rank);
rank 0 says clearly that the master port is taken. One-process jobs on numpy over
torch.distributed's gloo, on 127.0.0.1, bounded in time."""
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest
from _helpers import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytest.importorskip("torch")


def _job_env(port):
    env = {k: v for k, v in os.environ.items() if k not in ("MS_WORKER_NUM", "SLURM_PROCID")}
    env.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
               MSCORE_INIT_TIMEOUT="30", PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    return env


def test_uncaught_exception_ends_the_rank_without_the_leaving_handshake(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(textwrap.dedent("""
        import atexit, time
        import mscore as ms
        from mscore.communication import init, management
        ms.set_context(backend="numpy")
        init()
        atexit.register(print, "OTHER EXIT WORK RAN", flush=True)
        def handshake_that_would_hang():
            print("HANDSHAKE", flush=True)
            time.sleep(60)
        management.collectives().release = handshake_that_would_hang
        raise RuntimeError("this rank fails")
    """))
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env=_job_env(free_port()))
    assert proc.returncode == 1
    assert "RuntimeError: this rank fails" in proc.stderr
    assert "OTHER EXIT WORK RAN" in proc.stdout and "HANDSHAKE" not in proc.stdout
    assert time.monotonic() - started < 60


def test_taken_master_port_is_named_by_rank_0(monkeypatch):
    import mscore as ms
    from mscore.communication import init, management
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        for key, value in _job_env(port).items():
            monkeypatch.setenv(key, value)
        ms.set_context(backend="numpy")
        with pytest.raises(RuntimeError, match=f"127.0.0.1:{port}, but that port is in use"):
            init()
    assert not management.is_initialized()
    assert sys.excepthook is sys.__excepthook__ or "failfast" not in repr(sys.excepthook)


def test_collective_deadline_ends_a_process_stuck_past_it():
    code = textwrap.dedent("""
        import time
        from mscore.communication._failfast import collective_deadline
        with collective_deadline("all_reduce on rank 0", 0.5):
            pass                      # in time: nothing happens
        print("FIRST DONE", flush=True)
        with collective_deadline("all_reduce on rank 0", 1):
            time.sleep(60)            # a peer that never answers
        print("NOT REACHED", flush=True)
    """)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 1
    assert "FIRST DONE" in proc.stdout and "NOT REACHED" not in proc.stdout
    assert "all_reduce on rank 0 did not complete within 1 s" in proc.stderr
    assert time.monotonic() - started < 30
