"""The typed backend contract: mypy (configured in pyproject.toml's ``[tool.mypy]``) finds no
error in ``mscore/plugin``, ``mscore/dispatch.py`` and the four backends, whose required
and optional members are checked against the signatures of :mod:`mscore.plugin.required`
and :mod:`mscore.plugin.optional` (a parameter too many or too few is an error; the names are
checked by tests/test_backend_contract.py)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error_in_the_contract_and_the_backends(tmp_path):
    pytest.importorskip("mypy", reason="mypy is a test dependency: pip install -e '.[test]'")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"),
                           "--no-error-summary"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert proc.returncode == 0 and errors == [], proc.stdout + proc.stderr
