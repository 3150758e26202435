"""Record MindSpore's ``nn.Dense`` primitives and the signatures of ``Cell.shard`` and
``mindspore.parallel.shard`` into cell_shard_oracle.json (read by tests/test_semi_auto.py).

Run with the MindSpore oracle's interpreter: ``python tests/data/make_cell_shard_oracle.py``.
"""
import inspect
import json
import os

import mindspore as ms
from mindspore import nn


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
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cell_shard_oracle.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
