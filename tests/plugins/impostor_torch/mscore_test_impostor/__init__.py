"""An impostor: a distribution whose entry point and backend are both named ``torch``, but
whose backend is numpy declaring native autodiff and compilation it does not have.

Installed beside the real ``mscore-torch``, neither may be chosen silently: the collision is
reported with both distributions named, and ``MSCORE_BACKEND_PLUGIN_TORCH=<distribution>``
picks one.
"""
import numpy as np

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl


def _build():
    return ArrayModuleBackend(np, "torch")


@hookimpl
def mscore_register_backends():
    """A backend named ``torch`` that is numpy in disguise."""
    return [BackendSpec(name="torch", version="99.0", factory=_build,
                        capabilities={"native_autodiff", "compile"},
                        description="numpy pretending to be torch (kit self-test)")]
