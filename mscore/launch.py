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
"worker"). When a worker fails, the others are stopped (SIGTERM to their process groups,
SIGKILL after a grace period), and ``mscore run`` exits with the status of the worker that
left the job first, naming its rank and printing its last lines. Workers and their children
also die with the launcher, even when it is SIGKILLed (Linux; :mod:`mscore.supervisor`), so
none is left behind. Before any worker starts, the script must exist and, on rank 0's
machine, nothing may listen on the master port (connections of a job that just
ended, in TIME_WAIT, do not count); more workers than CPU cores is warned about.
``--join=False`` starts the workers with their output in log files and returns at once, as
msrun does.
"""
from __future__ import annotations

import argparse
import ast
import os
import platform
import shutil
import socket
import sys
import tempfile

from mscore.commands import ArgumentParser, CommandError, command
from mscore.communication._failfast import EVENTS_ENV, port_listener_error
from mscore.supervisor import PREFIX as _PREFIX
from mscore.supervisor import start_workers, supervise

_LOCAL_ADDRESSES = ("127.0.0.1", "localhost", "::1", "0.0.0.0")


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
    script_args = p.add_argument("task_script_args", nargs=argparse.REMAINDER,
                                 help="arguments passed on to the script")
    script_args.required = False       # argparse counts a REMAINDER as required
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


def check_script(script):
    """The script must exist before any worker starts (``python``/``python3``/``pytest``
    are commands, not files)."""
    if script in ("python", "python3", "pytest"):
        return
    if not os.path.isfile(script):
        what = "is a directory" if os.path.isdir(script) else "does not exist"
        raise LaunchError(f"the script {script!r} {what}; no worker was started")


def check_master_port(args):
    """On the machine of rank 0 (a local master address), the master port must be free:
    rank 0's engine listens there (jax.distributed's coordinator may crash otherwise)."""
    if max(args.node_rank, 0) != 0 or args.master_addr not in _LOCAL_ADDRESSES:
        return
    exc = port_listener_error(args.master_addr, args.master_port)
    if exc is not None:
        raise LaunchError(f"--master_port {args.master_port} on {args.master_addr} is in "
                          f"use ({exc.strerror}); another job or program listens there: "
                          f"pick a free port with --master_port; no worker was started")


def warn_oversubscription(local_workers, cores=None):
    """A line on stderr when more workers start than this machine has CPU cores."""
    cores = cores or os.cpu_count() or 1
    if local_workers > cores:
        sys.stderr.write(f"{_PREFIX}warning: starting {local_workers} workers on a machine "
                         f"with {cores} CPU core(s); they will compete for the cores (set "
                         f"--worker_num and --local_worker_num, default 8)\n")
        sys.stderr.flush()


def _start(args, ranks, join, notes_folder):
    node_rank = max(args.node_rank, 0)
    if args.log_dir or not join:
        os.makedirs(args.log_dir or os.getcwd(), exist_ok=True)
    show = tailed_ranks(args.tail_worker_log, ranks) if join else set()
    cmd = worker_command(args.task_script, args.task_script_args)
    specs = []
    for local_rank, rank in enumerate(ranks):
        env = worker_env(os.environ, rank, local_rank, args, node_rank)
        if notes_folder is not None:
            env[EVENTS_ENV] = notes_folder
        log = open(log_file_name(args, rank), "wb") if (args.log_dir or not join) else None
        specs.append((rank, env, log, rank in show))
    try:
        return start_workers(cmd, specs, join, platform.system() == "Linux")
    except OSError as exc:
        raise LaunchError(f"cannot start {' '.join(cmd)!r}: {exc}") from exc


@command("mscore run")
def main(argv=None):
    """Entry of ``mscore run``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        ranks = check_args(args)
        check_script(args.task_script)
        check_master_port(args)
        warn_oversubscription(len(ranks))
        notes = tempfile.mkdtemp(prefix="mscore-run-") if args.join else None
        try:
            workers, watchdog = _start(args, ranks, args.join, notes)
        except LaunchError:
            if notes is not None:
                shutil.rmtree(notes, ignore_errors=True)
            raise
    except LaunchError as exc:
        raise CommandError(str(exc)) from None
    if not args.join:
        for w in workers:
            print(f"{_PREFIX}started rank {w.rank} (pid {w.proc.pid}), output in "
                  f"{log_file_name(args, w.rank)}")
        return 0
    try:
        return supervise(workers, watchdog, notes)
    finally:
        shutil.rmtree(notes, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
