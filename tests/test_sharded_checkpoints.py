"""Sharded checkpoints in one process: strategy files with general layouts (dev_matrix /
tensor_map, cuts along any axis, devices holding copies), merged by
``load_distributed_checkpoint`` / ``transform_checkpoints`` and re-cut for another layout or
number of ranks; and what the loaders refuse, naming the file (conflicting layouts, an
incomplete layout, a missing rank, files in the wrong place, copies that differ, slices
loaded as whole parameters).

The slices each rank holds are cut here by hand from the layout's definition (device ``r``
at ``numpy.unravel_index(r, dev_matrix)``; tensor_map entry ``m`` cuts along device axis
``len(dev_matrix) - 1 - m``), not by the code under test. The jobs of several processes are
in tests/test_scaleout.py.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import layout_block

import mscore as ms
from mscore import nn
from mscore.train.proto import node_strategy_pb2
from mscore.train.serialization._shard_identity import IDENTITY_KEY

RNG = np.random.default_rng(7)
WHOLE = {"w": RNG.standard_normal((8, 6)).astype(np.float32),      # a 2 x 2 grid of blocks
         "m": RNG.standard_normal((32, 20)).astype(np.float32),    # columns cut, copies
         "b": RNG.standard_normal(6).astype(np.float32)}           # replicated
# 4 devices as a (2, 2) matrix: w cut along both axes, m along its columns only
FOUR = {"w": ([2, 2], [1, 0]), "m": ([2, 2], [-1, 0])}
# 2 devices: w cut along its columns, m along its rows
TWO = {"w": ([2], [-1, 0]), "m": ([2], [0, -1])}


@pytest.fixture(autouse=True)
def _numpy_backend():
    ms.set_context(backend="numpy")
    ms.reset_auto_parallel_context()
    yield
    ms.reset_auto_parallel_context()


def write_strategy(path, layouts, extra=()):
    """A MindSpore strategy file (node_strategy.proto) with ``{name: (dev_matrix,
    tensor_map)}`` (and ``extra`` items, written after them)."""
    msg = node_strategy_pb2.ParallelStrategyMap()
    msg.current_stage = 0
    for name, (dev_matrix, tensor_map) in list(layouts.items()) + list(extra):
        item = msg.parallel_layout_item.add()
        item.param_name = name
        layout = item.parallel_layouts
        if dev_matrix is not None:
            layout.dev_matrix.add().dim.extend(dev_matrix)
        layout.tensor_map.add().dim.extend(tensor_map)
        layout.field = 0
        layout.opt_weight_shard_step = 0
        layout.opt_weight_shard_size = 0
    path.write_bytes(msg.SerializeToString())
    return str(path)


def rank_params(layouts, rank):
    return [ms.Parameter(ms.Tensor(np.ascontiguousarray(
        layout_block(WHOLE[n], *layouts[n], rank) if n in layouts else WHOLE[n])), name=n)
        for n in WHOLE]


def save_job(directory, layouts, ranks):
    """``directory/rank_R/net.ckpt`` of each rank (no identity entry: as MindSpore's)."""
    files = []
    for r in range(ranks):
        (directory / f"rank_{r}").mkdir(parents=True)
        files.append(str(directory / f"rank_{r}" / "net.ckpt"))
        ms.save_checkpoint(rank_params(layouts, r), files[-1])
    return files


class Holder(nn.Cell):
    def __init__(self):
        super().__init__()
        for name, value in WHOLE.items():
            setattr(self, name, ms.Parameter(ms.Tensor(np.zeros_like(value)), name=name))


def test_general_layouts_merge_into_one_process_and_recut_for_two_ranks(tmp_path):
    four = write_strategy(tmp_path / "four.ckpt", FOUR)
    two = write_strategy(tmp_path / "two.ckpt", TWO)
    files = save_job(tmp_path / "src", FOUR, 4)
    assert ms.load_checkpoint(files[3])["w"].shape == (4, 3)
    holder = Holder()
    ms.load_distributed_checkpoint(holder, files, train_strategy_filename=four)
    for name, value in WHOLE.items():
        np.testing.assert_array_equal(getattr(holder, name).asnumpy(), value, err_msg=name)
    ms.transform_checkpoints(str(tmp_path / "src"), str(tmp_path / "one"), "net",
                             src_strategy_file=four)
    one = ms.load_checkpoint(str(tmp_path / "one" / "rank_0" / "net0.ckpt"))
    assert IDENTITY_KEY not in one   # one whole checkpoint, nothing sliced
    for name, value in WHOLE.items():
        np.testing.assert_array_equal(one[name].asnumpy(), value, err_msg=name)
    ms.transform_checkpoints(str(tmp_path / "src"), str(tmp_path / "two"), "net",
                             src_strategy_file=four, dst_strategy_file=two)
    recut = []
    for r in range(2):
        path = str(tmp_path / "two" / f"rank_{r}" / f"net{r}.ckpt")
        recut.append(path)
        got = ms.load_checkpoint(path)
        identity = json.loads(got[IDENTITY_KEY])
        assert (identity["rank"], identity["size"], identity["sliced"]) == (r, 2, ["m", "w"])
        for name, value in WHOLE.items():
            want = layout_block(value, *TWO[name], r) if name in TWO else value
            np.testing.assert_array_equal(got[name].asnumpy(), want, err_msg=f"{name} {r}")
    # the re-cut files merge back, and only in rank order with their own strategy file
    holder = Holder()
    ms.load_distributed_checkpoint(holder, recut, train_strategy_filename=two)
    np.testing.assert_array_equal(holder.w.asnumpy(), WHOLE["w"])
    with pytest.raises(ValueError, match="holds the slices of rank 1, but it is given as "
                                         "rank 0's file") as info:
        ms.load_distributed_checkpoint(Holder(), recut[::-1], train_strategy_filename=two)
    assert recut[1] in str(info.value)
    with pytest.raises(ValueError, match="given as rank 1's file"):
        ms.load_distributed_checkpoint(Holder(), [recut[0]] * 2, train_strategy_filename=two)
    with pytest.raises(ValueError, match="lays out the slices of .* differently"):
        other = write_strategy(tmp_path / "other.ckpt", {"w": ([2], [0, -1]),
                                                         "m": ([2], [0, -1])})
        ms.load_distributed_checkpoint(Holder(), recut, train_strategy_filename=other)
    # a rank's slices are not whole parameters
    with pytest.raises(ValueError, match="holds rank 0's slices .* merge the ranks' files") \
            as info:
        ms.load_checkpoint(recut[0], net=Holder())
    assert recut[0] in str(info.value)


def test_a_parameter_with_two_layouts_is_refused(tmp_path):
    path = write_strategy(tmp_path / "s.ckpt", TWO, extra=[("m", ([2], [-1, 0]))])
    with pytest.raises(ValueError, match="'m' has two different layouts") as info:
        ms.build_searched_strategy(path)
    assert path in str(info.value)
    save_job(tmp_path / "src", TWO, 2)
    with pytest.raises(ValueError, match="two different layouts"):
        ms.transform_checkpoints(str(tmp_path / "src"), str(tmp_path / "dst"), "net",
                                 src_strategy_file=path)
    assert not (tmp_path / "dst").exists()
    # the same layout twice is one layout
    same = write_strategy(tmp_path / "same.ckpt", TWO, extra=[("m", TWO["m"])])
    assert sorted(ms.build_searched_strategy(same)) == ["m", "w"]


@pytest.mark.parametrize("side", ["src", "dst", "load"])
def test_a_layout_without_dev_matrix_is_a_value_error_naming_the_file(side, tmp_path):
    bad = write_strategy(tmp_path / "bad.ckpt", {"w": (None, [-1, 0])})
    good = write_strategy(tmp_path / "two.ckpt", TWO)
    files = save_job(tmp_path / "src", TWO, 2)
    with pytest.raises(ValueError, match="has no dev_matrix") as info:
        if side == "load":
            ms.load_distributed_checkpoint(Holder(), files, train_strategy_filename=bad)
        else:
            ms.transform_checkpoints(str(tmp_path / "src"), str(tmp_path / "dst"), "net",
                                     src_strategy_file=bad if side == "src" else good,
                                     dst_strategy_file=bad if side == "dst" else None)
    assert bad in str(info.value)


def test_a_missing_rank_and_copies_that_differ_are_refused(tmp_path):
    four = write_strategy(tmp_path / "four.ckpt", FOUR)
    files = save_job(tmp_path / "src", FOUR, 4)
    with pytest.raises(ValueError, match="over 4 devices, but 3 rank files are given: a "
                                         "rank's file is missing"):
        ms.load_distributed_checkpoint(Holder(), files[:3], train_strategy_filename=four)
    (tmp_path / "src" / "rank_3" / "net.ckpt").unlink()
    with pytest.raises(ValueError, match="no checkpoint of rank 3"):
        ms.transform_checkpoints(str(tmp_path / "src"), str(tmp_path / "dst"), "net",
                                 src_strategy_file=four)
    ms.save_checkpoint(rank_params(FOUR, 3), files[3])
    # ranks 0 and 2 hold copies of one block of m (tensor_map -1 on the first device axis)
    params = rank_params(FOUR, 2)
    params[1].set_data(ms.Tensor(params[1].asnumpy() + 1))
    ms.save_checkpoint(params, files[2])
    with pytest.raises(ValueError, match="devices 0 and 2 hold the same slice of 'm'"):
        ms.load_distributed_checkpoint(Holder(), files, train_strategy_filename=four)

