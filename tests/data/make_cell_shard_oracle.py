"""Record MindSpore's ``nn.Dense`` primitives, the signatures of ``Cell.shard`` and
``mindspore.parallel.shard``, and what ``mindspore.parallel.Layout`` gives and refuses into
cell_shard_oracle.json (read by tests/test_semi_auto.py).

Run with the MindSpore oracle's interpreter: ``python tests/data/make_cell_shard_oracle.py``.
"""
import inspect
import json
import os

import mindspore as ms
from mindspore import nn

LAYOUT_CASES = {
    "Layout((2, 4), ('dp', 'mp'))('dp', 'mp')": lambda L: L((2, 4), ("dp", "mp"))("dp", "mp"),
    "Layout((2, 4), ('dp', 'mp'))('mp', 'None')":
        lambda L: L((2, 4), ("dp", "mp"))("mp", "None"),
    "Layout((2, 4), ('dp', 'mp'))(('dp', 'mp'), 'None')":
        lambda L: L((2, 4), ("dp", "mp"))(("dp", "mp"), "None"),
    "Layout((2, 4), ('dp', 'mp'))('dp', 'dp')": lambda L: L((2, 4), ("dp", "mp"))("dp", "dp"),
    "Layout((2, 4), ('dp', 'mp'))('xx', 'None')":
        lambda L: L((2, 4), ("dp", "mp"))("xx", "None"),
    "Layout((2, 4), ('dp',))": lambda L: L((2, 4), ("dp",)),
    "Layout([2, 4], ('dp', 'mp'))": lambda L: L([2, 4], ("dp", "mp")),
    "Layout((2, 4), ('dp', 'None'))": lambda L: L((2, 4), ("dp", "None")),
    "Layout((2, 4), ('dp', 'dp'))": lambda L: L((2, 4), ("dp", "dp")),
    "Layout((2, 4), ('dp', 'mp'))": lambda L: L((2, 4), ("dp", "mp")),
}


def outcome(fn):
    """``["OK", layout.to_dict()]`` or ``["ERR", exception type, message]``."""
    try:
        d = fn().to_dict()
        return ["OK", {k: d[k] for k in ("device_matrix", "tensor_map", "alias_name")}]
    except Exception as exc:
        return ["ERR", type(exc).__name__, str(exc)]


def main():
    dense = nn.Dense(4, 6)
    out = {
        "Dense.matmul": [type(dense.matmul).__name__, bool(dense.matmul.transpose_a),
                         bool(dense.matmul.transpose_b)],
        "Dense.bias_add": type(dense.bias_add).__name__,
        "Cell.shard": str(inspect.signature(nn.Cell.shard)),
        "parallel.shard": str(inspect.signature(ms.parallel.shard)),
    }
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel")
    # in a job of one device (no init), parallel.shard gives back what it was given
    out["parallel.shard(Dense) is Dense (one device)"] = \
        ms.parallel.shard(dense, ((1, 2),)) is dense
    for key, fn in LAYOUT_CASES.items():
        out[key] = outcome(lambda fn=fn: fn(ms.parallel.Layout))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cell_shard_oracle.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
