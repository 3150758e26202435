"""Older probes of the file loaders: a strategy file whose tensor_map repeats a device axis,
a file larger than the read bound (a sparse file), absurd checkpoint dims and an ONNX export
with an unnamed Parameter are ValueErrors naming the file (or the parameter), never a
KeyError or a MemoryError."""
import os

import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import nn
from mscore.common.parameter import Parameter
from mscore.train.proto import checkpoint_pb2, node_strategy_pb2
from mscore.train.serialization import (
    build_searched_strategy,
    load_checkpoint,
    merge_sliced_parameter,
)
from mscore.train.serialization._reading import MAX_BYTES_ENV

_numpy_context = numpy_context_each_test()


def _strategy_file(path, tensor_map):
    msg = node_strategy_pb2.ParallelStrategyMap()
    msg.current_stage = 1
    item = msg.parallel_layout_item.add()
    item.param_name = "w"
    layout = item.parallel_layouts
    layout.dev_matrix.add().dim.extend([2, 2])
    layout.tensor_map.add().dim.extend(tensor_map)
    layout.field = 0
    layout.opt_weight_shard_step = 0
    layout.opt_weight_shard_size = 0
    path.write_bytes(msg.SerializeToString())
    return str(path)


def test_repeated_tensor_map_entry_is_refused_naming_file_and_parameter(tmp_path):
    good = build_searched_strategy(_strategy_file(tmp_path / "good.ckpt", [1, 0]))
    repeated = str(tmp_path / "repeated.ckpt")
    with pytest.raises(ValueError) as info:
        build_searched_strategy(_strategy_file(tmp_path / "repeated.ckpt", [0, 0]))
    assert repr(repeated) in str(info.value) and "'w'" in str(info.value)
    # a layout given by hand with the repeat: merge_sliced_parameter says so too
    layout = good["w"]
    layout.tensor_map[0].dim[:] = [1, 1]
    slices = [Parameter(ms.Tensor(np.ones((2, 2), np.float32)), name="w") for _ in range(4)]
    with pytest.raises(ValueError, match="cuts two axes along one device axis"):
        merge_sliced_parameter(slices, {"w": layout})


def test_files_over_the_read_bound_are_refused_before_reading(tmp_path, monkeypatch):
    ckpt = tmp_path / "sparse.ckpt"
    with open(ckpt, "wb") as f:
        f.truncate(6 * 1024 ** 3)  # 6 GiB, sparse: no disk used
    monkeypatch.setenv(MAX_BYTES_ENV, str(1024 ** 3))
    with pytest.raises(ValueError, match=MAX_BYTES_ENV) as info:
        load_checkpoint(str(ckpt))
    assert repr(str(ckpt)) in str(info.value) and str(6 * 1024 ** 3) in str(info.value)
    strategy = tmp_path / "big.strategy"
    with open(strategy, "wb") as f:
        f.truncate(2 * 1024 ** 3)
    with pytest.raises(ValueError, match=MAX_BYTES_ENV):
        build_searched_strategy(str(strategy))
    from mscore.train.serialization import parse_print
    printed = tmp_path / "big.print"
    with open(printed, "wb") as f:
        f.truncate(2 * 1024 ** 3)
    with pytest.raises(ValueError, match=MAX_BYTES_ENV):
        parse_print(str(printed))


@pytest.mark.parametrize("dims", [[0, 2 ** 62], [2 ** 31, 2 ** 31, 0]])
def test_absurd_dims_are_a_value_error_naming_the_file(tmp_path, dims):
    msg = checkpoint_pb2.Checkpoint()
    value = msg.value.add()
    value.tag = "w"
    value.tensor.dims.extend(dims)
    value.tensor.tensor_type = "Float32"
    value.tensor.tensor_content = b""
    path = tmp_path / "dims.ckpt"
    path.write_bytes(msg.SerializeToString())
    with pytest.raises(ValueError, match="a shape no array can have") as info:
        load_checkpoint(str(path))
    assert repr(str(path)) in str(info.value)


def test_onnx_export_refuses_an_unnamed_parameter(tmp_path):
    pytest.importorskip("onnx")

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(ms.Tensor(np.ones(3, np.float32)), name="w")

        def construct(self, x):
            return x * self.w

    net = Net()
    net.w.name = ""
    with pytest.raises(ValueError, match="empty name"):
        ms.export(net, ms.Tensor(np.ones(3, np.float32)), file_name=str(tmp_path / "m"),
                  file_format="ONNX")
    assert os.listdir(tmp_path) == []
