"""What a new user meets first: one-line command errors that name where a bad value came from,
install hints that exist, one curve per summary run, the default progress bar, the demo's
thread limit, and the numpy backend's determinism claim."""
import os
import subprocess
import sys

import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import nn
from mscore.commands import ArgumentParser, CommandError, command
from mscore.plugin.hints import PROJECT_PLUGINS, closest_name, unknown_backend_detail
from mscore.plugin.registry import UnknownBackendError, get_registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_numpy_context = numpy_context_each_test()


# -- one error convention for every command --------------------------------------------------
def test_a_command_error_is_one_line_and_status_2(capsys):
    @command("mscore thing")
    def main(argv):
        parser = ArgumentParser(prog="mscore thing")
        parser.add_argument("--count", type=int, required=True)
        args = parser.parse_args(argv)
        if args.count < 0:
            raise CommandError(f"--count: expected 0 or more, got {args.count}")
        return 0

    assert main(["--count", "3"]) == 0
    for argv, needle in ((["--count", "-1"], "--count: expected 0 or more, got -1"),
                         (["--count", "x"], "argument --count: invalid int value: 'x'"),
                         ([], "the following arguments are required: --count")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == f"mscore thing: error: {err.split('error: ', 1)[1]}"
        assert err.count("\n") == 1 and needle in err, err


def test_mscore_cli_errors_and_help(capsys):
    from mscore.cli import COMMANDS, main
    assert main(["demi"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("mscore: error: unknown command 'demi' (did you mean 'demo'?); "
                           f"commands: {', '.join(COMMANDS)}")
    assert main([]) == 2 and capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "``" not in text and ":func:" not in text and ":class:" not in text  # no reST
    for name in COMMANDS:
        assert name in text


# -- the backend name: closest match, its source, install hints that exist ----------------------
@pytest.mark.parametrize("typed, meant", [("Torch", "torch"), ("TORCH", "torch"),
                                          ("pytorch", "torch"), ("jaxx", "jax"),
                                          ("nmupy", "numpy"), ("nosuch", None),
                                          ("tensorflow", None)])
def test_closest_backend_name(typed, meant):
    assert closest_name(typed, ["numpy", "jax", "torch", "cupy"]) == meant


def test_unknown_backend_message_never_invents_a_package():
    text = unknown_backend_detail("tensorflow", ["numpy"])
    assert "pip install" not in text and "mscore-tensorflow" not in text
    assert "installed backends: numpy" in text
    for name, target in PROJECT_PLUGINS.items():
        text = unknown_backend_detail(name, ["numpy"])
        assert f"pip install {target}" in text and "clone" in text
        assert f"mscore-{name}" not in text
    # an installed backend typed in another case: the name, nothing to install
    text = unknown_backend_detail("Numpy", ["numpy", "torch"])
    assert "did you mean 'numpy'?" in text and "pip" not in text


def test_set_context_names_the_argument_and_the_environment_names_the_variable():
    with pytest.raises(UnknownBackendError) as err:
        ms.set_context(backend="Numpy")
    assert str(err.value).startswith("backend: 'Numpy' is not installed (did you mean "
                                     "'numpy'?)")
    assert isinstance(err.value, ValueError)
    code = ("import mscore\ntry:\n    mscore.get_context('backend')\nexcept ValueError as e:\n"
            "    print(type(e).__name__, e)\n")
    env = dict(os.environ, MSCORE_BACKEND="nosuch")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)
    assert proc.stdout.startswith("UnknownBackendError MSCORE_BACKEND environment variable: "
                                  "'nosuch' is not installed"), proc.stdout + proc.stderr


def test_demo_error_from_the_environment_is_one_line_in_a_fresh_process():
    env = dict(os.environ, MSCORE_BACKEND="nosuch")
    proc = subprocess.run([sys.executable, "-m", "mscore.cli", "demo"], capture_output=True,
                          text=True, timeout=120, env=env, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("mscore demo: error: MSCORE_BACKEND environment variable: "
                                  "'nosuch' is not installed")


def test_install_hints_of_the_plugins_name_real_packages():
    """The plugins' own hints name packages that exist on PyPI (cupy-cuda12x, jax)."""
    sources = [os.path.join(ROOT, "plugins", d, pkg, "plugin.py")
               for d, pkg in (("cupy_backend", "mscore_cupy"), ("jax_backend", "mscore_jax"),
                              ("torch_backend", "mscore_torch"))]
    for path in sources:
        text = open(path).read()
        assert "pip install mscore-" not in text and "pip install 'mscore-" not in text, path


# -- mscore plot: one curve per run, a title that says what was trained -------------------------
def _write_run(folder, losses, network="Net", optimizer="Momentum"):
    from mscore.train.summary import SummaryRecord
    with SummaryRecord(str(folder)) as sr:
        for step, loss in enumerate(losses, 1):
            sr.add_value("scalar", "loss/auto", ms.Tensor(np.float32(loss)))
            sr.record(step)
    # what SummaryCollector writes about the training, beside the events
    with open(os.path.join(folder, "events.out.lineage.1.host_MS.jsonl"), "a") as f:
        f.write('{"plugin": "train_lineage", "value": {"network": "%s", "optimizer": "%s", '
                '"loss_function": "CrossEntropyLoss"}}\n' % (network, optimizer))


def test_plot_draws_every_run_as_its_own_curve(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from mscore.train.summary import plot
    _write_run(tmp_path / "numpy-O2-20250101-000000", [2.0, 1.0, 0.5])
    _write_run(tmp_path / "torch-O2-20250101-000100", [2.0, 1.5, 1.2, 1.1])
    (tmp_path / "not-a-run").mkdir()
    assert [name for name, _ in plot.find_runs(tmp_path)] == [
        "numpy-O2-20250101-000000", "torch-O2-20250101-000100"]
    drawn = {}

    def record(panels, output, title, dpi):
        drawn.update(panels=panels, title=title)
    monkeypatch.setattr(plot, "_draw", record)
    plot.plot_summary(tmp_path, tmp_path / "loss.png")
    ((ylabel, lines),) = drawn["panels"]
    assert ylabel == "loss"
    assert [(label, steps, [round(v, 6) for v in values]) for label, steps, values in lines] \
        == [("numpy-O2-20250101-000000", [1, 2, 3], [2.0, 1.0, 0.5]),
            ("torch-O2-20250101-000100", [1, 2, 3, 4], [2.0, 1.5, 1.2, 1.1])]
    assert drawn["title"] == "Net, Momentum, CrossEntropyLoss"


def test_plot_title_keeps_only_what_the_runs_share(tmp_path):
    from mscore.train.summary import plot
    _write_run(tmp_path / "a", [1.0], optimizer="SGD")
    _write_run(tmp_path / "b", [1.0], optimizer="Adam")
    lineages = [plot.train_lineage(tmp_path / d) for d in ("a", "b")]
    assert plot.describe_training(lineages) == "Net, CrossEntropyLoss"
    assert plot.describe_training([{}]) is None


def test_plot_png_of_two_runs(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from PIL import Image

    from mscore.cli import main
    _write_run(tmp_path / "runs" / "r1", [2.0, 1.0, 0.5])
    _write_run(tmp_path / "runs" / "r2", [2.5, 2.0, 1.0])
    assert main(["plot", str(tmp_path / "runs"), "-o", str(tmp_path / "p.png")]) == 0
    image = np.asarray(Image.open(tmp_path / "p.png").convert("RGB")).astype(int)
    # matplotlib's first two colours, blue (31,119,180) and orange (255,127,14), both drawn
    for colour in ((31, 119, 180), (255, 127, 14)):
        assert (np.abs(image - colour).sum(axis=2) < 30).sum() > 50, colour


# -- the progress bar by default on a terminal ----------------------------------------------------
class _Terminal:
    def __init__(self):
        self.text = []

    def isatty(self):
        return True

    def write(self, s):
        self.text.append(s)

    def flush(self):
        pass


def _tiny_training(callbacks=None):
    from mscore.train import Model
    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((4, 3)).astype(np.float32),
             rng.integers(0, 2, 4).astype(np.int32)) for _ in range(3)]
    net = nn.Dense(3, 2)
    model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1))
    model.train(1, data, callbacks=callbacks)


def test_model_train_shows_a_progress_bar_on_a_terminal_only(monkeypatch):
    pytest.importorskip("tqdm")
    from mscore.train.callback import _progress
    monkeypatch.delenv("MSCORE_PROGRESS", raising=False)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    _tiny_training()
    shown = "".join(terminal.text)
    assert "epoch 1/1" in shown and "3/3" in shown, shown
    # not a terminal: nothing
    assert _progress.default_progress_bars([]) != []
    monkeypatch.setattr(sys, "stderr", open(os.devnull, "w"))
    assert _progress.default_progress_bars([]) == []
    monkeypatch.setenv("MSCORE_PROGRESS", "always")
    assert _progress.default_progress_bars([]) != []


def test_progress_bar_can_be_turned_off_and_is_not_doubled(monkeypatch):
    pytest.importorskip("tqdm")
    from mscore.train import ProgressBar
    from mscore.train.callback import _progress
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("MSCORE_PROGRESS", "never")
    _tiny_training()
    assert terminal.text == []
    monkeypatch.delenv("MSCORE_PROGRESS")
    _tiny_training([ProgressBar(show=False)])
    assert terminal.text == []
    assert _progress.default_progress_bars([ProgressBar()]) == []
    monkeypatch.setenv("MSCORE_PROGRESS", "sometimes")
    with pytest.raises(ValueError, match="MSCORE_PROGRESS"):
        _progress.default_progress_bars([])
    with pytest.raises(ValueError, match="show"):
        ProgressBar(show="yes")


def test_prints_go_above_the_bar_and_stdout_is_restored(monkeypatch):
    pytest.importorskip("tqdm")
    from mscore.train import LossMonitor
    monkeypatch.delenv("MSCORE_PROGRESS", raising=False)
    out, err = _Terminal(), _Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    _tiny_training([LossMonitor(1)])
    assert sys.stdout is out                       # the redirection ended with training
    lines = [line for line in "".join(out.text).splitlines() if line.startswith("epoch:")]
    assert [line.split(",")[0] for line in lines] == [
        "epoch: 1 step: 1", "epoch: 1 step: 2", "epoch: 1 step: 3"]
    assert "epoch 1/1" in "".join(err.text)


# -- the demo's host threads; the numpy backend's determinism -------------------------------------
def test_demo_limits_the_host_blas_threads():
    pytest.importorskip("threadpoolctl")
    code = ("from threadpoolctl import threadpool_info\n"
            "import numpy\n"
            "from mscore.examples.amp_digits import limit_host_threads\n"
            "blas = lambda: sorted({p['num_threads'] for p in threadpool_info() "
            "if p['user_api'] == 'blas'})\n"
            "before = blas()\n"
            "with limit_host_threads(1):\n    inside = blas()\n"
            "print(before, inside, blas())\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    before, inside, after = (eval(part + "]") for part in proc.stdout.strip()[:-1].split("] "))
    assert inside == [1] and after == before


def test_numpy_training_is_bit_identical_run_to_run():
    """What the numpy backend's ``deterministic`` capability promises (same machine, same
    thread settings): two runs of the same seeded training give the same bits."""
    assert "deterministic" in get_registry().spec("numpy").capabilities

    def train():
        ms.set_seed(7)
        from mscore.train import Model
        rng = np.random.default_rng(1)
        data = [(rng.standard_normal((16, 20)).astype(np.float32),
                 rng.integers(0, 3, 16).astype(np.int32)) for _ in range(4)]
        net = nn.SequentialCell(nn.Dense(20, 32), nn.ReLU(), nn.Dense(32, 3))
        Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9),
              amp_level="O2").train(2, data)
        return [p.asnumpy().copy() for p in net.trainable_params()]

    first, second = train(), train()
    for a, b in zip(first, second):
        assert np.isfinite(a).all()
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


def test_dynamic_loss_scaling_overflow_steps_print_no_warning():
    """The first steps at scale 2**24 overflow in float16 on purpose; numpy must not warn."""
    import warnings

    from mscore.amp import DynamicLossScaleManager
    from mscore.train import Model
    ms.set_seed(3)
    rng = np.random.default_rng(2)
    data = [(rng.standard_normal((8, 10)).astype(np.float32) * 30,
             rng.integers(0, 3, 8).astype(np.int32)) for _ in range(3)]
    net = nn.SequentialCell(nn.Dense(10, 16), nn.ReLU(), nn.Dense(16, 3))
    manager = DynamicLossScaleManager(init_loss_scale=2.0 ** 24, scale_factor=2,
                                      scale_window=1000)
    model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.01),
                  amp_level="O2", loss_scale_manager=manager)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model.train(1, data)
    assert manager.get_loss_scale() < 2.0 ** 24      # the overflow steps happened
    assert np.geterr() == before                     # and numpy's error state is back
    with pytest.warns(RuntimeWarning, match="overflow"):
        np.float16(60000) * np.float16(2)            # outside the step numpy still warns
