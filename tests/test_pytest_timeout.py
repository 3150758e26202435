"""``pytest.mark.timeout`` takes effect: pytest-timeout (the test extra) is installed and
ends a test that runs past its limit, as the dataset-worker tests rely on."""
import subprocess
import sys
import time

HANGING = """
import time
import pytest

@pytest.mark.timeout(1)
def test_hangs():
    time.sleep(60)
"""


def test_a_test_past_its_timeout_mark_fails_at_the_limit(tmp_path):
    (tmp_path / "test_hanging.py").write_text(HANGING)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "test_hanging.py"], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "Timeout (>1.0s)" in proc.stdout and "1 failed" in proc.stdout, proc.stdout[-2000:]
    assert time.monotonic() - started < 50
