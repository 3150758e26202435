"""``mscore_register_backends`` raises (a plugin whose library is half installed)."""
from mscore.plugin.hookspecs import hookimpl


@hookimpl
def mscore_register_backends():
    """Fails instead of registering ``test_hook_raises``."""
    raise RuntimeError("the hook of test_hook_raises raises on purpose")
