"""Collectives of the CuPy backend on NCCL, through CuPy's own ``cupyx.distributed``
(``NCCLBackend`` over ``cupy.cuda.nccl``; rank 0 serves CuPy's rendezvous store at the job's
master address and port): mscore's :class:`~mscore.plugin.collectives.Collectives` contract.

CuPy has no compiler, so every operation runs eagerly on the current stream. NCCL has no
boolean type (booleans travel as uint8) and no average (``mean`` is the sum divided by the
group's size). ``cupyx.distributed`` builds one communicator for the whole job: sub-groups
other than the whole job are refused.
"""
from __future__ import annotations

from mscore.plugin.collectives import REDUCE_OPS, Collectives


class CupyCollectives(Collectives):
    """``all_reduce``/``broadcast``/``all_gather``/``barrier`` over NCCL (cupyx.distributed)."""

    engine = "cupyx.distributed/nccl"

    def __init__(self, backend):
        self._backend = backend
        self._comm = None
        self._world_size = None

    def init(self, env, device_target):
        """``cupyx.distributed.init_process_group`` on the device of this local rank."""
        import cupy
        import cupyx.distributed
        self._backend.set_device("GPU", env.local_rank)
        try:
            self._comm = cupyx.distributed.init_process_group(
                env.world_size, env.rank, backend="nccl", host=env.master_addr,
                port=env.master_port)
        except Exception as exc:
            raise RuntimeError(f"cupyx.distributed.init_process_group failed for rank "
                               f"{env.rank} of {env.world_size} at {env.master_addr}:"
                               f"{env.master_port}: {type(exc).__name__}: {exc}") from exc
        self._world_size = env.world_size
        self._xp = cupy

    def release(self):
        """Stop the communicator (and rank 0's store)."""
        comm, self._comm = self._comm, None
        stop = getattr(comm, "stop", None)
        if callable(stop):
            stop()

    def new_group(self, ranks):
        """Only the whole job: ``cupyx.distributed`` has one communicator."""
        if tuple(ranks) != tuple(range(self._world_size)):
            raise NotImplementedError("cupyx.distributed has one communicator for the whole "
                                      "job; sub-groups are not supported on the cupy backend")
        return None

    def _wire(self, array):
        """``(contiguous array NCCL can send, dtype to restore or None)``."""
        xp = self._xp
        if array.dtype == xp.bool_:
            return xp.ascontiguousarray(array.astype(xp.uint8)), array.dtype
        return xp.ascontiguousarray(array), None

    def all_reduce(self, array, op="sum", group=None):
        """NCCL all-reduce into a new array."""
        if op not in REDUCE_OPS:
            raise ValueError(f"all_reduce: op must be one of {REDUCE_OPS}, got {op!r}")
        xp = self._xp
        if op == "mean" and not xp.issubdtype(array.dtype, xp.inexact):
            raise ValueError(f"all_reduce: 'mean' needs a floating array, got {array.dtype}")
        send, restore = self._wire(array)
        out = xp.empty_like(send)
        wire_op = "max" if restore is not None and op == "sum" else \
            ("sum" if op == "mean" else op)
        self._comm.all_reduce(send, out, wire_op)
        if op == "mean":
            out = out / self._world_size
        return out.astype(restore) if restore is not None else out

    def broadcast(self, array, root=0, group=None):
        """NCCL broadcast from ``root`` into a copy."""
        out, restore = self._wire(array)
        out = out.copy()
        self._comm.broadcast(out, root)
        return out.astype(restore) if restore is not None else out

    def all_gather(self, array, group=None):
        """NCCL all-gather; the members' arrays concatenated along axis 0."""
        xp = self._xp
        send, restore = self._wire(array.reshape(1) if array.ndim == 0 else array)
        out = xp.empty((self._world_size * send.shape[0],) + send.shape[1:], send.dtype)
        self._comm.all_gather(send, out, send.size)
        return out.astype(restore) if restore is not None else out

    def reduce_scatter(self, array, op="sum", group=None):
        """NCCL reduce-scatter: block ``i`` of axis 0 of the reduction on rank ``i``."""
        if op not in REDUCE_OPS:
            raise ValueError(f"reduce_scatter: op must be one of {REDUCE_OPS}, got {op!r}")
        xp = self._xp
        size = self._world_size
        if array.ndim == 0 or array.shape[0] % size:
            raise ValueError(f"reduce_scatter: axis 0 of shape {array.shape} is not a "
                             f"multiple of the group's size {size}")
        send, restore = self._wire(array)
        out = xp.empty((send.shape[0] // size,) + send.shape[1:], send.dtype)
        wire_op = "max" if restore is not None and op == "sum" else \
            ("sum" if op == "mean" else op)
        self._comm.reduce_scatter(send, out, out.size, wire_op)
        if op == "mean":
            out = out / size
        return out.astype(restore) if restore is not None else out

    def barrier(self, group=None):
        """``NCCLBackend.barrier``."""
        self._comm.barrier()
