"""Entry point of the torch backend (group ``mscore.backends``, name ``torch``).

Nothing here imports torch at module import time: the version comes from the installed
distribution's metadata, and torch is imported by :func:`probe` and :func:`build` only.
"""
from __future__ import annotations

import importlib.util
from importlib import metadata

from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl
from mscore_torch import __version__

NAME = "torch"
DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "bool")
# The mscore dtypes left out, and why (torch 2.13 stores them, but add, max, neg, floor
# division, comparisons and bitwise_not have no CPU kernels for them).
UNDECLARED_DTYPES = {name: "torch has no arithmetic kernels for it (add, max, bitwise_not, ...)"
                     for name in ("uint16", "uint32", "uint64")}
# On the CPU torch's deterministic mode (mscore_torch.determinism) is certified by the
# conformance kit; on CUDA it is not yet, so the GPU entry leaves ``deterministic`` out.
CAPABILITIES = frozenset({"native_autodiff", "compile", "collectives", "deterministic"})
DEVICE_CAPABILITIES = {"GPU": CAPABILITIES - {"deterministic"}}


def _torch_version():
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "not installed"


def check():
    """``""`` when torch is installed, else the reason (torch is not imported)."""
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed (pip install torch)"
    return ""


def probe():
    """``(available, reason, devices)`` without building the backend.

    Devices are ``"CPU"`` plus ``"GPU:<i>"`` for each CUDA device torch can use.
    """
    try:
        import torch
    except Exception as exc:  # not installed, or a broken build
        return False, f"torch cannot be imported: {type(exc).__name__}: {exc}", []
    devices = ["CPU"]
    try:
        if torch.cuda.is_available():
            devices += [f"GPU:{i}" for i in range(torch.cuda.device_count())]
    except Exception:  # a CUDA build without a usable driver: CPU only
        pass
    return True, "", devices


def build():
    """Build the :class:`~mscore_torch.backend.TorchBackend` (imports torch)."""
    from mscore_torch.backend import TorchBackend
    from mscore_torch.determinism import set_deterministic
    backend = TorchBackend()
    backend.set_deterministic = set_deterministic
    return backend


@hookimpl
def mscore_register_backends():
    """The torch backend: CPU and CUDA, every mscore dtype, autograd, torch.compile,
    deterministic mode on the CPU."""
    return [BackendSpec(name=NAME, version=_torch_version(), factory=build,
                        devices=("CPU", "GPU"), dtypes=DTYPES, capabilities=CAPABILITIES,
                        device_capabilities=DEVICE_CAPABILITIES,
                        undeclared_dtypes=UNDECLARED_DTYPES, probe=probe, check=check,
                        description=f"PyTorch backend (mscore-torch {__version__})")]


@hookimpl
def mscore_collectives_impl(backend_name):
    """Collectives on ``torch.distributed`` (gloo on CPU, NCCL on CUDA)."""
    if backend_name == "torch":
        from mscore_torch.collectives import TorchCollectives
        return TorchCollectives
