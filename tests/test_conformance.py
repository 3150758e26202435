"""The conformance kit itself: its comparison helpers, its pytest plugin and runner, a full run
over every installed backend, a deliberately broken backend it must catch, and the example
third-party backend it must pass after ``pip install``."""
from __future__ import annotations

import json
import math
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from mscore.conformance import harness
from mscore.conformance.kit import normalize_device
from mscore.conformance.pytest_plugin import _pattern_matches
from mscore.conformance import runner

ROOT = Path(__file__).resolve().parent.parent
BROKEN_DIR = ROOT / "tests" / "plugins" / "broken_backend"
EXAMPLE_DIR = ROOT / "examples" / "third_party_backend"


def _installed():
    from mscore.plugin.registry import get_registry
    return get_registry().names()


# -- the comparison helpers -------------------------------------------------------------------
def test_compare_accepts_rounding_and_rejects_a_wrong_value():
    e = np.linspace(-3, 3, 24).reshape(4, 6)
    # float16 rounding of the exact values is within the float16 tolerance...
    ok = harness.compare(e.astype(np.float16), e, "float16")
    assert ok.ok and 0 < ok.max_abs_err < 3e-3
    # ...but not within float32's.
    assert not harness.compare(e.astype(np.float16), e, "float32").ok
    bad = e.astype(np.float32).copy()
    bad[2, 3] += 1e-3
    c = harness.compare(bad, e, "float32", what="exp")
    assert not c.ok
    assert "exp: 1 of 24 elements differ" in c.message and "(2, 3)" in c.message
    assert c.max_abs_err == pytest.approx(1e-3, rel=1e-3)


def test_compare_shapes_nonfinite_and_integers():
    assert "shape (3,), expected (1, 3)" in harness.compare(np.ones(3), np.ones((1, 3)),
                                                            "float32").message
    e = np.array([1.0, np.nan, np.inf])
    assert harness.compare(e.copy(), e, "float64").ok
    assert not harness.compare(np.array([1.0, 0.0, np.inf]), e, "float64").ok
    assert not harness.compare(np.array([1.0, np.nan, -np.inf]), e, "float64").ok
    ints = np.array([1, 2, 3])
    assert harness.compare(ints, ints.copy(), "int32").ok
    c = harness.compare(np.array([1, 2, 4]), ints, "int32")
    assert not c.ok and "exact match required" in c.message


def test_tolerance_table_is_ordered_by_precision():
    names = ["float64", "float32", "float16", "bfloat16"]
    rtols = [harness.tolerance(n).rtol for n in names]
    assert rtols == sorted(rtols)
    assert harness.tolerance("int32") is harness.EXACT
    assert harness.tolerance("float32", 10).rtol == pytest.approx(10 * rtols[1])
    with pytest.raises(ValueError, match="factor"):
        harness.tolerance("float32", -1)


def test_device_names_and_xfail_patterns():
    assert normalize_device("cpu") == "CPU"
    assert normalize_device("cuda:1") == "GPU:1"
    assert normalize_device("GPU") == "GPU"
    with pytest.raises(ValueError, match="device"):
        normalize_device("tpu")
    assert _pattern_matches("test_ops.py::test_primitive[erf-*]",
                            "test_ops.py::test_primitive[erf-float16]")
    assert not _pattern_matches("test_ops.py::test_primitive[erf-*]",
                                "test_ops.py::test_primitive[exp-float16]")


def test_runner_arguments():
    ns = runner.build_parser().parse_args(["torch", "--device", "GPU", "-k", "conv",
                                           "--report", "r.json"])
    args = runner.pytest_args(ns)
    assert args[:2] == ["--pyargs", "mscore.conformance"]
    assert "--mscore-backend=torch" in args and "--mscore-device=GPU" in args
    assert any(a.startswith("--mscore-report=") and a.endswith("r.json") for a in args)
    assert args[args.index("-k") + 1] == "conv"


def test_runner_rejects_unknown_backend(capsys):
    assert runner.main(["no_such_backend"]) == runner.USAGE_ERROR
    err = capsys.readouterr().err
    assert "'no_such_backend' is not installed" in err and "numpy" in err
    assert err.count("\n") == 1 and err.startswith("mscore conformance: error: BACKEND:")


# -- the kit over every installed backend -------------------------------------------------------
def _run_kit(run_py, tmp_path, backend, *extra, paths=()):
    report = tmp_path / f"report-{backend}.json"
    proc = run_py(["-m", "mscore.conformance", backend, "--report", str(report), *extra],
                  *paths, cwd=tmp_path)
    data = json.loads(report.read_text()) if report.exists() else None
    return proc, data


@pytest.mark.parametrize("backend", _installed())
def test_kit_passes_on_installed_backend(backend, run_py, tmp_path):
    """`mscore conformance BACKEND` passes (or skips, for a backend that cannot run here) and
    writes a complete report."""
    proc, report = _run_kit(run_py, tmp_path, backend)
    tail = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert report is not None, tail
    failed = [t for t in report["tests"] if t["outcome"] in ("failed", "error")]
    assert proc.returncode == 0 and not failed, (
        f"{len(failed)} failures, e.g. {failed[:3]}\n{tail}")
    assert report["passed"] is True
    assert report["suite_version"] == harness.SUITE_VERSION
    assert report["mscore_version"]
    (info,) = report["backends"]
    assert info["name"] == backend and info["version"] and info["device"]
    assert isinstance(info["capabilities"], list) and info["dtypes"]
    assert report["tests"], "no test ran"
    for t in report["tests"]:
        assert {"case", "feature", "dtype", "device", "outcome", "max_abs_err",
                "max_rel_err"} <= set(t)
    if not info["available"]:
        assert all(t["outcome"] == "skipped" and "cannot run here" in t["message"]
                   for t in report["tests"])
        return
    assert "mscore conformance matrix" in proc.stdout
    outcomes = {t["outcome"] for t in report["tests"]}
    assert "passed" in outcomes
    levels = {t["feature"].split(".")[0] for t in report["tests"] if t["outcome"] == "passed"}
    assert {"contract", "ops", "grad", "layers", "training", "checkpoint"} <= levels, levels
    measured = [t for t in report["tests"] if t["feature"].startswith("ops.")
                and t["outcome"] == "passed" and t["max_abs_err"] is not None]
    assert measured and all(isinstance(t["max_abs_err"], float) for t in measured)


# -- a deliberately broken backend ---------------------------------------------------------------
BROKEN_FEATURES = {"ops.sum", "ops.argmax", "ops.scatter_add", "ops.max_pool",
                   "contract.all_finite", "grad.erf", "layers.GELU_erf"}


@pytest.fixture(scope="module")
def broken_run(run_py, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("broken")
    return _run_kit(run_py, tmp, "broken", "--plugin", "mscore_broken_backend",
                    "--xfail", str(BROKEN_DIR / "expected_failures.json"),
                    paths=(BROKEN_DIR,)) + (tmp,)


def test_kit_catches_the_broken_backend(broken_run):
    proc, report, _ = broken_run
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert report["passed"] is False
    failed = {t["feature"] for t in report["tests"] if t["outcome"] == "failed"}
    assert BROKEN_FEATURES <= failed, BROKEN_FEATURES - failed
    # The healthy ops of the same backend still pass: failures point at the bugs.
    passed = {t["feature"] for t in report["tests"] if t["outcome"] == "passed"}
    assert {"ops.add", "ops.matmul", "ops.conv", "grad.conv2d_stride_pad_dilation_groups",
            "layers.Dense"} <= passed
    assert not {"ops.add", "ops.exp", "ops.conv"} & failed


def test_broken_backend_failures_are_readable(broken_run):
    proc, report, _ = broken_run
    by_case = {t["case"]: t for t in report["tests"]}
    shape = by_case["test_ops.py::test_primitive[sum_axis02_keep-float32]"]
    assert shape["message"].startswith("mscore.conformance.harness.ConformanceFailure: "
                                       "sum(axis02_keep): shape (4,), expected (1, 4, 1)")
    dtype = by_case["test_ops.py::test_primitive[argmax_axis0-float64]"]
    assert "reports dtype int32, expected int64" in dtype["message"]
    value = by_case["test_ops.py::test_primitive[max_pool_2d_pad-float32]"]
    assert "elements differ beyond" in value["message"] and value["max_abs_err"] > 0.1
    nan = by_case["test_contract.py::test_all_finite[float32]"]
    assert "all_finite missed nan" in nan["message"]
    # One summary line per failure, each followed by a command that reruns just that test.
    out = proc.stdout
    lines = out.splitlines()
    summary = [i for i, line in enumerate(lines) if line.startswith("FAILED broken/CPU ")]
    assert len(summary) == sum(1 for t in report["tests"] if t["outcome"] == "failed")
    for i in summary:
        assert lines[i + 1].strip().startswith("reproduce: ")
    assert re.search(r"skipped \d+: float16 not declared by broken", out)


def test_broken_backend_repro_command_reproduces(broken_run, run_py):
    proc, report, tmp = broken_run
    case = next(t for t in report["tests"]
                if t["case"] == "test_ops.py::test_primitive[scatter_add_repeated_indices-float64]")
    argv = shlex.split(case["repro"])
    assert argv[1:3] == ["-m", "pytest"]
    again = run_py(argv[1:], BROKEN_DIR, cwd=tmp)
    assert again.returncode == 1, again.stdout[-2000:]
    assert "1 failed" in again.stdout and "scatter_add" in again.stdout


def test_expected_failures_and_stale_entries(broken_run):
    proc, report, _ = broken_run
    erf = [t for t in report["tests"] if t["feature"] == "ops.erf" and t["outcome"] != "skipped"]
    assert erf and all(t["outcome"] == "xfailed" for t in erf)
    assert all("erf is computed as tanh" in t["expected_failure"] for t in erf)
    stale = {s["test"]: s["stale_because"] for s in report["stale_expected_failures"]}
    assert stale == {"test_ops.py::test_primitive[exp-*]": "the test passes now (remove the "
                                                           "entry)",
                     "test_ops.py::test_no_such_test[*]": "matches no test of the kit"}
    assert "stale expected failures" in proc.stdout


def test_malformed_expected_failures_file_is_a_usage_error(run_py, tmp_path):
    bad = tmp_path / "xfail.json"
    bad.write_text(json.dumps({"expected_failures": [{"test": "x"}]}))
    proc, _ = _run_kit(run_py, tmp_path, "numpy", "--xfail", str(bad), "-k", "test_spec")
    assert proc.returncode not in (0, 1)
    assert "non-empty text" in proc.stdout + proc.stderr


# -- the example third-party backend ------------------------------------------------------------
def test_example_backend_passes_after_pip_install(pip_target, run_py, tmp_path):
    site = pip_target(EXAMPLE_DIR)
    assert (site / "mscore_array_api" / "backend.py").is_file()
    report = tmp_path / "r.json"
    # The one command a backend author runs after `pip install`.
    proc = run_py(["-m", "mscore.cli", "conformance", "array_api_strict", "--report",
                   str(report)], site, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    data = json.loads(report.read_text())
    (info,) = data["backends"]
    assert info["name"] == "array_api_strict" and info["plugin"] == "array_api_strict"
    assert info["dtypes"] == ["float32", "float64", "int8", "int16", "int32", "int64",
                              "uint8", "bool"]
    skipped = [t["message"] for t in data["tests"] if t["outcome"] == "skipped"]
    assert "float16 not declared by array_api_strict" in skipped
    assert "capability 'compile' not declared by array_api_strict" in skipped
    passed = {t["feature"].split(".")[0] for t in data["tests"] if t["outcome"] == "passed"}
    assert {"contract", "ops", "grad", "layers", "training", "checkpoint"} <= passed


# -- the pytest plugin -------------------------------------------------------------------------
def test_pytest_pyargs_and_device_gate(run_py, tmp_path):
    proc = run_py(["-m", "pytest", "--pyargs", "mscore.conformance", "--mscore-backend=numpy",
                   "--mscore-device=GPU", "-k", "test_spec or test_primitive_set", "-p",
                   "no:cacheprovider", "-rs"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "2 skipped" in proc.stdout and "GPU not declared by numpy" in proc.stdout
    proc = run_py(["-m", "pytest", "--pyargs", "mscore.conformance", "--mscore-backend=numpy",
                   "-k", "test_spec", "-p", "no:cacheprovider"], cwd=tmp_path)
    assert proc.returncode == 0 and "1 passed" in proc.stdout
    assert "mscore conformance matrix: numpy on CPU" in proc.stdout


def test_plugin_is_inert_for_other_test_suites(run_py, tmp_path):
    (tmp_path / "test_other.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    proc = run_py(["-m", "pytest", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 0 and "1 passed" in proc.stdout
    assert "mscore conformance" not in proc.stdout
    helped = run_py(["-m", "pytest", "--help"], cwd=tmp_path)
    assert "--mscore-backend" in helped.stdout


def test_unavailable_backend_is_skipped_with_the_probe_reason(run_py, tmp_path):
    plugin = tmp_path / "unavailable_plugin.py"
    plugin.write_text(
        "from mscore.plugin.backend import BackendSpec\n"
        "from mscore.plugin.hookspecs import hookimpl\n"
        "@hookimpl\n"
        "def mscore_register_backends():\n"
        "    return [BackendSpec(name='ghost', version='1', factory=lambda: None,\n"
        "            devices=('GPU',), probe=lambda: (False, 'no CUDA device: none found', []))]\n")
    proc, report = _run_kit(run_py, tmp_path, "ghost", "--plugin", "unavailable_plugin",
                            "-k", "test_spec or test_primitive", paths=(tmp_path,))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert report["tests"] and all(t["outcome"] == "skipped" for t in report["tests"])
    assert all("no CUDA device: none found" in t["message"] for t in report["tests"])
    assert report["backends"][0]["available"] is False
    assert not math.isnan(report["duration_s"])
