"""Mutation test of the conformance kit: copies of the numpy backend (and of the torch
backend) with one planted one-line bug each (``tests/plugins/mutants``) must each fail the
kit's generated cases (the multi-tensor updates' included) and half-precision gradient
cases, and their honest twins pass them.

One kit run over every mutant, narrowed with ``-k`` to the tests that meet each bug (a fixed
seed, so the run is the same every time), then the report says which backend failed what.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import mscore.conformance.tests

ROOT = Path(__file__).resolve().parent.parent
MUTANTS_DIR = ROOT / "tests" / "plugins" / "mutants"
SEED = "20261128"
KIT_TESTS = Path(mscore.conformance.tests.__file__).resolve().parent
MODULES = ("test_generated.py", "test_grad_dtypes.py", "test_generated_updates.py")

# backend -> the test (name prefix and parameters) that must fail; None: an honest twin
EXPECTED = {
    "honest_numpy": None,
    "mutant_sum_axis": "test_generated.py::test_reduction_every_axis_subset[sum-float64]",
    "mutant_bf16_ties": "test_generated.py::test_cast_rounding_ties_to_even[float32_to_bfloat16]",
    "mutant_uint64_pow": "test_generated.py::test_binary_broadcasting[pow-uint64]",
    "mutant_floor_pow2": "test_generated.py::test_floor_divide_power_of_two_divisors[int32]",
    "mutant_xent_fp16": "test_grad_dtypes.py::test_grad_half_precision"
                        "[float16-cross_entropy_ignore_index_fused_rules]",
    "mutant_adam_third": "test_generated_updates.py::test_adam_update_generated[float32]",
    "mutant_momentum_fp16": "test_generated_updates.py::test_momentum_update_generated"
                            "[float16]",
    "mutant_momentum_writes": "test_generated_updates.py::test_momentum_update_generated"
                              "[float64]",
}
TORCH_EXPECTED = {
    "honest_torch": None,
    "mutant_layer_norm_fp16": "test_grad_dtypes.py::test_grad_half_precision"
                              "[float16-layer_norm]",
}
SELECTION = ("(test_reduction_every_axis_subset and sum-float64) or "
             "(test_cast_rounding_ties_to_even and float32_to_bfloat16) or "
             "(test_binary_broadcasting and pow-uint64) or "
             "(test_floor_divide_power_of_two_divisors and CPU-int32) or "
             "(test_grad_half_precision and CPU-float16 and "
             "(cross_entropy_ignore_index or layer_norm)) or "
             "(test_adam_update_generated and CPU-float32) or "
             "(test_momentum_update_generated and (CPU-float16 or CPU-float64))")


def _torch_installed():
    try:
        import torch  # noqa: F401

        import mscore_torch  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def mutation_run(run_py, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mutants")
    expected = dict(EXPECTED, **(TORCH_EXPECTED if _torch_installed() else {}))
    report = tmp / "report.json"
    # The kit's pytest plugin on the two modules the selection draws from (collecting the
    # whole kit for eight backends would cost more than running these tests).
    proc = run_py(["-m", "pytest", *(str(KIT_TESTS / m) for m in MODULES),
                   "-p", "no:cacheprovider", "-o", "addopts=", "-q",
                   f"--mscore-backend={','.join(expected)}",
                   "--mscore-plugin=mscore_kit_mutants", f"--mscore-seed={SEED}",
                   "-k", SELECTION, "--mscore-no-matrix", f"--mscore-report={report}"],
                  MUTANTS_DIR, cwd=tmp, timeout=600)
    assert report.exists(), proc.stdout[-4000:] + proc.stderr[-2000:]
    return proc, json.loads(report.read_text()), expected


def _failed(report, backend):
    return {t["case"] for t in report["tests"]
            if t["backend"] == backend and t["outcome"] in ("failed", "error")}


def test_every_planted_bug_is_caught(mutation_run):
    proc, report, expected = mutation_run
    for backend, test in expected.items():
        if test is None:
            continue
        assert test in _failed(report, backend), (
            f"{backend}: the kit missed its planted bug ({test} passed); failed: "
            f"{sorted(_failed(report, backend))}\n{proc.stdout[-3000:]}")


def test_the_honest_twins_pass(mutation_run):
    proc, report, expected = mutation_run
    for backend, test in expected.items():
        if test is not None:
            continue
        ran = [t for t in report["tests"] if t["backend"] == backend and
               t["outcome"] == "passed"]
        assert ran and not _failed(report, backend), (
            f"{backend}: {sorted(_failed(report, backend))}\n{proc.stdout[-3000:]}")


def test_a_caught_bug_prints_its_shrunk_example_and_replay_command(mutation_run):
    proc, report, _ = mutation_run
    (entry,) = [t for t in report["tests"] if t["backend"] == "mutant_floor_pow2" and
                t["outcome"] == "failed"]
    assert report["seed"] == int(SEED)
    assert "shrunk failing example" in proc.stdout
    assert (f"replay: mscore conformance mutant_floor_pow2 --device CPU --seed {SEED} -k "
            f"'test_floor_divide_power_of_two_divisors[mutant_floor_pow2-CPU-int32]'"
            ) in proc.stdout, proc.stdout[-3000:]
    assert entry["worst_error"] is not None or entry["message"]
