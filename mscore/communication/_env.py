"""The job environment a launcher leaves for its workers.

Three conventions are read, in this order:

* ``mscore run`` and ``torchrun``: ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
  ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT`` (``mscore run`` also sets
  ``MSCORE_LAUNCHER``; torchrun sets ``TORCHELASTIC_RUN_ID`` and serves its own store at
  ``MASTER_PORT``);
* MindSpore's ``msrun``: ``MS_WORKER_NUM``, ``MS_NODE_ID`` (or ``RANK_ID``),
  ``MS_SCHED_HOST``, ``MS_SCHED_PORT``, ``DEVICE_ID`` (the local rank), ``MS_TOPO_TIMEOUT``;
* SLURM (``srun``): ``SLURM_PROCID``, ``SLURM_NTASKS``, ``SLURM_LOCALID``,
  ``SLURM_NTASKS_PER_NODE`` (or ``SLURM_TASKS_PER_NODE``); the master is ``MASTER_ADDR`` or
  the first host of ``SLURM_JOB_NODELIST``, the port ``MASTER_PORT`` or
  ``15000 + SLURM_JOB_ID % 5000`` (so every task of a job agrees without talking).
"""
from __future__ import annotations

import os
import re

from mscore.plugin.collectives import JobEnv

DEFAULT_TIMEOUT = 600.0
TIMEOUT_VARIABLE = "MSCORE_INIT_TIMEOUT"
_HOSTLIST_HEAD = re.compile(r"^([^,\[]+)(\[([^\]]*)\])?")


class LauncherEnvError(RuntimeError):
    """The environment names no job, or names it inconsistently."""


def _int(env, key, minimum=0):
    raw = env.get(key)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise LauncherEnvError(f"environment variable {key}: expected an int, got "
                               f"{raw!r}") from None
    if value < minimum:
        raise LauncherEnvError(f"environment variable {key}: expected an int >= {minimum}, "
                               f"got {value}")
    return value


def _timeout(env):
    for key in (TIMEOUT_VARIABLE, "MS_TOPO_TIMEOUT"):
        if env.get(key):
            try:
                value = float(env[key])
            except ValueError:
                raise LauncherEnvError(f"environment variable {key}: expected seconds, got "
                                       f"{env[key]!r}") from None
            # msrun's negative cluster_time_out means "wait forever": a day is forever here.
            return value if value > 0 else 86400.0
    return DEFAULT_TIMEOUT


def _check(rank, world, local_rank, local_world, port, names):
    if world < 1:
        raise LauncherEnvError(f"{names[1]}: expected a positive number of processes, got "
                               f"{world}")
    if not 0 <= rank < world:
        raise LauncherEnvError(f"{names[0]}={rank} is outside [0, {names[1]}={world})")
    if not 0 <= local_rank < max(local_world, 1):
        raise LauncherEnvError(f"local rank {local_rank} is outside [0, {local_world})")
    if not 0 < port < 65536:
        raise LauncherEnvError(f"master port: expected 1..65535, got {port}")


def first_host(nodelist):
    """The first host of a SLURM host list: ``"node[03-05,9],gpu1"`` -> ``"node03"``."""
    m = _HOSTLIST_HEAD.match(nodelist.strip())
    if m is None or not m.group(1):
        raise LauncherEnvError(f"SLURM_JOB_NODELIST: cannot read a host from {nodelist!r}")
    prefix, ranges = m.group(1), m.group(3)
    if ranges is None:
        return prefix
    first = ranges.split(",")[0].split("-")[0]
    return prefix + first


def _from_torchrun(env):
    rank, world = _int(env, "RANK"), _int(env, "WORLD_SIZE", 1)
    missing = [k for k in ("MASTER_ADDR", "MASTER_PORT") if not env.get(k)]
    if missing:
        raise LauncherEnvError(f"RANK and WORLD_SIZE are set but {' and '.join(missing)} "
                               f"{'is' if len(missing) == 1 else 'are'} not")
    local_rank = _int(env, "LOCAL_RANK") if env.get("LOCAL_RANK") else rank
    local_world = _int(env, "LOCAL_WORLD_SIZE", 1) if env.get("LOCAL_WORLD_SIZE") else world
    port = _int(env, "MASTER_PORT")
    _check(rank, world, local_rank, local_world, port, ("RANK", "WORLD_SIZE"))
    # torchrun's agent serves its store at MASTER_PORT; mscore run and a plain environment
    # leave the port to the engine
    torchrun = bool(env.get("TORCHELASTIC_RUN_ID"))
    launcher = "mscore run" if env.get("MSCORE_LAUNCHER") else (
        "torchrun" if torchrun else "env")
    return JobEnv(rank, world, local_rank, local_world, env["MASTER_ADDR"], port, launcher,
                  _timeout(env), master_port_taken=torchrun)


def _from_msrun(env):
    if env.get("MS_ROLE") == "MS_SCHED":
        raise LauncherEnvError("this process is msrun's scheduler (MS_ROLE=MS_SCHED); mscore "
                               "needs no scheduler process: start the job with 'mscore run' "
                               "(same flags as msrun)")
    world = _int(env, "MS_WORKER_NUM", 1)
    key = "MS_NODE_ID" if env.get("MS_NODE_ID") else "RANK_ID"
    if not env.get(key):
        raise LauncherEnvError("MS_WORKER_NUM is set but neither MS_NODE_ID nor RANK_ID: "
                               "mscore needs each worker's rank (msrun --node_rank on "
                               "several machines)")
    rank = _int(env, key)
    missing = [k for k in ("MS_SCHED_HOST", "MS_SCHED_PORT") if not env.get(k)]
    if missing:
        raise LauncherEnvError(f"MS_WORKER_NUM is set but {' and '.join(missing)} not")
    local_rank = _int(env, "DEVICE_ID") if env.get("DEVICE_ID") else rank
    local_world = _int(env, "MS_LOCAL_WORKER", 1) if env.get("MS_LOCAL_WORKER") else world
    port = _int(env, "MS_SCHED_PORT")
    _check(rank, world, local_rank, local_world, port, (key, "MS_WORKER_NUM"))
    return JobEnv(rank, world, local_rank, local_world, env["MS_SCHED_HOST"], port, "msrun",
                  _timeout(env))


def _from_slurm(env):
    rank, world = _int(env, "SLURM_PROCID"), _int(env, "SLURM_NTASKS", 1)
    local_rank = _int(env, "SLURM_LOCALID") if env.get("SLURM_LOCALID") else 0
    per_node = env.get("SLURM_NTASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE") or ""
    # "2(x3)" or "2,1": the count on this node is the first number when they are all alike.
    m = re.match(r"(\d+)", per_node)
    local_world = int(m.group(1)) if m else world
    if env.get("MASTER_ADDR"):
        addr = env["MASTER_ADDR"]
    elif env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST"):
        addr = first_host(env.get("SLURM_JOB_NODELIST") or env["SLURM_NODELIST"])
    else:
        raise LauncherEnvError("SLURM_PROCID is set but neither MASTER_ADDR nor "
                               "SLURM_JOB_NODELIST: mscore cannot tell where rank 0 runs")
    if env.get("MASTER_PORT"):
        port = _int(env, "MASTER_PORT")
    elif env.get("SLURM_JOB_ID"):
        port = 15000 + _int(env, "SLURM_JOB_ID") % 5000
    else:
        raise LauncherEnvError("SLURM_PROCID is set but neither MASTER_PORT nor SLURM_JOB_ID")
    _check(rank, world, local_rank, local_world, port, ("SLURM_PROCID", "SLURM_NTASKS"))
    return JobEnv(rank, world, local_rank, local_world, addr, port, "slurm", _timeout(env))


def job_env_from(env=None):
    """The :class:`JobEnv` of this process, or None when no launcher variables are set.

    ``LauncherEnvError`` (a RuntimeError) when the variables are there but incomplete or
    inconsistent, naming the variable.
    """
    env = os.environ if env is None else env
    if env.get("RANK") is not None and env.get("WORLD_SIZE") is not None:
        return _from_torchrun(env)
    if env.get("MS_WORKER_NUM") is not None:
        return _from_msrun(env)
    if env.get("SLURM_PROCID") is not None and env.get("SLURM_NTASKS") is not None:
        return _from_slurm(env)
    return None


NO_LAUNCHER_HINT = (
    "start the script with a launcher: 'mscore run --worker_num=N --local_worker_num=N "
    "script.py' (msrun's flags), 'torchrun --nproc-per-node=N script.py', or srun under "
    "SLURM; mscore reads RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, msrun's MS_WORKER_NUM/"
    "MS_NODE_ID/MS_SCHED_HOST/MS_SCHED_PORT, or SLURM_PROCID/SLURM_NTASKS")
