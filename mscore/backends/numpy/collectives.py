"""Collectives of the numpy backend, carried by ``torch.distributed``'s gloo when torch is
installed (numpy has no distributed engine of its own; mscore does not write one).

numpy arrays travel as CPU tensors sharing their memory (``torch.from_numpy``); bfloat16
(``ml_dtypes``) travels as its 16-bit pattern cast through torch's bfloat16.
"""
from __future__ import annotations

import importlib.util

import numpy as np

from mscore.plugin.collectives import REDUCE_OPS, Collectives
from mscore.plugin.process_group import join_process_group

INSTALL_HINT = ("the numpy backend's collectives run on torch.distributed (gloo): install "
                "torch (pip install torch), or select a backend with its own engine "
                "(torch, jax)")


def torch_installed():
    """True when torch can be imported (checked without importing it)."""
    return importlib.util.find_spec("torch") is not None


class NumpyCollectives(Collectives):
    """``all_reduce``/``broadcast``/``all_gather``/``barrier`` of numpy arrays over gloo."""

    engine = "torch.distributed/gloo"

    def __init__(self, backend):
        if not torch_installed():
            raise RuntimeError(INSTALL_HINT)
        import torch
        import torch.distributed as dist
        self._torch, self._dist = torch, dist
        self._world_size = None
        self._owns_process_group = False

    def init(self, env, device_target):
        """``torch.distributed.init_process_group("gloo")`` at the job's master."""
        dist = self._dist
        if device_target != "CPU":
            raise RuntimeError("the numpy backend runs on the CPU only")
        self._owns_process_group = join_process_group(dist, "gloo", env)
        self._world_size = env.world_size

    def release(self):
        """Destroy the process group this object made."""
        if self._owns_process_group and self._dist.is_initialized():
            self._dist.destroy_process_group()
        self._owns_process_group = False

    def new_group(self, ranks):
        """``dist.new_group(ranks)`` with its ranks."""
        return (self._dist.new_group(list(ranks)), tuple(ranks))

    # -- numpy <-> torch ---------------------------------------------------------------------
    def _to_torch(self, array):
        """A tensor holding a copy of ``array`` (the collectives work in place on it)."""
        torch = self._torch
        array = np.array(array, copy=True, order="C")
        if array.dtype.name == "bfloat16":
            return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(array)

    def _to_numpy(self, tensor, like):
        if like.name == "bfloat16":
            return tensor.view(self._torch.int16).numpy().view(like)
        return tensor.numpy()

    # -- operations ------------------------------------------------------------------------
    def all_reduce(self, array, op="sum", group=None):
        """``dist.all_reduce``; ``mean`` is the sum divided by the group's size."""
        if op not in REDUCE_OPS:
            raise ValueError(f"all_reduce: op must be one of {REDUCE_OPS}, got {op!r}")
        array = np.asarray(array)
        if op == "mean" and array.dtype.kind != "f" and array.dtype.name != "bfloat16":
            raise ValueError(f"all_reduce: 'mean' needs a floating array, got {array.dtype}")
        dist = self._dist
        ops = {"sum": dist.ReduceOp.SUM, "mean": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX,
               "min": dist.ReduceOp.MIN}
        t = self._to_torch(array)
        pg, ranks = group if group is not None else (None, range(self._world_size))
        dist.all_reduce(t, op=ops[op], group=pg)
        if op == "mean":
            t /= len(ranks)
        return self._to_numpy(t, array.dtype)

    def all_reduce_coalesced(self, arrays, op="sum", group=None):
        """Several arrays in one gloo all-reduce of their joined copy."""
        arrays = [np.asarray(a) for a in arrays]
        total = self.all_reduce(np.concatenate([a.reshape(-1) for a in arrays]), op, group)
        out, offset = [], 0
        for a in arrays:
            out.append(total[offset:offset + a.size].reshape(a.shape))
            offset += a.size
        return out

    def broadcast(self, array, root=0, group=None):
        """``dist.broadcast`` from global rank ``root``."""
        array = np.asarray(array)
        t = self._to_torch(array)
        self._dist.broadcast(t, src=root, group=None if group is None else group[0])
        return self._to_numpy(t, array.dtype)

    def all_gather(self, array, group=None):
        """The members' arrays concatenated along axis 0 (0-d arrays into a vector)."""
        array = np.asarray(array)
        flat = self._to_torch(array.reshape(1) if array.ndim == 0 else array)
        size = self._world_size if group is None else len(group[1])
        out = flat.new_empty((size * flat.shape[0],) + tuple(flat.shape[1:]))
        gather = getattr(self._dist, "all_gather_single", None) or \
            self._dist.all_gather_into_tensor
        gather(out, flat, group=None if group is None else group[0])
        return self._to_numpy(out, array.dtype)

    def barrier(self, group=None):
        """``dist.barrier``."""
        self._dist.barrier(group=None if group is None else group[0])
