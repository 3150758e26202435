"""``mscore run`` ends cleanly: a missing script or a taken master port is found before any
worker starts, more workers than cores is warned about, the rank that failed first is named,
and a launcher killed with SIGKILL leaves no worker, nor any child of one, running. The
workers here are plain Python scripts (no backend), each bounded in time."""
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from _helpers import free_port, pids_with_tag

from mscore import launch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process groups, /proc")


def _run(argv):
    return subprocess.run([sys.executable, "-m", "mscore.launch", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def test_missing_script_is_reported_before_any_worker_starts(tmp_path):
    missing = str(tmp_path / "no_such_script.py")
    started = time.monotonic()
    proc = _run(["--worker_num=2", "--local_worker_num=2", f"--log_dir={tmp_path}", missing])
    assert proc.returncode == 2
    assert f"the script {missing!r} does not exist" in proc.stderr
    assert not list(tmp_path.glob("*.log"))  # no worker ever started
    assert time.monotonic() - started < 30


def test_taken_master_port_is_reported_before_any_worker_starts(tmp_path):
    script = tmp_path / "w.py"
    script.write_text("raise SystemExit(0)\n")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        proc = _run(["--worker_num=1", "--local_worker_num=1", f"--master_port={port}",
                     f"--log_dir={tmp_path}", str(script)])
    assert proc.returncode == 2
    assert f"--master_port {port} on 127.0.0.1 is in use" in proc.stderr
    assert not list(tmp_path.glob("*.log"))


def test_more_workers_than_cores_is_warned(capsys):
    launch.warn_oversubscription(8, cores=2)
    err = capsys.readouterr().err
    assert "starting 8 workers on a machine with 2 CPU core(s)" in err
    launch.warn_oversubscription(2, cores=2)
    assert capsys.readouterr().err == ""


def test_the_rank_that_failed_first_is_named(tmp_path):
    script = tmp_path / "w.py"
    script.write_text("import os, sys, time\n"
                      "rank = int(os.environ['RANK'])\n"
                      "time.sleep(1.0 if rank == 1 else 1.3)\n"
                      "sys.exit(5 if rank == 1 else 7)\n")
    proc = _run(["--worker_num=2", "--local_worker_num=2", f"--master_port={free_port()}",
                 str(script)])
    assert proc.returncode == 5, proc.stderr
    assert "worker rank 1 " in proc.stderr and "exited with status 5 first" in proc.stderr


def test_sigkill_of_the_launcher_leaves_nothing_running(tmp_path):
    tag = f"mscore-sigkill-test-{os.getpid()}-{time.monotonic_ns()}"
    script = tmp_path / "w.py"
    script.write_text("import subprocess, sys, time\n"
                      f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)',"
                      f" {tag!r}])\n"
                      "print('READY', flush=True)\n"
                      "time.sleep(120)\n")
    launcher = subprocess.Popen(
        [sys.executable, "-m", "mscore.launch", "--worker_num=2", "--local_worker_num=2",
         f"--master_port={free_port()}", str(script), tag],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=dict(os.environ, PYTHONPATH=ROOT), start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        ready = 0
        while ready < 2 and time.monotonic() < deadline:
            line = launcher.stdout.readline()
            assert line, "the launcher ended early"
            ready += b"READY" in line
        while len(pids_with_tag(tag)) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)  # the launcher, 2 workers and 2 grandchildren
        assert len(pids_with_tag(tag)) == 5
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(timeout=10)
        deadline = time.monotonic() + 10
        while pids_with_tag(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = pids_with_tag(tag)
    finally:
        for pid in pids_with_tag(tag):
            os.kill(pid, signal.SIGKILL)
        if launcher.poll() is None:
            launcher.kill()
        launcher.stdout.close()
    assert left == []


@pytest.mark.parametrize("teardown, status, how", [
    (0.8, 3, "left the job first (exited with status 3)"),
    (30.0, 1, "left the job first (was still ending when the workers were stopped)")])
def test_the_rank_that_left_first_is_named_not_the_one_failing_because_of_it(
        tmp_path, teardown, status, how):
    # rank 1 begins to leave (notes it), then takes `teardown` s to end with status 3; rank 0
    # notices 0.2 s after the note and fails at once (status 1): rank 1 is named. Rank 0
    # waits for the note itself, not a fixed time: under load the two ranks' imports end
    # seconds apart, and a rank 0 that fails before rank 1 leaves is rightly named first.
    script = tmp_path / "w.py"
    script.write_text("import os, sys, time\n"
                      "from mscore.communication import _failfast\n"
                      "rank = int(os.environ['RANK'])\n"
                      "_failfast.install(lambda: None, rank)\n"
                      "if rank == 1:\n"
                      "    time.sleep(0.5)\n"
                      "    _failfast.note_leaving('exit')\n"
                      f"    time.sleep({teardown})\n"
                      "    sys.exit(3)\n"
                      "note = os.path.join(os.environ[_failfast.EVENTS_ENV], 'rank_1')\n"
                      "deadline = time.monotonic() + 30\n"
                      "while time.monotonic() < deadline:\n"
                      "    if os.path.exists(note) and open(note).read().endswith('\\n'):\n"
                      "        break\n"
                      "    time.sleep(0.01)\n"
                      "time.sleep(0.2)\n"
                      "sys.exit(1)\n")
    proc = _run(["--worker_num=2", "--local_worker_num=2", f"--master_port={free_port()}",
                 str(script)])
    assert proc.returncode == status, proc.stderr
    assert "worker rank 1 " in proc.stderr and how in proc.stderr
    assert "rank 0 failed after it (status 1)" in proc.stderr


def test_first_to_leave_weighs_notes_exits_and_kills():
    from mscore.supervisor import KILLED_SLACK_SECONDS, first_to_leave

    class Rank:
        def __init__(self, rank):
            self.rank = rank
    r0, r1, r2 = (Rank(r) for r in range(3))
    workers = [r0, r1, r2]
    # no notes: the earliest failed exit
    assert first_to_leave(r0, workers, {r0: (10.0, 1), r1: (10.5, 1)}, {}) is r0
    # rank 1 noted leaving before rank 0 failed: rank 1, ended or not
    assert first_to_leave(r0, workers, {r0: (10.0, 1)}, {1: (9.8, "exit")}) is r1
    # rank 2 killed -9: its exit is reported late (no note); rank 0 noted an exception just
    # before that report, because rank 2's connections had closed already: rank 2
    late = KILLED_SLACK_SECONDS / 2
    assert first_to_leave(r2, workers, {r2: (10.0, -9)},
                          {0: (10.0 - late, "uncaught RuntimeError")}) is r2
    # but a note well before the kill's report stays first
    assert first_to_leave(r2, workers, {r2: (10.0, -9)},
                          {0: (10.0 - 3 * KILLED_SLACK_SECONDS, "exit")}) is r0


def _port_in_time_wait():
    """A port of 127.0.0.1 whose server closed a connection first, as a job's rank 0 does
    when it stops: the server side's socket lingers in TIME_WAIT (about a minute) while
    nothing listens there. The server sets SO_REUSEADDR as torch's store and jax's
    coordinator do. Checked: binding it without SO_REUSEADDR still fails."""
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()            # the server side closes first: its socket goes TIME_WAIT
        client.recv(1)              # the FIN arrives
        client.close()
    with socket.socket() as plain:
        with pytest.raises(OSError):
            plain.bind(("127.0.0.1", port))
    return port


def test_a_port_in_time_wait_is_free_for_the_next_job(tmp_path):
    from mscore.communication import _failfast
    port = _port_in_time_wait()
    _failfast.check_master_port_free("127.0.0.1", port, 0)      # no error: nothing listens
    script = tmp_path / "w.py"
    script.write_text("print('worker ran', flush=True)\n")
    proc = _run(["--worker_num=1", "--local_worker_num=1", f"--master_port={port}",
                 str(script)])
    assert proc.returncode == 0, proc.stderr
    assert "worker ran" in proc.stdout


JOB_THAT_FAILS = """
import os
import mscore as ms
from mscore.communication import init
from mscore.communication.comm_func import barrier
ms.set_context(backend="numpy")
init()
barrier()
if os.environ["RANK"] == "0":
    raise SystemExit(3)
barrier()                        # rank 1 waits for rank 0 until the launcher stops it
"""


def test_the_port_of_a_failed_job_is_free_right_after_it(tmp_path):
    """Its rank 0 served the rendezvous there; the next job's launcher and rank 0 take it."""
    pytest.importorskip("torch")     # the numpy backend's collectives ride on torch's gloo
    from mscore.communication import _failfast
    script = tmp_path / "job.py"
    script.write_text(JOB_THAT_FAILS)
    port = free_port()
    failed = _run(["--worker_num=2", "--local_worker_num=2", f"--master_port={port}",
                   str(script)])
    assert failed.returncode == 3, failed.stderr[-2000:]
    args = launch.build_parser().parse_args([f"--master_port={port}", str(script)])
    launch.check_master_port(args)                           # no error
    _failfast.check_master_port_free("127.0.0.1", port, 0)   # no error


def test_run_without_a_script_asks_for_the_script_only(capsys):
    assert launch.main([]) == 2
    err = capsys.readouterr().err
    assert err == ("mscore run: error: the following arguments are required: task_script "
                   "(see 'mscore run --help')\n")
