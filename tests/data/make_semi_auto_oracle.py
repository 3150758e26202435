"""Record MindSpore 2.10's checks of shard strategies at ``shard()`` time (Primitive.shard,
Cell.shard), of ``AutoParallel``'s arguments and of ``set_auto_parallel_context``'s
model-parallel keys into semi_auto_oracle.json. (MindSpore checks a strategy against the
shapes and the device count only when it compiles a SEMI_AUTO_PARALLEL graph on Ascend/GPU,
which the CPU oracle cannot do; those messages are mscore's own.)

Run from /tmp with the oracle's interpreter:
    cd /tmp && /tmp/ms/bin/python <repo>/tests/data/make_semi_auto_oracle.py
"""
import json
import os

import mindspore as ms
from mindspore import nn, ops
from mindspore.parallel.auto_parallel import AutoParallel

# "primitive(args).shard(in_strategy[, out_strategy])": the outcome of shard()
SHARD_CASES = [
    ("MatMul", "((1, 1), (1, 2))", None),
    ("MatMul", "[[1, 2], [2, 1]]", None),
    ("MatMul", "((1, 2.0), (2, 1))", None),
    ("MatMul", "((1, 2), [2, 1])", None),
    ("MatMul", "'a'", None),
    ("MatMul", "((1, 2), (2, 1))", "((2, 1),)"),
    ("MatMul", "((1, 2), (2, 1))", "[[2, 1]]"),
    ("ReLU", "((1, 2),)", None),
    ("Softmax", "((1, 2),)", None),
    ("Gather", "((2, 1), (1, 1))", None),
]


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 4)

    def construct(self, x):
        return self.dense(x)


def outcome(fn):
    try:
        result = fn()
        return ["OK", repr(getattr(result, "in_strategy", None))]
    except Exception as exc:  # the outcome is what is recorded
        return ["ERR", type(exc).__name__, str(exc)]


def main():
    out = {}
    for name, strategy, out_strategy in SHARD_CASES:
        key = f"{name}.shard({strategy}, {out_strategy})"

        def call(name=name, strategy=strategy, out_strategy=out_strategy):
            prim = getattr(ops, name)()
            return prim.shard(eval(strategy), None if out_strategy is None
                              else eval(out_strategy))
        out[key] = outcome(call)
    out["Cell.shard(((1, 2),))"] = outcome(lambda: Net().shard(((1, 2),)) or None)
    out["Cell.shard([[1, 2]])"] = outcome(lambda: Net().shard([[1, 2]]))
    for mode in ("semi_auto", "semi", "sharding_propagation"):
        out[f"AutoParallel(mode={mode!r})"] = outcome(
            lambda mode=mode: type(AutoParallel(Net(), parallel_mode=mode)).__name__)
    for key, value in (("full_batch", 1), ("dataset_strategy", "bad")):
        out[f"set_auto_parallel_context({key}={value!r})"] = outcome(
            lambda key=key, value=value: ms.set_auto_parallel_context(**{key: value}))
        ms.reset_auto_parallel_context()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "semi_auto_oracle.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
