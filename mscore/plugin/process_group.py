"""Joining a ``torch.distributed`` process group, for every backend whose collectives ride on
it (the torch backend, and the numpy backend through gloo). The module never imports torch:
the caller passes its ``torch.distributed``."""
from __future__ import annotations

import datetime


def join_process_group(dist, transport, env):
    """Join the job's ``torch.distributed`` process group over ``transport`` ('gloo' or
    'nccl') at its master; a group the user made already is adopted when it matches the job.
    True when this call made the group (its owner destroys it)."""
    if dist.is_initialized():
        if dist.get_world_size() != env.world_size or dist.get_rank() != env.rank:
            raise RuntimeError(f"torch.distributed is initialised already as rank "
                               f"{dist.get_rank()} of {dist.get_world_size()}, but the "
                               f"job says rank {env.rank} of {env.world_size}")
        return False
    addr = f"[{env.master_addr}]" if ":" in env.master_addr else env.master_addr
    try:
        dist.init_process_group(transport, init_method=f"tcp://{addr}:{env.master_port}",
                                rank=env.rank, world_size=env.world_size,
                                timeout=datetime.timedelta(seconds=env.timeout))
    except Exception as exc:
        raise RuntimeError(f"torch.distributed.init_process_group({transport!r}) failed for "
                           f"rank {env.rank} of {env.world_size} at {addr}:"
                           f"{env.master_port}: {type(exc).__name__}: {exc}") from exc
    return True
