"""ONNX export: the MLP and the CNN (and a network touching many more ops) traced on every
backend run in onnxruntime with outputs equal to mscore's within fp32 tolerance."""
import os

import numpy as np
import pytest
from _helpers import numpy_context_each_test, use_backend

import mscore as ms
from mscore import nn, ops
from mscore.plugin.registry import get_registry
from mscore.train.serialization import export
from mscore.train.serialization._export import build_onnx_model

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

BACKENDS = get_registry().names()
RTOL, ATOL = 1e-5, 1e-5




_numpy_context = numpy_context_each_test()


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(20, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(32, 16)
        self.fc3 = nn.Dense(16, 10)

    def construct(self, x):
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


class CNN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, pad_mode="same", has_bias=True)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(8, 4, 3, stride=2, pad_mode="pad", padding=1)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 3 * 3, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        return self.fc(self.flatten(self.relu(self.conv2(x))))


class ManyOps(nn.Cell):
    """Softmax/log_softmax, slicing, concat, pad, avg pool, transposed conv, erf, tanh,
    reductions, comparisons and a second output."""

    def __init__(self):
        super().__init__()
        self.deconv = nn.Conv2dTranspose(3, 2, 3, stride=2, pad_mode="same")
        self.avg = nn.AvgPool2d(2, 2)
        self.fc = nn.Dense(8, 5)

    def construct(self, x):
        y = self.avg(self.deconv(x))                       # (N, 2, 6, 6)
        y = ops.pad(y, (1, 0, 0, 1))                        # (N, 2, 7, 7)
        y = y[:, :, 1:, ::-2]                               # (N, 2, 6, 4)
        y = ops.concat([y, ops.gelu(y)], 1)                 # (N, 4, 6, 4)
        z = ops.mean(y, (2,))                               # (N, 4, 4)
        z = ops.reshape(ops.transpose(z, (0, 2, 1)), (-1, 8))   # (N*2, 8)
        logits = self.fc(ops.sigmoid(z) * ops.maximum(z, 0.1))
        probs = ops.softmax(logits, -1)
        logp = ops.log_softmax(logits, 0)
        gated = ops.where(logits > 0, ops.exp(-ops.abs(logits)), ops.sqrt(probs))
        return probs + gated, logp[None, 1:3] * ops.amax(logp, 1, True)[1:3]


def _run_onnx(path, inputs):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {f"input_{i}": x.asnumpy() for i, x in enumerate(inputs)}
    return sess.run(None, feeds)


def _as_list(out):
    return [o.asnumpy() for o in (out if isinstance(out, (tuple, list)) else (out,))]


def _check(net, inputs, tmp_path):
    path = str(tmp_path / "model")
    export(net, *inputs, file_name=path, file_format="ONNX")
    got = _run_onnx(path + ".onnx", inputs)
    net.set_train(False)
    want = _as_list(net(*inputs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
    return onnx.load(path + ".onnx")


@pytest.mark.parametrize("backend", BACKENDS)
def test_mlp_runs_in_onnxruntime_like_mscore(backend, tmp_path):
    use_backend(backend)
    ms.set_seed(0)
    net = MLP()
    x = ms.Tensor(np.random.default_rng(0).standard_normal((4, 20)).astype(np.float32))
    model = _check(net, [x], tmp_path)
    names = {i.name for i in model.graph.initializer}
    assert {"fc1.weight", "fc1.bias", "fc2.weight", "fc3.bias"} <= names
    assert {n.op_type for n in model.graph.node} >= {"MatMul", "Add", "Where"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_cnn_runs_in_onnxruntime_like_mscore(backend, tmp_path):
    use_backend(backend)
    ms.set_seed(1)
    net = CNN()
    rng = np.random.default_rng(1)
    net.set_train(True)  # give BatchNorm non-trivial moving statistics first
    for _ in range(2):
        net(ms.Tensor(rng.standard_normal((4, 3, 12, 12)).astype(np.float32) * 3 + 1))
    x = ms.Tensor(rng.standard_normal((2, 3, 12, 12)).astype(np.float32))
    moving = net.bn1.moving_mean.asnumpy().copy()
    model = _check(net, [x], tmp_path)
    assert not np.allclose(moving, 0)
    assert {n.op_type for n in model.graph.node} >= {"Conv", "MaxPool", "MatMul"}
    np.testing.assert_array_equal(net.bn1.moving_mean.asnumpy(), moving)  # eval: untouched


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_ops_network_runs_in_onnxruntime_like_mscore(backend, tmp_path):
    use_backend(backend)
    ms.set_seed(2)
    net = ManyOps()
    x = ms.Tensor(np.random.default_rng(2).standard_normal((2, 3, 6, 6)).astype(np.float32))
    model = _check(net, [x], tmp_path)
    ops_used = {n.op_type for n in model.graph.node}
    assert {"ConvTranspose", "AveragePool", "Pad", "Slice", "Concat", "Softmax",
            "LogSoftmax", "Erf", "Unsqueeze"} <= ops_used


def test_export_restores_training_mode_and_graph_mode(tmp_path):
    net = MLP()
    net.set_train(True)
    ms.set_context(mode=ms.GRAPH_MODE)
    export(net, ms.Tensor(np.ones((1, 20), np.float32)), file_name=str(tmp_path / "m.onnx"),
           file_format="ONNX")
    assert net.training and net.fc1.training
    assert ms.get_context("mode") == ms.GRAPH_MODE
    assert os.listdir(tmp_path) == ["m.onnx"]  # the suffix is not doubled


def test_two_inputs_and_an_output_that_is_an_input_op(tmp_path):
    class Two(nn.Cell):
        def construct(self, a, b):
            return ops.matmul(a, b), ops.cast(a, ms.float16)

    a = ms.Tensor(np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32))
    b = ms.Tensor(np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32))
    _check(Two(), [a, b], tmp_path)


def test_export_argument_checks(tmp_path):
    net = MLP()
    x = ms.Tensor(np.ones((1, 20), np.float32))
    f = str(tmp_path / "m")
    with pytest.raises(NotImplementedError, match="AIR"):
        export(net, x, file_name=f, file_format="AIR")
    with pytest.raises(ValueError, match="file_format"):
        export(net, x, file_name=f, file_format="onnx")
    with pytest.raises(TypeError, match="file_format"):
        export(net, x, file_name=f, file_format=None)
    with pytest.raises(TypeError, match="file_name"):
        export(net, x, file_name=3, file_format="ONNX")
    with pytest.raises(TypeError, match="net"):
        export(lambda t: t, x, file_name=f, file_format="ONNX")
    with pytest.raises(TypeError, match=r"inputs\[0\]"):
        export(net, np.ones((1, 20), np.float32), file_name=f, file_format="ONNX")
    with pytest.raises(ValueError, match="inputs"):
        export(net, file_name=f, file_format="ONNX")
    assert not os.listdir(tmp_path)


def test_random_ops_in_inference_are_refused():
    class Noisy(nn.Cell):
        def construct(self, x):
            return x + ops.uniform(x.shape)

    with pytest.raises(NotImplementedError, match="random"):
        build_onnx_model(Noisy(), ms.Tensor(np.ones((2, 2), np.float32)))


def test_output_that_ignores_the_input_is_refused():
    class Const(nn.Cell):
        def construct(self, x):
            return ops.ones((2, 2))

    with pytest.raises(ValueError, match="does not depend on the inputs"):
        build_onnx_model(Const(), ms.Tensor(np.ones((2, 2), np.float32)))
