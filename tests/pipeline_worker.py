"""Worker of tests/test_pipeline.py (started by ``mscore run`` with 2 workers; not a test
module).

A small MLP (float64) in the manner of MindSpore's pipeline tutorial: ``fc1`` and ``fc2`` on
stage 0, ``fc3`` on stage 1, the ReLUs without a stage; ``nn.PipelineCell(WithLossCell(...),
MICRO)``, gradients by ``value_and_grad`` over the optimizer's Parameters, through
``nn.PipelineGradReducer``, Adam. Trained twice in this process on the same batches: alone
(stand-alone mode: the stages do nothing) and as a 2-stage pipeline over the job. Each rank
writes ``OUT/rank{R}.npz``: the losses of both runs, the whole weights of the stand-alone
run, the Parameters and optimizer states this rank holds in the pipeline run.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

IN, HIDDEN, OUT = 8, 16, 4
BATCH, STEPS, MICRO = 8, 4, 2


def make_data():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((STEPS, BATCH, IN))
    y = rng.integers(0, OUT, (STEPS, BATCH)).astype(np.int32)
    return x, y


def train(ms, nn, pipelined):
    ms.reset_auto_parallel_context()
    if pipelined:
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL,
                                     pipeline_stages=2)

    class MLP(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(IN, HIDDEN, dtype=ms.float64)
            self.fc2 = nn.Dense(HIDDEN, HIDDEN, dtype=ms.float64)
            self.fc3 = nn.Dense(HIDDEN, OUT, dtype=ms.float64)
            self.relu = nn.ReLU()

        def construct(self, x):
            return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))
    ms.set_seed(5)
    net = MLP()
    net.fc1.pipeline_stage = 0
    net.fc2.pipeline_stage = 0
    net.fc3.pipeline_stage = 1
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    net_with_loss = nn.PipelineCell(nn.WithLossCell(net, loss_fn), MICRO)
    opt = nn.Adam(net.trainable_params(), learning_rate=0.05)
    reducer = nn.PipelineGradReducer(opt.parameters)
    grad_fn = ms.value_and_grad(net_with_loss, None, opt.parameters)
    losses = []
    for x, y in zip(*make_data()):
        loss, grads = grad_fn(ms.Tensor(x), ms.Tensor(y))
        opt(reducer(grads))
        losses.append(float(loss.asnumpy()))
    params = {p.name: p.asnumpy() for p in net.get_parameters()}
    states = {s.name: s.asnumpy() for s in opt.get_parameters()
              if s.name.startswith(("moment1", "moment2"))}
    return losses, params, states


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    import mscore as ms
    from mscore import nn
    from mscore.communication import get_rank, init
    ms.set_context(backend=args.backend)
    init()
    out = {}
    ref_losses, ref, _ = train(ms, nn, False)
    losses, mine, states = train(ms, nn, True)
    out["ref_losses"] = np.array(ref_losses)
    out["losses"] = np.array(losses)
    for name, value in ref.items():
        out[f"ref/{name}"] = value
    for name, value in mine.items():
        out[f"mine/{name}"] = value
    for name, value in states.items():
        out[f"state/{name}"] = value
    np.savez(os.path.join(args.out, f"rank{get_rank()}.npz"), **out)


if __name__ == "__main__":
    main()
