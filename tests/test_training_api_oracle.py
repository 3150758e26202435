"""The training-side names MindSpore's own unit tests exercise, against MindSpore 2.10's
recorded behaviour (tests/data/training_api_oracle.json, recorded by
tests/data/make_training_api_oracle.py): the save operator's checkpoint hook,
``SummaryCollector``'s messages and private state, the summary operators' empty name in
GRAPH_MODE, optimizers over integer Parameters, ``Cell().construct()``, ``load_checkpoint``'s
``choice_func``, ``auto_mixed_precision`` of a function, GRAPH_MODE keyword arguments and an
optimizer returning its ``ParameterTuple`` (every backend), the ``export_options`` message
under two hash seeds, fresh dataset iterators and ``LossMonitor``'s loss text."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore import Parameter, Tensor, nn, ops
from mscore.nn.optim.optimizer import Optimizer

sys.path.insert(0, str(Path(__file__).resolve().parent / "data"))
from training_api_cases import COLLECTOR_CASES

ORACLE = json.loads((Path(__file__).parent / "data" / "training_api_oracle.json").read_text())
BACKENDS = available_backends()
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _defaults_after():
    yield
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)


def outcome(fn):
    """What ``fn()`` gives, in the fixture's form."""
    try:
        out = fn()
    except Exception as exc:  # the type and message are the observation
        return {"type": type(exc).__name__, "message": str(exc)}
    return {"value": repr(out)}


# -- the save operator's checkpoint hook ------------------------------------------------------
def test_save_op_hook_loads_into_the_registered_net_once():
    from mscore.train.callback import _checkpoint_cb_for_save_op, _set_cur_net

    class Conv(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, has_bias=False, weight_init="zeros")

        def construct(self, x):
            return self.conv(x)

    def params(value):
        return [{"name": "conv.weight",
                 "data": Tensor(np.full((4, 3, 3, 3), value, np.float32))}]

    want = ORACLE["save_op_hook"]
    _set_cur_net(None)
    assert _checkpoint_cb_for_save_op(params(1.0)) is want["without_net"]
    net = Conv()
    _set_cur_net(net)
    assert _checkpoint_cb_for_save_op(params(2.0)) is want["with_net"]
    assert float(net.conv.weight.asnumpy()[0, 0, 0, 0]) == want["weight_after"]
    assert _checkpoint_cb_for_save_op(params(3.0)) is want["second_call"]
    assert float(net.conv.weight.asnumpy()[0, 0, 0, 0]) == want["weight_after_second"]


# -- SummaryCollector -------------------------------------------------------------------------


def test_every_collector_case_was_recorded():
    assert sorted(COLLECTOR_CASES) == sorted(ORACLE["collector_errors"])


@pytest.mark.parametrize("name", sorted(COLLECTOR_CASES))
def test_collector_checks_word_as_mindspore(name, tmp_path):
    got = outcome(lambda: ms.train.SummaryCollector(
        str(tmp_path), collect_specified_data=COLLECTOR_CASES[name]) and None)
    assert got == ORACLE["collector_errors"][name]


OUTPUTS = {"none": None, "int": 1, "float": 1.5, "tensor": Tensor(1), "list_int": [1],
           "list_tensor": [Tensor(1)], "empty_dict": {}, "matrix": Tensor([[1, 2], [3, 4]]),
           "tuple_int": (1,)}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_collector_parse_loss_state(name, tmp_path):
    from mscore.train.callback import _InternalCallbackParam
    cb_params = _InternalCallbackParam()
    cb_params.net_outputs = OUTPUTS[name]
    collector = ms.train.SummaryCollector(str(tmp_path))
    collector._get_loss(cb_params)
    assert collector._is_parse_loss_success is ORACLE["collector_parse_loss"][name]


def test_collector_remembers_a_missing_optimizer(tmp_path):
    from mscore.train.callback import _InternalCallbackParam

    class NoOptimizer(nn.Cell):
        def construct(self, x):
            return x

    cb_params = _InternalCallbackParam()
    cb_params.optimizer = None
    cb_params.train_network = NoOptimizer()
    cb_params.mode = "train"
    collector = ms.train.SummaryCollector(str(tmp_path))
    want = ORACLE["collector_no_optimizer"]
    for _ in range(2):
        assert repr(collector._get_optimizer(cb_params)) == want["result"]
        assert collector._temp_optimizer == want["temp_optimizer"]


def test_collector_histograms_regular_matches_from_optimizer(tmp_path, monkeypatch):
    """The parameters ``histogram_regular`` matches, in the optimizer's order (MindSpore's
    unit test adds 0-d Parameters through a mocked ``add_value``)."""
    from mscore.train.callback import _InternalCallbackParam
    from mscore.train.summary import SummaryRecord
    added = []
    monkeypatch.setattr(SummaryRecord, "add_value",
                        lambda self, plugin, name, value: added.append((plugin, name)))
    names = ["conv1.weight1", "conv2.weight2", "conv1.bias1", "conv3.bias", "conv5.bias",
             "conv6.bias"]
    cb_params = _InternalCallbackParam()
    cb_params.optimizer = Optimizer(learning_rate=0.1, parameters=[
        Parameter(Tensor(i), n) for i, n in enumerate(names)])
    with ms.train.SummaryCollector(str(tmp_path)) as collector:
        collector._collect_specified_data["histogram_regular"] = "conv1|conv2"
        collector._collect_histogram(cb_params)
    assert added == [("histogram", f"{n}/auto") for n in names[:3]]


def _export_message(seed):
    code = ("import mscore as ms, tempfile\n"
            "try:\n"
            "    ms.train.SummaryCollector(tempfile.mkdtemp(), "
            "export_options={'tensor_format': 'npz'})\n"
            "except ValueError as e:\n"
            "    print(e)\n")
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("seed", sorted(ORACLE["export_option_message"]))
def test_export_options_message_lists_the_set_as_mindspore(seed):
    """MindSpore lists the accepted formats from a set, so the order follows the hash seed
    (its test builds the expected text from the same set); the two seeds give both orders."""
    assert _export_message(seed) == ORACLE["export_option_message"][seed]


# -- summary operators -------------------------------------------------------------------------
@pytest.mark.parametrize("op_name", sorted(ORACLE["summary_empty_name_graph_mode"]))
def test_summary_operator_empty_name_in_graph_mode(op_name):
    ms.set_context(mode=ms.GRAPH_MODE)
    x = Tensor(np.ones((1, 3, 2, 2) if op_name == "ImageSummary" else (1,), np.float32))
    got = outcome(lambda: getattr(ops, op_name)()("", x))
    assert got == ORACLE["summary_empty_name_graph_mode"][op_name]


# -- optimizers over integer Parameters, Cell.construct, choice_func, amp ----------------------
_OPT_KWARGS = {"Momentum": dict(momentum=0.9), "SGD": {}, "Adam": {}, "RMSProp": {},
               "Adagrad": {}}


@pytest.mark.parametrize("name", sorted(ORACLE["integer_parameter_optimizers"]))
def test_optimizers_accept_integer_parameters(name):
    if name == "Optimizer":
        got = outcome(lambda: type(Optimizer(
            learning_rate=0.1, parameters=[Parameter(Tensor(1), "weight")])).__name__)
    else:
        got = outcome(lambda: type(getattr(nn, name)(
            [Parameter(Tensor(np.array([1, 2], np.int32)), name="ip")], learning_rate=0.1,
            **_OPT_KWARGS[name])).__name__)
    assert got == ORACLE["integer_parameter_optimizers"][name]


def test_cell_construct_undefined():
    assert outcome(lambda: nn.Cell().construct()) == ORACLE["cell_construct"]


def test_choice_func_exception_is_wrapped(tmp_path):
    net = nn.Dense(2, 2)
    path = str(tmp_path / "net.ckpt")
    ms.save_checkpoint(net, path)

    def refuse(name):
        raise KeyError(f"refused {name}")
    got = outcome(lambda: ms.load_checkpoint(path, choice_func=refuse))
    got["message"] = got["message"].replace(os.path.realpath(path), "<FILE>")
    want = dict(ORACLE["choice_func_raises"])
    # the first parameter's name is the test network's, not the recording's
    want["message"] = want["message"].replace("conv.weight", "weight")
    assert got == want


def test_auto_mixed_precision_of_a_function():
    from mscore.amp import auto_mixed_precision
    want = ORACLE["amp_function"]

    def matmul(a, b):
        return ops.matmul(a, b)
    ones = Tensor(np.ones((2, 2), np.float32))
    out = auto_mixed_precision(matmul, "auto")(ones, ones)
    assert str(out.dtype).lower() == want["auto_output_dtype"].lower()
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2), 2.0, np.float16))
    assert outcome(lambda: auto_mixed_precision(3, "auto")) == want["auto_not_function"]
    assert outcome(lambda: auto_mixed_precision(matmul, "O1")) == want["o1_function"]
    assert outcome(lambda: auto_mixed_precision(matmul, "O0")) == want["o0_function"]


# -- GRAPH_MODE on every backend -------------------------------------------------------------
@pytest.fixture(params=BACKENDS)
def graph_backend(request):
    use_backend(request.param)
    ms.set_context(mode=ms.GRAPH_MODE)
    yield request.param


class _Scaled(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="w")

    def construct(self, x, scale=1.0, shift=None):
        out = x * self.w * scale
        if shift is not None:
            out = out + shift
        return out


def test_graph_mode_keyword_arguments(graph_backend):
    want = ORACLE["graph_kwargs"]
    x = Tensor(np.array([3.0, 4.0], np.float32))
    one = Tensor(np.array([1.0, 1.0], np.float32))
    net = _Scaled()
    np.testing.assert_allclose(net(x, scale=2.0).asnumpy(), want["scale"])
    np.testing.assert_allclose(net(x, shift=one).asnumpy(), want["shift"])
    np.testing.assert_allclose(net(x, shift=one, scale=3.0).asnumpy(), want["both"])
    # the keyword's value is part of the program: another value is another result
    np.testing.assert_allclose(net(x, scale=2.0).asnumpy(), want["scale"])


class _AssignSGD(nn.Optimizer):
    def __init__(self, parameters, learning_rate=0.5):
        super().__init__(learning_rate, parameters)
        self.assign = ops.Assign()

    def construct(self, gradients):
        params = self.parameters
        lr = self.get_lr()
        for i in range(len(params)):
            self.assign(params[i], params[i] - lr * gradients[i])
        return params


def test_graph_mode_optimizer_returning_its_parameter_tuple(graph_backend):
    want = ORACLE["graph_optimizer_returns_parameters"]
    w = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="w")
    out = _AssignSGD([w])((Tensor(np.array([1.0, 1.0], np.float32)),))
    assert type(out).__name__ == want["type"]
    # compiled programs return Tensors; where GRAPH_MODE runs eagerly the Parameters
    # themselves (Tensors too) come back
    assert all(isinstance(v, getattr(ms, t)) for v, t in zip(out, want["element_types"]))
    np.testing.assert_allclose([v.asnumpy() for v in out], want["values"])
    np.testing.assert_allclose(w.asnumpy(), want["parameter"])


# -- datasets and LossMonitor --------------------------------------------------------------------
def test_fresh_iterators_replay_the_first_epoch():
    import mscore.dataset as ds
    want = ORACLE["dataset_fresh_iterators"]
    ms.set_seed(want["numpy_slices_seed"])
    data = ds.NumpySlicesDataset({"x": np.arange(10)}, shuffle=True).batch(2)
    fresh = [[int(v) for b in data.create_tuple_iterator(output_numpy=True) for v in b[0]]
             for _ in range(2)]
    assert fresh == want["fresh"]
    it = data.create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert [[int(v) for b in it for v in b[0]] for _ in range(2)] == \
        want["one_iterator_two_epochs"]
    ds.config.set_seed(want["generator_seed"])
    gen = ds.GeneratorDataset([(i,) for i in range(10)], ["x"], shuffle=True)
    assert [[int(b[0]) for b in gen.create_tuple_iterator(output_numpy=True)]
            for _ in range(2)] == want["generator_fresh"]


LOSSES = {"float32": lambda: Tensor(np.float32(3.6393022)),
          "float16": lambda: Tensor(np.float16(0.1)),
          "float32_vector": lambda: Tensor(np.array([1.0, 2.5], np.float32)),
          "tuple": lambda: (Tensor(np.float32(0.1)), Tensor(True)),
          "python_float": lambda: 0.25}


@pytest.mark.parametrize("name", sorted(ORACLE["loss_monitor_lines"]))
def test_loss_monitor_prints_the_loss_as_mindspore(name, capsys):
    from mscore.train.callback import LossMonitor, RunContext, _InternalCallbackParam
    cb_params = _InternalCallbackParam()
    cb_params.cur_epoch_num, cb_params.epoch_num = 1, 1
    cb_params.cur_step_num, cb_params.batch_num = 1, 1
    cb_params.net_outputs = LOSSES[name]()
    LossMonitor(1).step_end(RunContext(cb_params))
    assert capsys.readouterr().out.strip() == ORACLE["loss_monitor_lines"][name]


# -- the same seed, the same initial weights on every backend --------------------------------
_WEIGHTS = ("import sys, numpy as np, mscore as ms\n"
            "from mscore import nn\n"
            "for backend in sys.argv[1:]:\n"
            "    ms.set_seed(3)\n"
            "    ms.set_context(backend=backend)\n"
            "    net = nn.SequentialCell([nn.Dense(3, 4), nn.Conv2d(1, 2, 3)])\n"
            "    np.save(sys.stdout.buffer, np.concatenate([p.asnumpy().ravel() "
            "for p in net.get_parameters()]))\n")


def test_set_seed_gives_the_same_initial_weights_on_every_backend():
    """A fresh process seeds, then selects each backend in turn (its library is imported
    then, lazily, after the seed) and builds the same network."""
    import io
    proc = subprocess.run([sys.executable, "-c", _WEIGHTS, *BACKENDS], capture_output=True,
                          timeout=240, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr.decode()
    stream = io.BytesIO(proc.stdout)
    weights = {backend: np.load(stream) for backend in BACKENDS}
    assert np.unique(weights["numpy"]).size > 10     # real random draws
    for backend in BACKENDS:
        np.testing.assert_array_equal(weights[backend], weights["numpy"], err_msg=backend)


# -- encrypted MINDIR --------------------------------------------------------------------------
_ENC = ORACLE["encrypted_mindir"]
_CRYPTO = Path(__file__).parent / "data" / "crypto"


@pytest.mark.parametrize("mode", sorted(_ENC["files"]))
def test_mindspore_encrypted_mindir_loads_with_its_key(mode):
    pytest.importorskip("cryptography")
    graph = ms.load(str(_CRYPTO / _ENC["files"][mode]), dec_key=_ENC["key"].encode(),
                    dec_mode=mode)
    out = nn.GraphCell(graph)(Tensor(np.array(_ENC["input"], np.float32)))
    np.testing.assert_allclose(out.asnumpy(), _ENC["output"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", sorted(_ENC["files"]))
def test_encrypted_mindir_export_round_trip(mode, tmp_path):
    """mscore encrypts in MindSpore's layout (the first word is the mode's magic, as in
    MindSpore's file); the key reads it back, a wrong key or none is a ValueError naming the
    file."""
    pytest.importorskip("cryptography")
    key = _ENC["key"].encode()
    net = nn.Dense(3, 2)
    x = Tensor(np.array(_ENC["input"], np.float32))
    path = str(tmp_path / "net.mindir")
    ms.export(net, x, file_name=path, file_format="MINDIR", enc_key=key, enc_mode=mode)
    data = Path(path).read_bytes()
    assert data[:4] == (_CRYPTO / _ENC["files"][mode]).read_bytes()[:4]
    assert b"Dense" not in data           # the graph is not readable without the key
    out = nn.GraphCell(ms.load(path, dec_key=key, dec_mode=mode))(x)
    np.testing.assert_allclose(out.asnumpy(), net(x).asnumpy(), rtol=1e-6, atol=1e-6)
    for kwargs in ({}, {"dec_key": key[::-1], "dec_mode": mode}):
        with pytest.raises(ValueError, match="net.mindir"):
            ms.load(path, **kwargs)


def test_encrypted_mindir_argument_errors(tmp_path):
    key = _ENC["key"].encode()
    net = nn.Dense(3, 2)
    x = Tensor(np.ones((1, 3), np.float32))
    path = str(tmp_path / "bad")
    cases = {"enc_key_str": lambda: ms.export(net, x, file_name=path, file_format="MINDIR",
                                              enc_key="k"),
             "enc_mode_int": lambda: ms.export(net, x, file_name=path, file_format="MINDIR",
                                               enc_key=key, enc_mode=1),
             "enc_mode_bad": lambda: ms.export(net, x, file_name=path, file_format="MINDIR",
                                               enc_key=key, enc_mode="XYZ"),
             "dec_key_str": lambda: ms.load(str(_CRYPTO / _ENC["files"]["AES-GCM"]),
                                            dec_key="k")}
    assert sorted(cases) == sorted(_ENC["errors"])
    for name, fn in cases.items():
        assert outcome(fn) == _ENC["errors"][name], name


def test_collector_records_the_training_pipeline(tmp_path, monkeypatch):
    """MindSpore's ``_collect_dataset_graph``: one ``dataset_graph`` value named
    ``train_dataset`` in train mode, none in eval mode (mscore's value: the pipeline's nodes)."""
    import mscore.dataset as ds
    from mscore.train.callback import _InternalCallbackParam
    from mscore.train.summary import SummaryRecord
    added = []
    monkeypatch.setattr(SummaryRecord, "add_value",
                        lambda self, plugin, name, value: added.append((plugin, name, value)))
    cb_params = _InternalCallbackParam()
    cb_params.train_dataset = ds.NumpySlicesDataset({"x": np.arange(4)}).batch(2)
    with ms.train.SummaryCollector(str(tmp_path)) as collector:
        cb_params.mode = "eval"
        collector._collect_dataset_graph(cb_params)
        assert added == []
        cb_params.mode = "train"
        collector._collect_dataset_graph(cb_params)
    (plugin, name, value), = added
    assert (plugin, name) == ("dataset_graph", "train_dataset")
    assert value == {"op": "BatchDataset", "children": [{"op": "NumpySlicesDataset"}]}
