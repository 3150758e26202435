"""Data-parallel communication, as ``mindspore.communication``.

``init()`` joins the job a launcher started (``mscore run``, ``torchrun``, ``msrun``, SLURM);
``get_rank()``/``get_group_size()``/``get_local_rank()`` place this process; ``create_group``
makes sub-groups; :mod:`~mscore.communication.comm_func` has the collectives on Tensors.
"""
from mscore.communication.management import (
    HCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, GlobalComm,
    create_group, destroy_group, get_group_rank_from_world_rank, get_group_size,
    get_local_rank, get_local_rank_size, get_process_group_ranks, get_rank,
    get_world_rank_from_group_rank, init, is_initialized, release)

__all__ = ["GlobalComm", "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP",
           "MCCL_WORLD_COMM_GROUP", "init", "release", "is_initialized", "get_rank",
           "get_group_size", "get_local_rank", "get_local_rank_size", "create_group",
           "destroy_group", "get_world_rank_from_group_rank", "get_group_rank_from_world_rank",
           "get_process_group_ranks", "comm_func"]


def __getattr__(name):
    if name == "comm_func":
        import importlib
        return importlib.import_module("mscore.communication.comm_func")
    raise AttributeError(f"module 'mscore.communication' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})
