"""Entry point of the built-in numpy backend (group ``mscore.backends``, name ``numpy``)."""
import numpy as np

from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl


def _build():
    from scipy import special

    from mscore.backends.array_module import ArrayModuleBackend
    return ArrayModuleBackend(np, "numpy", special_erf=special.erf)


@hookimpl
def mscore_register_backends():
    """The numpy reference backend: CPU, every dtype, reference autodiff."""
    return [BackendSpec(name="numpy", version=np.__version__, factory=_build,
                        devices=("CPU",), capabilities={"deterministic"},
                        description="built-in reference backend (numpy + ml_dtypes)")]
