"""The launcher chaos of ``bench/reliability.py`` on every installed backend (slow: two-rank
jobs over 127.0.0.1; ``MSCORE_SLOW_TESTS=1`` runs it): a rank that raises, exits early,
hangs or is killed -9 mid-all-reduce ends the job in bounded time, naming the rank, and the
launcher's signals leave nothing running."""
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLOW = bool(os.environ.get("MSCORE_SLOW_TESTS"))
BACKENDS = [b for b, module in (("numpy", "torch"), ("torch", "torch"), ("jax", "jax"))
            if importlib.util.find_spec(module) is not None]


@pytest.mark.skipif(not SLOW, reason="MSCORE_SLOW_TESTS=1 runs it (two-rank jobs, minutes)")
@pytest.mark.skipif(sys.platform != "linux", reason="process groups, /proc")
@pytest.mark.parametrize("backend", BACKENDS)
def test_launcher_chaos_is_all_clear(backend):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "reliability.py"),
                           "--groups", "launch", "--backends", backend, "--bound", "45"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "unexpected   0  hangs  0  leftover processes  0" in proc.stdout
