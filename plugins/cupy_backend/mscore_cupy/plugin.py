"""Entry point of the CuPy backend (group ``mscore.backends``, name ``cupy``).

Nothing here imports CuPy at module level: registration reads CuPy's version from the
installed distribution's metadata, and :func:`probe` imports CuPy only when asked whether a
CUDA device is there. On a machine without one the backend is listed as unavailable with the
reason, and selecting it raises :class:`~mscore.plugin.registry.BackendUnavailableError`.
"""
from __future__ import annotations

import ctypes.util
import importlib.util
import re
from importlib import metadata

from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

from . import __version__

# The distributions that provide the ``cupy`` package, most likely first.
_CUPY_DISTRIBUTIONS = ("cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x", "cupy", "cupy-rocm-6-0",
                       "cupy-rocm-5-0")
_BASE_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                "uint16", "uint32", "uint64", "bool")


def cupy_distribution():
    """``(distribution name, version)`` of the installed CuPy, or None; CuPy is not imported."""
    for dist in _CUPY_DISTRIBUTIONS:
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    for dist in metadata.packages_distributions().get("cupy", ()):  # an unusual build
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _version_tuple(version):
    """(major, minor, micro) of a version string; pre-release suffixes are ignored."""
    match = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", str(version))
    if match is None:
        return (0, 0, 0)
    return tuple(int(g or 0) for g in match.groups())


def bfloat16_supported(cupy_version, numpy_version):
    """Whether CuPy handles ``ml_dtypes.bfloat16`` arrays: CuPy >= 14 on NumPy >= 2.1.2
    (CuPy's upgrade guide); older CuPy has no bfloat16 at all."""
    if cupy_version is None:
        return False
    return _version_tuple(cupy_version) >= (14, 0, 0) and \
        _version_tuple(numpy_version) >= (2, 1, 2)


def declared_dtypes(cupy_version, numpy_version):
    """The dtype names the backend declares for a CuPy/NumPy version pair."""
    dtypes = list(_BASE_DTYPES)
    if bfloat16_supported(cupy_version, numpy_version):
        dtypes.insert(1, "bfloat16")
    return tuple(dtypes)


def undeclared_dtypes(cupy_version, numpy_version):
    """``{dtype name: why it is left out}`` for a CuPy/NumPy version pair (bfloat16 only)."""
    if bfloat16_supported(cupy_version, numpy_version):
        return {}
    if cupy_version is None:
        why = "CuPy is not installed (CuPy 14 or newer with NumPy 2.1.2 or newer has it)"
    elif _version_tuple(cupy_version) < (14, 0, 0):
        why = (f"CuPy {cupy_version} has no bfloat16 arrays (CuPy 14 or newer has them, with "
               f"NumPy 2.1.2 or newer)")
    else:
        why = (f"CuPy handles bfloat16 arrays only with NumPy 2.1.2 or newer, not "
               f"{numpy_version}")
    return {"bfloat16": why}


def check():
    """``""`` when CuPy and a CUDA driver library are installed, else the reason, in a few
    words (CuPy is not imported; :func:`probe` asks the driver for devices)."""
    if importlib.util.find_spec("cupy") is None:
        return "CuPy is not installed"
    if ctypes.util.find_library("cuda") is None:
        return "no CUDA driver (libcuda not found)"
    return ""


def probe():
    """``(available, reason, devices)`` without building the backend; never raises.

    Unavailable here means CuPy cannot be imported or the CUDA runtime reports no usable
    device (no driver, a driver older than the runtime, ``CUDA_VISIBLE_DEVICES=""``, ...).
    """
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA library at import time
        return False, (f"no CUDA device: CuPy cannot be imported ({type(exc).__name__}: "
                       f"{exc}); install CuPy's wheel for the driver's CUDA version: "
                       f"'pip install cupy-cuda12x' or 'pip install cupy-cuda13x'"), []
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # cupy_backends...CUDARuntimeError: no driver, old driver, ...
        return False, f"no CUDA device: {type(exc).__name__}: {exc}", []
    if count < 1:
        return False, "no CUDA device: the CUDA runtime reports 0 devices", []
    return True, f"{count} CUDA device(s)", [f"GPU:{i}" for i in range(count)]


def _build():
    available, reason, _ = probe()
    if not available:
        from mscore.plugin.registry import BackendUnavailableError
        raise BackendUnavailableError(f"backend 'cupy' is installed but unavailable: {reason}")
    from .backend import CupyBackend
    return CupyBackend()


def make_spec():
    """The :class:`BackendSpec` of ``cupy`` (version and dtypes from installed metadata)."""
    import numpy as np
    found = cupy_distribution()
    cupy_version = found[1] if found else None
    version = cupy_version if found else "not installed"
    return BackendSpec(
        name="cupy", version=version, factory=_build, devices=("GPU",),
        dtypes=declared_dtypes(cupy_version, np.__version__),
        undeclared_dtypes=undeclared_dtypes(cupy_version, np.__version__),
        capabilities=frozenset({"collectives"}),
        probe=probe, check=check,
        description=(f"CuPy on CUDA devices (mscore-cupy {__version__}, "
                     f"{found[0] if found else 'no CuPy distribution'}); reference autodiff, "
                     f"im2col/GEMM convolution, fused one-sync overflow check"))


@hookimpl
def mscore_register_backends():
    """The CuPy backend: CUDA devices only, reference autodiff (mscore.autodiff)."""
    return [make_spec()]


@hookimpl
def mscore_collectives_impl(backend_name):
    """Collectives on NCCL through CuPy's ``cupyx.distributed``."""
    if backend_name == "cupy":
        from .collectives import CupyCollectives
        return CupyCollectives
