"""Shared fixtures of mscore's own tests.

``pip_target`` installs small distributions (the test plugins under ``tests/plugins/`` and the
example backend under ``examples/third_party_backend/``) with pip into a temporary folder, once
per session; subprocesses get that folder on ``PYTHONPATH`` so the distributions' entry points
are real but never leak into the shared virtual environment.
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = Path(__file__).resolve().parent / "plugins"

# Hypothesis keeps its files in ./.hypothesis (the user's checkout) unless told otherwise.
try:
    from hypothesis.configuration import set_hypothesis_home_dir
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    pass
else:
    _HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="mscore-tests-hypothesis-")
    set_hypothesis_home_dir(_HYPOTHESIS_HOME)
    atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, ignore_errors=True)


def _install(sources, target, work):
    """``pip install --target`` of copies of ``sources`` (the tree stays untouched)."""
    copies = []
    for src in sources:
        dst = work / Path(src).name
        if not dst.exists():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
                "build", "*.egg-info", "__pycache__"))
        copies.append(str(dst))
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
           "--no-index", "--disable-pip-version-check", "--target", str(target), *copies]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"pip install failed ({proc.returncode}):\n{proc.stdout}\n"
                           f"{proc.stderr}")


@pytest.fixture(scope="session")
def pip_target(tmp_path_factory):
    """``install(*source_dirs) -> Path``: a folder holding those distributions, pip-installed
    (cached per set of sources for the session)."""
    cache = {}

    def install(*sources):
        key = tuple(sorted(str(Path(s).resolve()) for s in sources))
        if key not in cache:
            base = tmp_path_factory.mktemp("pip_target")
            target, work = base / "site", base / "src"
            work.mkdir()
            _install([Path(s) for s in key], target, work)
            cache[key] = target
        return cache[key]

    return install


def subprocess_env(*extra_paths, **env):
    """The environment for a child Python: ``extra_paths`` first on ``PYTHONPATH``, the kit's
    and mscore's environment variables cleared unless given in ``env``."""
    out = dict(os.environ)
    for key in ("MSCORE_BACKEND", "MSCORE_STRICT_PLUGINS", "PYTEST_ADDOPTS"):
        out.pop(key, None)
    paths = [str(p) for p in extra_paths]
    if out.get("PYTHONPATH"):
        paths.append(out["PYTHONPATH"])
    if paths:
        out["PYTHONPATH"] = os.pathsep.join(paths)
    out.update({k: str(v) for k, v in env.items()})
    return out


def run_python(args, *extra_paths, timeout=900, cwd=None, **env):
    """Run ``python ARGS`` in a child process; returns the CompletedProcess (text)."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=str(cwd or ROOT),
                          env=subprocess_env(*extra_paths, **env))


@pytest.fixture(scope="session")
def run_py():
    """:func:`run_python` as a fixture: ``run_py(args, *extra_paths, **env)``."""
    return run_python


@pytest.fixture(autouse=True)
def _nothing_written_into_the_current_folder():
    """Tests write under ``tmp_path`` only: a test that leaves a new entry in the folder
    pytest was started from (the user's checkout) fails, naming what it left."""
    folder = os.getcwd()
    before = set(os.listdir(folder))
    yield
    left = sorted(set(os.listdir(folder)) - before)
    if left:
        pytest.fail(f"{left} appeared in the current folder {folder} while this test ran "
                    f"(with several test processes, a test beside it may have written it); "
                    f"tests write under tmp_path", pytrace=False)
