"""Worker processes for a pipeline's Python code (``python_multiprocessing=True``).

``map`` operations, a ``GeneratorDataset``'s random-access source and a ``batch``'s
``per_batch_map`` run in worker processes where MindSpore 2.10 runs them in processes.

*Starting.* MindSpore's start method ``"fork"`` (the default of
:func:`mscore.dataset.config.set_multiprocessing_start_method`) is carried out with
``"forkserver"``: forking the training process itself, with a backend's threads running, can
deadlock; ``"spawn"`` is spawn. What the workers run is pickled when the pipeline node is
built (a node that cannot be sent fails at once, naming it) and sent to them, with cloudpickle
when it is installed (lambdas and functions of the main script then travel by value), else
with pickle (the functions must be importable). As under spawn, each worker imports the main
script as ``__mp_main__``: keep its top-level code under ``if __name__ == "__main__":``.

*Rows and seeds.* Row ``k`` of a pass goes to worker ``k mod N``, one row in flight per worker,
and the results come back in row order. Before each row the worker seeds Python's ``random``,
numpy's global random state and the streams of random transforms from
``np.random.SeedSequence([seed, epoch, k])`` (``seed``: the pipeline seed), so what a pass
gives does not depend on the number of workers.

*Lifetime.* A pool is kept from epoch to epoch. Under an iterator it is stopped when that
iterator has read its epochs, is stopped, released or garbage-collected; a pass run without
one (``Model.train``'s, ``get_dataset_size``) leaves it for the next pass until
:func:`release_workers` (``Model.train``, ``fit`` and ``eval`` call it when they end), the node
is garbage-collected or the program exits. A pass that ends
early or fails stops its pool at once. A worker ends by itself when the main process ends (its
pipe closes; on Linux it is also killed with its parent). A worker that dies is reported with
the node, the worker and its exit code or signal.

*Waiting.* A worker may take as long as it needs on a row, as in MindSpore; every
``multiprocessing_timeout_interval`` seconds a warning names it, the node and the row.
:func:`mscore.dataset.config.set_multiprocessing_timeout` sets a limit, past which the pass
fails naming them; Ctrl-C while waiting says the same.
"""
from __future__ import annotations

import contextlib
import contextvars
import ctypes
import logging
import multiprocessing
import pickle
import random
import signal
import threading
import time
import traceback
import weakref
from multiprocessing import connection as mp_connection

import numpy as np

from mscore.dataset import config
from mscore.dataset.engine.op_random import OpStreams
from mscore.supervisor import signal_name

__all__ = ["WorkerLease", "WorkerSlot", "dump_job", "lease_scope", "release_workers",
           "row_seed"]

_PDEATHSIG = 1          # prctl(PR_SET_PDEATHSIG, ...)
_STOP_WAIT_S = 2.0      # how long a stopping worker may take before it is killed
logger = logging.getLogger("mscore.dataset")
_lease = contextvars.ContextVar("mscore_dataset_worker_lease", default=None)


# -- what the workers run -----------------------------------------------------------------------
def _pickler():
    try:
        import cloudpickle  # optional: lambdas and __main__ functions by value
        return cloudpickle
    except ImportError:
        return pickle


def dump_job(job, what, parts=()):
    """``job`` pickled for the workers; a ``TypeError`` naming ``what`` (and the first of
    ``parts``, ``(name, object)`` pairs, that cannot be pickled) when it cannot be sent."""
    dumps = _pickler().dumps
    try:
        return dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # what pickling raises varies
        culprit = ""
        for name, obj in parts:
            try:
                dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:
                culprit = f" ({name} cannot be pickled)"
                break
        hint = "; or pass python_multiprocessing=False to run it in this process"
        if _pickler() is pickle:
            hint = "; define it at module level of an importable module, install " \
                   "cloudpickle" + hint
        raise TypeError(f"{what}: cannot be sent to a worker process (python_multiprocessing="
                        f"True){culprit}: {type(exc).__name__}: {exc}{hint}") from exc


def row_seed(seed, epoch, row):
    """The seed of row ``row`` of epoch ``epoch`` under pipeline seed ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(epoch), int(row)]).generate_state(1)[0])


def _seeded_call(job, args, seed):
    random.seed(seed)
    np.random.seed(seed)
    token = OpStreams.for_row(seed).activate()
    try:
        return job(*args)
    finally:
        OpStreams.deactivate(token)


def _die_with_parent():
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):   # not Linux: the closed pipe ends the worker instead
        pass


def _describe(exc):
    """An exception as it travels back: its message, its cause (pickled when it can be) and
    the worker's traceback."""
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    try:
        blob = pickle.dumps(cause)
    except Exception:
        blob = None
    text = "".join(traceback.format_exception(type(cause), cause, cause.__traceback__))
    return type(exc).__name__, str(exc), blob, text


def _worker_main(conn, payload):
    """A worker: load the job, then run ``(row, seed, args)`` requests until told to stop or
    the main process goes away."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the main process's to handle
    try:
        job = pickle.loads(payload)
    except Exception as exc:
        conn.send(("load", _describe(exc)))
        return
    conn.send(("ready", None))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        row, seed, args = request
        try:
            reply = ("ok", _seeded_call(job, args, seed))
        except Exception as exc:
            reply = ("error", _describe(exc))
        try:
            conn.send(reply)
        except Exception as exc:  # pickling the result failed; nothing was written
            conn.send(("unsent", f"{type(exc).__name__}: {exc}"))


# -- the pool -----------------------------------------------------------------------------------
def _context():
    method = config.get_multiprocessing_start_method()
    ctx = multiprocessing.get_context("spawn" if method == "spawn" else "forkserver")
    if method != "spawn":
        ctx.set_forkserver_preload(["mscore.dataset.engine.map_workers"])
    return ctx


def _how_it_ended(process):
    process.join(_STOP_WAIT_S)
    code = process.exitcode
    if code is None:
        return "stopped answering"
    if code < 0:
        return f"was killed by {signal_name(-code)} (signal {-code})"
    return f"exited with code {code}"


def _raise_remote(what, kind, info):
    name, message, blob, text = info
    cause = None
    if blob is not None:
        try:
            cause = pickle.loads(blob)
        except Exception:
            cause = None
    if cause is None and text:
        cause = RuntimeError(f"in the worker process:\n{text}")
    if kind == "load":
        raise RuntimeError(f"{what}: a worker process could not load what it runs "
                           f"({name}: {message}); define it at module level of an importable "
                           f"module, or install cloudpickle") from cause
    raise RuntimeError(message) from cause


class _Pool:
    """``num`` worker processes running one pickled job."""

    def __init__(self, what, payload, num):
        self.what, self.num = what, num
        ctx = _context()
        self.conns, self.procs = [], []
        try:
            for i in range(num):
                mine, theirs = ctx.Pipe(duplex=True)
                proc = ctx.Process(target=_worker_main, args=(theirs, payload),
                                   name=f"mscore-dataset-worker-{i}", daemon=True)
                proc.start()
                theirs.close()
                self.conns.append(mine)
                self.procs.append(proc)
            for i in range(num):
                kind, info = self._receive(i, "while starting")
                if kind != "ready":
                    _raise_remote(what, kind, info)
        except BaseException:
            self.close()
            raise
        self.pending = [None] * num     # the row each worker is working on
        self.busy = False

    def _died(self, i, doing):
        hint = ""
        if doing == "while starting":
            hint = ("; each worker imports the main script: keep its top-level code under "
                    "if __name__ == '__main__':")
        raise RuntimeError(f"{self.what}: worker process {i} of {self.num} (pid "
                           f"{self.procs[i].pid}) {_how_it_ended(self.procs[i])} {doing}; the "
                           f"other workers were stopped{hint}")

    def _receive(self, i, doing):
        """Worker ``i``'s next message. Waits as long as it takes, warning every
        ``multiprocessing_timeout_interval`` seconds, up to ``multiprocessing_timeout``
        seconds when one is set; Ctrl-C while waiting names what the worker is doing."""
        conn, proc = self.conns[i], self.procs[i]
        limit = config.get_multiprocessing_timeout()
        interval = config.get_multiprocessing_timeout_interval()
        started = time.monotonic()
        warn_at = started + interval
        try:
            while True:
                now = time.monotonic()
                wait_s = warn_at - now if not limit else min(warn_at, started + limit) - now
                ready = mp_connection.wait([conn, proc.sentinel], max(wait_s, 0.0))
                if conn in ready:
                    return self._read(i, doing)
                if ready and not proc.is_alive():
                    self._died(i, doing)
                now = time.monotonic()
                if limit and now - started >= limit:
                    raise RuntimeError(
                        f"{self.what}: worker process {i} of {self.num} (pid {proc.pid}) "
                        f"took more than {limit:g} s {doing} (dataset.config."
                        f"set_multiprocessing_timeout); the workers were stopped")
                if now >= warn_at:
                    logger.warning("%s: worker process %d of %d (pid %d) has been busy %s "
                                   "for %.0f s", self.what, i, self.num, proc.pid, doing,
                                   now - started)
                    warn_at += interval
        except KeyboardInterrupt:
            raise KeyboardInterrupt(
                f"{self.what}: interrupted after {time.monotonic() - started:.1f} s waiting "
                f"for worker process {i} of {self.num} (pid {proc.pid}) {doing}") from None

    def _read(self, i, doing):
        """The message waiting on worker ``i``'s pipe; one that cannot be unpickled here is
        a ``RuntimeError`` naming the node and the row."""
        try:
            message = self.conns[i].recv()
        except (EOFError, OSError):
            self._died(i, doing)
        except Exception as exc:  # unpickling a result can raise anything
            raise RuntimeError(f"{self.what}: what worker process {i} sent back ({doing}) "
                               f"cannot be unpickled in the main process: "
                               f"{type(exc).__name__}: {exc}") from exc
        if message[0] == "unsent":
            raise RuntimeError(f"{self.what}: the result of worker process {i} ({doing}) "
                               f"cannot be pickled to be sent back: {message[1]}")
        return message

    def submit(self, i, row, seed, args):
        """Give worker ``i`` row ``row``."""
        try:
            self.conns[i].send((row, seed, args))
        except (BrokenPipeError, ConnectionResetError, EOFError):
            self._died(i, f"before row {row}")
        self.pending[i] = row

    def result(self, i):
        """The result of worker ``i``'s row (raises what the row raised)."""
        row = self.pending[i]
        kind, info = self._receive(i, f"while processing row {row}")
        self.pending[i] = None
        if kind != "ok":
            _raise_remote(self.what, kind, info)
        return info

    def idle(self):
        return all(p is None for p in self.pending)

    def alive(self):
        return bool(self.procs) and all(p.is_alive() for p in self.procs)

    def close(self):
        """Stop every worker (those that do not stop in time are killed) and wait for them."""
        for conn in self.conns:
            with contextlib.suppress(Exception):   # a dead or busy worker is killed below
                conn.send(None)
        for proc in self.procs:
            proc.join(_STOP_WAIT_S if getattr(self, "pending", None) is not None and
                      self.idle() else 0.05)
            if proc.is_alive():
                proc.kill()
                proc.join(_STOP_WAIT_S)
        for conn in self.conns:
            conn.close()
        self.conns, self.procs = [], []


class WorkerLease:
    """The pools kept for one iterator: stopped together when the iterator is done."""

    def __init__(self):
        self._pools = weakref.WeakSet()

    def keep(self, slot):
        self._pools.add(slot)

    def close(self):
        for slot in list(self._pools):
            slot.close()
        self._pools = weakref.WeakSet()


@contextlib.contextmanager
def lease_scope(lease):
    """Within it, passes keep their pools for ``lease`` (an iterator's)."""
    token = _lease.set(lease)
    try:
        yield lease
    finally:
        _lease.reset(token)


class WorkerSlot:
    """The worker pool of one pipeline node: started by the first pass that needs it, kept
    for the next epochs of the same iterator, replaced when it was stopped."""

    def __init__(self, what, payload, num):
        self.what, self._payload, self.num = what, payload, num
        self._pool = None
        self._finalizer = None
        self._lock = threading.Lock()   # passes may start in a prefetch thread and here

    def __getstate__(self):
        """A copy (``copy.deepcopy`` of a pipeline) starts its own workers."""
        return {"what": self.what, "_payload": self._payload, "num": self.num}

    def __setstate__(self, state):
        self.__init__(state["what"], state["_payload"], state["num"])

    def close(self):
        """Stop the workers (the next pass starts new ones)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None

    def _acquire(self):
        with self._lock:
            return self._acquire_locked()

    def _acquire_locked(self):
        pool = self._pool
        if pool is not None and (pool.busy or not pool.alive() or not pool.idle()):
            if not pool.busy:
                self.close()
            pool = None
        if pool is None:
            pool = _Pool(self.what, self._payload, self.num)
            if self._pool is None:
                self._pool = pool
                self._finalizer = weakref.finalize(self, _Pool.close, pool)
        pool.busy = True
        return pool

    def run(self, items, epoch):
        """The job's results for ``items`` (each a tuple of arguments), in order."""
        seed = config.get_seed()
        lease = _lease.get()
        pool = self._acquire()
        done = False
        try:
            yield from _in_order(pool, items, seed, epoch)
            done = True
        finally:
            pool.busy = False
            if pool is not self._pool:
                pool.close()                  # a second, concurrent pass's own pool
            elif not done:
                self.close()
            elif lease is not None:
                lease.keep(self)
            # else (a training loop's passes): kept for the next epoch, until the node is
            # garbage-collected, release_workers() or exit


def release_workers(dataset):
    """Stop the worker processes of every node of the pipeline ``dataset`` (a later pass
    starts new ones)."""
    todo = [dataset]
    while todo:
        node = todo.pop()
        slot = getattr(node, "_workers", None)
        if isinstance(slot, WorkerSlot):
            slot.close()
        todo.extend(getattr(node, "children", ()))


def _in_order(pool, items, seed, epoch):
    items = iter(items)
    row = 0
    for i in range(pool.num):
        args = next(items, None)
        if args is None:
            break
        pool.submit(i, row, row_seed(seed, epoch, row), args)
        row += 1
    k = 0
    while not pool.idle():
        i = k % pool.num
        value = pool.result(i)
        args = next(items, None)
        if args is not None:
            pool.submit(i, row, row_seed(seed, epoch, row), args)
            row += 1
        yield value
        k += 1
