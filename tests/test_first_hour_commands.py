"""What a new user meets on the command line: a missing optional dependency is one line naming
the extra that installs it, a device the backend lacks is a usage error, the demo writes only
where it is told to, says when graph mode runs eagerly, and records its test accuracy;
``mscore --version``, ``python -m mscore`` and ``dir()`` of the lazily loaded packages."""
import importlib
import os
import re
import subprocess
import sys

import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from conftest import subprocess_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A child Python in which the named top-level modules cannot be imported (as in an
# environment installed without the extra), running the ``mscore`` command.
_WITHOUT = """
import importlib.abc, sys
class _Uninstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _Uninstalled())
for loaded in [m for m in sys.modules if m.split(".")[0] in {blocked!r}]:
    del sys.modules[loaded]
from mscore.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _mscore_without(blocked, *argv, cwd):
    code = _WITHOUT.format(blocked=set(blocked))
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          timeout=300, cwd=str(cwd), env=subprocess_env())


_numpy_context = numpy_context_each_test()


# -- a missing optional dependency: one line, the extra that installs it ---------------------
def test_demo_without_the_demo_extra_is_one_line(tmp_path):
    proc = _mscore_without(["sklearn", "threadpoolctl"], "demo", "--epochs", "1", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("mscore demo: error: scikit-learn is not installed: install "
                                  "mscore with its [demo] extra"), proc.stderr
    assert os.listdir(tmp_path) == []   # it stopped before making a run folder


def test_compare_without_scikit_learn_is_one_line(tmp_path):
    proc = _mscore_without(["sklearn"], "compare", "mscore.examples.compare_nets:conv_bn",
                           "--backends", "numpy,torch", "--steps", "1", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("mscore compare: error: ")
    assert "scikit-learn is not installed: install mscore with its [demo] extra" in \
        proc.stderr


def test_install_lines_name_the_extra_through_a_chain_of_exceptions():
    from mscore._optional import install_line, missing_dependency_hint
    assert install_line("onnx.helper") == (
        'onnx is not installed: install mscore with its [onnx] extra (pip install -e '
        '".[onnx]" in a clone of mscore) or pip install onnx')
    assert install_line("numpy") is None
    try:
        try:
            raise ModuleNotFoundError("No module named 'PIL'", name="PIL")
        except ImportError as exc:
            raise ImportError("decoding images needs Pillow") from exc
    except ImportError as wrapped:
        assert missing_dependency_hint(wrapped).startswith("pillow is not installed: "
                                                           "install mscore with its [vision]")
    assert missing_dependency_hint(ModuleNotFoundError("x", name="mscore_nothing")) is None


def test_a_missing_module_that_is_no_optional_dependency_is_not_hidden(capsys):
    from mscore.commands import command

    @command("mscore thing")
    def main(argv):
        import mscore_no_such_module  # noqa: F401

    with pytest.raises(ModuleNotFoundError):
        main([])


# -- the demo: devices, folders, graph mode, the header, the accuracy scalar ------------------
@pytest.mark.parametrize("argv", [["--device-target", "GPU"],
                                  ["--backend", "numpy", "--device-target", "Ascend"]])
def test_demo_on_a_device_the_backend_lacks_is_one_line(capsys, monkeypatch, tmp_path, argv):
    from mscore.examples import amp_digits
    monkeypatch.delenv("MSCORE_BACKEND", raising=False)
    status = amp_digits.main(argv + ["--output-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("mscore demo: error: --device-target: ")
    assert "backend 'numpy' supports only 'CPU'" in err
    assert os.listdir(tmp_path) == []


def _fast_demo(capsys, *argv):
    """The demo cut to one epoch of 3 steps (batches of 512); returns (status, stdout)."""
    from mscore.examples import amp_digits
    status = amp_digits.main(["--backend", "numpy", "--epochs", "1", "--batch-size", "512",
                              "--per-print", "0", *argv])
    return status, capsys.readouterr().out


def test_demo_writes_only_where_it_is_told(capsys, monkeypatch, tmp_path):
    cwd, ckpt = tmp_path / "cwd", tmp_path / "ckpt"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    # no summary and a checkpoint folder: nothing at all in the current folder
    status, out = _fast_demo(capsys, "--no-summary", "--ckpt-dir", str(ckpt))
    assert status == 0, out
    assert os.listdir(cwd) == [] and sorted(os.listdir(ckpt)) == ["digits-1_3.ckpt"]
    assert "| 1 epoch of 3 steps\n" in out and "epochs" not in out
    # the header: short lines, the run's folder on its own
    header = out.splitlines()[:3]
    assert all(len(line) <= 100 for line in header[:2]) and header[2] == f"run: {ckpt}", out
    # the default: one run folder, named by backend, amp level, mode and time
    status, out = _fast_demo(capsys)
    assert status == 0, out
    assert os.listdir(cwd) == ["mscore_demo_output"]
    (run,) = [p for p in (cwd / "mscore_demo_output").iterdir() if p.is_dir()]
    assert re.fullmatch(r"numpy-O2-pynative-\d{8}-\d{6}", run.name), run.name
    # the printed test accuracy is in the summary, as the scalar eval/accuracy at the last step
    from mscore.train.summary.reader import load_summaries
    printed = float(re.search(r"test accuracy: ([\d.]+)", out).group(1))
    ((step, _, value),) = load_summaries(str(run))["scalar"]["eval/accuracy"]
    assert step == 3 and value == pytest.approx(printed, abs=0.5e-4)
    # ... in the training's own event file, after its steps: TensorBoard reads the files of
    # a run in name order and reports a step that goes back
    loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
    (events,) = [p for p in run.iterdir() if ".tfevents." in p.name]
    steps = [event.step for event in loader.EventFileLoader(str(events)).Load()
             if event.HasField("summary")]
    assert steps == sorted(steps) and steps[-1] == 3 and len(steps) >= 2, steps
    # TensorBoard's own reader finds the network's graph: the cells as scopes, the dense
    # layers reading the flattened input
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator")
    reader = event_accumulator.EventAccumulator(str(run))
    reader.Reload()
    assert reader.Tags()["graph"] is True
    nodes = {node.name: node for node in reader.Graph().node}
    dense = [name for name, node in nodes.items() if node.op == "dense"]
    assert [name.rsplit("/", 1)[0] for name in dense] == [
        f"Network/dense_relu_sequential/{i}" for i in (0, 2, 4)]
    assert {"input_0", "output_0", "Network/dense_relu_sequential/0/weight"} <= set(nodes)


def test_demo_wall_time_counts_from_the_process_start(tmp_path):
    """The wall time includes what the process did before the demo's code ran (here a
    sleep of 3 s standing for the interpreter's start and the imports)."""
    code = ("import time, sys; started = time.monotonic(); time.sleep(3)\n"
            "from mscore.examples import amp_digits\n"
            "status = amp_digits.main(['--backend', 'numpy', '--epochs', '1', "
            "'--batch-size', '512', '--per-print', '0', '--no-summary', '--ckpt-dir', "
            f"{str(tmp_path)!r}])\n"
            "print('measured', time.monotonic() - started)\n"
            "sys.exit(status)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path), env=subprocess_env())
    assert proc.returncode == 0, proc.stderr
    if not os.path.exists("/proc/self/stat"):
        assert "s since the command started (imports not counted)" in proc.stdout
        return
    wall = float(re.search(r"wall time: ([\d.]+) s since the process started", proc.stdout)[1])
    measured = float(proc.stdout.split("measured ")[1])
    assert 3.0 <= measured - 0.2 <= wall <= measured + 0.2 + 1.0, proc.stdout


def test_graph_mode_on_a_backend_that_cannot_compile_says_it_runs_eagerly(capsys, tmp_path):
    status, out = _fast_demo(capsys, "--mode", "graph", "--no-summary", "--ckpt-dir",
                             str(tmp_path))
    assert status == 0, out
    first, header = out.splitlines()[:2]
    assert first == ("--mode graph: the train step runs eagerly: backend 'numpy' has no "
                     "compiler")
    assert "| mode graph-eager |" in header


def test_backend_contract_defaults_for_threads_and_graph_mode():
    from mscore.plugin.backend import Backend

    class Compiles(Backend):
        name = "compiles"
        compile = staticmethod(lambda fn, donate_argnums=(): fn)

    with Backend().limit_threads(1):   # nothing of its own to limit: a no-op block
        pass
    assert Compiles().graph_mode_eager_reason() is None
    assert Backend().graph_mode_eager_reason() == "backend 'abstract' has no compiler"


def test_torch_limits_its_own_thread_pools_inside_the_block():
    torch = pytest.importorskip("torch")
    from _helpers import available_backends
    if "torch" not in available_backends():
        pytest.skip("the torch backend is not installed")
    from mscore.plugin.registry import get_registry
    backend = get_registry().get("torch")
    before = torch.get_num_threads()
    with backend.limit_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    assert "MSCORE_TORCH_COMPILE=always" in backend.graph_mode_eager_reason()


def test_network_graph_nests_ops_in_their_cells_and_follows_the_data():
    import numpy as np

    from mscore import nn
    from mscore.train.summary.graph import network_graph
    from mscore.train.summary.proto import summary_pb2 as pb
    ms.set_context(backend="numpy")
    net = nn.SequentialCell(nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2))
    net.set_train(True)
    graph = pb.GraphDef.FromString(network_graph(net, ms.Tensor(np.ones((5, 3), np.float32))))
    nodes = [(n.name, n.op, list(n.input)) for n in graph.node]
    assert nodes == [
        ("input_0", "Input", []),
        ("SequentialCell/0/weight", "Parameter", []),
        ("SequentialCell/0/bias", "Parameter", []),
        ("SequentialCell/0/dense", "dense",
         ["input_0", "SequentialCell/0/weight", "SequentialCell/0/bias"]),
        ("SequentialCell/1/relu", "relu", ["SequentialCell/0/dense"]),
        ("SequentialCell/2/weight", "Parameter", []),
        ("SequentialCell/2/bias", "Parameter", []),
        ("SequentialCell/2/dense", "dense",
         ["SequentialCell/1/relu", "SequentialCell/2/weight", "SequentialCell/2/bias"]),
        ("output_0", "Output", ["SequentialCell/2/dense"])]
    shapes = {n.name: [d.size for d in n.attr["_output_shapes"].list.shape[0].dim]
              for n in graph.node}
    assert shapes["SequentialCell/0/weight"] == [4, 3] and shapes["output_0"] == [5, 2]
    assert all(n.attr["dtype"].type == pb.DT_FLOAT for n in graph.node)
    assert net.training is True   # traced in inference mode, the flags put back


# -- long work shows progress on a terminal -------------------------------------------------------
def test_compare_shows_its_progress_on_one_line_and_clears_it(capsys):
    from _helpers import available_backends

    from mscore.compare.cli import main
    others = available_backends(exclude=("numpy", "cupy"))
    if not others:
        pytest.skip("no backend besides numpy is installed to compare with")
    backends = f"numpy,{others[0]}"
    status = main(["compare_factories:tiny", "--backends", backends, "--steps", "2",
                   "--progress"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    messages = captured.err.split("\r\033[K")
    assert messages == ["", "mscore compare: building the model on numpy (1/2)",
                        f"mscore compare: building the model on {others[0]} (2/2)",
                        "mscore compare: step 1/2 on 2 backends",
                        "mscore compare: step 2/2 on 2 backends", ""]
    # off the terminal (capsys is not one), nothing but the report
    assert main(["compare_factories:tiny", "--backends", backends, "--steps", "1"]) == 0
    assert capsys.readouterr().err == ""


# -- the mscore command itself ----------------------------------------------------------------
def test_version_and_python_dash_m(tmp_path):
    for argv in (["-m", "mscore", "--version"], ["-m", "mscore.cli", "--version"]):
        proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                              timeout=120, cwd=str(tmp_path), env=subprocess_env())
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"mscore {ms.__version__}\n"
    proc = subprocess.run([sys.executable, "-m", "mscore", "demi"], capture_output=True,
                          text=True, timeout=120, cwd=str(tmp_path), env=subprocess_env())
    assert proc.returncode == 2 and "did you mean 'demo'?" in proc.stderr


# -- dir() of the lazily loaded packages ------------------------------------------------------
LAZY_MODULES = ["mscore", "mscore.train", "mscore.train.summary", "mscore.train.callback",
                "mscore.ops", "mscore.ops.operations", "mscore.nn", "mscore.nn.wrap",
                "mscore.nn.wrap.cell_wrapper", "mscore.nn.cell", "mscore.nn.metrics",
                "mscore.parallel", "mscore.communication"]


@pytest.mark.parametrize("name", LAZY_MODULES)
def test_dir_of_a_lazy_module_lists_what_it_resolves(name):
    module = importlib.import_module(name)
    listed = dir(module)
    assert listed == sorted(listed)
    declared = getattr(module, "__all__", ())
    assert set(declared) <= set(listed), sorted(set(declared) - set(listed))
    for attr in listed:
        getattr(module, attr)   # every name dir() offers resolves


def test_dir_of_mscore_train_offers_its_public_names():
    import mscore.train as train
    assert {"Model", "LossMonitor", "ModelCheckpoint", "Accuracy", "SummaryCollector",
            "save_checkpoint", "FixedLossScaleManager", "callback", "metrics"} <= set(dir(train))


# -- errors name what the user wrote -------------------------------------------------------------
def test_a_failed_save_checkpoint_names_the_users_path_not_a_temporary(tmp_path, monkeypatch):
    import errno

    from mscore import nn
    from mscore.train.serialization import _atomic
    net = nn.Dense(2, 2)
    target = tmp_path / "model.ckpt"

    def disk_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_atomic.os, "fsync", disk_full)
    with pytest.raises(OSError) as failed:
        ms.save_checkpoint(net, str(target))
    assert failed.value.errno == errno.ENOSPC and failed.value.filename == str(target)
    assert str(failed.value) == f"[Errno {errno.ENOSPC}] No space left on device: '{target}'"
    assert os.listdir(tmp_path) == []      # no half-written file, no temporary left
    monkeypatch.undo()
    (tmp_path / "a_file").write_text("")
    with pytest.raises(FileExistsError) as failed:   # its folder cannot be made
        ms.save_checkpoint(net, str(tmp_path / "a_file" / "model.ckpt"))
    assert failed.value.filename == str(tmp_path / "a_file" / "model.ckpt")


def test_bare_arrays_given_to_model_train_and_fit_are_named():
    import numpy as np

    from mscore import nn
    from mscore.train import Model
    net = nn.Dense(3, 2)
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params()), metrics={"mse"})
    x, y = np.ones((4, 3), np.float32), np.ones((4, 2), np.float32)
    expected = (r"train_dataset: expected a Dataset, got a numpy array of shape \(4, 3\); "
                r".*NumpySlicesDataset\(\(x, y\)")
    # MindSpore: AttributeError ('numpy.ndarray' object has no attribute 'get_dataset_size')
    with pytest.raises(AttributeError, match=expected):
        model.train(1, x)
    with pytest.raises(AttributeError, match=expected):
        model.fit(1, x, y)
    with pytest.raises(TypeError, match=r"valid_dataset: expected a Dataset, got a Tensor of "
                                        r"shape \(4, 2\)"):
        model.eval(ms.Tensor(y))


def test_errors_of_two_types_are_shown_by_mindspores_type():
    """A traceback names them as MindSpore's type; they still pickle as themselves (dataset
    workers send errors between processes)."""
    import pickle
    import traceback

    from mscore.common._errors import TypeAttributeError, ValueZeroDivisionError
    for cls, shown in ((TypeAttributeError, "AttributeError"),
                       (ValueZeroDivisionError, "ZeroDivisionError")):
        error = cls("the message")
        assert traceback.format_exception_only(error) == [f"{shown}: the message\n"]
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is cls and again.args == ("the message",)


def test_model_names_numpy_slices_dataset_for_arrays_given_as_keras_takes_them():
    import numpy as np

    from mscore import nn
    from mscore.train import Model
    net = nn.Dense(3, 2)
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params()), metrics={"mse"})
    x, y = np.ones((4, 3), np.float32), np.ones((4, 2), np.float32)
    with pytest.raises(AttributeError, match=r"train_dataset: expected a Dataset, got a tuple of "
                                             r"2 array\(s\).*NumpySlicesDataset\(\(x, y\)"):
        model.train(1, (x, y))
    with pytest.raises(TypeError, match=r"valid_dataset: expected a Dataset, got a list"):
        model.eval([ms.Tensor(x), ms.Tensor(y)])
    with pytest.raises(KeyError, match=r"unsupported metric 'acuracy' \(did you mean "
                                       r"'accuracy'\?\); supported: F1, acc, accuracy, auc"):
        Model(net, nn.MSELoss(), metrics={"acuracy"})
    # a numpy array is refused, as MindSpore refuses it (its words: test_numpy_arguments.py)
    with pytest.raises(TypeError, match=r"^For 'Dense', the input argument must be Tensor, but "
                                        r"got <class 'numpy.ndarray'>\.\nHint: wrap the numpy "
                                        r"array with ms\.Tensor\(x\)\.$"):
        net(x)


def test_output_into_a_closed_pipe_ends_quietly():
    """`mscore backends | head` where the reader has gone: no traceback, the SIGPIPE status."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)                      # every write of the child fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "mscore.cli", "backends"], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr


def test_pytest_runs_where_mscore_is_installed_without_hypothesis(tmp_path):
    """mscore registers the kit as a pytest plugin, which loads in every pytest session of
    the environment: without hypothesis (not a dependency of mscore itself) pytest must still
    run a user's tests, and the kit must say what to install."""
    (tmp_path / "test_user.py").write_text("def test_user():\n    assert 1 + 1 == 2\n")
    # hypothesis's own pytest plugin is gone too where hypothesis is not installed
    code = _WITHOUT.format(blocked={"hypothesis", "_hypothesis_pytestplugin",
                                    "_hypothesis_globals"}).replace(
        "from mscore.cli import main\nsys.exit(main(sys.argv[1:]))",
        "import pytest\nsys.exit(pytest.main(sys.argv[1:]))")
    argv = ["-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
            str(tmp_path / "test_user.py")]
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path), env=subprocess_env())
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout
    kit = _mscore_without({"hypothesis"}, "conformance", "numpy", cwd=tmp_path)
    assert kit.returncode != 0 and 'pip install "mscore[conformance]"' in kit.stderr, \
        kit.stdout[-2000:] + kit.stderr[-2000:]
    assert "Traceback" not in kit.stderr
