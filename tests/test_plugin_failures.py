"""A plugin that fails to load is named with its cause, in bounded time, by every command.

The distributions under ``tests/plugins/`` are pip-installed into a temporary folder that only
the child processes here see (``conftest.pip_target``): plugins that fail to import, abort or
hang at import, and ``mscore-test-faulty``, whose modules import cleanly and then fail: a hook
that raises, a misspelt hook, a factory that raises, a factory that never returns.

- ``mscore backends`` gives each a row whose status is "failed to load: <first line of the
  cause>" (never "available"), a factory's failure included;
- ``mscore demo --backend NAME`` says "'NAME' is installed but its plugin failed to load:
  <cause>" in one line (no warning, no source line), exit 2;
- ``mscore conformance NAME`` prints the cause in one line and exits 2; ``--plugin M`` for a
  module that raises, aborts or hangs names ``M``; plugins that abort or hang elsewhere leave
  the kit running;
- every hang ends after ``MSCORE_PLUGIN_TIMEOUT`` seconds, naming the plugin.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from _helpers import child_result

PLUGINS = Path(__file__).resolve().parent / "plugins"
FAULTY = ("faulty_backends", "import_error_plugin", "bad_hook_plugin", "abort_plugin",
          "hang_plugin")
CAUSES = {
    "test_import_error": "failed: ModuleNotFoundError: No module named "
                         "'mscore_dependency_that_does_not_exist'",
    "test_hook_raises": "mscore_register_backends failed: RuntimeError: the hook of "
                        "test_hook_raises raises on purpose",
    "test_misspelt": "unknown hook 'mscore_register_backend'",
    "test_factory_fails": "OSError: libfaulty.so: cannot open shared object file"}
HANG_S = 4     # MSCORE_PLUGIN_TIMEOUT of the runs where a plugin hangs


@pytest.fixture(scope="module")
def faulty_site(pip_target):
    return pip_target(*(PLUGINS / d for d in FAULTY))


LISTING = """
import json, sys
from mscore.plugin.listing import list_backends
rows, failures = list_backends(names=json.loads(sys.argv[1]), timeout=float(sys.argv[2]))
print("RESULT" + json.dumps({r["name"]: r["status"] for r in rows}))
"""


def test_mscore_backends_shows_each_failure_as_its_row(faulty_site, run_py):
    names = [*CAUSES, "test_bad_hook", "test_abort", "numpy"]
    status = child_result(run_py(["-c", LISTING, json.dumps(names), "60"], faulty_site,
                            timeout=300))
    assert status["numpy"] == "available"
    for name, cause in CAUSES.items():
        assert status[name].startswith("failed to load: ") and cause in status[name], \
            (name, status[name])
    assert "PluginValidationError" in status["test_bad_hook"]
    assert "killed the process (SIGABRT)" in status["test_abort"]


def test_mscore_backends_table_says_failed_to_load(monkeypatch, capsys):
    from mscore.commands import backends as command
    failed = {"name": "test_factory_fails", "version": "0.0.1", "plugin": "test_factory_fails",
              "distribution": "mscore-test-faulty 0.0.1", "devices": [], "dtypes": [],
              "undeclared_dtypes": {}, "capabilities": [], "per_device": {},
              "status": "failed to load: building backend 'test_factory_fails' failed: "
                        "OSError: libfaulty.so"}
    monkeypatch.setattr(command, "list_backends", lambda probe, timeout: ([failed], []))
    assert command.main([]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "test_factory_fails" in x]
    assert line.split()[:5] == ["test_factory_fails", "0.0.1", "-", "-", "-"]
    assert line.endswith("failed to load: building backend 'test_factory_fails' fai...")
    assert "leaves out" not in out


def test_a_factory_that_hangs_is_named_after_the_timeout(faulty_site, run_py):
    started = time.monotonic()
    status = child_result(run_py(["-c", LISTING, json.dumps(["test_factory_hangs", "test_hang"]),
                             str(HANG_S)], faulty_site, timeout=120))
    for name in ("test_factory_hangs", "test_hang"):
        assert status[name].startswith("failed to load: ") and \
            f"did not finish within {HANG_S} s" in status[name], status
    assert time.monotonic() - started < 60


DEMO = """
import sys
from mscore.examples.amp_digits import main
for name in sys.argv[1:]:
    print("STATUS", name, main(["--backend", name, "--epochs", "1"]), flush=True)
    print("@@END@@", file=sys.stderr, flush=True)
"""


def test_demo_says_installed_but_failed_to_load(faulty_site, run_py):
    pytest.importorskip("sklearn")
    proc = run_py(["-c", DEMO, *CAUSES], faulty_site, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[2] for line in proc.stdout.splitlines()
            if line.startswith("STATUS")] == ["2"] * len(CAUSES)
    errors = proc.stderr.split("@@END@@\n")
    for (name, cause), err in zip(CAUSES.items(), errors):
        assert err.count("\n") == 1, err   # one line: no warning, no source line
        assert err.startswith(f"mscore demo: error: --backend: {name!r} is installed but its "
                              f"plugin failed to load: ") and cause in err, err


def test_demo_and_compare_bound_a_factory_that_hangs(faulty_site, run_py):
    pytest.importorskip("sklearn")
    for args, prefix in (
            (["demo", "--backend", "test_factory_hangs"], "mscore demo: error: --backend: "),
            (["compare", str(Path(__file__).parent / "compare_factories.py") + ":tiny",
              "--backends", "numpy,test_factory_hangs", "--steps", "2"],
             "mscore compare: error: --backends: ")):
        started = time.monotonic()
        proc = run_py(["-m", "mscore.cli", *args], faulty_site, timeout=120,
                      MSCORE_PLUGIN_TIMEOUT=str(HANG_S))
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == (
            f"{prefix}'test_factory_hangs' is installed but its plugin failed to load: "
            f"importing or building it did not finish within {HANG_S} s (hung?); set "
            f"MSCORE_PLUGIN_TIMEOUT to wait longer"), proc.stderr
        assert time.monotonic() - started < 60


@pytest.mark.parametrize("name", ["test_factory_fails"])
def test_conformance_of_a_plugin_that_failed_is_one_line_and_status_2(faulty_site, run_py,
                                                                      name):
    proc = run_py(["-m", "mscore.cli", "conformance", name, "--quick"], faulty_site,
                  timeout=300, MSCORE_PLUGIN_TIMEOUT=str(HANG_S))   # test_hang is there too
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith(f"mscore conformance: backend {name!r} cannot be tested: "
                                  f"its plugin failed to load: ") and CAUSES[name] in proc.stderr


@pytest.mark.parametrize("body, words", [
    ("raise RuntimeError('the module raises on purpose')",
     "failed: RuntimeError: the module raises on purpose"),
    ("import os\nos.abort()", "killed the process (SIGABRT)")])
def test_conformance_plugin_module_that_fails_is_named(tmp_path, run_py, body, words):
    (tmp_path / "my_faulty_plugin.py").write_text(body + "\n")
    started = time.monotonic()
    proc = run_py(["-m", "mscore.cli", "conformance", "numpy", "--plugin", "my_faulty_plugin"],
                  timeout=300, cwd=tmp_path, MSCORE_PLUGIN_TIMEOUT=str(HANG_S))
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stderr.startswith("mscore conformance: --plugin 'my_faulty_plugin' failed to "
                                  "load: import of the plugin module 'my_faulty_plugin'"), \
        proc.stderr
    assert words in proc.stderr
    assert time.monotonic() - started < 120


def test_conformance_runs_past_plugins_that_abort_or_hang(faulty_site, run_py, tmp_path):
    proc = run_py(["-m", "mscore.cli", "conformance", "numpy", "-k", "test_spec"], faulty_site,
                  timeout=300, cwd=tmp_path, MSCORE_PLUGIN_TIMEOUT=str(HANG_S))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout


def test_ctrl_c_stops_compare_waiting_on_a_factory_that_never_returns(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    from conftest import subprocess_env
    (tmp_path / "stuck_factory.py").write_text(
        "import threading\n\n\ndef build():\n    threading.Event().wait()\n")
    proc = subprocess.Popen([sys.executable, "-m", "mscore.cli", "compare",
                             "stuck_factory.py:build", "--backends", "numpy,numpy:GPU"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=subprocess_env())
    try:
        time.sleep(8)   # imported, and waiting in the factory (or still importing)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.strip().endswith("mscore compare: interrupted")
