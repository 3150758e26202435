"""The kit's bookkeeping without running it: declarations per device, the record of which
backend methods the tests called, the share of its tolerance each check used, and the
Markdown rendering of a report."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mscore.conformance import calls, coverage, harness, report
from mscore.conformance.kit import Target
from mscore.plugin.backend import Backend, BackendSpec, device_target

BASE = ("float32", "float64", "int8", "int32", "bool")


def _spec(**kwargs):
    return BackendSpec("dev", "1", lambda: None, devices=("CPU", "GPU"), dtypes=BASE,
                       capabilities={"compile"}, **kwargs)


# -- declarations per device -----------------------------------------------------------------
def test_device_entries_replace_the_defaults_on_their_device_only():
    spec = _spec(device_dtypes={"GPU": ("float16", "float32")},
                 device_capabilities={"cuda": {"compile", "deterministic"}})
    assert spec.dtypes_on("CPU") == BASE
    assert spec.dtypes_on("GPU:1") == ("float16", "float32")
    assert spec.capabilities_on("GPU") == frozenset({"compile", "deterministic"})
    assert spec.capabilities_on("cpu") == frozenset({"compile"})
    assert spec.varies_by_device("GPU:0") and not spec.varies_by_device("CPU")
    gpu, cpu = Target("dev", "GPU:1", spec), Target("dev", "CPU", spec)
    assert gpu.dtypes == ("float16", "float32") and gpu.declarer == "dev on GPU"
    assert cpu.dtypes == BASE and cpu.declarer == "dev"
    assert [device_target(d) for d in ("cuda:2", "gpu", "cpu", "ascend")] == \
        ["GPU", "GPU", "CPU", "Ascend"]


def test_device_entries_are_validated():
    with pytest.raises(ValueError, match=r"device_dtypes of 'dev': 'Ascend' is not one of "
                                         r"its devices \['CPU', 'GPU'\]"):
        _spec(device_dtypes={"Ascend": BASE})
    with pytest.raises(TypeError, match=r"device_capabilities\['GPU'\] of 'dev': expected a "
                                        r"collection of names, got 'compile'"):
        _spec(device_capabilities={"GPU": "compile"})
    with pytest.raises(TypeError, match="device_dtypes of 'dev': expected a dict"):
        _spec(device_dtypes=[("GPU", BASE)])


def test_a_skip_of_an_undeclared_dtype_gives_the_specs_reason():
    spec = _spec(undeclared_dtypes={"uint32": "no add kernel for it"},
                 device_dtypes={"GPU": ("float32",)})
    cpu, gpu = Target("dev", "CPU", spec), Target("dev", "GPU", spec)
    assert cpu.undeclared_dtype("uint32") == "uint32 not declared by dev: no add kernel for it"
    assert gpu.undeclared_dtype("uint32") == \
        "uint32 not declared by dev on GPU: no add kernel for it"
    assert cpu.undeclared_dtype("float16") == "float16 not declared by dev"
    assert Target("ghost", "CPU").undeclared_dtype("int8") == "int8 not declared by ghost"
    with pytest.raises(TypeError, match=r"undeclared_dtypes of 'dev': expected a dict of "
                                        r"dtype name -> reason"):
        _spec(undeclared_dtypes={"uint32": ""})
    with pytest.raises(TypeError, match="undeclared_dtypes of 'dev'"):
        _spec(undeclared_dtypes=["uint32"])


def test_the_project_backends_declare_the_uint_dtypes_or_say_why_not():
    """numpy, jax and CuPy (and its stand-in) declare uint16/32/64; torch leaves them out and
    its spec says why (the kit's skips and the backend's TypeError give that reason)."""
    from mscore.backends.numpy import plugin as numpy_plugin
    from mscore_cupy import plugin as cupy_plugin
    from mscore_cupy import standin
    from mscore_jax import plugin as jax_plugin
    from mscore_torch import plugin as torch_plugin

    uints = {"uint16", "uint32", "uint64"}
    for module in (numpy_plugin, jax_plugin, standin):
        (spec,) = module.mscore_register_backends()
        assert uints <= set(spec.dtypes) and not spec.undeclared_dtypes, spec.name
    assert uints <= set(cupy_plugin.make_spec().dtypes)
    (torch_spec,) = torch_plugin.mscore_register_backends()
    assert not uints & set(torch_spec.dtypes)
    assert {u: torch_spec.undeclared_reason(u) for u in uints} == {
        u: "torch has no arithmetic kernels for it (add, max, bitwise_not, ...)" for u in uints}


def test_coverage_certifies_each_device_against_its_own_entry():
    spec = _spec(device_dtypes={"GPU": ("float32",)})
    gpu = Target("dev", "GPU", spec)
    entries = [{"backend": "dev", "device": "GPU", "outcome": "passed", "dtype": "float32",
                "needs": ["compile"], "message": ""}]
    table = coverage.target_coverage(gpu, entries, {"compile", "collectives"})
    assert table["dtypes"] == {"float32": {"status": "tested", "passed": 1}}
    cpu = Target("dev", "CPU", spec)
    table = coverage.target_coverage(cpu, [], {"compile"})
    assert set(table["dtypes"]) == set(BASE)


# -- which backend methods the tests called --------------------------------------------------
class _Tiny(Backend):
    name = "tiny"

    def add(self, a, b):
        return a + b

    def relu(self, x):
        return max(x, 0)


class _Compiling(_Tiny):
    @staticmethod
    def compile(fn, donate_argnums=()):
        return fn


def test_call_log_counts_provided_methods_and_pauses_for_the_reference():
    b = _Tiny()
    log = calls.instrument(b)
    assert calls.instrument(b) is log and calls.log_of(b) is log
    assert {"add", "relu", "synchronize"} <= set(log.provided)
    assert "softmax" not in log.provided          # a fused op left None is not provided
    with log.recording() as block:
        assert b.add(2, 3) == 5
    with log.paused():
        b.relu(-1)
    assert block == {"add"} and log.called == {"add"}
    assert "relu" in log.never_called() and "add" not in log.never_called()
    # A capability whose method no test called is not certified by passing tests.
    spec = BackendSpec("tiny", "1", lambda: None, dtypes=("float32",),
                       capabilities={"compile"})
    log = calls.instrument(_Compiling())
    assert "compile" in log.provided
    entries = [{"backend": "tiny", "device": "CPU", "outcome": "passed", "dtype": "float32",
                "needs": ["compile"], "message": ""}]
    table = coverage.target_coverage(Target("tiny", "CPU", spec), entries, {"compile"}, log)
    assert table["capabilities"]["compile"] == {"status": "not tested", "passed": 1,
                                                "why": "no test called Backend.compile"}
    log.note("compile")
    table = coverage.target_coverage(Target("tiny", "CPU", spec), entries, {"compile"}, log)
    assert table["capabilities"]["compile"]["status"] == "tested"


# -- tolerance honesty -------------------------------------------------------------------------
def test_each_comparison_reports_the_share_of_its_tolerance_it_used():
    e = np.linspace(-3, 3, 24)
    rounded = harness.compare(e.astype(np.float16), e, "float16")
    assert rounded.ok and 0 < rounded.ratio <= 1
    # Half the allowed error at the largest element uses half the tolerance.
    tol = harness.tolerance("float32")
    bumped = e.copy()
    bumped[-1] += 0.5 * (tol.atol * 3 + tol.rtol * 3)
    c = harness.compare(bumped, e, "float32")
    assert c.ok and c.ratio == pytest.approx(0.5, rel=1e-6)
    bumped[-1] = 3.1
    assert harness.compare(bumped, e, "float32").ratio > 1
    assert harness.compare(np.array([1, 2]), np.array([1, 3]), "int32").ratio == math.inf
    assert harness.compare(e, e, "float64").ratio == 0.0


def _entry(feature, dtype, ratio, outcome="passed", device="CPU", check="x"):
    return {"backend": "fake", "device": device, "feature": feature, "dtype": dtype,
            "outcome": outcome, "tolerance_ratio": ratio, "closest_check": check}


def test_tolerance_use_keeps_the_largest_ratio_per_feature_dtype_and_device():
    entries = [_entry("ops.exp", "float16", 0.2, check="exp"),
               _entry("ops.exp", "float16", 0.7, check="exp(big)"),
               _entry("ops.exp", "float16", 0.9, outcome="skipped"),
               _entry("ops.exp", "float16", 0.4, device="GPU"),
               _entry("ops.add", "float32", None)]
    rows = report.tolerance_use(entries)
    none = {"worst_error": None, "allowed_error": None}
    assert rows == [{"backend": "fake", "device": "CPU", "feature": "ops.exp",
                     "dtype": "float16", "max_ratio": 0.7, "check": "exp(big)", "tests": 2,
                     **none},
                    {"backend": "fake", "device": "GPU", "feature": "ops.exp",
                     "dtype": "float16", "max_ratio": 0.4, "check": "x", "tests": 1, **none}]


def test_markdown_table_of_a_report(tmp_path, capsys):
    data = {"format": report.REPORT_FORMAT, "suite_version": "1", "mscore_version": "0.1",
            "profile": "full", "started": "then", "passed": False,
            "verdict": ["fake on CPU: 1 of 3 tests failed"],
            "backends": [{"name": "fake", "device": "CPU", "version": "2.0"}],
            "tests": [_entry("ops.exp", "float16", 0.25), _entry("grad.exp", "float32", 0.0),
                      _entry("ops.exp", "float32", "inf", outcome="failed")]}
    text = report.markdown(data)
    lines = text.splitlines()
    assert "## fake 2.0 on CPU" in lines and "- fake on CPU: 1 of 3 tests failed" in lines
    header = lines.index("| feature | float16 | float32 |")
    assert lines[header + 1] == "|---|---:|---:|"
    assert lines[header + 2:header + 4] == ["| ops.exp | 0.25 | FAIL |", "| grad.exp |  | 0 |"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    assert report.main([str(path)]) == 0
    assert capsys.readouterr().out.strip() == text.strip()
    out = tmp_path / "sub" / "r.md"
    assert report.main([str(path), "--output", str(out)]) == 0
    assert out.read_text().strip() == text.strip()
    path.write_text("{}")
    assert report.main([str(path)]) == 2
    assert "is not an mscore conformance report" in capsys.readouterr().err


def test_mscore_backends_shows_each_device_entry(monkeypatch, capsys):
    from mscore.commands import backends as command
    from mscore.plugin.registry import spec_row

    spec = _spec(device_dtypes={"GPU": ("float32", "bool")}, device_capabilities={"GPU": ()})
    row = spec_row(spec, probe=False)
    assert row["per_device"] == {"GPU": {"dtypes": ["float32", "bool"], "capabilities": []}}
    assert spec_row(_spec(), probe=False)["per_device"] == {}
    monkeypatch.setattr(command, "list_backends", lambda probe, timeout: ([row], []))
    assert command.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("dev "))
    assert "f32,f64,i8,i32,bool" in lines[at] and "compile" in lines[at]
    assert lines[at + 1].startswith("  leaves out float16,")
    assert lines[at + 2] == "  on GPU: dtypes f32,bool; capabilities -"


def test_mscore_backends_shows_the_dtypes_a_backend_leaves_out_and_why(monkeypatch, capsys):
    from mscore.commands import backends as command
    from mscore.plugin.registry import spec_row

    all_but_bf16_and_uints = ("float16", "float32", "float64", "int8", "int16", "int32",
                              "int64", "uint8", "bool")
    reason = "no add kernel for it"
    spec = BackendSpec("dev", "1", lambda: None, dtypes=all_but_bf16_and_uints,
                       undeclared_dtypes={u: reason for u in ("uint16", "uint32", "uint64")})
    row = spec_row(spec, probe=False)
    assert row["undeclared_dtypes"] == {"uint16": reason, "uint32": reason, "uint64": reason}
    monkeypatch.setattr(command, "list_backends",
                        lambda probe, timeout: ([dict(row)], []))
    assert command.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("dev "))
    assert lines[at].split()[3:7] == ["no", "bf16,u16,u32,u64", "-", "available"]
    assert lines[at + 1:] == ["  leaves out bfloat16 (no reason given)",
                              "  leaves out uint16,uint32,uint64: no add kernel for it"]
    assert command.main(["--json"]) == 0
    (got,) = json.loads(capsys.readouterr().out)["backends"]
    assert got["dtypes"] == list(all_but_bf16_and_uints)
    assert got["dtypes_left_out"] == {"bfloat16": "", "uint16": reason, "uint32": reason,
                                      "uint64": reason}
