"""``ops.Print`` inside compiled programs (``ms.jit``, GRAPH_MODE cells) on every backend: the
values print each time the program runs, in MindSpore 2.10's graph-mode text (recorded by
``tests/data/make_print_graph_oracle.py`` into ``print_graph_oracle.json``), to the print
file when ``print_file_path`` is set; and the backends' ``host_callback``."""
import json
import os
import re
import warnings

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore import nn, ops
from mscore.common import tensor_text
from mscore.compile import graph
from mscore.plugin.backend import OPTIONAL_METHODS

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
with open(os.path.join(DATA, "print_graph_oracle.json")) as _f:
    ORACLE = json.load(_f)["cases"]
BACKENDS = available_backends()
# Cases that every backend runs; the numpy text of the others is checked below without one.
RUN_CASES = ("mixed", "constants", "float16", "bool", "scalars", "3d", "rows_7x2", "nan_inf")


@pytest.fixture(autouse=True)
def _pynative_and_screen():
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE, print_file_path=None)


def _array(spec):
    return np.asarray(spec["values"]).astype(spec["dtype"]).reshape(spec["shape"])


def _args(case, run=0):
    """The case's Print arguments, arrays for its tensors (doubled on the second run)."""
    out = []
    for a in ORACLE[case]["args"]:
        if isinstance(a, dict):
            arr = _array(a)
            out.append(arr if run == 0 else (arr * (run + 1)).astype(arr.dtype))
        else:
            out.append(a)
    return out


def _jit_printing(template):
    """A jit function printing ``template`` with its None places taken by its arguments."""
    @ms.jit
    def program(*tensors):
        it = iter(tensors)
        ops.Print()(*[next(it) if t is None else t for t in template])
        return tensors[0] * 1
    return program


def _run(case, template=None):
    args = _args(case)
    template = [None if isinstance(a, np.ndarray) else a for a in args]
    program = _jit_printing(template)
    for run in range(ORACLE[case]["runs"]):
        tensors = [ms.Tensor(a) for a in _args(case, run) if isinstance(a, np.ndarray)]
        program(*(tensors or [ms.Tensor(np.zeros(1, np.float32))]))
    ms.synchronize()


@pytest.mark.parametrize("case", sorted(ORACLE))
def test_graph_text_as_mindspore(case):
    """The text of every recorded case, from its host values."""
    record = ORACLE[case]
    got = "".join(tensor_text.graph_text(_args(case, run)) + "\n" for run in range(record["runs"]))
    assert got == record["stdout"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_prints_at_each_run_as_mindspore(backend, capfd):
    use_backend(backend)
    compiled = ms.get_context("backend") != "numpy"   # numpy runs jit eagerly
    for case in RUN_CASES:
        before = graph.trace_count
        with warnings.catch_warnings():
            warnings.simplefilter("error")    # no fallback to eager execution
            _run(case)
        if compiled:
            assert graph.trace_count > before
        if _traces_once(backend):   # traced once, printed at each run
            assert graph.trace_count == before + 1
        out = capfd.readouterr().out
        if backend == "numpy":   # no compiled program: PyNative's text
            assert ("Tensor(" in out) == any(isinstance(a, dict) for a in ORACLE[case]["args"])
        else:
            assert out == ORACLE[case]["stdout"], case


def _traces_once(backend):
    return ms.get_context("backend") == backend and \
        ms.context.current_backend().graph_mode_eager_reason() is None


class _PrintingNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")

    def construct(self, x):
        y = self.dense(x)
        ops.Print()("y:", y)
        return y.sum()


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "numpy"])
def test_graph_mode_training_prints_each_step(backend, capfd):
    """A GRAPH_MODE train step prints the forward values of each step (SGD, lr 0.1, x = [1, 1]:
    both weights and the bias drop by 0.1 a step, the output by 0.3)."""
    use_backend(backend)
    ms.set_context(mode=ms.GRAPH_MODE)
    net = _PrintingNet()
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.1))
    before = graph.trace_count
    for _ in range(3):
        step(ms.Tensor(np.ones((1, 2), np.float32)))
    ms.synchronize()
    if _traces_once(backend):
        assert graph.trace_count == before + 1
    out = capfd.readouterr().out
    pattern = r"y:\nTensor\(shape=\[1, 1\], dtype=Float32, value=\n\[\[ (\d\.\d{8}e\+00)\]\]\)\n"
    assert re.fullmatch(pattern * 3, out), out
    np.testing.assert_allclose([float(v) for v in re.findall(pattern, out)], [2.0, 1.7, 1.4],
                               rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_writes_the_print_file_at_each_run(backend, tmp_path, capfd):
    use_backend(backend)
    path = str(tmp_path / "graph.pb")
    ms.set_context(print_file_path=path)
    program = _jit_printing(["step", None, 3])
    for k in range(2):
        program(ms.Tensor(np.array([1.5, -2.0], np.float32) * (k + 1)))
    ms.synchronize()
    assert capfd.readouterr().out == ""
    values = ms.parse_print(path)
    assert [v if isinstance(v, str) else v.asnumpy().tolist() for v in values] == \
        ["step", [1.5, -2.0], 3, "step", [3.0, -4.0], 3]
    assert values[1].dtype == ms.float32 and values[2].dtype == ms.int64


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_inside_value_and_grad_prints_the_values(backend, capfd):
    """PyNative, inside a differentiated function (jax traces it): the values, as PyNative
    prints them, and the gradient unchanged."""
    use_backend(backend)

    def loss(x):
        ops.Print()("x:", x)
        return (x * x).sum()
    value, grad = ms.value_and_grad(loss)(ms.Tensor(np.array([1.0, 3.0], np.float32)))
    ms.synchronize()
    out = capfd.readouterr().out
    assert out.startswith("x:\n") and "1." in out and "3." in out
    assert float(value.asnumpy()) == 10.0
    np.testing.assert_array_equal(grad.asnumpy(), [2.0, 6.0])


def test_host_callback_is_an_optional_method():
    assert "host_callback" in OPTIONAL_METHODS


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "numpy"])
def test_backend_host_callback_gives_numpy_copies(backend):
    use_backend(backend)
    b = ms.context.current_backend()
    seen = []
    a = b.from_numpy(np.array([1.0, 2.0], np.float32))
    b.host_callback(lambda *xs: seen.append(xs), [a, b.from_numpy(np.array(3, np.int32))])
    assert len(seen) == 1 and all(isinstance(x, np.ndarray) for x in seen[0])
    assert seen[0][0].tolist() == [1.0, 2.0] and seen[0][1].tolist() == 3
