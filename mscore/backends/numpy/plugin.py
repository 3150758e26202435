"""Entry point of the built-in numpy backend (group ``mscore.backends``, name ``numpy``)."""
import numpy as np

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.backends.numpy.collectives import NumpyCollectives, torch_installed
from mscore.common.dtype import ALL_DTYPES
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl


def _capabilities():
    # collectives ride on torch.distributed's gloo, so only where torch is installed
    return frozenset({"deterministic", "collectives"} if torch_installed() else
                     {"deterministic"})


def _build():
    from scipy import special

    return ArrayModuleBackend(np, "numpy", special_erf=special.erf)


@hookimpl
def mscore_register_backends():
    """The numpy reference backend: CPU, every dtype, reference autodiff."""
    return [BackendSpec(name="numpy", version=np.__version__, factory=_build,
                        devices=("CPU",), dtypes=tuple(d.name for d in ALL_DTYPES),
                        capabilities=_capabilities(),
                        description="built-in reference backend (numpy + ml_dtypes)")]


@hookimpl
def mscore_collectives_impl(backend_name):
    """The numpy backend's collectives: torch.distributed's gloo (the factory raises, naming
    what to install, when torch is missing)."""
    if backend_name == "numpy":
        return NumpyCollectives
