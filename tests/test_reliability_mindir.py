"""MINDIR files that are ambiguous or inconsistent are refused with a ValueError naming the
file and the name or node, at load where the file tells, at run time before anything big is
allocated; export refuses a network whose Parameters share a name."""
import os

import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import nn, ops
from mscore.common.parameter import Parameter
from mscore.train.proto import mind_ir_pb2 as pb

FIXTURES = os.path.join(os.path.dirname(__file__), "data", "mindir")


_numpy_context = numpy_context_each_test()


def _model(name="mscore_mlp.mindir"):
    model = pb.ModelProto()
    with open(os.path.join(FIXTURES, name), "rb") as f:
        model.ParseFromString(f.read())
    return model


def _write(tmp_path, name, model):
    path = str(tmp_path / name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


class _TwoScales(nn.Cell):
    def __init__(self, name_b):
        super().__init__()
        self.a = Parameter(ms.Tensor(np.full(6, 10, np.float32)), name="scale")
        self.b = Parameter(ms.Tensor(np.arange(6, dtype=np.float32)), name=name_b)

    def construct(self, x):
        return x * self.b + self.a


def test_export_refuses_parameters_sharing_a_name(tmp_path):
    x = ms.Tensor(np.ones(6, np.float32))
    with pytest.raises(ValueError, match="'scale'"):
        ms.export(_TwoScales("scale"), x, file_name=str(tmp_path / "shared"),
                  file_format="MINDIR")
    assert os.listdir(tmp_path) == []
    # distinct names: exported, and the loaded graph computes x * arange(6) + 10
    path = str(tmp_path / "distinct")
    ms.export(_TwoScales("offsets"), x, file_name=path, file_format="MINDIR")
    got = nn.GraphCell(ms.load(path + ".mindir"))(x).asnumpy()
    np.testing.assert_array_equal(got, np.arange(6, dtype=np.float32) + 10)


def test_export_keeps_a_parameter_named_like_the_input_apart(tmp_path):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(ms.Tensor(np.full(3, 2, np.float32)), name="x")

        def construct(self, x):
            return x + self.w

    x = ms.Tensor(np.array([1, 2, 3], np.float32))
    path = str(tmp_path / "net")
    ms.export(Net(), x, file_name=path, file_format="MINDIR")
    got = nn.GraphCell(ms.load(path + ".mindir"))(x).asnumpy()
    np.testing.assert_array_equal(got, [3, 4, 5])


def _rename_parameter(model, index, new):
    """Give parameter ``index`` the value name ``new``, in its uses too."""
    old = model.graph.parameter[index].name
    model.graph.parameter[index].name = new
    for node in model.graph.node:
        node.input[:] = [new if i == old else i for i in node.input]


def _ambiguous_models():
    ref_twice = _model()
    ref_twice.graph.parameter[1].ref_key = ref_twice.graph.parameter[0].ref_key
    name_twice = _model()
    _rename_parameter(name_twice, 1, name_twice.graph.parameter[0].name)
    like_input = _model()
    _rename_parameter(like_input, 0, like_input.graph.input[0].name)
    prim_twice = _model()
    last = prim_twice.primitives[-1]  # "ReLU:11"
    extra = prim_twice.primitives.add()
    extra.CopyFrom(last)
    extra.op_type = "Sigmoid"
    input_twice = _model()
    first = input_twice.graph.input[0]
    input_twice.graph.input.add().CopyFrom(first)
    big_endian = _model()
    big_endian.little_endian = False
    return {"ref_twice": (ref_twice, "dense_relu_sequential.0.weight"),
            "name_twice": (name_twice, "Network_construct:dense_relu_sequential.0.weight"),
            "like_input": (like_input, "Network_construct:x"),
            "prim_twice": (prim_twice, "ReLU:11"),
            "input_twice": (input_twice, "Network_construct:x"),
            "big_endian": (big_endian, "little_endian")}


@pytest.mark.parametrize("case", sorted(_ambiguous_models()))
def test_ambiguous_files_are_refused_naming_file_and_name(case, tmp_path):
    model, name = _ambiguous_models()[case]
    path = _write(tmp_path, f"{case}.mindir", model)
    with pytest.raises(ValueError) as info:
        ms.load(path)
    assert repr(path) in str(info.value) and name in str(info.value)


def _broadcast_model(tmp_path, shape):
    class Net(nn.Cell):
        def construct(self, x):
            return ops.broadcast_to(x, (4, 3)) * 2

    path = str(tmp_path / "b")
    x = ms.Tensor(np.ones((1, 3), np.float32))
    ms.export(Net(), x, file_name=path, file_format="MINDIR")
    model = pb.ModelProto()
    with open(path + ".mindir", "rb") as f:
        model.ParseFromString(f.read())
    for node in model.graph.node:
        if node.op_type == "Constant":
            attr = node.attribute[0]
            if attr.type == pb.AttributeProto.TUPLE and \
                    [list(v.ints) for v in attr.values] == [[4], [3]]:
                for v, s in zip(attr.values, shape):
                    v.ints[0] = s
                return model
    raise AssertionError("no shape constant in the exported file")


def test_huge_shape_is_refused_at_load_naming_file_and_node(tmp_path):
    model = _broadcast_model(tmp_path, (1 << 20, 1 << 20))
    path = _write(tmp_path, "huge.mindir", model)
    assert os.path.getsize(path) < 1 << 20
    with pytest.raises(ValueError, match="elements") as info:
        ms.load(path)
    assert repr(path) in str(info.value) and "node" in str(info.value)


def test_run_time_failures_name_file_and_node(tmp_path):
    model = _broadcast_model(tmp_path, (4, 5))  # (1, 3) cannot broadcast to (4, 5)
    path = _write(tmp_path, "bad_shape.mindir", model)
    cell = nn.GraphCell(ms.load(path))
    with pytest.raises(ValueError) as info:
        cell(ms.Tensor(np.ones((1, 3), np.float32)))
    message = str(info.value)
    assert repr(path) in message and "BroadcastTo" in message and "node" in message


def test_run_time_size_bound_before_allocating(tmp_path, monkeypatch):
    # inputs of (N, 1) and (1, N) broadcast to N * N elements: refused before computing
    class Net(nn.Cell):
        def construct(self, x, y):
            return x * y

    path = str(tmp_path / "outer")
    ms.export(Net(), ms.Tensor(np.ones((4, 1), np.float32)),
              ms.Tensor(np.ones((1, 4), np.float32)), file_name=path, file_format="MINDIR")
    graph = ms.load(path + ".mindir")
    monkeypatch.setenv("MSCORE_MINDIR_MAX_ELEMENTS", "10")
    with pytest.raises(ValueError, match="MSCORE_MINDIR_MAX_ELEMENTS") as info:
        nn.GraphCell(graph)(ms.Tensor(np.ones((4, 1), np.float32)),
                            ms.Tensor(np.ones((1, 4), np.float32)))
    assert repr(path + ".mindir") in str(info.value)


@pytest.mark.parametrize("dims", [[0, 2 ** 62], [2 ** 40, 2 ** 40, 0]])
def test_a_parameter_shape_no_array_can_have_is_refused_naming_the_file(tmp_path, dims):
    model = _model()
    param = model.graph.parameter[0]
    del param.dims[:]
    param.dims.extend(dims)
    param.raw_data = b""
    path = _write(tmp_path, "absurd_dims.mindir", model)
    with pytest.raises(ValueError, match="larger than any array can be") as info:
        ms.load(path)
    assert repr(path) in str(info.value) or path in str(info.value)
