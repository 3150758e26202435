"""Hook implementations of the JAX backend plugin (entry point ``mscore.backends: jax``).

Nothing here imports JAX at module import time: the factory and the probe do.
"""
from __future__ import annotations

import contextlib
import importlib.util
from importlib import metadata

import numpy as np

from mscore.common.dtype import ALL_DTYPES
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

# XLA on the CPU gives the same bits run to run as it is (nothing to switch: no
# set_deterministic method). On GPU it needs --xla_gpu_deterministic_ops=true in XLA_FLAGS
# before the backend starts, which this plugin does not arrange: the GPU entry leaves
# ``deterministic`` out.
CAPABILITIES = frozenset({"native_autodiff", "compile", "donation", "collectives",
                          "deterministic"})
DEVICE_CAPABILITIES = {"GPU": CAPABILITIES - {"deterministic"}}


def _jax_version():
    try:
        return metadata.version("jax")
    except metadata.PackageNotFoundError:
        return "not installed"


@contextlib.contextmanager
def _numpy_random_state_kept():
    """Importing JAX draws from numpy's global random state; mscore draws initial weights
    from it after ``set_seed``, so the import must leave it as it found it (the same
    weights on every backend)."""
    state = np.random.get_state()
    try:
        yield
    finally:
        np.random.set_state(state)


def check():
    """``""`` when jax and jaxlib are installed, else the reason (nothing is imported)."""
    if importlib.util.find_spec("jax") is None or importlib.util.find_spec("jaxlib") is None:
        return "jax/jaxlib are not installed (pip install jax)"
    return ""


def probe():
    """``(available, reason, devices)`` without building the backend."""
    missing = check()
    if missing:
        return False, missing, []
    try:
        with _numpy_random_state_kept():
            import jax
            devices = jax.devices()
    except Exception as exc:  # a broken jaxlib or CUDA install: report, never raise
        return False, f"jax failed to start: {type(exc).__name__}: {exc}", []
    names, counts = [], {}
    for d in devices:
        kind = "CPU" if d.platform == "cpu" else "GPU"
        names.append(f"{kind}:{counts.get(kind, 0)}" if kind == "GPU" else "CPU")
        counts[kind] = counts.get(kind, 0) + 1
    if "CPU" not in names:
        names.append("CPU")
    return True, "", names


def build():
    """The backend object (imports JAX)."""
    with _numpy_random_state_kept():
        from mscore_jax.backend import JaxBackend
        from mscore_jax.collectives import shard_over_devices
    backend = JaxBackend()
    backend.shard = shard_over_devices
    return backend


@hookimpl
def mscore_register_backends():
    """The ``jax`` backend: CPU and GPU, every mscore dtype (the 64-bit ones switch on JAX's
    64-bit mode when first used), jax.value_and_grad, jax.jit; deterministic on the CPU."""
    return [BackendSpec(name="jax", version=_jax_version(), factory=build,
                        devices=("CPU", "GPU"), dtypes=tuple(d.name for d in ALL_DTYPES),
                        capabilities=CAPABILITIES,
                        device_capabilities=DEVICE_CAPABILITIES, probe=probe, check=check,
                        description="JAX (jax.numpy/lax ops, jax.value_and_grad, jax.jit "
                                    "with donated buffers)")]


@hookimpl
def mscore_collectives_impl(backend_name):
    """Collectives on ``jax.distributed`` (gloo on CPU, NCCL on GPU)."""
    if backend_name == "jax":
        from mscore_jax.collectives import JaxCollectives
        return JaxCollectives
