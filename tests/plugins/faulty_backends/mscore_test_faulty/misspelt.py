"""The registration hook's name is misspelt, so no backend ``test_misspelt`` is registered."""
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl


@hookimpl
def mscore_register_backend():
    """``mscore_register_backends`` without its final s."""
    from mscore.backends.numpy.plugin import _build
    return [BackendSpec(name="test_misspelt", version="0.0.1", factory=_build)]
