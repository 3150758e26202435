"""Registers ``test_factory_fails``, whose factory raises (its library fails when started)."""
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl


def _factory():
    raise OSError("libfaulty.so: cannot open shared object file")


@hookimpl
def mscore_register_backends():
    """The backend whose factory raises."""
    return [BackendSpec(name="test_factory_fails", version="0.0.1", factory=_factory)]
