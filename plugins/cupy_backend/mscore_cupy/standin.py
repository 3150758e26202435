"""A test-only plugin: the CuPy backend class with numpy standing in for CuPy (``cupy_sim``).

Not registered through an entry point. It lets the conformance kit exercise, on a machine
without CUDA, everything of :class:`~mscore_cupy.backend.CupyBackend` that does not need a
device (the random stream, the scatter dtype plan, the overflow-check table and bit test)::

    pytest --pyargs mscore.conformance --mscore-plugin mscore_cupy.standin \\
        --mscore-backend cupy_sim
"""
import numpy as np

from mscore.common.dtype import ALL_DTYPES
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

from . import __version__


def _build():
    from .backend import CupyBackend
    backend = CupyBackend(xp=np)
    backend.name = "cupy_sim"
    return backend


@hookimpl
def mscore_register_backends():
    """``cupy_sim``: CupyBackend over numpy, declared like the real backend (GPU placement
    accepted, every dtype numpy has)."""
    return [BackendSpec(name="cupy_sim", version=__version__, factory=_build,
                        devices=("GPU",), dtypes=tuple(d.name for d in ALL_DTYPES),
                        description="CupyBackend over numpy (test stand-in, no CUDA)")]
