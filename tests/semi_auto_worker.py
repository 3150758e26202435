"""Worker of tests/test_semi_auto.py (started by ``mscore run`` with 2 workers; not a test
module).

An operator-parallel network in the manner of MindSpore's tutorial: its weights are
Parameters of the network, ``MatMul`` primitives carry the strategies (the first
column-parallel ``((1, 1), (1, 2))``, the second row-parallel ``((1, 2), (2, 1))``), the
``ReLU`` between them is cut as the columns, the last ``MatMul`` has none. Each configuration
trains it twice in this process, alone (stand-alone mode: the strategies do nothing) and in
SEMI_AUTO_PARALLEL mode over the job, on the same batches of a dataset, and records the
losses, the weights each rank holds and the whole weights of the stand-alone run.

Configurations (``--configs``, comma-separated) ``STYLE:MODE:OPT``: STYLE ``func`` (a
``value_and_grad`` function and ``optimizer(grads)``, wrapped in ``AutoParallel``; every
rank reads the whole batches), ``shards`` (the same, each rank reading its half of each
batch: ``full_batch=False``, the global batch is both halves) or ``model`` (``Model.train``
with ``set_auto_parallel_context(..., full_batch=True)``); MODE ``pynative|graph``;
OPT ``momentum|adam``. ``decoder:MODE:f64|f32`` trains bench/semi_auto_decoder.py's
Megatron-style decoder (Adam) at a small size in that precision instead. Each rank writes
``OUT/rank{R}.npz``.

With ``--save DIR``, after the first configuration's job run each rank saves its optimizer
(the weights it holds and their states) as MindSpore users do: ``strategy_ckpt_save_file``
set to ``DIR/strategy_{R}.ckpt`` and ``save_checkpoint`` into ``DIR/rank_{R}/net.ckpt``;
then it resumes from the files (:func:`resume_step`).
"""
from __future__ import annotations

import argparse
import os

import numpy as np

IN, HIDDEN, OUT = 12, 16, 4
BATCH, STEPS = 8, 3


def make_data(dtype):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((BATCH * STEPS, 3, IN // 3)).astype(dtype)
    y = rng.integers(0, OUT, BATCH * STEPS).astype(np.int32)
    return x, y


def build(ms, nn, ops, dtype):
    from mscore.common.initializer import Normal, initializer

    class Network(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = ops.Flatten()
            self.w1 = ms.Parameter(initializer(Normal(0.5), [IN, HIDDEN], dtype), name="w1")
            self.w2 = ms.Parameter(initializer(Normal(0.5), [HIDDEN, HIDDEN], dtype), name="w2")
            self.w3 = ms.Parameter(initializer(Normal(0.5), [HIDDEN, OUT], dtype), name="w3")
            self.matmul1 = ops.MatMul().shard(((1, 1), (1, 2)))
            self.relu1 = ops.ReLU().shard(((1, 2),))
            self.matmul2 = ops.MatMul().shard(((1, 2), (2, 1)))
            self.relu2 = ops.ReLU()
            self.matmul3 = ops.MatMul()

        def construct(self, x):
            x = self.flatten(x)
            x = self.relu1(self.matmul1(x, self.w1))
            x = self.relu2(self.matmul2(x, self.w2))
            return self.matmul3(x, self.w3)
    ms.set_seed(11)
    return Network()


def build_dense(ms, nn, ops, dtype):
    """The same sizes with ``nn.Dense`` layers, cut as MindSpore's tutorial cuts them: the
    first through its primitives' strategies (column-parallel: its weight's rows and its
    bias), the second by ``Cell.shard`` with ``Layout``s (row-parallel: its weight's
    columns), the last whole."""
    from mscore.common.initializer import Normal
    kind = ms.float64 if dtype is np.float64 else ms.float32

    class DenseNetwork(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(IN, HIDDEN, Normal(0.5), dtype=kind)
            self.fc1.matmul.shard(((1, 1), (2, 1)))
            self.fc1.bias_add.shard(((1, 2), (2,)))
            self.relu = ops.ReLU().shard(((1, 2),))
            layout = ms.parallel.Layout((2,), ("mp",))
            self.fc2 = nn.Dense(HIDDEN, HIDDEN, Normal(0.5), dtype=kind).shard(
                (layout("None", "mp"),), parameter_plan={"self.weight": layout("None", "mp")})
            self.fc3 = nn.Dense(HIDDEN, OUT, Normal(0.5), dtype=kind)

        def construct(self, x):
            x = self.relu(self.fc1(self.flatten(x)))
            return self.fc3(ops.relu(self.fc2(x)))
    ms.set_seed(11)
    return DenseNetwork()


def optimizer(nn, net, kind):
    if kind == "adam":
        return nn.Adam(net.trainable_params(), learning_rate=0.01)
    return nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)


def train(ms, nn, ops, style, opt_kind, semi, dtype):
    from mscore.dataset import NumpySlicesDataset
    from mscore.parallel.auto_parallel import AutoParallel
    ms.reset_auto_parallel_context()
    if semi and style == "model":
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL,
                                     full_batch=True)
    x, y = make_data(dtype)
    if semi and style == "shards":   # each rank reads its rows: half of each batch
        from mscore.communication import get_rank
        data = NumpySlicesDataset({"x": x, "y": y}, shuffle=False, num_shards=2,
                                  shard_id=get_rank()).batch(BATCH // 2)
    else:
        data = NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(BATCH)
    net = (build_dense if style == "dense" else build)(ms, nn, ops, dtype)
    opt = optimizer(nn, net, opt_kind)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    losses = []
    if style == "model":
        model = ms.Model(net, loss_fn, opt)

        class Losses(ms.train.Callback):
            def on_train_step_end(self, run_context):
                losses.append(float(run_context.original_args().net_outputs.asnumpy()))
        model.train(1, data, callbacks=[Losses()], dataset_sink_mode=False)
    else:
        def forward(inputs, labels):
            return loss_fn(net(inputs), labels)
        grad_fn = ms.value_and_grad(forward, None, opt.parameters)

        def train_step(inputs, labels):
            loss, grads = grad_fn(inputs, labels)
            opt(grads)
            return loss
        step = AutoParallel(train_step, parallel_mode="semi_auto") if semi else train_step
        for inputs, labels in data.create_tuple_iterator():
            losses.append(float(step(inputs, labels).asnumpy()))
        if style == "dense":   # then the loss on the first batch again: the net learned
            evaluate = AutoParallel(forward, parallel_mode="semi_auto") if semi else forward
            losses.append(float(evaluate(ms.Tensor(x[:BATCH]), ms.Tensor(y[:BATCH]))
                                .asnumpy()))
    return losses, {p.name: p.asnumpy() for p in net.trainable_params()}, opt, net


# the suite's decoder: vocabulary, width, layers, heads, sequence; batch and steps
DECODER = (32, 16, 2, 4, 8)
DECODER_BATCH, DECODER_STEPS = 2, 3


def train_decoder(ms, nn, ops, semi, dtype):
    """bench/semi_auto_decoder.py's decoder at a small size: losses, and the Parameters'
    values this rank holds."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "bench"))
    from semi_auto_decoder import build_decoder, make_batches, mscore_step

    from mscore.parallel.auto_parallel import AutoParallel
    ms.reset_auto_parallel_context()
    net = build_decoder(ms, nn, ops, *DECODER, dtype)
    step = mscore_step(ms, nn, net, lr=1e-2)
    if semi:
        step = AutoParallel(step)
    losses = [float(step(ms.Tensor(i), ms.Tensor(y)).asnumpy())
              for i, y in make_batches(DECODER[0], DECODER[4], DECODER_BATCH, DECODER_STEPS)]
    return losses, {p.name: p.asnumpy() for p in net.trainable_params()}, None, None


def save_rank_checkpoint(ms, cell, folder, rank):
    """``save_checkpoint`` of ``cell`` by this rank, with its strategy file."""
    ms.set_auto_parallel_context(
        strategy_ckpt_save_file=os.path.join(folder, f"strategy_{rank}.ckpt"))
    os.makedirs(os.path.join(folder, f"rank_{rank}"), exist_ok=True)
    ms.save_checkpoint(cell, os.path.join(folder, f"rank_{rank}", "net.ckpt"))
    ms.reset_auto_parallel_context()


def resume_step(ms, nn, ops, style, opt_kind, net, opt, folder, dtype):
    """Resume as docs/parallel.md says: the ranks' files re-cut into one whole checkpoint,
    loaded into a fresh network and optimizer, which take one step on the first batch
    alongside the trained pair: both pairs' losses and the values this rank holds after."""
    from mscore.communication import get_rank
    from mscore.communication.comm_func import barrier
    from mscore.parallel.auto_parallel import AutoParallel
    barrier()   # every rank's file is written
    whole = os.path.join(folder, f"whole_{get_rank()}")
    ms.transform_checkpoints(folder, whole, "net",
                             os.path.join(folder, f"strategy_{get_rank()}.ckpt"), None)
    barrier()
    fresh = (build_dense if style == "dense" else build)(ms, nn, ops, dtype)
    fresh_opt = optimizer(nn, fresh, opt_kind)
    ms.load_param_into_net(fresh_opt, ms.load_checkpoint(os.path.join(whole, "rank_0",
                                                                      "net0.ckpt")))
    x, y = make_data(dtype)
    inputs, labels = ms.Tensor(x[:BATCH]), ms.Tensor(y[:BATCH])
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    out = {}
    for tag, (n, o) in (("continued", (net, opt)), ("resumed", (fresh, fresh_opt))):
        grad_fn = ms.value_and_grad(lambda a, b, n=n: loss_fn(n(a), b), None, o.parameters)

        def step(a, b, grad_fn=grad_fn, o=o):
            loss, grads = grad_fn(a, b)
            o(grads)
            return loss
        ms.reset_auto_parallel_context()
        out[f"{tag}/loss"] = np.array(float(AutoParallel(step, parallel_mode="semi_auto")(
            inputs, labels).asnumpy()))
        for p in o.get_parameters():
            out[f"{tag}/{p.name}"] = p.asnumpy()
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", required=True)
    p.add_argument("--configs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--float64", action="store_true")
    p.add_argument("--save", help="folder of the per-rank checkpoints of the first config")
    args = p.parse_args()
    import mscore as ms
    from mscore import nn, ops
    from mscore.communication import get_rank, init
    ms.set_context(backend=args.backend)
    init()
    dtype = np.float64 if args.float64 else np.float32
    out = {}
    for cfg in args.configs.split(","):
        style, mode, opt_kind = cfg.split(":")
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
        if style == "decoder":
            precision = np.float64 if opt_kind == "f64" else np.float32
            ref_losses, ref, ref_opt, _ = train_decoder(ms, nn, ops, False, precision)
            losses, mine, opt, net = train_decoder(ms, nn, ops, True, precision)
        else:
            ref_losses, ref, ref_opt, _ = train(ms, nn, ops, style, opt_kind, False, dtype)
            losses, mine, opt, net = train(ms, nn, ops, style, opt_kind, True, dtype)
        out[f"{cfg}/ref_losses"] = np.array(ref_losses)
        out[f"{cfg}/losses"] = np.array(losses)
        for name, value in ref.items():
            out[f"{cfg}/ref/{name}"] = value
            out[f"{cfg}/mine/{name}"] = mine[name]
        for s in () if opt is None else opt.get_parameters():
            if s.name.startswith(("moment", "moments")):
                out[f"{cfg}/state/{s.name}"] = s.asnumpy()
        for s in () if ref_opt is None else ref_opt.get_parameters():
            if s.name.startswith(("moment", "moments")):
                out[f"{cfg}/ref_state/{s.name}"] = s.asnumpy()
        if args.save and opt is not None and cfg == args.configs.split(",")[0]:
            save_rank_checkpoint(ms, opt, args.save, get_rank())
            for key, value in resume_step(ms, nn, ops, style, opt_kind, net, opt, args.save,
                                          dtype).items():
                out[f"{cfg}/resume/{key}"] = value
    np.savez(os.path.join(args.out, f"rank{get_rank()}.npz"), **out)


if __name__ == "__main__":
    main()
