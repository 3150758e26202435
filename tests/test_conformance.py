"""The conformance kit itself: its comparison helpers, its pytest plugin and runner, a run
over every installed backend (a quick sample by default, the whole kit with
``MSCORE_SLOW_TESTS=1``), a deliberately broken backend and backends that declare more than
they honour, which it must catch, and the example third-party backend it must pass after
``pip install``."""
from __future__ import annotations

import json
import math
import os
import re
import shlex
import tempfile
from pathlib import Path

import numpy as np
import pytest

from mscore.conformance import coverage, harness, runner
from mscore.conformance.kit import Target, normalize_device
from mscore.conformance.pytest_plugin import _pattern_matches
from mscore.plugin.backend import BackendSpec

ROOT = Path(__file__).resolve().parent.parent
BROKEN_DIR = ROOT / "tests" / "plugins" / "broken_backend"
LIARS_DIR = ROOT / "tests" / "plugins" / "lying_backends"
EXAMPLE_DIR = ROOT / "examples" / "third_party_backend"
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"


def _installed():
    from mscore.plugin.registry import get_registry
    return get_registry().names()


def _unavailable_reason(name):
    from mscore.plugin.registry import get_registry
    spec = get_registry().spec(name)
    if spec.probe is None:
        return None
    available, reason, _ = spec.probe()
    return None if available else reason


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
    # int64/uint64 one apart above 2**53 are one float64: still a difference.
    for dtype, big in (("int64", 2 ** 62), ("uint64", 2 ** 64 - 4)):
        e = np.array([big, 5], dtype)
        c = harness.compare(e + np.array([1, 0], dtype), e, dtype)
        assert not c.ok and c.max_abs_err >= 1 and "index (0,)" in c.message


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
    assert args[:2] == ["--pyargs", "mscore.conformance.tests"]
    assert "--mscore-backend=torch" in args and "--mscore-device=GPU" in args
    assert any(a.startswith("--mscore-report=") and a.endswith("r.json") for a in args)
    assert args[args.index("-k") + 1] == "conv"
    args = runner.pytest_args(runner.build_parser().parse_args(["torch"]))
    assert not [a for a in args if a.startswith("--mscore-report")]


def test_the_runner_writes_nothing_into_the_current_folder_unless_asked(run_py, tmp_path):
    proc = run_py(["-m", "mscore.cli", "conformance", "numpy", "-k", "test_spec"],
                  cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout and "mscore conformance matrix: numpy on CPU" in proc.stdout
    assert proc.stdout.rstrip().endswith(f"mscore conformance: {runner.NO_REPORT}")
    assert os.listdir(tmp_path) == []


def test_runner_rejects_unknown_backend(capsys):
    assert runner.main(["no_such_backend"]) == runner.USAGE_ERROR
    err = capsys.readouterr().err
    assert "'no_such_backend' is not installed" in err and "numpy" in err
    assert err.count("\n") == 1 and err.startswith("mscore conformance: error: BACKEND:")


# -- the kit over every installed backend -------------------------------------------------------
# JAX compiles every op for every new shape (most of a kit run on jax); its persistent
# compilation cache makes a repeated run several times cheaper. A cache folder that outlives
# the test session (MSCORE_TEST_JAX_CACHE, default: one in the temporary directory) is handed to
# the kit's processes unless the caller configured JAX's own.
JAX_CACHE = {"JAX_COMPILATION_CACHE_DIR": os.environ.get(
                 "MSCORE_TEST_JAX_CACHE",
                 os.path.join(tempfile.gettempdir(), "mscore-tests-jax-compilation-cache")),
             "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
             "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}


def _run_kit(run_py, tmp_path, backend, *extra, paths=()):
    report = tmp_path / f"report-{backend}.json"
    env = {} if "JAX_COMPILATION_CACHE_DIR" in os.environ else JAX_CACHE
    proc = run_py(["-m", "mscore.conformance", backend, "--report", str(report), *extra],
                  *paths, cwd=tmp_path, **env)
    data = json.loads(report.read_text()) if report.exists() else None
    return proc, data


# The kit on the numpy reference by default (a quick sample of its cases); on every other
# installed backend, and the whole kit, with MSCORE_SLOW_TESTS=1 (jax's quick run alone is
# minutes on 2 loaded cores). Each plugin's own tests compare it with numpy by default.
@pytest.mark.parametrize("backend", [
    b if b == "numpy" else pytest.param(b, marks=pytest.mark.skipif(
        not SLOW, reason="the kit on a backend other than numpy: set MSCORE_SLOW_TESTS=1"))
    for b in _installed()])
def test_kit_passes_on_installed_backend(backend, run_py, tmp_path):
    """`mscore conformance BACKEND` passes and writes a complete report in which every
    declared dtype and capability was tested (a quick sample of the cases by default, the
    whole kit with MSCORE_SLOW_TESTS=1)."""
    reason = _unavailable_reason(backend)
    if reason:
        pytest.skip(f"backend {backend} cannot run here: {reason}")
    proc, report = _run_kit(run_py, tmp_path, backend, *(() if SLOW else ("--quick",)))
    tail = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert report is not None, tail
    failed = [t for t in report["tests"] if t["outcome"] in ("failed", "error")]
    assert proc.returncode == 0 and not failed, (
        f"{len(failed)} failures, e.g. {failed[:3]}\n{tail}")
    assert report["passed"] is True and report["verdict"] == []
    assert report["profile"] == ("full" if SLOW else "quick")
    assert report["suite_version"] == harness.SUITE_VERSION
    assert report["mscore_version"]
    (info,) = report["backends"]
    assert info["name"] == backend and info["version"] and info["device"]
    assert isinstance(info["capabilities"], list) and info["dtypes"]
    assert report["tests"], "no test ran"
    for t in report["tests"]:
        assert {"case", "feature", "dtype", "device", "outcome", "max_abs_err",
                "max_rel_err"} <= set(t)
    table = info["coverage"]
    assert {d: row["status"] for d, row in table["dtypes"].items()} == \
        dict.fromkeys(info["dtypes"], "tested")
    assert {c: row["status"] for c, row in table["capabilities"].items()} == {
        c: "tested" if c in info["capabilities"] else "not declared"
        for c in table["capabilities"]}
    assert "mscore conformance matrix" in proc.stdout
    assert f"mscore conformance coverage: {backend} on" in proc.stdout
    outcomes = {t["outcome"] for t in report["tests"]}
    assert "passed" in outcomes
    levels = {t["feature"].split(".")[0] for t in report["tests"] if t["outcome"] == "passed"}
    assert {"contract", "ops", "errors", "grad", "layers", "amp", "training",
            "checkpoint"} <= levels, levels
    measured = [t for t in report["tests"] if t["feature"].startswith("ops.")
                and t["outcome"] == "passed" and t["max_abs_err"] is not None]
    assert measured and all(isinstance(t["max_abs_err"], float) for t in measured)
    # How close to its tolerance each passing feature came, per dtype and device.
    rows = report["tolerance_use"]
    assert rows and all(0 <= float(r["max_ratio"]) <= 1 for r in rows), rows
    assert {r["device"] for r in rows} == {info["device"]}
    assert isinstance(table["never_called"], list)
    if SLOW:   # the whole kit reaches every method the backend provides
        assert table["never_called"] == [], table["never_called"]


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
                                       "sum_axis02_keep: broken declares float32, but "
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
    # a skip names what is left out and, after a colon, the backend's reason
    assert any(m.startswith("float16 not declared by array_api_strict: ") for m in skipped)
    assert "capability 'compile' not declared by array_api_strict" in skipped
    passed = {t["feature"].split(".")[0] for t in data["tests"] if t["outcome"] == "passed"}
    assert {"contract", "ops", "grad", "layers", "training", "checkpoint"} <= passed
    # A full run: every declaration is certified.
    assert data["profile"] == "full" and data["passed"] is True
    assert {row["status"] for row in info["coverage"]["dtypes"].values()} == {"tested"}
    assert info["coverage"]["capabilities"]["deterministic"]["status"] == "tested"


# -- backends that declare more than they honour --------------------------------------------------
@pytest.fixture(scope="module")
def liars_run(run_py, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("liars")
    return _run_kit(run_py, tmp, "liar_dtypes,liar_deterministic,liar_capabilities",
                    "--plugin", "mscore_lying_backends", "-k",
                    "test_capabilities or test_determinism or int8", paths=(LIARS_DIR,))


def _failures(report, backend):
    return {t["feature"]: t["message"] for t in report["tests"]
            if t["backend"] == backend and t["outcome"] == "failed"}


def test_a_declared_dtype_that_cannot_be_computed_fails(liars_run):
    proc, report = liars_run
    assert proc.returncode == 1 and report["passed"] is False
    failed = _failures(report, "liar_dtypes")
    assert {"ops.neg", "ops.abs", "ops.add", "ops.sum", "ops.matmul",
            "ops.int_overflow_wraps"} <= set(failed), failed
    assert failed["ops.neg"].endswith("neg_int: liar_dtypes declares int8, but the op raised "
                                      "TypeError: neg: int8 is not supported")
    # Transfer and casts of int8 work, and say so.
    passed = {t["feature"] for t in report["tests"]
              if t["backend"] == "liar_dtypes" and t["outcome"] == "passed"}
    assert {"contract.transfer_round_trip", "ops.cast"} <= passed
    (info,) = [b for b in report["backends"] if b["name"] == "liar_dtypes"]
    assert info["coverage"]["dtypes"]["int8"]["status"] == "failed"
    assert "FAILED liar_dtypes/CPU ops.neg [int8]: " in proc.stdout


def test_a_declared_determinism_with_noise_fails(liars_run):
    proc, report = liars_run
    failed = _failures(report, "liar_deterministic")
    assert set(failed) == {"capabilities.deterministic"}, failed
    assert re.search(r"liar_deterministic declares 'deterministic', but two runs of "
                     r"matmul_2d in float(32|64) gave different bits in \d+ of 15 elements",
                     failed["capabilities.deterministic"])


def test_declared_collectives_and_donation_with_nothing_behind_them_fail(liars_run):
    proc, report = liars_run
    failed = _failures(report, "liar_capabilities")
    assert set(failed) == {"capabilities.collectives",
                           "capabilities.donated_buffer_is_reused"}, failed
    assert "liar_capabilities declares 'collectives', but " in \
        failed["capabilities.collectives"]
    assert failed["capabilities.donated_buffer_is_reused"].endswith(
        "liar_capabilities declares 'donation', but compile(fn, donate_argnums=(0,)) left the "
        "donated argument intact and readable: its buffer was not reused")
    (info,) = [b for b in report["backends"] if b["name"] == "liar_capabilities"]
    caps = {c: row["status"] for c, row in info["coverage"]["capabilities"].items()}
    assert caps == {"collectives": "failed", "compile": "tested", "deterministic":
                    "not declared", "donation": "failed", "native_autodiff": "not declared"}
    # The honest numpy reference under the same selection: nothing declared fails.
    # (collectives once, donation in each of its two float dtypes)
    assert re.search(r"liar_capabilities on CPU: 3 of \d+ tests failed", proc.stdout)


NEW_LIARS = ("liar_ulp_noise", "liar_per_device", "liar_result_dtype", "liar_broadcast",
             "liar_aliasing")


@pytest.fixture(scope="module")
def more_liars_run(run_py, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("more_liars")
    return _run_kit(run_py, tmp, ",".join(NEW_LIARS), "--plugin", "mscore_lying_backends",
                    "-k", "test_determinism or int16 or softmax or gelu or outer or same_shape",
                    paths=(LIARS_DIR,))


def _one_line(proc, backend, feature, dtype):
    """The kit's one summary line for a failure of ``backend``'s ``feature`` in ``dtype``."""
    prefix = f"FAILED {backend}/CPU {feature} [{dtype}]: "
    lines = [line for line in proc.stdout.splitlines() if line.startswith(prefix)]
    assert lines, f"no line starting {prefix!r}"
    return lines[0][len(prefix):]


def test_one_ulp_of_noise_in_float32_matmul_breaks_declared_determinism(more_liars_run):
    proc, report = more_liars_run
    assert proc.returncode == 1 and report["passed"] is False
    failed = {(t["feature"], t["dtype"]) for t in report["tests"]
              if t["backend"] == "liar_ulp_noise" and t["outcome"] == "failed"}
    assert failed == {("capabilities.deterministic", "float32")}, failed
    line = _one_line(proc, "liar_ulp_noise", "capabilities.deterministic", "float32")
    assert re.search(r"liar_ulp_noise declares 'deterministic', but two runs of matmul_\w+ "
                     r"in float32 gave different bits in \d+ of \d+ elements \(max abs "
                     r"difference [0-9.e-]+\)$", line), line


def test_a_per_device_declaration_is_what_the_kit_certifies(more_liars_run):
    proc, report = more_liars_run
    line = _one_line(proc, "liar_per_device", "ops.neg", "int16")
    assert line.endswith("neg_int: liar_per_device on CPU declares int16, but the op raised "
                         "TypeError: neg: int16 is not supported"), line
    (info,) = [b for b in report["backends"] if b["name"] == "liar_per_device"]
    assert info["device_specific"] is True and "int16" in info["dtypes"]
    assert info["coverage"]["dtypes"]["int16"]["status"] == "failed"
    assert "declared for CPU (its own entry): dtypes float16, bfloat16, float32, float64, " \
           "int32, int64, bool, int16; capabilities -" in proc.stdout
    # The other lies' backends declare no int16: their int16 tests are skipped, with why.
    skipped = {t["message"] for t in report["tests"]
               if t["backend"] == "liar_broadcast" and t["dtype"] == "int16"}
    assert skipped == {"int16 not declared by liar_broadcast"}


def test_a_fused_op_returning_another_dtype_fails(more_liars_run):
    proc, report = more_liars_run
    for op, dtype in (("softmax", "float16"), ("gelu", "bfloat16")):
        line = _one_line(proc, "liar_result_dtype", f"ops.{op} (fused)", dtype)
        assert line.endswith(f"liar_result_dtype declares {dtype}, but {op} (fused) returned "
                             f"float32 for {dtype} inputs (result leaf 0); the op keeps its "
                             f"inputs' dtype"), line
    passed = {(t["feature"], t["dtype"]) for t in report["tests"]
              if t["backend"] == "liar_result_dtype" and t["outcome"] == "passed"}
    assert ("ops.softmax (fused)", "float32") in passed


def test_same_size_operands_paired_instead_of_broadcast_fail(more_liars_run):
    proc, report = more_liars_run
    for op in ("add", "sub", "mul", "div", "maximum", "minimum"):
        line = _one_line(proc, "liar_broadcast", f"ops.{op}", "float32")
        assert line.endswith(f"{op}_outer: liar_broadcast declares float32, but {op}(outer):"
                             f" shape (4, 1), expected (4, 4)"), line


def test_an_op_writing_into_its_argument_fails(more_liars_run):
    proc, report = more_liars_run
    line = _one_line(proc, "liar_aliasing", "ops.add", "float32")
    assert line.endswith("add_same_shape: liar_aliasing declares float32, but the op wrote "
                         "into its argument 0 (an in-place update visible through every "
                         "array that holds it); only the multi-tensor updates with "
                         "inplace=True may"), line
    passed = {t["feature"] for t in report["tests"]
              if t["backend"] == "liar_aliasing" and t["outcome"] == "passed"}
    assert {"ops.sub", "ops.mul"} <= passed


def test_every_lie_fails_with_one_line_each(more_liars_run):
    proc, report = more_liars_run
    for backend in NEW_LIARS:
        assert any(t["backend"] == backend and t["outcome"] == "failed"
                   for t in report["tests"]), f"{backend} was not caught"
    summary = [line for line in proc.stdout.splitlines() if line.startswith("FAILED liar_")]
    assert len(summary) == sum(1 for t in report["tests"] if t["outcome"] == "failed")


def test_a_run_in_which_everything_was_skipped_does_not_pass(run_py, tmp_path):
    proc, report = _run_kit(run_py, tmp_path, "liar_deterministic", "--plugin",
                            "mscore_lying_backends", "-k", "float16 and test_primitive",
                            paths=(LIARS_DIR,))
    assert proc.returncode == 2, proc.stdout[-3000:]
    assert report["passed"] is False
    (reason,) = report["verdict"]
    assert reason.startswith("liar_deterministic on CPU did not run: all ") and \
        "float16 not declared by liar_deterministic" in reason


def test_the_kit_without_pytest_names_the_extra(run_py, tmp_path):
    code = ("import sys; sys.modules['pytest'] = None\n"
            "from mscore.conformance.runner import main\n"
            "sys.exit(main(['numpy']))")
    proc = run_py(["-c", code], cwd=tmp_path)
    assert proc.returncode == runner.USAGE_ERROR
    assert proc.stderr.strip() == ('mscore conformance: error: the kit runs on pytest, which is '
                                   'not installed; install it with: pip install '
                                   '"mscore[conformance]"')


def _target(capabilities=(), dtypes=("float32",)):
    spec = BackendSpec("fake", "1", lambda: None, dtypes=dtypes, capabilities=capabilities)
    return Target("fake", "CPU", spec)


def _entry(outcome, dtype="float32", needs=()):
    return {"backend": "fake", "device": "CPU", "outcome": outcome, "dtype": dtype,
            "needs": list(needs), "message": "why"}


def test_verdict_fails_a_full_run_that_leaves_a_declaration_untested():
    target = _target(capabilities={"collectives"}, dtypes=("float32", "int8"))
    entries = [_entry("passed"), _entry("skipped", "int8")]
    table = coverage.target_coverage(target, entries, {"collectives", "compile"})
    assert table["dtypes"]["int8"]["status"] == "not tested"
    assert table["capabilities"] == {"collectives": {"status": "not tested"},
                                     "compile": {"status": "not declared"}}
    full = coverage.verdict([target], entries, {target.id: table}, True, 0)
    assert full.exit_status == 1 and full.untested == [
        "fake on CPU declares dtype 'int8', but no test of the kit exercised it",
        "fake on CPU declares capability 'collectives', but no test of the kit exercised it"]
    partial = coverage.verdict([target], entries, {target.id: table}, False, 0)
    assert partial.exit_status == 0 and partial.passed


def test_verdict_not_run_beats_failures():
    target = _target()
    entries = [_entry("failed")]
    v = coverage.verdict([target], entries, {}, False, 1)
    assert v.exit_status == 1 and v.failed == ["fake on CPU: 1 of 1 tests failed"]
    gone = Target("fake", "CPU", target.spec, "backend fake cannot run here: no device")
    v = coverage.verdict([gone], [_entry("skipped")], {}, False, 0)
    assert v.exit_status == 2 and not v.passed
    assert v.reasons == ["fake on CPU did not run: backend fake cannot run here: no device"]


# -- the pytest plugin -------------------------------------------------------------------------
def test_pytest_pyargs_and_device_gate(run_py, tmp_path):
    # A device the backend does not declare: each test is skipped with the reason, and the
    # run, which certified nothing, does not pass (exit status 2).
    proc = run_py(["-m", "pytest", "--pyargs", "mscore.conformance", "--mscore-backend=numpy",
                   "--mscore-device=GPU", "-k", "test_spec or test_primitive_set", "-p",
                   "no:cacheprovider", "-rs"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout[-3000:]
    assert "2 skipped" in proc.stdout and "GPU not declared by numpy" in proc.stdout
    assert "numpy on GPU did not run: GPU not declared by numpy" in proc.stdout
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


def test_an_unavailable_backend_fails_the_run_with_the_probe_reason(run_py, tmp_path):
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
    assert proc.returncode == 2, proc.stdout[-3000:]
    assert report["passed"] is False and report["exit_status"] == 2
    assert report["verdict"] == ["ghost on GPU did not run: backend ghost cannot run here: "
                                 "no CUDA device: none found"]
    assert report["tests"] and all(t["outcome"] == "skipped" for t in report["tests"])
    assert all("no CUDA device: none found" in t["message"] for t in report["tests"])
    assert report["backends"][0]["available"] is False
    assert not math.isnan(report["duration_s"])
    assert "mscore conformance: the run does not pass" in proc.stdout
