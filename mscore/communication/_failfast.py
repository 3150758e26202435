"""How a process of a data-parallel job fails: at once, and before it can hang the others.

* An uncaught exception in a process that joined a job prints its traceback and ends the
  process straight away (status 1; 130 for KeyboardInterrupt) after the interpreter's other
  exit work (pending checkpoint saves; at most :data:`EXIT_WORK_SECONDS`), without the
  engine's leaving handshake:
  ``jax.distributed.shutdown()`` waits in a barrier for every rank, and the other ranks,
  blocked in a collective on this one, never reach it. The launcher sees the failure first,
  from this rank, and stops the job.
* Under ``mscore run`` (which sets :data:`EVENTS_ENV` to a folder), a rank notes the moment
  it starts to leave the job -- an uncaught exception, or the interpreter's exit (a
  ``sys.exit``, the end of the script) -- in ``rank_N`` there, before its connections
  close: the launcher then names the rank that left first, not one of the others that
  failed a moment later because it had gone.
* :func:`collective_deadline`: an engine without a timeout of its own (jax's CPU
  collectives wait for a hung peer forever) bounds a collective with it: past the job's
  cluster timeout the process says which operation did not complete and ends (status 1).
* Rank 0's engine listens on the master port: :func:`check_master_port_free` says so
  clearly when it is taken, before the engine tries (``jax.distributed.initialize`` may
  crash in that case).
"""
from __future__ import annotations

import atexit
import contextlib
import errno
import os
import socket
import sys
import threading
import time

from mscore import _state

#: The variable naming the folder where ranks note that they leave (set by ``mscore run``).
EVENTS_ENV = "MSCORE_RUN_EVENTS"
#: The most a failing rank spends on the interpreter's exit work before it ends.
EXIT_WORK_SECONDS = 5.0
# The hook this process installed for its job: process state (mscore._state.reset puts the
# excepthook back and forgets the rank, as it forgets the job).
_installed = _state.section("mscore.communication.failfast",
                            {"previous": None, "skip": None, "rank": None})


def note_leaving(how):
    """Note for the launcher that this rank leaves the job now (``how``: a few words)."""
    folder, rank = os.environ.get(EVENTS_ENV), _installed["rank"]
    if not folder or rank is None:
        return
    try:
        with open(os.path.join(folder, f"rank_{rank}"), "a") as f:
            f.write(f"{time.time():.6f} {how}\n")
    except OSError:
        pass  # the launcher is gone or the folder too: nothing to tell


def _exit_now(exc_type, exc, tb):
    note_leaving(f"uncaught {exc_type.__name__}")
    previous = _installed["previous"] or sys.__excepthook__
    try:
        previous(exc_type, exc, tb)
    finally:
        skip = _installed["skip"]
        if skip is not None:
            atexit.unregister(skip)
        try:
            # the other exit work (pending checkpoint saves, logs), bounded: an engine's own
            # exit handler may wait for the other ranks too (jax's calls shutdown())
            work = threading.Thread(target=atexit._run_exitfuncs, name="mscore-exit-work",
                                    daemon=True)
            work.start()
            work.join(EXIT_WORK_SECONDS)
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
            os._exit(130 if issubclass(exc_type, KeyboardInterrupt) else 1)


def _note_interpreter_exit():
    note_leaving("exit")


def install(leave_job_at_exit, rank):
    """Make an uncaught exception end this process (``rank`` of the job) at once;
    ``leave_job_at_exit`` (the atexit handler that leaves the job with the engine's
    handshake) is skipped then. The interpreter's exit is noted at its very start (before
    any atexit handler: an engine's own may close the connections first)."""
    if sys.excepthook is not _exit_now:
        _installed["previous"] = sys.excepthook
        sys.excepthook = _exit_now
    if _installed["rank"] is None:
        register = getattr(threading, "_register_atexit", atexit.register)
        try:
            register(_note_interpreter_exit)
        except RuntimeError:  # the interpreter is shutting down already
            pass
    _installed.update(skip=leave_job_at_exit, rank=rank)


@_state.finisher("failfast_hook")
def uninstall():
    """Back to the excepthook there was before :func:`install` (the job was left, or the
    process state is reset)."""
    if sys.excepthook is _exit_now:
        sys.excepthook = _installed["previous"] or sys.__excepthook__
    _installed.update(previous=None, skip=None, rank=None)


def port_listener_error(addr, port):
    """The ``OSError`` of listening on ``addr:port`` here, or None when a server could
    listen there now.

    Only a listening socket holds a port: the probe sets ``SO_REUSEADDR`` (as torch's
    store and jax's coordinator do), so the connections of a job that just ended, which
    linger in ``TIME_WAIT`` for a minute, do not count."""
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((addr.strip("[]"), port))
            probe.listen(1)
        except OSError as exc:
            return exc
    return None


def check_master_port_free(addr, port, rank):
    """``RuntimeError`` naming the port when rank 0 cannot listen on ``addr:port``."""
    exc = port_listener_error(addr, port)
    if exc is None or exc.errno != errno.EADDRINUSE:
        return  # free, or not an address of this machine: the engine will say so
    raise RuntimeError(f"For 'init', rank {rank} serves the job's rendezvous on "
                       f"{addr}:{port}, but that port is in use ({exc.strerror}): "
                       f"another job or program listens there; choose another master "
                       f"port (mscore run --master_port, MASTER_PORT)")


_watch = {"deadline": None, "what": None, "thread": None}
_watch_cond = threading.Condition()


def _overrun(what, seconds):
    sys.stderr.write(f"mscore: {what} did not complete within {seconds} s (the job's cluster "
                     f"timeout): another rank hung, failed or left the job; ending this "
                     f"process\n")
    sys.stderr.flush()
    os._exit(1)


def _watcher():
    with _watch_cond:
        while True:
            deadline = _watch["deadline"]
            if deadline is None:
                _watch_cond.wait()
                continue
            left = deadline[0] - time.monotonic()
            if left <= 0:
                _overrun(_watch["what"], deadline[1])
            _watch_cond.wait(left)


@contextlib.contextmanager
def collective_deadline(what, seconds):
    """End the process when the block does not finish within ``seconds`` (one watcher
    thread for the process; blocks do not nest)."""
    with _watch_cond:
        if _watch["thread"] is None:
            _watch["thread"] = threading.Thread(target=_watcher, name="mscore-collective-deadline",
                                                daemon=True)
            _watch["thread"].start()
        _watch.update(deadline=(time.monotonic() + seconds, seconds), what=what)
        _watch_cond.notify()
    try:
        yield
    finally:
        with _watch_cond:
            _watch.update(deadline=None, what=None)
