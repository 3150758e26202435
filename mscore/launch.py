"""``mscore run``: start the worker processes of a data-parallel job, with MindSpore's
``msrun`` flags.

::

    mscore run --worker_num=2 --local_worker_num=2 [--master_addr=127.0.0.1]
               [--master_port=8118] [--node_rank=-1] [--log_dir=DIR] [--join=True]
               [--cluster_time_out=600] [--worker_log_name=NAME] [--tail_worker_log=-1]
               script.py [script args]

It starts ``--local_worker_num`` processes of ``python script.py`` on this machine (ranks
``node_rank * local_worker_num + i``; all of them when ``local_worker_num == worker_num``),
each with the variables ``mscore.communication.init()`` reads, in both conventions:
torchrun's ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT`` and msrun's ``MS_WORKER_NUM``, ``MS_SCHED_HOST``, ``MS_SCHED_PORT``,
``MS_NODE_ID``, ``MS_ROLE``, ``RANK_ID``, ``RANK_SIZE``, ``DEVICE_ID``, ``MS_TOPO_TIMEOUT``.
No scheduler process is started: rank 0 serves the rendezvous of the array library's own
engine (torch.distributed's store, jax.distributed's coordinator) at the master address.

Output: with ``--join=True`` (mscore's default) every worker's output reaches the console
prefixed ``[rank N]`` (``--tail_worker_log=0,1`` picks the ranks shown) and, with
``--log_dir``, is also written to ``DIR/worker_N.log`` (``--worker_log_name`` changes
"worker"). When a worker fails, the others are stopped (SIGTERM to their process groups, SIGKILL
after a grace period), and ``mscore run`` exits with the failing worker's status, naming its
rank and printing its last lines. Workers also die with the launcher (Linux), so none is left
behind. ``--join=False`` starts the workers with their output in log files and returns at
once, as msrun does.
"""
from __future__ import annotations

import argparse
import ast
import collections
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time

from mscore.commands import ArgumentParser, CommandError, command

TAIL_LINES = 20          # lines of a failed worker's output repeated in the report
GRACE_SECONDS = 3.0      # between SIGTERM and SIGKILL when stopping workers
POLL_SECONDS = 0.05
_PREFIX = "mscore run: "


def _bool(text):
    value = ast.literal_eval(text) if text in ("True", "False") else None
    if not isinstance(value, bool):
        raise argparse.ArgumentTypeError(f"expected True or False, got {text!r}")
    return value


def build_parser():
    """The argument parser of ``mscore run`` (msrun's flags and defaults, but ``--join``
    defaults to True)."""
    p = ArgumentParser(
        prog="mscore run", allow_abbrev=False,
        description="Start the worker processes of a data-parallel job (msrun's flags).")
    p.add_argument("--worker_num", type=int, default=8,
                   help="processes in the whole job (default 8, as msrun)")
    p.add_argument("--local_worker_num", type=int, default=8,
                   help="processes started on this machine (default 8)")
    p.add_argument("--master_addr", default="127.0.0.1",
                   help="address of the machine running rank 0 (default 127.0.0.1)")
    p.add_argument("--master_port", type=int, default=8118,
                   help="port of rank 0's rendezvous (default 8118, as msrun)")
    p.add_argument("--node_rank", type=int, default=-1,
                   help="this machine's index when the job spans several machines")
    p.add_argument("--log_dir", default="",
                   help="also write each worker's output to LOG_DIR/worker_RANK.log")
    p.add_argument("--join", type=_bool, default=True, metavar="{True,False}",
                   help="wait for the workers, show their output and report failures "
                        "(default True; msrun's default is False)")
    p.add_argument("--cluster_time_out", type=int, default=600,
                   help="seconds a worker waits for the others at init() (default 600)")
    p.add_argument("--worker_log_name", default="",
                   help="log file name instead of 'worker' ({ip} and {hostname} expand)")
    p.add_argument("--tail_worker_log", default="-1",
                   help="ranks whose output is shown with --join=True, e.g. 0 or 0,1 "
                        "(default -1: all)")
    p.add_argument("task_script", help="the script each worker runs (or python/pytest)")
    p.add_argument("task_script_args", nargs=argparse.REMAINDER,
                   help="arguments passed on to the script")
    return p


class LaunchError(ValueError):
    """The flags do not describe a job."""


def check_args(args):
    """The ranks this machine starts, or ``LaunchError`` naming the flag."""
    if args.worker_num <= 0:
        raise LaunchError(f"--worker_num must be greater than 0, got {args.worker_num}")
    if not 0 < args.local_worker_num <= args.worker_num:
        raise LaunchError(f"--local_worker_num must be in 1..--worker_num "
                          f"({args.worker_num}), got {args.local_worker_num}")
    if not 0 < args.master_port < 65536:
        raise LaunchError(f"--master_port must be in 1..65535, got {args.master_port}")
    if args.local_worker_num == args.worker_num:
        return list(range(args.worker_num))
    if args.node_rank < 0:
        raise LaunchError("--node_rank is required when --local_worker_num < --worker_num "
                          "(mscore assigns ranks node by node: node_rank * local_worker_num + "
                          "i)")
    first = args.node_rank * args.local_worker_num
    if first + args.local_worker_num > args.worker_num:
        raise LaunchError(f"--node_rank {args.node_rank} with {args.local_worker_num} local "
                          f"workers needs ranks up to {first + args.local_worker_num - 1}, but "
                          f"--worker_num is {args.worker_num}")
    return list(range(first, first + args.local_worker_num))


def tailed_ranks(spec, ranks):
    """The ranks whose output goes to the console (``-1``: all)."""
    if spec.strip() == "-1":
        return set(ranks)
    try:
        return {int(x) for x in spec.split(",") if x.strip()}
    except ValueError:
        raise LaunchError(f"--tail_worker_log: expected -1 or ranks like 0,1, got "
                          f"{spec!r}") from None


def worker_command(script, script_args):
    """The command line of a worker: msrun's rule (``python script`` unless the command is
    python/python3/pytest itself), with this interpreter."""
    if script in ("python", "python3"):
        return [sys.executable, *script_args]
    if script == "pytest":
        return [sys.executable, "-m", "pytest", *script_args]
    return [sys.executable, script, *script_args]


def worker_env(base, rank, local_rank, args, node_rank):
    """The environment of worker ``rank``: torchrun's and msrun's variables."""
    env = dict(base)
    env.update({
        "RANK": str(rank), "LOCAL_RANK": str(local_rank), "WORLD_SIZE": str(args.worker_num),
        "LOCAL_WORLD_SIZE": str(args.local_worker_num), "GROUP_RANK": str(node_rank),
        "MASTER_ADDR": args.master_addr, "MASTER_PORT": str(args.master_port),
        "MS_WORKER_NUM": str(args.worker_num), "MS_SCHED_HOST": args.master_addr,
        "MS_SCHED_PORT": str(args.master_port), "MS_TOPO_TIMEOUT": str(args.cluster_time_out),
        "MS_ROLE": "MS_WORKER", "MS_NODE_ID": str(rank), "RANK_ID": str(rank),
        "RANK_SIZE": str(args.worker_num), "DEVICE_ID": str(local_rank),
        "MSCORE_LAUNCHER": "mscore run", "PYTHONUNBUFFERED": "1"})
    return env


def log_file_name(args, rank):
    """``LOG_DIR/{worker_log_name or 'worker'}_{rank}.log`` (msrun's naming)."""
    name = args.worker_log_name or "worker"
    if args.worker_log_name:
        name = name.replace("{hostname}", socket.gethostname())
        name = name.replace("{ip}", _local_ip(args.master_addr))
    return os.path.join(args.log_dir or os.getcwd(), f"{name}_{rank}.log")


def _local_ip(master_addr):
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((master_addr, 1))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def _die_with_parent():
    """In the child before exec: SIGKILL it when the launcher dies (Linux prctl)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Worker:
    """One worker process, its output pump and the tail of its output."""

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


def _start(args, ranks, join):
    node_rank = max(args.node_rank, 0)
    if args.log_dir or not join:
        os.makedirs(args.log_dir or os.getcwd(), exist_ok=True)
    show = tailed_ranks(args.tail_worker_log, ranks) if join else set()
    cmd = worker_command(args.task_script, args.task_script_args)
    lock = threading.Lock()
    workers = []
    linux = platform.system() == "Linux"
    for local_rank, rank in enumerate(ranks):
        env = worker_env(os.environ, rank, local_rank, args, node_rank)
        log = open(log_file_name(args, rank), "wb") if (args.log_dir or not join) else None
        try:
            proc = subprocess.Popen(
                cmd, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if join else log, stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent if (join and linux) else None)
        except OSError as exc:
            for w in workers:
                w.signal_group(signal.SIGKILL)
            raise LaunchError(f"cannot start {' '.join(cmd)!r}: {exc}") from exc
        if not join:
            log.close()
            log = None
        workers.append(Worker(rank, proc, log, rank in show, lock))
    for w in workers:
        w.start_output()
    return workers


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


def _exit_status(code):
    return 128 - code if code < 0 else code


def _report_failure(worker, code):
    how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    lines = [f"{_PREFIX}worker rank {worker.rank} (pid {worker.proc.pid}) {how}; the other "
             f"workers were stopped."]
    if worker.tail:
        lines.append(f"{_PREFIX}last lines of rank {worker.rank}:")
        lines.extend("    " + line for line in worker.tail)
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()


def supervise(workers):
    """Wait for the workers; on the first failure stop the rest. Returns the exit status."""
    stop = []

    def on_signal(signum, frame):
        stop.append(signum)
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            if stop:
                stop_workers(workers)
                sys.stderr.write(f"{_PREFIX}stopped the workers on signal {stop[0]}\n")
                return 128 + stop[0]
            codes = [w.proc.poll() for w in workers]
            failed = [(w, c) for w, c in zip(workers, codes) if c not in (None, 0)]
            if failed:
                worker, code = failed[0]
                stop_workers(workers)
                worker.finish_output()
                _report_failure(worker, code)
                return _exit_status(code)
            if all(c == 0 for c in codes):
                stop_workers(workers, grace=0.0)   # nothing left behind by the workers
                return 0
            time.sleep(POLL_SECONDS)
    finally:
        for w in workers:
            w.finish_output()
        for s, handler in previous.items():
            signal.signal(s, handler)


@command("mscore run")
def main(argv=None):
    """Entry of ``mscore run``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        ranks = check_args(args)
        workers = _start(args, ranks, args.join)
    except LaunchError as exc:
        raise CommandError(str(exc)) from None
    if not args.join:
        for w in workers:
            print(f"{_PREFIX}started rank {w.rank} (pid {w.proc.pid}), output in "
                  f"{log_file_name(args, w.rank)}")
        return 0
    return supervise(workers)


if __name__ == "__main__":
    sys.exit(main())
