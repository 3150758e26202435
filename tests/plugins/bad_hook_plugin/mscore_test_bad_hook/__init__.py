"""A deliberately broken mscore plugin: its ``mscore_backend_override`` takes an argument the
hook specification does not have, so pluggy rejects the whole plugin at registration. Its
backend ``test_bad_hook`` must therefore not appear, and nothing else may break."""
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl


@hookimpl
def mscore_register_backends():
    """Would register a backend, if the plugin were valid."""
    from mscore.backends.numpy.plugin import _build
    return [BackendSpec(name="test_bad_hook", version="0.0.1", factory=_build)]


@hookimpl
def mscore_backend_override(backend_name, method, stream):
    """Wrong signature: ``stream`` is not an argument of the hook specification."""
    return None
