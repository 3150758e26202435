"""ONNX export frees the batch axis: one exported file runs in onnxruntime at any batch size
and computes what the network computes; ``dynamic_batch=False`` keeps the example's size; a
graph that changes with the batch in more than its shapes falls back to the example's size,
with a warning."""
import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import nn, ops

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


_numpy_context = numpy_context_each_test()


class _ConvNet(nn.Cell):
    """Conv, BatchNorm, ReLU, max pool, Flatten (a Reshape whose size follows the batch),
    Dense, softmax."""

    def __init__(self):
        super().__init__()
        self.body = nn.SequentialCell(nn.Conv2d(1, 4, 3, pad_mode="same"), nn.BatchNorm2d(4),
                                      nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
                                      nn.Dense(4 * 4 * 4, 5))

    def construct(self, x):
        return ops.softmax(self.body(x), axis=-1)


def _dims(values):
    return [[d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim] for v in values]


def test_one_file_runs_batch_1_and_7_like_the_network(tmp_path):
    ms.set_seed(0)
    net = _ConvNet()
    example = ms.Tensor(np.random.default_rng(0).standard_normal((3, 1, 8, 8)), ms.float32)
    ms.export(net, example, file_name=str(tmp_path / "net"), file_format="ONNX")
    session = ort.InferenceSession(str(tmp_path / "net.onnx"))
    assert session.get_inputs()[0].shape == ["batch", 1, 8, 8]
    assert session.get_outputs()[0].shape == ["batch", 5]
    net.set_train(False)
    for batch in (1, 7):
        x = np.random.default_rng(batch).standard_normal((batch, 1, 8, 8)).astype(np.float32)
        (got,) = session.run(None, {session.get_inputs()[0].name: x})
        expected = net(ms.Tensor(x)).asnumpy()
        assert got.shape == (batch, 5)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_dynamic_batch_false_keeps_the_example_size(tmp_path):
    import onnx
    net = nn.Dense(3, 2)
    ms.export(net, ms.Tensor(np.ones((4, 3), np.float32)), file_name=str(tmp_path / "net"),
              file_format="ONNX", dynamic_batch=False)
    model = onnx.load(str(tmp_path / "net.onnx"))
    assert _dims(model.graph.input) == [[4, 3]] and _dims(model.graph.output) == [[4, 2]]
    with pytest.raises(TypeError, match="dynamic_batch: expected a bool"):
        ms.export(net, ms.Tensor(np.ones((4, 3), np.float32)), file_name=str(tmp_path / "n"),
                  file_format="ONNX", dynamic_batch="yes")


def test_a_graph_that_changes_with_the_batch_keeps_the_example_size(tmp_path):
    import onnx

    class AddsBatchSizedConstant(nn.Cell):
        def construct(self, x):   # a constant as long as the batch: folded into the graph
            return x + ops.ones((x.shape[0], 1), ms.float32) * ms.Tensor(
                np.arange(x.shape[0], dtype=np.float32).reshape(-1, 1))

    with pytest.warns(RuntimeWarning, match="exported for batch 2 only"):
        ms.export(AddsBatchSizedConstant(), ms.Tensor(np.ones((2, 3), np.float32)),
                  file_name=str(tmp_path / "net"), file_format="ONNX")
    model = onnx.load(str(tmp_path / "net.onnx"))
    assert _dims(model.graph.input) == [[2, 3]]
    session = ort.InferenceSession(str(tmp_path / "net.onnx"))
    (got,) = session.run(None, {"input_0": np.zeros((2, 3), np.float32)})
    np.testing.assert_array_equal(got, [[0, 0, 0], [1, 1, 1]])


def test_a_network_that_runs_at_its_example_batch_only_is_exported_at_it(tmp_path):
    import onnx

    from mscore.common.parameter import Parameter

    class FullShapeAffine(nn.Cell):   # Parameters of the input's full shape, batch included
        def __init__(self):
            super().__init__()
            self.a = Parameter(ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), name="a")
            self.b = Parameter(ms.Tensor(np.full((2, 3), 0.5, np.float32)), name="b")

        def construct(self, x):
            return x * self.a + self.b

    x = np.ones((2, 3), np.float32) * 2
    with pytest.warns(RuntimeWarning, match=r"does not run at batch 3 \(ValueError: .*\); it "
                                            r"is exported for batch 2 only"):
        ms.export(FullShapeAffine(), ms.Tensor(x), file_name=str(tmp_path / "net"),
                  file_format="ONNX")
    model = onnx.load(str(tmp_path / "net.onnx"))
    assert _dims(model.graph.input) == [[2, 3]] and _dims(model.graph.output) == [[2, 3]]
    session = ort.InferenceSession(str(tmp_path / "net.onnx"))
    (got,) = session.run(None, {"input_0": x})
    np.testing.assert_allclose(got, x * np.arange(6).reshape(2, 3) + 0.5)
