"""The PyTorch implementation of mscore's backend contract, assembled from its parts.

Every method works on ``torch.Tensor`` objects. The parts, one concern each: :mod:`.core`
(dtypes, creation, host transfer, device), :mod:`.ops` (primitives and the overflow check),
:mod:`.fused` (fused ops), :mod:`.random` (counter-based streams), :mod:`.autodiff` (torch
autograd), :mod:`.compile` (``torch.compile``); :mod:`.collectives` is the data-parallel
engine. Ops that map one-to-one onto a torch function are bound as instance attributes in
``__init__`` (``self.add = torch.add``), so the core's dispatcher calls torch directly with no
Python frame in between; the class methods of the same names document the contract and are
what ``mscore.plugin.backend.missing_primitives`` checks.

On CUDA, TF32 is switched off so that float32 is float32 (``MSCORE_TORCH_TF32=1`` keeps
torch's setting).
"""
from __future__ import annotations

import os

import torch
import torch.nn.functional as tnf

from mscore.plugin.backend import Backend

from .autodiff import TorchAutodiff
from .compile import COMPILE_POLICIES, TorchCompile
from .core import TorchCore, torch_dtype
from .fused import TorchFused
from .ops import TorchOps
from .random import TorchRandom

__all__ = ["TorchBackend", "torch_dtype"]


class TorchBackend(TorchCore, TorchOps, TorchFused, TorchRandom, TorchAutodiff, TorchCompile,
                   Backend):
    """mscore's primitive op set, fused ops, autodiff and compilation over PyTorch."""

    name = "torch"

    def __init__(self):
        super().__init__()
        self._device = torch.device("cpu")
        self._const = {}
        self._compile_policy = os.environ.get("MSCORE_TORCH_COMPILE", "auto").lower()
        if self._compile_policy not in COMPILE_POLICIES:
            raise ValueError(f"MSCORE_TORCH_COMPILE: expected one of {COMPILE_POLICIES}, got "
                             f"{self._compile_policy!r}")
        self._compile_backend = os.environ.get("MSCORE_TORCH_COMPILE_BACKEND", "inductor")
        self._cuda_graphs = os.environ.get("MSCORE_TORCH_CUDA_GRAPHS", "1") not in ("0", "")
        self._compile_announced = False
        # Direct bindings: the dispatcher calls torch with no wrapper frame.
        t = torch
        for name, fn in (
                ("neg", t.neg), ("abs", t.abs), ("exp", t.exp), ("log", t.log),
                ("sqrt", t.sqrt), ("sin", t.sin), ("cos", t.cos), ("tanh", t.tanh),
                ("sign", t.sign), ("floor", t.floor), ("ceil", t.ceil),
                ("logical_not", t.logical_not), ("isfinite", t.isfinite),
                ("add", t.add), ("sub", t.sub), ("mul", t.mul), ("maximum", t.maximum),
                ("minimum", t.minimum), ("equal", t.eq), ("not_equal", t.ne),
                ("less", t.lt), ("less_equal", t.le), ("greater", t.gt),
                ("greater_equal", t.ge), ("logical_and", t.logical_and),
                ("logical_or", t.logical_or), ("where", t.where),
                ("pow", t.pow), ("reshape", t.reshape), ("transpose", t.permute),
                ("broadcast_to", t.broadcast_to), ("stop_gradient", t.Tensor.detach),
                ("softmax", t.softmax), ("log_softmax", t.log_softmax),
                ("addcmul", t.addcmul), ("relu", t.relu), ("dense", tnf.linear)):
            setattr(self, name, fn)
        self._bind_matmul()
