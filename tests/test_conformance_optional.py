"""The kit proves every optional method where a backend provides it: backends with one narrow
lie in an optional method (or a capability that changes nothing) fail it, each beside its
honest twin, which passes the same selection; and a provided method no test reaches fails a
full run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mscore.conformance import calls, coverage
from mscore.conformance.kit import Target
from mscore.plugin.backend import BackendSpec

ROOT = Path(__file__).resolve().parent.parent
LIARS_DIR = ROOT / "tests" / "plugins" / "lying_backends"
NUMPY_PAIRS = ("bn_inplace", "host_callback", "fp16_sum", "compile")
SELECTION = ("batch_norm_inplace or test_host_callback or (test_deterministic and float16) "
             "or test_compile_compiles")


def _kit(run_py, tmp_path, modules, *args, **env):
    """The kit's pytest run over only ``modules`` of it (collecting the whole kit would take
    most of the time), as ``mscore conformance`` runs it."""
    return run_py(["-m", "pytest", "--pyargs", *[f"mscore.conformance.tests.{m}"
                                                  for m in modules],
                   "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=",
                   "-o", "filterwarnings=", "--tb=short", "-q", *args],
                  LIARS_DIR, cwd=tmp_path, OMP_NUM_THREADS="1", **env)


def _run_kit(run_py, tmp_path, backends, keyword, modules):
    report = tmp_path / "report.json"
    proc = _kit(run_py, tmp_path, modules, f"--mscore-backend={backends}",
                "--mscore-plugin=mscore_optional_liars", "-k", keyword,
                f"--mscore-report={report}")
    data = json.loads(report.read_text()) if report.exists() else None
    assert data is not None, proc.stdout[-4000:] + proc.stderr[-2000:]
    return proc, data


@pytest.fixture(scope="module")
def numpy_liars(run_py, tmp_path_factory):
    names = ",".join(f"{kind}_{pair}" for pair in NUMPY_PAIRS for kind in ("liar", "honest"))
    return _run_kit(run_py, tmp_path_factory.mktemp("optional_liars"), names, SELECTION,
                    ("test_fused", "test_optional", "test_determinism"))


def _outcomes(report, backend, outcome):
    return {(t["feature"], t["dtype"]): t["message"] for t in report["tests"]
            if t["backend"] == backend and t["outcome"] == outcome}


def _line(proc, backend, feature, dtype):
    prefix = f"FAILED {backend}/CPU {feature} [{dtype}]: "
    lines = [x for x in proc.stdout.splitlines() if x.startswith(prefix)]
    assert lines, f"no line starting {prefix!r} in\n{proc.stdout[-3000:]}"
    return lines[0][len(prefix):]


def test_every_honest_twin_passes_what_its_liar_fails(numpy_liars):
    proc, report = numpy_liars
    assert proc.returncode == 1 and report["passed"] is False
    for pair in NUMPY_PAIRS:
        assert _outcomes(report, f"liar_{pair}", "failed"), f"liar_{pair} was not caught"
        assert not _outcomes(report, f"honest_{pair}", "failed"), \
            _outcomes(report, f"honest_{pair}", "failed")
        assert _outcomes(report, f"honest_{pair}", "passed") or pair == "compile"


def test_batch_norm_inplace_skipping_two_d_statistics_fails(numpy_liars):
    proc, report = numpy_liars
    failed = _outcomes(report, "liar_bn_inplace", "failed")
    # Only the 2-d inputs, through the in-place method, in every declared float dtype.
    assert set(failed) == {("ops.batch_norm_inplace (fused)", d) for d in
                           ("float16", "bfloat16", "float32", "float64")}, failed
    line = _line(proc, "liar_bn_inplace", "ops.batch_norm_inplace (fused)", "float32")
    assert line.startswith("mscore.conformance.harness.ConformanceFailure: "
                           "batch_norm_inplace_train_2d (fused): liar_bn_inplace declares "
                           "float32, but batch_norm_inplace (fused)[running_mean]: "), line
    passed = _outcomes(report, "liar_bn_inplace", "passed")
    assert ("ops.batch_norm_inplace (composite)", "float32") in passed


def test_host_callback_dropping_repeated_calls_fails(numpy_liars):
    proc, report = numpy_liars
    failed = _outcomes(report, "liar_host_callback", "failed")
    assert {d for _, d in failed} == {"float16", "bfloat16", "float32", "float64", "int32",
                                      "int64", "bool"}, failed
    line = _line(proc, "liar_host_callback", "optional.host_callback", "int32")
    assert line == ("mscore.conformance.harness.ConformanceFailure: liar_host_callback "
                    "provides host_callback, but outside compiled programs it called its "
                    "function 1 times, expected 3 (one per call, identical values included)")


def test_half_precision_sums_nondeterministic_above_4096_elements_fail(numpy_liars):
    proc, report = numpy_liars
    failed = _outcomes(report, "liar_fp16_sum", "failed")
    assert set(failed) == {("capabilities.deterministic", "float16")}, failed
    line = _line(proc, "liar_fp16_sum", "capabilities.deterministic", "float16")
    assert "liar_fp16_sum declares 'deterministic', but two runs of sum of 131072 elements " \
           "over all axes in float16 gave different bits in 1 of 1 elements" in line, line


def test_a_compile_that_compiles_nothing_fails(numpy_liars):
    proc, report = numpy_liars
    failed = _outcomes(report, "liar_compile", "failed")
    assert set(failed) == {("optional.compile_compiles", d) for d in
                           ("float16", "bfloat16", "float32", "float64")}, failed
    line = _line(proc, "liar_compile", "optional.compile_compiles", "float32")
    assert line.endswith("liar_compile declares 'compile', but compile declared, nothing "
                         "compiled: the Python body ran 5 times for 5 calls with 2 input "
                         "signatures (a compiled function runs it once per signature)"), line
    skipped = _outcomes(report, "honest_compile", "skipped")
    assert set(skipped.values()) >= {"capability 'compile' not declared by honest_compile"}


def test_backward_hooks_without_grad_boundary_are_listed_as_unsupported(run_py, tmp_path):
    pytest.importorskip("torch")
    proc, report = _run_kit(run_py, tmp_path, "liar_no_grad_boundary,honest_grad_boundary",
                            "test_backward_hooks and float32", ("test_optional",))
    assert _outcomes(report, "honest_grad_boundary", "passed") == {
        ("optional.backward_hooks", "float32"): ""}
    skipped = _outcomes(report, "liar_no_grad_boundary", "skipped")
    assert skipped == {("optional.backward_hooks", "float32"): (
        "backward hooks unsupported on liar_no_grad_boundary: it differentiates natively "
        "(value_and_grad) and provides no grad_boundary, so Cell.register_backward_hook and "
        "Tensor.register_hook raise NotImplementedError there")}, skipped
    # All it was asked to run was skipped: not a green run.
    assert proc.returncode == 2 and report["passed"] is False


def test_a_provided_method_no_test_reached_fails_a_full_run():
    class Backend:
        def add(self, a, b):
            return a + b

        def host_callback(self, fn, arrays):
            fn(*arrays)

        def softmax(self, x, axis):
            return x

    backend = Backend()
    log = calls.instrument(backend)
    assert log.optional_provided() == ["softmax", "host_callback"]
    backend.add(1, 2)
    backend.softmax(0, 1)
    spec = BackendSpec("fake", "1", lambda: None, dtypes=("float32",))
    target = Target("fake", "CPU", spec)
    entries = [{"backend": "fake", "device": "CPU", "dtype": "float32", "needs": [],
                "outcome": "passed", "message": ""}]
    table = coverage.target_coverage(target, entries, set(), log)
    assert table["optional"] == {
        "softmax": {"status": "tested"},
        "host_callback": {"status": "not tested",
                          "why": "no test called Backend.host_callback"}}
    full = coverage.verdict([target], entries, {target.id: table}, True, 0)
    assert full.exit_status == 1
    assert ("fake on CPU provides optional method 'host_callback', but no test of the kit "
            "called it: the kit cannot vouch for it (a failure of the kit, not a pass)"
            ) in full.untested
    assert coverage.verdict([target], entries, {target.id: table}, False, 0).exit_status == 0


def test_one_module_of_the_kit_is_a_selection_not_a_full_run(run_py, tmp_path):
    # Run as one module, the kit cannot say which provided methods no test reaches.
    report = tmp_path / "r.json"
    proc = run_py(["-m", "pytest", "--pyargs", "mscore.conformance.tests.test_contract",
                   "-p", "no:cacheprovider", "-o", "addopts=", "-q", "--mscore-backend=numpy",
                   "--mscore-no-matrix", f"--mscore-report={report}"], cwd=tmp_path)
    assert report.exists(), proc.stdout[-4000:] + proc.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["profile"] == "selection" and data["verdict"] == [], data["verdict"]
    assert {t["outcome"] for t in data["tests"]} <= {"passed", "skipped"}


def test_coverage_counts_are_listed_in_one_order_whatever_order_the_tests_ran_in():
    spec = BackendSpec("fake", "1", lambda: None, dtypes=("float32",))
    target = Target("fake", "CPU", spec)
    outcomes = ["skipped", "passed", "xfailed", "passed"]
    rows = []
    for order in (outcomes, outcomes[::-1]):
        entries = [{"dtype": "float32", "needs": [], "outcome": o} for o in order]
        rows.append(list(coverage.target_coverage(target, entries, set())["dtypes"]
                         ["float32"]))
    assert rows[0] == rows[1] == ["status", "passed", "xfailed", "skipped"]


def test_the_kit_leaves_no_collectives_folder_behind(run_py, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _kit(run_py, tmp_path, ("test_collectives",), "--mscore-backend=numpy", "-k",
                "test_all_reduce and sum and float32", TMPDIR=str(tmp))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "passed" in proc.stdout
    assert [p.name for p in tmp.iterdir() if p.name.startswith("mscore-kit-")] == []


def test_every_optional_method_has_its_row_in_the_guide():
    doc = (ROOT / "docs" / "backend-authors.md").read_text()
    start = doc.index("### Every optional method, in one place")
    table = doc[start:doc.index("\n\n", doc.index("| method | contract", start))]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    for name in calls.OPTIONAL:
        assert any(f"`{name}(" in row.split(" | ")[0] or f"`{name}`" in row.split(" | ")[0]
                   for row in rows), f"optional method {name} has no row"
    assert "parameter names are part of the contract" in doc
    assert "compute in\nfloat32 and round its result once" in doc


def test_failure_messages_name_a_device_other_than_the_cpu():
    from types import SimpleNamespace

    from mscore.conformance.kit import Kit
    spec = BackendSpec("dev", "1", lambda: None, devices=("CPU", "GPU"),
                       device_dtypes={"GPU": ("float32",)})
    plain = BackendSpec("dev", "1", lambda: None, devices=("CPU", "GPU"))

    def declarer(s, device):
        return Kit.declarer.fget(SimpleNamespace(target=Target("dev", device, s), name="dev",
                                                 device=device))
    assert declarer(plain, "CPU") == "dev"
    assert declarer(plain, "GPU:1") == "dev on GPU:1"
    assert declarer(spec, "GPU:0") == "dev on GPU"     # its own entry: declared for GPU


def test_a_bare_assertion_is_summarised_by_its_source_line(tmp_path):
    from types import SimpleNamespace

    from mscore.conformance.pytest_plugin import _failure_message
    source = tmp_path / "test_x.py"
    source.write_text("def test():\n    assert 1 == 2\n")
    crash = SimpleNamespace(path=str(source), lineno=2, message="AssertionError")
    report = SimpleNamespace(longrepr=SimpleNamespace(reprcrash=crash))
    assert _failure_message(report) == "AssertionError: assert 1 == 2 (test_x.py:2)"
    crash.message = "AssertionError: shapes differ"
    assert _failure_message(report) == "AssertionError: shapes differ"
