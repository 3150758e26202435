"""What the backend plugins' tests (``plugins/*/tests``) share with mscore's own tests: the
helpers of ``tests/`` (``_helpers``, ``_backend_compare``) on the import path, and each plugin
test ending on the numpy backend's default context. (At the root, not in ``plugins/``: the
core tests import ``tests/conftest.py`` as ``conftest``, which a second conftest module of that
name loaded after it would replace.)"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
TESTS = ROOT / "tests"
PLUGINS = ROOT / "plugins"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


@pytest.fixture(autouse=True)
def _plugin_tests_back_to_numpy(request):
    """A plugin's test starts from, and leaves, the numpy backend's default context."""
    yield
    if PLUGINS in Path(str(request.node.path)).parents:
        import mscore as ms
        ms.set_context(backend="numpy", device_target="CPU", device_id=0,
                       mode=ms.PYNATIVE_MODE)
