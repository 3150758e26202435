"""Record MindSpore 2.10's argument checks of pipeline parallelism into pipeline_oracle.json:
``Cell.pipeline_stage``, ``nn.PipelineCell``, ``nn.MicroBatchInterleaved``,
``AutoParallel.pipeline`` and ``set_auto_parallel_context(pipeline_stages=...)``. Each case is
an expression; its outcome is ``["OK", repr(value)]`` or ``["ERR", type, message]``.

Run from /tmp with the oracle's interpreter:
    cd /tmp && /tmp/ms/bin/python <repository>/tests/data/make_pipeline_oracle.py
"""
import json
import os

import mindspore as ms
from mindspore import nn
from mindspore.parallel.auto_parallel import AutoParallel

CASES = [
    "nn.Dense(2, 2).pipeline_stage",
    "setattr(nn.Dense(2, 2), 'pipeline_stage', 1)",
    "setattr(nn.Dense(2, 2), 'pipeline_stage', -1)",
    "setattr(nn.Dense(2, 2), 'pipeline_stage', True)",
    "setattr(nn.Dense(2, 2), 'pipeline_stage', 1.0)",
    "nn.PipelineCell(nn.Dense(2, 2), 2).micro_size",
    "nn.PipelineCell(lambda x: x, 2)",
    "nn.PipelineCell(nn.Dense(2, 2), 2.0)",
    "nn.PipelineCell(nn.Dense(2, 2), 0)",
    "nn.MicroBatchInterleaved(nn.Dense(2, 2), 2).interleave_num",
    "nn.MicroBatchInterleaved(nn.Dense(2, 2), 2.0)",
    "nn.MicroBatchInterleaved(nn.Dense(2, 2), 0)",
    "AutoParallel(nn.Dense(2, 2)).pipeline(stages=2)",
    "AutoParallel(nn.Dense(2, 2)).pipeline(stages=2.0)",
    "AutoParallel(nn.Dense(2, 2)).pipeline(stages=0)",
    "AutoParallel(nn.Dense(2, 2)).pipeline(stages=2, output_broadcast=1)",
    "AutoParallel(nn.Dense(2, 2)).pipeline(stages=2, interleave=1)",
    "AutoParallel(nn.Dense(2, 2)).pipeline(stages=2, scheduler=1)",
    "AutoParallel(nn.Dense(2, 2)).pipeline(stages=2, scheduler='bad')",
    "ms.set_auto_parallel_context(pipeline_stages=2)",
    "ms.set_auto_parallel_context(pipeline_stages=0)",
    "ms.set_auto_parallel_context(pipeline_stages=2.0)",
    "ms.set_auto_parallel_context(pipeline_stages=True)",
]


def outcome(expr):
    try:
        value = eval(expr, {"ms": ms, "nn": nn, "AutoParallel": AutoParallel})
        return ["OK", repr(value)]
    except Exception as exc:
        return ["ERR", type(exc).__name__, str(exc)]


def main():
    out = {}
    for expr in CASES:
        out[expr] = outcome(expr)
        ms.reset_auto_parallel_context()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pipeline_oracle.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
