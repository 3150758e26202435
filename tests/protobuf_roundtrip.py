"""Round trips through every protobuf file format of mscore, run as a script in a child process
(``python tests/protobuf_roundtrip.py FOLDER``) so that a test can put another protobuf runtime
first on ``PYTHONPATH``. Prints ``protobuf VERSION IMPLEMENTATION ok`` on success; any failure
is an exception (non-zero exit status).

Expected values are numpy's own or hand-written bytes, never read back from the code under test
alone: checkpoint tensors compare bit for bit with the arrays saved, the strategy and print
files are built field by field here, and summary scalars compare with the values written.
"""
import os
import sys

import numpy as np


def checkpoint(folder):
    """save_checkpoint / load_checkpoint, every dtype class, bit for bit."""
    import mscore as ms
    rng = np.random.default_rng(0)
    arrays = {"w": rng.standard_normal((3, 4)).astype(np.float32),
              "h": rng.standard_normal(5).astype(np.float16),
              "ids": rng.integers(-9, 9, (2, 2)).astype(np.int64),
              "flag": np.array([True, False])}
    path = os.path.join(folder, "rt.ckpt")
    ms.save_checkpoint([{"name": k, "data": ms.Tensor(v)} for k, v in arrays.items()], path)
    loaded = ms.load_checkpoint(path)
    assert sorted(loaded) == sorted(arrays), sorted(loaded)
    for name, want in arrays.items():
        got = loaded[name].asnumpy()
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), name


def strategy(folder):
    """build_searched_strategy over a file written with the generated classes."""
    import mscore as ms
    from mscore.train.proto import node_strategy_pb2
    msg = node_strategy_pb2.ParallelStrategyMap(current_stage=0)
    item = msg.parallel_strategy_item.add(node_name="MatMul-op0")
    item.parallel_strategys.stage = 0
    item.parallel_strategys.parallel_strategy.add().dim.extend([2, 1])
    layout = msg.parallel_layout_item.add(param_name="w").parallel_layouts
    layout.dev_matrix.add().dim.extend([2])
    layout.tensor_map.add().dim.extend([0, -1])
    layout.indices_offset.add().dim.extend([0])
    layout.field, layout.opt_weight_shard_step, layout.opt_weight_shard_size = 0, 0, 0
    path = os.path.join(folder, "strategy.ckpt")
    with open(path, "wb") as f:
        f.write(msg.SerializeToString())
    found = ms.build_searched_strategy(path)
    assert list(found) == ["w"]
    assert list(found["w"].dev_matrix[0].dim) == [2]
    assert list(found["w"].tensor_map[0].dim) == [0, -1]


def print_file(folder):
    """parse_print of a Print message of a string and a float32 tensor."""
    import mscore as ms
    from mscore.train.proto import print_pb2
    values = np.array([[1.5, -2.0, 3.25]], np.float32)
    msg = print_pb2.Print()
    msg.value.add(desc="loss:")
    tensor = msg.value.add().tensor
    tensor.dims.extend(values.shape)
    tensor.tensor_type = "Float32"
    tensor.tensor_content = values.astype("<f4").tobytes()
    path = os.path.join(folder, "print.pb")
    with open(path, "wb") as f:
        f.write(msg.SerializeToString())
    out = ms.parse_print(path)
    assert out[0] == "loss:"
    assert out[1].asnumpy().tobytes() == values.tobytes()


def summary(folder):
    """SummaryRecord writes scalars, a histogram and an image; the reader gets them back."""
    import mscore as ms
    from mscore.train.summary import SummaryRecord
    from mscore.train.summary.reader import load_summaries
    log_dir = os.path.join(folder, "summary")
    losses = [2.5, 1.25, 0.625]
    with SummaryRecord(log_dir) as record:
        for step, loss in enumerate(losses, 1):
            record.add_value("scalar", "loss", ms.Tensor(np.float32(loss)))
            record.record(step)
        record.add_value("histogram", "w", ms.Tensor(np.arange(10, dtype=np.float32)))
        record.add_value("image", "img", ms.Tensor(np.zeros((1, 3, 4, 5), np.float32)))
        record.record(4)
    data = load_summaries(log_dir)
    assert [(s, v) for s, _, v in data["scalar"]["loss"]] == list(enumerate(losses, 1))
    ((_, _, histo),) = data["histogram"]["w"]
    assert (histo["min"], histo["max"], histo["num"], histo["sum"]) == (0.0, 9.0, 10.0, 45.0)
    ((_, _, image),) = data["image"]["img"]
    assert (image["height"], image["width"]) == (4, 5)
    assert image["png"][:8] == b"\x89PNG\r\n\x1a\n"


def main(folder):
    from google import protobuf
    from google.protobuf.internal import api_implementation
    for check in (checkpoint, strategy, print_file, summary):
        check(folder)
    print(f"protobuf {protobuf.__version__} {api_implementation.Type()} ok")


if __name__ == "__main__":
    main(sys.argv[1])
