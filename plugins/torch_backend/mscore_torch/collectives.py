"""Collectives of the torch backend on ``torch.distributed`` (gloo on CPU, NCCL on CUDA):
mscore's :class:`~mscore.plugin.collectives.Collectives` contract.

Eagerly the ops are ``torch.distributed``'s own (on a copy: mscore's collectives never change
their input). While ``torch.compile`` traces a GRAPH_MODE step
(``MSCORE_TORCH_COMPILE=always``) they are the functional collectives of
``torch.distributed._functional_collectives``, which dynamo puts into the step's graph.
"""
from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc

from mscore.plugin.collectives import REDUCE_OPS, Collectives
from mscore.plugin.process_group import join_process_group

_EAGER_OPS = {"sum": dist.ReduceOp.SUM, "mean": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX,
              "min": dist.ReduceOp.MIN}
_FUNCTIONAL_OPS = {"sum": "sum", "mean": "sum", "max": "max", "min": "min"}
_is_compiling = torch.compiler.is_compiling
# torch 2.13 renamed the one-tensor all-gathers; older releases have only the old names.
_all_gather_single = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_fc_all_gather = getattr(fc, "all_gather_single", None) or fc.all_gather_tensor
_reduce_scatter_single = getattr(dist, "reduce_scatter_single", None) or \
    dist.reduce_scatter_tensor
_fc_reduce_scatter = getattr(fc, "reduce_scatter_single", None) or fc.reduce_scatter_tensor


class _Group:
    """A process group of ``torch.distributed`` with its global ranks."""

    def __init__(self, pg, ranks):
        self.pg = pg
        self.ranks = ranks


class TorchCollectives(Collectives):
    """``all_reduce``/``broadcast``/``all_gather``/``barrier`` over ``torch.distributed``."""

    engine = "torch.distributed"

    def __init__(self, backend):
        self._backend = backend
        self._world_size = None
        self._owns_process_group = False

    def init(self, env, device_target):
        """``dist.init_process_group`` with gloo (CPU) or NCCL (GPU) at the job's master
        (a process group the user made already is adopted when it matches the job)."""
        transport = "nccl" if device_target == "GPU" else "gloo"
        available = dist.is_nccl_available() if transport == "nccl" else \
            dist.is_gloo_available()
        if not dist.is_available() or not available:
            raise RuntimeError(f"this torch build ({torch.__version__}) has no "
                               f"torch.distributed {transport} backend")
        if transport == "nccl" and not dist.is_initialized():
            torch.cuda.set_device(self._backend.torch_device)
        self._owns_process_group = join_process_group(dist, transport, env)
        self._world_size = env.world_size
        self.engine = f"torch.distributed/{transport}"

    def release(self):
        """Destroy the process group this object made."""
        if self._owns_process_group and dist.is_initialized():
            dist.destroy_process_group()
        self._owns_process_group = False

    def new_group(self, ranks):
        """``dist.new_group(ranks)`` (every process of the job calls it)."""
        return _Group(dist.new_group(list(ranks)), tuple(ranks))

    def _size(self, group):
        return self._world_size if group is None else len(group.ranks)

    @staticmethod
    def _pg(group):
        return None if group is None else group.pg

    def all_reduce(self, array, op="sum", group=None):
        """``dist.all_reduce`` of a copy; ``mean`` is the sum divided by the group's size
        (gloo has no average)."""
        if op not in REDUCE_OPS:
            raise ValueError(f"all_reduce: op must be one of {REDUCE_OPS}, got {op!r}")
        if op == "mean" and not array.is_floating_point():
            raise ValueError(f"all_reduce: 'mean' needs a floating array, got {array.dtype}")
        if _is_compiling():
            out = fc.all_reduce(array, _FUNCTIONAL_OPS[op],
                                self._pg(group) or dist.group.WORLD)
        else:
            out = array.clone()
            dist.all_reduce(out, op=_EAGER_OPS[op], group=self._pg(group))
        if op == "mean":
            out = out / self._size(group)
        return out

    def all_reduce_coalesced(self, arrays, op="sum", group=None):
        """One collective for several arrays of one dtype: one flat buffer eagerly (as
        DistributedDataParallel's buckets), the functional coalesced all-reduce when
        compiling."""
        if op not in REDUCE_OPS:
            raise ValueError(f"all_reduce: op must be one of {REDUCE_OPS}, got {op!r}")
        arrays = list(arrays)
        if _is_compiling():
            out = fc.all_reduce_coalesced(arrays, _FUNCTIONAL_OPS[op],
                                          self._pg(group) or dist.group.WORLD)
            if op == "mean":
                out = [o / self._size(group) for o in out]
            return out
        flat = torch.cat([a.reshape(-1) for a in arrays])
        dist.all_reduce(flat, op=_EAGER_OPS[op], group=self._pg(group))
        if op == "mean":
            flat.div_(self._size(group))   # one pass over the bucket
        return [piece.view(a.shape) for piece, a in
                zip(torch.split(flat, [a.numel() for a in arrays]), arrays)]

    def broadcast(self, array, root=0, group=None):
        """``dist.broadcast`` from global rank ``root``, into a copy."""
        if _is_compiling():
            return fc.broadcast(array, root, self._pg(group) or dist.group.WORLD)
        out = array.clone()
        dist.broadcast(out, src=root, group=self._pg(group))
        return out

    def all_gather(self, array, group=None):
        """The members' arrays concatenated along axis 0 (0-d arrays into a vector)."""
        flat = array.reshape(1) if array.dim() == 0 else array.contiguous()
        if _is_compiling():
            return _fc_all_gather(flat, 0, self._pg(group) or dist.group.WORLD)
        out = flat.new_empty((self._size(group) * flat.shape[0],) + tuple(flat.shape[1:]))
        _all_gather_single(out, flat, group=self._pg(group))
        return out

    def reduce_scatter(self, array, op="sum", group=None):
        """Block ``i`` of axis 0 of the reduction on member ``i``
        (``dist.reduce_scatter_single``; the functional one when compiling)."""
        if op not in REDUCE_OPS:
            raise ValueError(f"reduce_scatter: op must be one of {REDUCE_OPS}, got {op!r}")
        size = self._size(group)
        if array.dim() == 0 or array.shape[0] % size:
            raise ValueError(f"reduce_scatter: axis 0 of shape {tuple(array.shape)} is not a "
                             f"multiple of the group's size {size}")
        flat = array.contiguous()
        if _is_compiling():
            out = _fc_reduce_scatter(flat, _FUNCTIONAL_OPS[op], 0,
                                     self._pg(group) or dist.group.WORLD)
        else:
            out = flat.new_empty((flat.shape[0] // size,) + tuple(flat.shape[1:]))
            _reduce_scatter_single(out, flat, op=_EAGER_OPS[op], group=self._pg(group))
        if op == "mean":
            out = out / size
        return out

    def barrier(self, group=None):
        """``dist.barrier``."""
        if _is_compiling():
            raise RuntimeError("barrier: only eagerly, not inside a compiled step")
        dist.barrier(group=self._pg(group))
