"""The generated cases' helpers (mscore.conformance.strategies) and the derived-tolerance
comparison: rounding ties stated from the bit patterns, every axis subset, a comparison
against a per-element bound, the worst/allowed error in the reports, and the seed options."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from mscore.conformance import harness, report, runner
from mscore.conformance import strategies as gen


@pytest.mark.parametrize("dst", ["float16", "bfloat16"])
def test_rounding_ties_sit_halfway_and_want_the_even_neighbour(dst):
    np_dst = np.float16 if dst == "float16" else ml_dtypes.bfloat16
    bits = np.uint16
    inf = int(np.array(np.inf, dtype=np_dst).view(bits))
    patterns = [0, 1, 2, 0x3C00 if dst == "float16" else 0x3F80, inf - 1]
    ties, want = gen.rounding_ties(dst, patterns)
    assert ties.dtype == np.float64 and len(ties) == len(patterns)
    assert np.array_equal(ties.astype(np.float32).astype(np.float64), ties)   # exact in f32
    for tie, w, p in zip(ties, want, patterns):
        low = float(np.array(p, bits).view(np_dst))
        high = float(np.array(p + 1, bits).view(np_dst)) if p + 1 < inf else math.inf
        step = high - low if p + 1 < inf else low - float(np.array(p - 1, bits).view(np_dst))
        assert abs(tie) == pytest.approx(low + step / 2, rel=0, abs=0)
        magnitude = int(w) & 0x7FFF
        assert magnitude % 2 == 0 and magnitude in (p, p + 1)
        assert (int(w) >> 15) == (tie < 0)
    # numpy's own float32 -> float16 cast rounds ties to even: the stated answers agree
    if dst == "float16":
        with np.errstate(over="ignore"):   # the tie above the largest value rounds to inf
            cast = ties.astype(np.float32).astype(np.float16)
        assert np.array_equal(cast.view(bits), want)


def test_axis_subsets_are_every_subset_then_all():
    subsets = gen.axis_subsets(3)
    assert subsets[-1] is None and len(subsets) == 9 and len(set(subsets)) == 9
    assert () in subsets and (0, 1, 2) in subsets and (0, 2) in subsets
    assert gen.axis_subsets(0) == [(), None]


def test_power_of_two_divisors_cover_both_signs_and_min():
    d = gen.power_of_two_divisors("int8")
    assert 0 in d and -128 in d and 64 in d and -64 in d and -1 in d and 1 in d
    assert all(v >= 0 for v in gen.power_of_two_divisors("uint8"))
    assert 128 in gen.power_of_two_divisors("uint8")


def test_compare_within_a_per_element_bound():
    e = np.array([1.0, 100.0, np.nan, np.inf])
    a = np.array([1.5, 100.2, np.nan, np.inf])
    c = harness.compare_within(a, e, np.array([1.0, 0.1, 0.0, 0.0]))
    assert not c.ok and c.ratio == pytest.approx(2.0)
    assert c.worst_err == pytest.approx(0.2) and c.worst_allowed == pytest.approx(0.1)
    assert "error 0.2, allowed 0.1" in c.message
    assert harness.compare_within(a, e, 1.0).ok
    assert not harness.compare_within(np.array([1.0, np.inf]), np.array([1.0, 2.0]), 9).ok


def test_compare_records_the_worst_element_and_its_allowance():
    e = np.array([1.0, 2.0, 3.0])
    tol = harness.tolerance("float32")
    a = e + np.array([0.0, 0.0, 0.5]) * (tol.atol * 3 + tol.rtol * 3)
    c = harness.compare(a, e, "float32")
    assert c.ok and c.worst_allowed == pytest.approx(tol.atol * 3 + tol.rtol * 3)
    assert c.worst_err == pytest.approx(c.ratio * c.worst_allowed)


def test_markdown_cells_show_worst_and_allowed_error():
    data = {"format": report.REPORT_FORMAT, "suite_version": "1", "profile": "full",
            "seed": 7, "passed": True, "backends": [],
            "tests": [{"backend": "fake", "device": "CPU", "feature": "grad.exp",
                       "dtype": "float16", "outcome": "passed", "tolerance_ratio": 0.25,
                       "closest_check": "x", "worst_error": 0.001, "allowed_error": 0.004}]}
    text = report.markdown(data)
    assert "| grad.exp | 0.25 (0.001 / 0.004) |" in text and "seed 7" in text


def test_runner_passes_seed_and_thorough_to_the_kit():
    args = runner.pytest_args(runner.build_parser().parse_args(
        ["numpy", "--seed", "42", "--thorough"]))
    assert "--mscore-seed=42" in args and "--mscore-thorough" in args
    args = runner.pytest_args(runner.build_parser().parse_args(["numpy"]))
    assert not any(a.startswith("--mscore-seed") or a == "--mscore-thorough" for a in args)
    assert gen.example_budget(False) == gen.DEFAULT_EXAMPLES
    assert gen.example_budget(True) == gen.THOROUGH_EXAMPLES
