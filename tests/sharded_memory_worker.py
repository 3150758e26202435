"""Worker of the parallel optimizer's memory test and bench (started by ``mscore run`` with
N workers; not a test module).

For each configuration ``MODE:LEVEL[:acc]`` (MODE ``pynative|graph``, LEVEL ``level1|level2``,
``acc``: ``grad_accumulation_step=2``) the worker trains the MLP 256-512-512-16 with Adam
twice, one after the other in this process: alone (the reference), then in DATA_PARALLEL mode
with ``enable_parallel_optimizer``; after each it records the bytes of the distinct storages
behind every live Parameter and behind the optimizer's moments (tests/live_storage.py), and
drops the run before the next one. It also records the sharded run's final weights and the
reference's, so the test sees the memory saved with the training unchanged.

    mscore run --worker_num=2 --local_worker_num=2 tests/sharded_memory_worker.py \
        --backend torch --configs pynative:level1,graph:level2:acc --out DIR

Each rank writes ``DIR/rank{R}.json``.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_storage import live_parameters, storage_bytes

WIDTHS = (256, 512, 512, 16)
BATCH = 32
STEPS = 4
ACC = 2


def build(ms, nn):
    ms.set_seed(1)
    layers = []
    for i, (a, b) in enumerate(zip(WIDTHS[:-1], WIDTHS[1:])):
        layers.append(nn.Dense(a, b))
        if i < len(WIDTHS) - 2:
            layers.append(nn.ReLU())
    net = nn.SequentialCell(layers)
    opt = nn.Adam(net.trainable_params(), learning_rate=1e-3)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), opt)
    return net, opt, step


def run(ms, nn, rows, micro):
    from mscore.compile import graph
    """Train; ``(all Parameter bytes, moment bytes, final weights)``."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((STEPS * BATCH, WIDTHS[0])).astype(np.float32)
    y = rng.integers(0, WIDTHS[-1], STEPS * BATCH).astype(np.int32)
    net, opt, step = build(ms, nn)
    for s in range(STEPS):
        lo, hi = rows(s)
        size = (hi - lo) // micro
        for m in range(micro):
            a, b = lo + m * size, lo + (m + 1) * size
            step(ms.Tensor(x[a:b]), ms.Tensor(y[a:b]))
    weights = {p.name: p.asnumpy().tolist() for p in net.trainable_params()[-2:]}
    total = storage_bytes(live_parameters())
    moments = storage_bytes(list(opt.moment1) + list(opt.moment2))
    del net, opt, step
    graph.clear_cache()   # compiled programs hold their cells
    gc.collect()
    return total, moments, weights


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", required=True)
    p.add_argument("--configs", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()

    import mscore as ms
    from mscore import nn
    from mscore.communication import get_group_size, get_rank, init
    ms.set_context(backend=args.backend)
    init()
    rank, size = get_rank(), get_group_size()
    whole = lambda s: (s * BATCH * size, (s + 1) * BATCH * size)          # noqa: E731
    mine = lambda s: (s * BATCH * size + rank * BATCH,                      # noqa: E731
                      s * BATCH * size + (rank + 1) * BATCH)
    out = {}
    for cfg in args.configs.split(","):
        mode, level, *rest = cfg.split(":")
        micro = ACC if "acc" in rest else 1
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
        ms.reset_auto_parallel_context()
        ms.set_auto_parallel_context(grad_accumulation_step=micro)
        alone = run(ms, nn, whole, micro)
        ms.reset_auto_parallel_context()
        ms.set_auto_parallel_context(
            parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
            enable_parallel_optimizer=True, grad_accumulation_step=micro,
            parallel_optimizer_config={"optimizer_level": level})
        sharded = run(ms, nn, mine, micro)
        ms.reset_auto_parallel_context()
        out[cfg] = {"alone": alone[:2], "sharded": sharded[:2],
                    "weights_alone": alone[2], "weights_sharded": sharded[2]}
    with open(os.path.join(args.out, f"rank{rank}.json"), "w") as f:
        json.dump(out, f)
    print(f"worker rank {rank} of {size} done", flush=True)


if __name__ == "__main__":
    main()
