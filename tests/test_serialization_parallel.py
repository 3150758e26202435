"""build_searched_strategy, merge_sliced_parameter and parse_print."""
import numpy as np
import pytest
from _helpers import layout_block, numpy_context_each_test

import mscore as ms
from mscore.train.proto import node_strategy_pb2, print_pb2
from mscore.train.serialization import build_searched_strategy, merge_sliced_parameter, parse_print

_numpy_context = numpy_context_each_test()


def _layout_item(msg, name, dev_matrix, tensor_map, split_shape=None, field=0):
    item = msg.parallel_layout_item.add(param_name=name)
    lay = item.parallel_layouts
    lay.dev_matrix.add().dim.extend(dev_matrix)
    lay.tensor_map.add().dim.extend(tensor_map)
    if split_shape:
        lay.param_split_shape.add().dim.extend(split_shape)
    lay.indices_offset.add().dim.extend([0])
    lay.field = field
    lay.opt_weight_shard_step = 0
    lay.opt_weight_shard_size = 0
    return lay


def _strategy_file(tmp_path, layouts):
    msg = node_strategy_pb2.ParallelStrategyMap(current_stage=0)
    s = msg.parallel_strategy_item.add(node_name="MatMul-op0")
    s.parallel_strategys.stage = 0
    s.parallel_strategys.parallel_strategy.add().dim.extend([2, 1])
    for args in layouts:
        _layout_item(msg, *args)
    path = tmp_path / "strategy.ckpt"
    path.write_bytes(msg.SerializeToString())
    return str(path)


def _slices(full, dev_matrix, tensor_map):
    """What each rank holds, in rank order."""
    return [layout_block(full, dev_matrix, tensor_map, rank)
            for rank in range(int(np.prod(dev_matrix)))]


def _params(arrays, name="w"):
    return [ms.Parameter(ms.Tensor(a), name=name) for a in arrays]


def test_build_searched_strategy_reads_layouts(tmp_path):
    path = _strategy_file(tmp_path, [("fc.weight", [2, 4], [1, 0]), ("emb", [8], [0, -1])])
    strategy = build_searched_strategy(path)
    assert set(strategy) == {"fc.weight", "emb"}
    assert list(strategy["fc.weight"].dev_matrix[0].dim) == [2, 4]
    assert list(strategy["fc.weight"].tensor_map[0].dim) == [1, 0]
    assert list(strategy["emb"].tensor_map[0].dim) == [0, -1]


def test_build_searched_strategy_errors(tmp_path):
    with pytest.raises(TypeError, match="strategy_filename"):
        build_searched_strategy(3)
    with pytest.raises(ValueError, match="no such strategy file"):
        build_searched_strategy(str(tmp_path / "missing.ckpt"))
    (tmp_path / "empty.ckpt").write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        build_searched_strategy(str(tmp_path / "empty.ckpt"))
    (tmp_path / "bad.ckpt").write_bytes(b"\xff\xff\xff garbage")
    with pytest.raises(ValueError, match="bad.ckpt"):
        build_searched_strategy(str(tmp_path / "bad.ckpt"))
    msg = node_strategy_pb2.ParallelStrategyMap(current_stage=0)
    (tmp_path / "none.ckpt").write_bytes(msg.SerializeToString())
    with pytest.raises(ValueError, match="no sliced parameter"):
        build_searched_strategy(str(tmp_path / "none.ckpt"))


def test_merge_without_strategy_concatenates_axis_0():
    # MindSpore's documented example: four (3,) slices in rank order.
    pieces = [np.array([0.00023915, 0.00013939, -0.00098059]),
              np.array([0.00015815, 0.00015458, -0.00012125]),
              np.array([0.00042165, 0.00029692, -0.00007941]),
              np.array([0.00084451, 0.00089960, -0.00010431])]
    params = _params([p.astype(np.float32) for p in pieces], "network.embedding_table")
    params[0].requires_grad = False
    merged = merge_sliced_parameter(params)
    assert merged.name == "network.embedding_table" and merged.requires_grad is False
    np.testing.assert_array_equal(merged.asnumpy(), np.concatenate(pieces).astype(np.float32))


@pytest.mark.parametrize("dev_matrix,tensor_map", [
    ([2, 4], [1, 0]),      # rows over 2, columns over 4
    ([2, 4], [0, 1]),      # rows over 4, columns over 2
    ([2, 2], [-1, 0]),     # columns over 2, replicated over the other device axis
    ([8], [0, -1]),        # rows over 8
    ([2, 2, 2], [2, -1]),  # rows over the first device axis only
])
def test_merge_with_strategy_rebuilds_the_whole_parameter(tmp_path, dev_matrix, tensor_map):
    full = np.arange(8 * 8, dtype=np.float32).reshape(8, 8) / 7
    path = _strategy_file(tmp_path, [("w", dev_matrix, tensor_map)])
    strategy = build_searched_strategy(path)
    merged = merge_sliced_parameter(_params(_slices(full, dev_matrix, tensor_map)), strategy)
    np.testing.assert_array_equal(merged.asnumpy(), full)


def test_merge_uneven_split_uses_param_split_shape(tmp_path):
    full = np.arange(10 * 3, dtype=np.int32).reshape(10, 3)
    sizes = [4, 3, 2, 1]
    cuts = np.cumsum([0] + sizes)
    slices = [full[cuts[i]:cuts[i + 1]] for i in range(4)]
    strategy = build_searched_strategy(_strategy_file(tmp_path, [("w", [4], [0, -1], sizes)]))
    np.testing.assert_array_equal(merge_sliced_parameter(_params(slices), strategy).asnumpy(),
                                  full)
    bad = build_searched_strategy(_strategy_file(tmp_path, [("w", [4], [0, -1], [4, 3, 1, 2])]))
    with pytest.raises(ValueError, match="slice 2 of 'w' should have 1 rows"):
        merge_sliced_parameter(_params(slices), bad)


def test_merge_field_layout():
    # 2 devices, field 2: device j holds rows [f-th block of device j] for f = 0, 1.
    full = np.arange(8 * 2, dtype=np.float32).reshape(8, 2)
    # whole = [f0 d0, f0 d1, f1 d0, f1 d1], each block 2 rows
    blocks = [full[0:2], full[2:4], full[4:6], full[6:8]]
    dev0 = np.concatenate([blocks[0], blocks[2]])
    dev1 = np.concatenate([blocks[1], blocks[3]])
    msg = node_strategy_pb2.ParallelStrategyMap(current_stage=0)
    layout = _layout_item(msg, "w", [2], [0, -1], field=2)
    merged = merge_sliced_parameter(_params([dev0, dev1]), {"w": layout})
    np.testing.assert_array_equal(merged.asnumpy(), full)


def test_merge_argument_checks():
    a = _params([np.ones((2, 3), np.float32)] * 2)
    with pytest.raises(TypeError, match="sliced_parameters"):
        merge_sliced_parameter(tuple(a))
    with pytest.raises(ValueError, match="empty"):
        merge_sliced_parameter([])
    with pytest.raises(TypeError, match=r"sliced_parameters\[1\]"):
        merge_sliced_parameter([a[0], ms.Tensor(np.ones((2, 3), np.float32))])
    with pytest.raises(TypeError, match="strategy"):
        merge_sliced_parameter(a, strategy=["w"])
    with pytest.raises(ValueError, match=r"sliced_parameters\[1\]"):
        merge_sliced_parameter([a[0], ms.Parameter(ms.Tensor(np.ones((2, 4), np.float32)),
                                                    name="w")])
    with pytest.raises(ValueError, match=r"sliced_parameters\[1\]"):
        merge_sliced_parameter([a[0], ms.Parameter(ms.Tensor(np.ones((2, 3), np.float32)),
                                                    name="v")])
    msg = node_strategy_pb2.ParallelStrategyMap(current_stage=0)
    layout = _layout_item(msg, "other", [2], [0, -1])
    with pytest.raises(KeyError, match="'w'"):
        merge_sliced_parameter(a, {"other": layout})
    layout = _layout_item(msg, "w", [4], [0, -1])
    with pytest.raises(ValueError, match="4 devices, got 2 slices"):
        merge_sliced_parameter(a, {"w": layout})
    uneven = _params([np.ones((2, 3), np.float32), np.ones((1, 3), np.float32)])
    layout = _layout_item(msg, "w", [2], [0, -1])
    with pytest.raises(ValueError, match="one shape"):
        merge_sliced_parameter(uneven, {"w": layout})


# -- parse_print -----------------------------------------------------------------------------------
def _print_file(tmp_path, values):
    msg = print_pb2.Print()
    for v in values:
        entry = msg.value.add()
        if isinstance(v, str):
            entry.desc = v
        else:
            dims, ttype, content = v
            entry.tensor.dims.extend(dims)
            entry.tensor.tensor_type = ttype
            entry.tensor.tensor_content = content
    path = tmp_path / "print.pb"
    path.write_bytes(msg.SerializeToString())
    return str(path)


def test_parse_print_returns_strings_and_tensors(tmp_path):
    m = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    path = _print_file(tmp_path, [
        "loss:", ([2, 3], "Float32", m.astype("<f4").tobytes()),
        "step", ([0], "Int32", np.array(7, "<i4").tobytes()),
        ([], "Bool", b"\x01"), ([3], "float16", np.array([1, 2, 3], "<f2").tobytes()),
    ])
    out = parse_print(path)
    assert out[0] == "loss:" and out[2] == "step"
    np.testing.assert_array_equal(out[1].asnumpy(), m)
    assert out[3].shape == () and out[3].dtype is ms.int32 and int(out[3]) == 7
    assert out[4].shape == () and bool(out[4]) is True
    assert out[5].dtype is ms.float16
    np.testing.assert_array_equal(out[5].asnumpy(), np.array([1, 2, 3], np.float16))


def test_parse_print_errors(tmp_path):
    with pytest.raises(TypeError, match="print_file_name"):
        parse_print(None)
    with pytest.raises(ValueError, match="does not exist"):
        parse_print(str(tmp_path / "missing"))
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        parse_print(str(tmp_path / "empty"))
    (tmp_path / "junk").write_bytes(b"\x12\x07garbage!")
    with pytest.raises(ValueError, match="junk"):
        parse_print(str(tmp_path / "junk"))
    path = _print_file(tmp_path, [([4], "Float32", bytes(12))])
    with pytest.raises(ValueError, match="needs 16 bytes"):
        parse_print(path)
    path = _print_file(tmp_path, [([1], "Quaternion", bytes(4))])
    with pytest.raises(ValueError, match="Quaternion"):
        parse_print(path)
