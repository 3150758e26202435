"""``mscore compare`` and ``mscore.compare.compare_backends``.

The recorded numbers are checked against a hand-written numpy model (softmax cross entropy
and SGD of one Dense layer); the deliberately broken backends (tests/plugins/compare_broken)
and the example array-API backend are pip-installed into a temporary folder for
subprocesses, as any third-party plugin would be installed.
"""
import json
import math
import os
import sys
from pathlib import Path

import compare_factories as cf
import numpy as np
import pytest
from _helpers import available_backends

from mscore.compare import (
    CompareSetupError,
    _run,
    compare_backends,
    step_tolerance,
    trajectory_tolerance,
)
from mscore.compare import bisect as bisect_mod
from mscore.compare import report as report_mod
from mscore.compare._factory import load_factory
from mscore.compare.tolerance import local_tolerance

ROOT = Path(__file__).resolve().parent.parent
OTHERS = available_backends(exclude=("numpy", "cupy"))
BROKEN_DIR = ROOT / "tests" / "plugins" / "compare_broken"
EXAMPLE_DIR = ROOT / "examples" / "third_party_backend"
SLOW = os.environ.get("MSCORE_SLOW_TESTS", "") not in ("", "0")


def _need_other():
    if not OTHERS:
        pytest.skip("no backend besides numpy is installed to compare with")
    return ["numpy"] + OTHERS


def _initial_dense(factory):
    """The initial weight and bias a factory's Dense gets on numpy with seed 0."""
    import mscore as ms
    ms.set_context(backend="numpy")
    ms.set_seed(0)
    net = factory()[0]
    return net.weight.asnumpy().astype(np.float64), net.bias.asnumpy().astype(np.float64)


def _by_hand(w, b, steps):
    """Loss and global gradient norm of each SGD step of softmax cross entropy."""
    x, y = cf.data()
    out = []
    for s in range(steps):
        xb = x[s * cf.BATCH:(s + 1) * cf.BATCH].astype(np.float64)
        yb = y[s * cf.BATCH:(s + 1) * cf.BATCH]
        logits = xb @ w.T + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        loss = -np.mean(np.log(p[np.arange(len(yb)), yb]))
        d = p.copy()
        d[np.arange(len(yb)), yb] -= 1.0
        d /= len(yb)
        gw, gb = d.T @ xb, d.sum(0)
        out.append((loss, math.sqrt(np.sum(gw ** 2) + np.sum(gb ** 2))))
        w, b = w - cf.LR * gw, b - cf.LR * gb
    return out


# -- the CLI on the small model: numbers by hand, report, plot, exit status ---------------------
@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    backends = _need_other()
    folder = tmp_path_factory.mktemp("compare")
    from mscore.cli import main
    rc = main(["compare", "compare_factories:tiny", "--backends", ",".join(backends),
               "--steps", "3", "--report", str(folder / "r.json"), "--plot",
               str(folder / "r.png")])
    return rc, backends, folder


def test_cli_records_loss_and_gradient_norm_of_every_step(cli_run):
    rc, backends, folder = cli_run
    assert rc == 0
    data = json.loads((folder / "r.json").read_text())
    expected = _by_hand(*_initial_dense(cf.tiny), 3)
    for name in backends:
        steps = data["steps"][name]
        assert [s["step"] for s in steps] == [1, 2, 3]
        for rec, (loss, gnorm) in zip(steps, expected):
            assert rec["loss"] == pytest.approx(loss, rel=2e-6)
            assert rec["grad_norm"] == pytest.approx(gnorm, rel=2e-6)
            assert rec["overflow"] is False and rec["loss_scale"] == 1.0


def test_cli_report_compares_each_backend_with_the_first(cli_run):
    rc, backends, folder = cli_run
    data = json.loads((folder / "r.json").read_text())
    assert data["reference"] == "numpy" and data["backends"] == backends
    assert data["exit_code"] == 0 and data["compute_dtype"] == "float32"
    assert [v["backend"] for v in data["verdicts"]] == backends[1:]
    for v in data["verdicts"]:
        assert v["status"] == "ok" and v["first_drift_step"] is None
        assert v["initial_weights_max_rel_diff"] == 0.0
    rec = data["steps"][backends[1]][0]
    assert set(rec["step_grad_rel"]) == set(rec["update_rel"]) == {"weight", "bias"}
    limit = step_tolerance("grad", "float32")
    assert all(v <= limit for v in rec["step_grad_rel"].values())
    assert (folder / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_bad_arguments_exit_2_with_one_line(capsys):
    from mscore.cli import main
    assert main(["compare", "compare_factories:tiny", "--backends", "numpy"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "at least two backends" in err
    assert main(["compare", "no_such_module_xyz:f", "--backends", "numpy,torch"]) == 2
    assert "no_such_module_xyz" in capsys.readouterr().err
    assert main(["compare", "compare_factories:tiny", "--backends", "numpy,numpy"]) == 2
    assert "once" in capsys.readouterr().err


# -- the Python API -----------------------------------------------------------------------------
def test_initial_weights_come_from_the_reference_checkpoint():
    backends = _need_other()[:2]
    report = compare_backends(cf.tiny_random_init, backends, steps=2)
    assert report.exit_code == 0, report.table()
    assert report.verdicts[0].initial_max_rel == 0.0
    # Step 1 starts from the same state in the free run and in the shadow.
    rec = report.runs[1].records[0]
    assert rec.grad_rel == rec.step_grad_rel


def test_factory_returning_a_model_records_its_loss_scale():
    backends = _need_other()[:2]
    report = compare_backends(cf.tiny_model, backends, steps=2)
    assert report.exit_code == 0, report.table()
    ref = report.runs[0]
    assert ref.amp_level == "O2" and ref.compute_dtype == "float16"
    assert [(r.loss_scale, r.overflow) for r in ref.records] == [(128.0, False)] * 2
    with pytest.raises(CompareSetupError, match="amp_level"):
        compare_backends(cf.tiny_model, backends, steps=1, amp_level="O0")


def test_a_backend_that_cannot_run_gives_exit_2_with_the_reason():
    report = compare_backends(cf.tiny, ["numpy", "no_such_backend"], steps=1)
    assert report.exit_code == 2
    assert "not installed" in report.to_dict()["errors"]["no_such_backend"]
    assert "cannot run" in report.table()


@pytest.mark.parametrize("kwargs, message", [
    ({"steps": 0}, "steps"), ({"amp_level": "O5"}, "amp_level"),
    ({"mode": "eager"}, "mode"), ({"seed": -1}, "seed"),
    ({"device_target": "TPU"}, "device_target")])
def test_bad_options_are_setup_errors(kwargs, message):
    with pytest.raises(CompareSetupError, match=message):
        compare_backends(cf.tiny, ["numpy", "torch"], **kwargs)


def test_factory_specs(tmp_path):
    script = tmp_path / "my_train.py"
    script.write_text("from compare_factories import tiny as build\n"
                      "if __name__ == '__main__':\n    raise SystemExit('not as a script')\n")
    assert load_factory(f"{script}:build") is cf.tiny
    assert load_factory("compare_factories:tiny") is cf.tiny
    for spec, message in ((f"{tmp_path / 'missing.py'}:f", "does not exist"),
                          (f"{script}:nothing", "no attribute 'nothing'"),
                          ("compare_factories", "SCRIPT_OR_MODULE:FACTORY"),
                          ("compare_factories:BATCH", "not a function")):
        with pytest.raises(CompareSetupError, match=message):
            load_factory(spec)
    broken = tmp_path / "broken.py"
    broken.write_text("def build(:\n")
    with pytest.raises(CompareSetupError, match="SyntaxError"):
        load_factory(f"{broken}:build")
    with pytest.raises(CompareSetupError, match="returned|expected"):
        compare_backends(cf.not_a_tuple, ["numpy", "torch"], steps=1)


@pytest.mark.skipif("jax" not in OTHERS, reason="the jax backend is not installed")
def test_graph_mode_takes_gradients_out_of_the_compiled_step():
    report = compare_backends(cf.tiny, ["numpy", "jax"], steps=2, mode="graph")
    assert report.exit_code == 0, report.table()
    expected = _by_hand(*_initial_dense(cf.tiny), 2)
    for rec, (_loss, gnorm) in zip(report.runs[1].records, expected):
        assert rec.grad_norm == pytest.approx(gnorm, rel=2e-6)
        assert max(rec.step_grad_rel.values()) <= step_tolerance("grad", "float32")


# -- tolerances, differences, verdicts -----------------------------------------------------------
def test_tolerances_follow_the_documented_formula():
    assert step_tolerance("grad", "float32") == 128 * 2.0 ** -23
    assert step_tolerance("loss", "float16") == 32 * 2.0 ** -10
    assert trajectory_tolerance("weight", "bfloat16", 4) == 32 * 2.0 ** -7 * 2
    assert local_tolerance("float32") == 64 * 2.0 ** -23
    with pytest.raises(ValueError, match="quantity"):
        step_tolerance("weight", "float32")
    with pytest.raises(ValueError, match="dtype"):
        step_tolerance("loss", "int8")
    with pytest.raises(ValueError, match="step"):
        trajectory_tolerance("loss", "float32", 0)


def test_relative_differences():
    assert _run.rel_diff([3.0, 4.0], [3.0, 4.0]) == 0.0
    assert _run.rel_diff([0.0, 0.0], [0.0, 0.0]) == 0.0
    assert _run.rel_diff([3.0, 4.0], [0.0, 0.0]) == 1.0
    assert _run.rel_diff([1.0, 1.0], [1.0, 2.0]) == pytest.approx(1 / math.sqrt(5))
    assert _run.rel_diff([np.inf, 1.0], [np.inf, 1.0]) == 0.0
    assert _run.rel_diff([np.nan, 1.0], [np.nan, 1.0]) == 0.0
    assert _run.rel_diff([np.inf, 1.0], [1.0, 1.0]) == math.inf
    assert _run.rel_diff([1.0], [1.0, 1.0]) == math.inf
    # A change differs only beyond the parameter's own rounding allowance.
    assert _run.excess_rel([0.5, 0.0], [1.0, 0.0], [1.5, 0.0], 0.5) == 0.0
    assert _run.excess_rel([0.5, 0.0], [1.0, 0.0], [1.5, 0.0], 0.25) == pytest.approx(
        0.25 / 1.5)


def _synthetic(grad_rel_by_step, weight_rel_by_step, status="ok"):
    ref = _run.BackendRun(_run.Target("numpy", "numpy", "CPU"))
    other = _run.BackendRun(_run.Target("other", "other", "CPU"), status=status,
                            reason="" if status == "ok" else "it broke")
    for t, (g, w) in enumerate(zip(grad_rel_by_step, weight_rel_by_step), 1):
        ref.records.append(_run.StepRecord(t, 1.0, False, 1.0, 1.0))
        rec = _run.StepRecord(t, 1.0, False, 1.0, 1.0, loss_rel=0.0, grad_norm_rel=0.0,
                              grad_rel={"a": g / 2, "b": g}, weight_rel={"a": w, "b": w / 4},
                              step_loss_rel=0.0, step_grad_norm_rel=0.0,
                              step_grad_rel={"a": g / 2, "b": g}, update_rel={"a": 0.0},
                              total_update_rel={"a": 0.0})
        other.records.append(rec)
    return report_mod.CompareReport([ref, other], {"mode": "pynative", "seed": 0})


def test_verdict_names_first_step_worst_parameter_and_growth():
    limit = step_tolerance("grad", "float32")
    grads = [0.1 * limit, 0.5 * limit, 3.0 * limit, 0.2 * limit]
    weights = [1e-9 * 2 ** t for t in range(4)]
    report = _synthetic(grads, weights)
    v = report.verdicts[0]
    assert v.first_drift_step == 3 and v.status == "drift" and report.exit_code == 1
    assert v.step["grad"].first == 3
    assert v.step["grad"].worst == {"ratio": pytest.approx(3.0), "rel": grads[2], "step": 3,
                                    "tol": limit, "param": "b"}
    assert v.growth_per_step == pytest.approx(2.0)
    assert "DRIFT" in report.table() and "from step 3" in report.table()
    assert json.loads(json.dumps(report.to_dict()))["verdicts"][0]["first_drift_step"] == 3
    calm = _synthetic([0.5 * limit] * 4, [1e-9] * 4)
    assert calm.exit_code == 0 and calm.verdicts[0].growth_per_step == pytest.approx(1.0)
    assert _synthetic([0.0] * 2, [0.0] * 2, status="error").exit_code == 2


def test_bisect_blames_the_innermost_cell_first_in_backward_order():
    def call(index, started, name):
        return bisect_mod.CellCall(index, started, name, name, "Cell", (), None)
    # net(a(), b(c())): completion order a, c, b, net
    a, c, b, net = call(0, 1, "a"), call(1, 3, "c"), call(2, 2, "b"), call(3, 0, "net")
    calls = [a, c, b, net]

    def rows(failing, kind="gradient"):
        return [{"fails": x.name in failing, "kind": kind} for x in calls]
    assert bisect_mod._culprit(calls, rows({"c", "b", "net"}))[0] is c
    assert bisect_mod._culprit(calls, rows({"a", "c", "b", "net"}))[0] is c
    assert bisect_mod._culprit(calls, rows({"a", "net"}))[0] is a
    assert bisect_mod._culprit(calls, rows({"a", "c", "b", "net"}, "output"))[0] is a
    assert bisect_mod._culprit(calls, rows(set())) is None


# -- third-party backends, installed like any plugin ---------------------------------------------
def _compare_cli(run_py, site, *args):
    return run_py(["-W", "ignore", "-m", "mscore.compare.cli", *args], site)


@pytest.mark.skipif("torch" not in OTHERS, reason="the broken test backends build on torch")
def test_broken_backends_are_caught_and_bisected(pip_target, run_py, tmp_path):
    site = pip_target(BROKEN_DIR)
    out = tmp_path / "broken.json"
    proc = _compare_cli(run_py, site, "mscore.examples.compare_nets:conv_bn", "--backends",
                        "numpy,torch_convgrad,torch_softmax16", "--steps", "1", "--bisect",
                        "--report", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    verdicts = {v["backend"]: v for v in data["verdicts"]}
    assert {v["status"] for v in verdicts.values()} == {"drift"}
    assert all(v["first_drift_step"] == 1 for v in verdicts.values())
    found = {b["backend"]: b for b in data["bisect"]}
    conv = found["torch_convgrad"]
    assert (conv["cell_type"], conv["op"], conv["op_kind"], conv["op_dtype"]) == (
        "Conv2d", "conv", "input gradient", "float32")
    assert conv["op_rel"] == pytest.approx(0.01, rel=0.05)    # the 1 % of the bug
    soft = found["torch_softmax16"]
    assert (soft["cell_type"], soft["kind"], soft["op"], soft["op_dtype"]) == (
        "CrossEntropyLoss", "output", "log_softmax", "float32")
    assert "Conv2d" in proc.stdout and "log_softmax" in proc.stdout


def test_example_array_api_backend_runs_unchanged(pip_target, run_py):
    pytest.importorskip("array_api_strict")
    site = pip_target(EXAMPLE_DIR)
    script = ("import json, compare_factories as cf\n"
              "from mscore.compare import compare_backends\n"
              "out = {}\n"
              "for amp in ('O0', 'O2'):\n"
              "    r = compare_backends(cf.tiny, ['numpy', 'array_api_strict'], steps=3,\n"
              "                         amp_level=amp)\n"
              "    out[amp] = [r.exit_code, r.to_dict()['errors']]\n"
              "print(json.dumps(out))\n")
    proc = run_py(["-W", "ignore", "-c", script], site, str(ROOT / "tests"))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["O0"] == [0, {}]
    assert out["O2"][0] == 2 and "float16" in out["O2"][1]["array_api_strict"]


# -- the measurement the README reports (MSCORE_SLOW_TESTS=1) ------------------------------------
@pytest.mark.skipif(not SLOW, reason="50-step comparisons: set MSCORE_SLOW_TESTS=1")
@pytest.mark.parametrize("factory", ["amp_tutorial_mlp", "conv_bn"])
@pytest.mark.parametrize("amp", ["O0", "O2"])
def test_project_backends_agree_for_50_steps(factory, amp):
    backends = _need_other()
    report = compare_backends(f"mscore.examples.compare_nets:{factory}", backends, steps=50,
                              amp_level=amp)
    print(report.table(), file=sys.stderr)
    assert report.exit_code == 0, report.table()
