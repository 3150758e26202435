"""What the backend plugins' tests (``plugins/*/tests``) share with mscore's own tests: the
helpers of ``tests/`` (``_helpers``, ``_backend_compare``) on the import path, and each test
ending on the numpy backend's default context."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


@pytest.fixture(autouse=True)
def _back_to_numpy():
    """Each test starts from, and leaves, the numpy backend's default context."""
    yield
    import mscore as ms
    ms.set_context(backend="numpy", device_target="CPU", device_id=0, mode=ms.PYNATIVE_MODE)
