"""Registers ``test_factory_hangs``, whose factory never returns (a library waiting on a
device that never answers)."""
import threading

from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl


def _factory():
    threading.Event().wait()


@hookimpl
def mscore_register_backends():
    """The backend whose factory never returns."""
    return [BackendSpec(name="test_factory_hangs", version="0.0.1", factory=_factory)]
