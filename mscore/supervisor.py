"""Supervision of a job's worker processes on one machine (``mscore run``'s engine).

* Each worker starts in a process group of its own (its children join it), with a
  parent-death signal on Linux (``prctl(PR_SET_PDEATHSIG, SIGKILL)``): it dies with the
  launcher, however the launcher ends.
* A **watchdog** process, in a session of its own, holds the read end of a pipe from the
  launcher and the workers' process groups. When the pipe closes without the launcher saying
  it has finished (the launcher was SIGKILLed, crashed), it SIGKILLs those groups, so the
  workers' own children do not outlive the job either.
* One thread per worker waits for it and stamps its exit; ranks also note when they begin to
  leave the job (:mod:`mscore.communication._failfast`, in the folder the launcher gives).
  After a failure the launcher collects the exits of a short settling time, then names the
  rank that left **first** -- not the lowest-numbered among those found dead at one poll,
  nor a rank that failed because another had gone (exited early, even with status 0).
* When a worker fails, the others are stopped: SIGTERM to their groups, SIGKILL after a
  grace period.
"""
from __future__ import annotations

import collections
import os
import queue
import signal
import subprocess
import sys
import threading
import time

TAIL_LINES = 20          # lines of a failed worker's output repeated in the report
GRACE_SECONDS = 3.0      # between SIGTERM and SIGKILL when stopping workers
SETTLE_SECONDS = 1.5     # after a failure, the others' exits still collected before stopping
KILLED_SLACK_SECONDS = 1.0  # how much earlier a rank killed by a signal may have died
FIRST_ENDING_SECONDS = 5.0  # how long the rank that left first may take to end on its own
POLL_SECONDS = 0.05
PREFIX = "mscore run: "
_FINISHED = b"finished\n"

# The watchdog: reads process-group ids (one a line) until the pipe closes; kills them all
# unless the last line was "finished". It ignores SIGINT/SIGTERM: it must outlive the
# launcher's end.
_WATCHDOG = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups, finished = [], False
for line in sys.stdin.buffer:
    line = line.strip()
    if line == b"finished":
        finished = True
    elif line:
        groups.append(int(line))
if not finished:
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
"""


def signal_name(number):
    """The name of signal ``number`` (``SIGKILL``), or ``signal N`` where this platform has
    none by that number."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _die_with_parent():
    """In the child before exec: SIGKILL it when the launcher dies (Linux prctl)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Watchdog:
    """The process that kills the workers' groups when the launcher dies abruptly."""

    def __init__(self):
        self._proc = subprocess.Popen([sys.executable, "-c", _WATCHDOG], stdin=subprocess.PIPE,
                                      stdout=subprocess.DEVNULL, start_new_session=True)

    def guard(self, pgid):
        """Add a process group to kill if the launcher dies."""
        self._proc.stdin.write(b"%d\n" % pgid)
        self._proc.stdin.flush()

    def finish(self):
        """The launcher ends in order (its workers are stopped): the watchdog leaves."""
        try:
            self._proc.stdin.write(_FINISHED)
            self._proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()


class Worker:
    """One worker process, its output pump, the tail of its output and its exit stamp."""

    def __init__(self, rank, proc, log, show, console_lock):
        self.rank = rank
        self.proc = proc
        self.tail = collections.deque(maxlen=TAIL_LINES)
        self._log = log
        self._show = show
        self._lock = console_lock
        self._pump = None

    def start_output(self):
        """Start copying the worker's output (after every worker is spawned: forking while
        threads run is unsafe with a ``preexec_fn``)."""
        if self.proc.stdout is not None:
            self._pump = threading.Thread(target=self._copy, name=f"mscore-run-rank{self.rank}",
                                          daemon=True)
            self._pump.start()

    def start_waiting(self, exits):
        """Put ``(time of exit, worker, status)`` on the queue ``exits`` when it ends."""
        def wait():
            code = self.proc.wait()
            exits.put((time.time(), self, code))
        threading.Thread(target=wait, name=f"mscore-run-wait{self.rank}", daemon=True).start()

    def _copy(self):
        prefix = f"[rank {self.rank}] "
        for raw in iter(self.proc.stdout.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            self.tail.append(line)
            if self._log is not None:
                self._log.write(raw)
                self._log.flush()
            if self._show:
                with self._lock:
                    sys.stdout.write(prefix + line + "\n")
                    sys.stdout.flush()

    def finish_output(self, timeout=2.0):
        """Wait for the rest of the output (bounded: a child may hold the pipe open)."""
        if self._pump is not None:
            self._pump.join(timeout)
        if self._log is not None:
            self._log.close()
            self._log = None

    def signal_group(self, sig):
        """Send ``sig`` to the worker's process group (itself and its children)."""
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def start_workers(cmd, specs, join, linux):
    """Start one worker per spec ``(rank, env, log file or None, shown)``; returns the
    Workers and, with ``join``, the Watchdog guarding them (None otherwise: detached
    workers outlive the launcher on purpose). A failed start kills what was started."""
    lock = threading.Lock()
    workers = []
    watchdog = Watchdog() if join and linux else None
    for rank, env, log, show in specs:
        try:
            proc = subprocess.Popen(
                cmd, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if join else log, stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent if (join and linux) else None)
        except OSError:
            for w in workers:
                w.signal_group(signal.SIGKILL)
            if watchdog is not None:
                watchdog.finish()
            raise
        if watchdog is not None:
            watchdog.guard(proc.pid)
        if not join:
            log.close()
            log = None
        workers.append(Worker(rank, proc, log, show, lock))
    for w in workers:
        w.start_output()
    return workers, watchdog


def stop_workers(workers, grace=GRACE_SECONDS):
    """SIGTERM every worker's process group, SIGKILL what is left after ``grace`` seconds."""
    for w in workers:
        if w.proc.poll() is None:
            w.signal_group(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(w.proc.poll() is None for w in workers):
        time.sleep(POLL_SECONDS)
    for w in workers:
        w.signal_group(signal.SIGKILL)   # stragglers, and any children left in the group
        try:
            w.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass


def exit_status(code):
    """The launcher's exit status for a worker's return code (128 + N for signal N)."""
    return 128 - code if code < 0 else code


def read_leaving_notes(folder):
    """``{rank: (time, how)}``: the first note each rank left in ``folder`` when it began to
    leave the job (:mod:`mscore.communication._failfast`)."""
    notes = {}
    if not folder:
        return notes
    try:
        names = os.listdir(folder)
    except OSError:
        return notes
    for name in names:
        if not name.startswith("rank_"):
            continue
        try:
            with open(os.path.join(folder, name)) as f:
                stamp, _, how = f.readline().strip().partition(" ")
            notes[int(name[len("rank_"):])] = (float(stamp), how)
        except (OSError, ValueError):
            continue
    return notes


def first_to_leave(failed, workers, exits, notes):
    """The worker that left the job first: the earliest by its note of leaving (a rank may
    exit 0 too early, or fail while the others still wait on it; it may still be tearing
    down), else by its exit. A rank killed by a signal leaves no note, and the others see
    its connections close before its exit is reported (the kernel frees its memory first):
    its time counts :data:`KILLED_SLACK_SECONDS` earlier. ``exits``: worker -> (time of
    exit, status)."""
    times = {w: notes[w.rank][0] for w in workers if w.rank in notes}
    for worker, (stamp, code) in exits.items():
        if worker not in times and code != 0:
            times[worker] = stamp - (KILLED_SLACK_SECONDS if code < 0 else 0.0)
    times.setdefault(failed, exits[failed][0])
    return min(times, key=lambda w: (times[w], w.rank))


def report_failure(worker, code, failed=None, failed_code=None):
    """Tell which rank failed (or left) first and how, with the last lines of its output;
    ``failed``/``failed_code``: the first worker that ended with an error, when the rank
    named left before it; ``code`` is None for a rank still ending when it was stopped."""
    if code is None:
        how = "was still ending when the workers were stopped"
    else:
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    lines = [f"{PREFIX}worker rank {worker.rank} (pid {worker.proc.pid}) {how} first; the "
             f"other workers were stopped."]
    if failed is not None and failed is not worker:
        lines[0] = (f"{PREFIX}worker rank {worker.rank} (pid {worker.proc.pid}) left the job "
                    f"first ({how}); rank {failed.rank} failed after it (status "
                    f"{failed_code}); the other workers were stopped.")
    if worker.tail:
        lines.append(f"{PREFIX}last lines of rank {worker.rank}:")
        lines.extend("    " + line for line in worker.tail)
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()


def _settle(exits, ended, pending, seconds):
    """Collect the exits of the next ``seconds`` (ranks failing because one left)."""
    deadline = time.monotonic() + seconds
    while pending and time.monotonic() < deadline:
        try:
            stamp, worker, code = exits.get(timeout=POLL_SECONDS)
        except queue.Empty:
            continue
        ended[worker] = (stamp, code)
        pending -= 1
    return pending


def supervise(workers, watchdog=None, notes_folder=None):
    """Wait for the workers; on the first failure stop the rest and name the rank that left
    the job first (``notes_folder``: where ranks note that they leave). Returns the exit
    status."""
    stop = []

    def on_signal(signum, frame):
        stop.append(signum)
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    exits = queue.Queue()
    for w in workers:
        w.start_waiting(exits)
    pending, ended = len(workers), {}
    try:
        while True:
            if stop:
                stop_workers(workers)
                sys.stderr.write(f"{PREFIX}stopped the workers on signal {stop[0]}\n")
                return 128 + stop[0]
            try:
                stamp, worker, code = exits.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            ended[worker] = (stamp, code)
            pending -= 1
            if code != 0:
                pending = _settle(exits, ended, pending, SETTLE_SECONDS)
                first = first_to_leave(worker, workers, ended, read_leaving_notes(notes_folder))
                deadline = time.monotonic() + FIRST_ENDING_SECONDS
                while first not in ended and pending and time.monotonic() < deadline:
                    pending = _settle(exits, ended, pending, POLL_SECONDS)  # its own status
                stop_workers(workers)
                first_code = ended[first][1] if first in ended else None
                first.finish_output()
                report_failure(first, first_code, worker, code)
                return exit_status(first_code if first_code else code)
            if not pending:
                stop_workers(workers, grace=0.0)   # nothing left behind by the workers
                return 0
    finally:
        for w in workers:
            w.finish_output()
        if watchdog is not None:
            watchdog.finish()
        for s, handler in previous.items():
            signal.signal(s, handler)
