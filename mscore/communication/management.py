"""Process groups of a data-parallel job: ``init``, ``release``, ranks, sizes and groups, with
MindSpore's names, defaults and errors.

``init()`` reads the launcher's environment (``mscore run``, ``torchrun``, ``msrun``, SLURM:
see :mod:`mscore.communication._env`), asks the active backend's plugin for its collectives
(the ``mscore_collectives_impl`` hook) and joins the job on that library's own engine
(``torch.distributed``, ``jax.distributed``, NCCL through CuPy). Before ``init`` the queries
answer as for one process (rank 0 of 1), as MindSpore's do. The state is process-wide.
"""
from __future__ import annotations

import atexit
import numbers
from dataclasses import dataclass

from mscore import _state as _process_state
from mscore import context
from mscore.common import dtype as mdt
from mscore.communication import _failfast
from mscore.communication._env import NO_LAUNCHER_HINT, job_env_from
from mscore.ops.random import draws as random
from mscore.plugin.registry import get_registry

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"
_WORLD_NAMES = (HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP)
_BACKEND_NAMES = ("hccl", "nccl", "mccl", "gloo")
_NOT_INITED = ("Distributed Communication has not been inited.You can't invoke this interface "
               "yet. Please call `init()` method first.")


class _JoinedJobFacts(type):
    """``GlobalComm``'s ``BACKEND``, ``WORLD_COMM_GROUP`` and ``INITED``, read from the job
    this process joined (the process state, so ``mscore._state.reset()`` restores them)."""

    @property
    def BACKEND(cls):
        """"nccl" (GPU) or "mccl" (CPU) while a job is joined, "hccl" otherwise."""
        return _state["library"] or "hccl"

    @property
    def WORLD_COMM_GROUP(cls):
        """The default group's name: ``f"{BACKEND}_world_group"``."""
        return f"{cls.BACKEND}_world_group"

    @property
    def INITED(cls):
        """True between ``init()`` and ``release()``."""
        return _state["collectives"] is not None

    def __setattr__(cls, name, value):
        if name in ("BACKEND", "WORLD_COMM_GROUP", "INITED"):
            raise AttributeError(f"GlobalComm.{name} follows the job this process joined: it "
                                 f"changes with init() and release(), not by assignment")
        super().__setattr__(name, value)


class GlobalComm(metaclass=_JoinedJobFacts):
    """MindSpore's global communication facts: ``BACKEND`` ("mccl" on CPU, "nccl" on GPU
    after ``init``), ``WORLD_COMM_GROUP`` (the default group name) and ``INITED`` (read-only:
    they follow ``init`` and ``release``)."""

    CHECK_ENVS = True
    # an instance reads them too, as it reads MindSpore's class attributes
    BACKEND = property(lambda self: type(self).BACKEND)
    WORLD_COMM_GROUP = property(lambda self: type(self).WORLD_COMM_GROUP)
    INITED = property(lambda self: type(self).INITED)


@dataclass
class _Group:
    ranks: tuple
    handle: object


_state = _process_state.process.communication   # the job this process joined


# -- init / release ---------------------------------------------------------------------------
def _check_backend_name(backend_name):
    if backend_name is None:
        return
    if not isinstance(backend_name, str):
        raise TypeError(f"For 'init', the argument 'backend_name' must be a string, but got the "
                        f"type : {type(backend_name)}")
    if backend_name not in _BACKEND_NAMES:
        raise RuntimeError(f"For 'init', the argument 'backend_name' must be one of 'hccl', "
                           f"'nccl', 'mccl' and 'gloo', but got 'backend_name' : "
                           f"{backend_name}")
    if backend_name == "hccl":
        raise RuntimeError("For 'init', 'hccl' is Ascend's communication library, which mscore "
                           "does not run on; use 'nccl' on GPU or 'mccl' (gloo) on CPU")


def _check_backend_matches_device(backend_name, device_target):
    wanted = "nccl" if device_target == "GPU" else "mccl"
    if backend_name is not None and (backend_name == "nccl") != (wanted == "nccl"):
        raise RuntimeError(f"For 'init', the argument 'backend_name' should be '{wanted}' to "
                           f"init '{device_target}', but got '{backend_name}'.")


def _collectives_factory(backend):
    registry = get_registry()
    factory = registry.collectives_factory(backend.name)
    if factory is None:
        able = [n for n in registry.names()
                if "collectives" in registry.spec(n).capabilities]
        raise RuntimeError(
            f"For 'init', backend {backend.name!r} has no collectives (its plugin declares no "
            f"'collectives' capability / implements no mscore_collectives_impl hook); select "
            f"one that does before init(): {', '.join(able) or 'none is installed'} "
            f"(mscore.set_context(backend=...))")
    return factory


def init(backend_name=None):
    """Join the data-parallel job this process was launched in.

    ``backend_name``: None (by the device: NCCL on GPU, gloo on CPU), ``"nccl"`` (GPU),
    ``"mccl"`` or ``"gloo"`` (CPU). Call it once, early: after ``set_context`` (backend,
    device, mode) and before building networks. On GPU the process uses the device of its
    local rank. A second call with the job already joined does nothing.

    ``TypeError`` for a non-str ``backend_name``; ``RuntimeError`` for an unknown or
    mismatched one, when no launcher variables are set, when the active backend has no
    collectives, or when the job cannot be joined (the engine's reason).
    """
    _check_backend_name(backend_name)
    if GlobalComm.INITED:
        return
    backend = context.current_backend()
    # the device the backend really uses (cupy runs on a GPU whatever the context says)
    device_target = "GPU" if str(backend.device).startswith("GPU") else "CPU"
    _check_backend_matches_device(backend_name, device_target)
    env = job_env_from()
    if env is None:
        raise RuntimeError(f"For 'init', no launcher environment was found: {NO_LAUNCHER_HINT}")
    factory = _collectives_factory(backend)
    if device_target == "GPU" and (context.get_context("device_target") != "GPU" or
                                   context.get_context("device_id") != env.local_rank):
        context.set_context(device_target="GPU", device_id=env.local_rank)
    collectives = factory(backend)
    _join(collectives, env, device_target)
    _state.update(collectives=collectives, env=env, backend=backend, groups={},
                  seed=_agree_seed(collectives, backend),
                  library="nccl" if device_target == "GPU" else "mccl")
    # An engine's threads still running at interpreter exit abort the process (gloo's:
    # "terminate called without an active exception"); MindSpore scripts rarely call release.
    atexit.register(_release_at_exit, collectives)
    _failfast.install(_release_at_exit, env.rank)


def _release_at_exit(collectives):
    """``release()`` at interpreter exit, when the job joined by this ``init`` is still on."""
    if _state["collectives"] is collectives:
        release()


def _join(collectives, env, device_target):
    if env.rank == 0 and not env.master_port_taken:
        _failfast.check_master_port_free(env.master_addr, env.master_port, env.rank)
    parked = random.park_global_state() if collectives.restarts_runtime else None
    try:
        collectives.init(env, device_target)   # (re-places the backend if it restarts)
    finally:
        if collectives.restarts_runtime:
            random.restore_global_state(parked)
    # Programs compiled before init ran alone; the job's programs may hold collectives.
    _process_state.drop_compiled_programs()


def _agree_seed(collectives, backend):
    """A random seed drawn by rank 0 and broadcast: the default of the shuffles every rank
    must do alike (dataset pipelines without a seed)."""
    import numpy as np
    mine = np.array(np.random.SeedSequence().entropy % 2 ** 31, dtype=np.int32)
    agreed = collectives.broadcast(backend.from_numpy(mine, mdt.int32), 0, None)
    return int(backend.to_numpy(agreed))


def job_seed():
    """The seed rank 0 drew for this job at ``init`` (``RuntimeError`` before ``init``)."""
    if not is_initialized():
        raise RuntimeError(_NOT_INITED)
    return _state["seed"]


def job_run_id():
    """A name of this job that every rank gives alike and another job almost surely does
    not: 16 hex digits from the seed rank 0 drew at ``init``, the master's address and port
    and the job's size (``RuntimeError`` before ``init``). Sharded checkpoints record it, so
    that slices of two runs are never merged."""
    import hashlib
    seed = job_seed()
    env = _state["env"]
    text = f"{seed}|{env.master_addr}|{env.master_port}|{env.world_size}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def rank_subdirectory(path):
    """``path/rank_R`` in a job of several processes, ``path`` otherwise: where checkpoints
    and summaries of this rank go, so that ranks never write the same file."""
    import os
    if is_initialized() and _state["env"].world_size > 1:
        return os.path.join(path, f"rank_{_state['env'].rank}")
    return path


def release():
    """Leave the job (no-op when not joined); ``init`` may be called again afterwards."""
    collectives = _state["collectives"]
    if collectives is None:
        return
    try:
        collectives.release()
    finally:
        _state.update(collectives=None, env=None, backend=None, groups={}, seed=None,
                      library=None)
        _failfast.uninstall()
        _process_state.drop_compiled_programs()


def is_initialized():
    """True between ``init()`` and ``release()``."""
    return _state["collectives"] is not None


def collectives():
    """The active backend's :class:`~mscore.plugin.collectives.Collectives` of this job
    (``RuntimeError`` before ``init``, or when another backend is active than at ``init``)."""
    coll = _state["collectives"]
    if coll is None:
        raise RuntimeError(_NOT_INITED)
    active = context.current_backend()
    if active is not _state["backend"]:
        raise RuntimeError(f"communication was initialised for backend "
                           f"{_state['backend'].name!r}, but {active.name!r} is active now; "
                           f"call release() and init() again after switching backends")
    return coll


# -- groups -------------------------------------------------------------------------------------
def _check_group(group, api):
    if not isinstance(group, str):
        raise TypeError(f"For '{api}', the argument 'group' must be type of string, but got "
                        f"'group' type : {type(group)}.")
    return group


def _lookup(group):
    """``(ranks, handle)`` of a group name (the world under any of its names)."""
    if group in _WORLD_NAMES:
        return tuple(range(_state["env"].world_size)), None
    found = _state["groups"].get(group)
    if found is None:
        raise RuntimeError(f"The group {group} does not exist.")
    return found.ranks, found.handle


def group_handle(group):
    """The engine's handle of ``group`` (None for the world), for the collectives."""
    _check_group(group, "group_handle")
    if not is_initialized():
        raise RuntimeError(_NOT_INITED)
    return _lookup(group)[1]


def _member_index(ranks, rank, group):
    try:
        return ranks.index(rank)
    except ValueError:
        raise RuntimeError(f"rank {rank} is not a member of group {group} "
                           f"(ranks {list(ranks)})") from None


def _node_members(ranks):
    """The members of ``ranks`` on this machine (ranks are placed node by node)."""
    env = _state["env"]
    node = env.rank // env.local_world_size
    return [r for r in ranks if r // env.local_world_size == node]


def get_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's rank in ``group`` (0 before ``init``)."""
    _check_group(group, "get_rank")
    if not is_initialized():
        return 0
    ranks, _ = _lookup(group)
    return _member_index(ranks, _state["env"].rank, group)


def get_group_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of processes in ``group`` (1 before ``init``)."""
    _check_group(group, "get_group_size")
    if not is_initialized():
        return 1
    return len(_lookup(group)[0])


def get_local_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's rank among the members of ``group`` on this machine (0 before
    ``init``)."""
    _check_group(group, "get_local_rank")
    if not is_initialized():
        return 0
    ranks, _ = _lookup(group)
    return _member_index(_node_members(ranks), _state["env"].rank, group)


def get_local_rank_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of members of ``group`` on this machine (1 before ``init``)."""
    _check_group(group, "get_local_rank_size")
    if not is_initialized():
        return 1
    return len(_node_members(_lookup(group)[0]))


def create_group(group, rank_ids, options=None):
    """Create the communication group ``group`` of the global ranks ``rank_ids``.

    Call it on every process of the job, in the same order (the engines build groups
    collectively), members or not. Creating an existing group again with the same ranks
    does nothing. ``RuntimeError`` before ``init`` or for a rank outside the job,
    ``TypeError``/``ValueError`` for malformed arguments.
    """
    _check_group(group, "create_group")
    if not is_initialized():
        raise RuntimeError(_NOT_INITED)
    if group in _WORLD_NAMES:
        raise ValueError(f"For 'create_group', the group name {group!r} is the world group's")
    if not isinstance(rank_ids, list) or not all(
            isinstance(r, numbers.Integral) and not isinstance(r, bool) for r in rank_ids):
        raise TypeError(f"For 'create_group', the argument 'rank_ids' must be a list of ints, "
                        f"but got {rank_ids!r}")
    if not rank_ids or len(set(rank_ids)) != len(rank_ids):
        raise ValueError(f"For 'create_group', 'rank_ids' must be non-empty and without "
                         f"repeats, but got {rank_ids}")
    world = _state["env"].world_size
    if any(not 0 <= r < world for r in rank_ids):
        raise RuntimeError(f"Failed to create communication group for {group} with rank ids "
                           f"{list(rank_ids)}: the job has ranks 0..{world - 1}")
    ranks = tuple(sorted(int(r) for r in rank_ids))
    existing = _state["groups"].get(group)
    if existing is not None:
        if existing.ranks != ranks:
            raise RuntimeError(f"For 'create_group', the group {group} exists already with "
                               f"ranks {list(existing.ranks)}")
        return
    handle = collectives().new_group(ranks)
    _state["groups"][group] = _Group(ranks, handle)


def destroy_group(group):
    """Forget the group ``group`` made by :func:`create_group`."""
    _check_group(group, "destroy_group")
    if not is_initialized():
        raise RuntimeError(_NOT_INITED)
    if group in _WORLD_NAMES:
        raise ValueError(f"For 'destroy_group', the world group {group!r} cannot be destroyed; "
                         f"call release()")
    if _state["groups"].pop(group, None) is None:
        raise RuntimeError(f"The group {group} does not exist.")


def _check_rank_arg(value, name, api):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For '{api}', the argument '{name}' must be an int, but got "
                        f"{type(value)}")
    return int(value)


def get_world_rank_from_group_rank(group, group_rank_id):
    """The global rank of member ``group_rank_id`` of ``group``."""
    _check_group(group, "get_world_rank_from_group_rank")
    group_rank_id = _check_rank_arg(group_rank_id, "group_rank_id",
                                    "get_world_rank_from_group_rank")
    if not is_initialized():
        raise RuntimeError(_NOT_INITED)
    ranks, _ = _lookup(group)
    if not 0 <= group_rank_id < len(ranks):
        raise ValueError(f"For 'get_world_rank_from_group_rank', 'group_rank_id' must be in "
                         f"[0, {len(ranks)}) for group {group}, but got {group_rank_id}")
    return ranks[group_rank_id]


def get_group_rank_from_world_rank(world_rank_id, group):
    """The rank inside ``group`` of global rank ``world_rank_id``."""
    _check_group(group, "get_group_rank_from_world_rank")
    world_rank_id = _check_rank_arg(world_rank_id, "world_rank_id",
                                    "get_group_rank_from_world_rank")
    if not is_initialized():
        raise RuntimeError(_NOT_INITED)
    ranks, _ = _lookup(group)
    if world_rank_id not in ranks:
        raise ValueError(f"For 'get_group_rank_from_world_rank', rank {world_rank_id} is not a "
                         f"member of group {group} (ranks {list(ranks)})")
    return ranks.index(world_rank_id)


def get_process_group_ranks(group=GlobalComm.WORLD_COMM_GROUP):
    """The global ranks of ``group``, as a list."""
    _check_group(group, "get_process_group_ranks")
    if not is_initialized():
        raise RuntimeError(_NOT_INITED)
    return list(_lookup(group)[0])
