"""Worker of tests/test_pipeline.py (started by ``mscore run`` with 2 workers; not a test
module).

A small MLP (float64) in the manner of MindSpore's pipeline tutorial: ``fc1`` and ``fc2`` on
stage 0, ``fc3`` on stage 1, the ReLUs without a stage; ``nn.PipelineCell(WithLossCell(...),
MICRO)``, gradients by ``value_and_grad`` over the optimizer's Parameters, through
``nn.PipelineGradReducer``, Adam. Trained four times in this process on the same batches: alone
(stand-alone mode: the stages do nothing), as a 2-stage pipeline over the job by
``set_auto_parallel_context(pipeline_stages=2)`` (then once in GRAPH_MODE, which is
refused), the same by ``Model.train``, and by ``AutoParallel(step).pipeline(stages=2)``.
Each rank writes ``OUT/rank{R}.npz``: per run, the losses, the Parameters and Adam states
this rank holds, the refusal's message.
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


def build(ms, nn):
    """The MLP with its stages set, in ``PipelineCell(WithLossCell(...), MICRO)``."""

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
    return net, nn.PipelineCell(nn.WithLossCell(net, loss_fn), MICRO)


def train(ms, nn, style):
    """STYLE ``alone`` (stand-alone mode), ``context`` (set_auto_parallel_context's
    pipeline_stages), ``model`` (the same, by ``Model.train``) or ``auto``
    (``AutoParallel(step).pipeline(stages=2)``)."""
    from mscore.parallel.auto_parallel import AutoParallel
    ms.reset_auto_parallel_context()
    if style in ("context", "model"):
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL,
                                     pipeline_stages=2)
    net, net_with_loss = build(ms, nn)
    opt = nn.Adam(net.trainable_params(), learning_rate=0.05)
    reducer = nn.PipelineGradReducer(opt.parameters)
    grad_fn = ms.value_and_grad(net_with_loss, None, opt.parameters)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(reducer(grads))
        return loss
    if style == "auto":
        step = AutoParallel(step, parallel_mode="semi_auto")
        step.pipeline(stages=2)
    if style == "model":
        losses = train_model(ms, nn, net_with_loss, opt)
    else:
        losses = [float(step(ms.Tensor(x), ms.Tensor(y)).asnumpy())
                  for x, y in zip(*make_data())]
    params = {p.name: p.asnumpy() for p in net.get_parameters()}
    states = {s.name: s.asnumpy() for s in opt.get_parameters()
              if s.name.startswith(("moment1", "moment2"))}
    refusal = ""
    if style == "context":   # a compiled pipeline is refused, on every rank alike
        ms.set_context(mode=ms.GRAPH_MODE)
        try:
            step(*[ms.Tensor(a[0]) for a in make_data()])
        except ValueError as exc:
            refusal = str(exc)
        ms.set_context(mode=ms.PYNATIVE_MODE)
    return losses, params, states, refusal


def train_model(ms, nn, net_with_loss, opt):
    """``Model(net_with_loss, optimizer=opt).train`` over the same batches; the losses."""
    from mscore.dataset import NumpySlicesDataset
    x, y = make_data()
    data = NumpySlicesDataset({"x": x.reshape(-1, IN), "y": y.reshape(-1)},
                              shuffle=False).batch(BATCH)
    losses = []

    class Losses(ms.train.Callback):
        def on_train_step_end(self, run_context):
            losses.append(float(run_context.original_args().net_outputs.asnumpy()))
    ms.Model(net_with_loss, optimizer=opt).train(1, data, callbacks=[Losses()],
                                                 dataset_sink_mode=False)
    return losses


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
    for style in ("alone", "context", "model", "auto"):
        losses, params, states, refusal = train(ms, nn, style)
        out[f"{style}/losses"] = np.array(losses)
        out[f"{style}/refusal"] = np.array(refusal)
        for name, value in params.items():
            out[f"{style}/param/{name}"] = value
        for name, value in states.items():
            out[f"{style}/state/{name}"] = value
    np.savez(os.path.join(args.out, f"rank{get_rank()}.npz"), **out)


if __name__ == "__main__":
    main()
