"""Worker of tests/test_data_parallel.py (started by ``mscore run``, torchrun or a SLURM-like
environment; not a test module).

For each configuration ``MODE:AMP`` (``pynative|graph`` : ``O0|O2``) it trains a small MLP
twice in this process: alone on the whole batches of 64 rows (the reference), then in
DATA_PARALLEL mode on this rank's shard (32 rows per step: the dataset shards itself from
the communication context) with ``Model``. Rank 1 starts from different weights, so the
broadcast from rank 0 is needed to match. O2 uses a dynamic loss scale and the batch of
step ``OVERFLOW_STEP`` holds a huge value in a row of rank 1's shard: the fp16 forward
overflows on rank 1 only, and every rank (and the reference) must skip that step.

Each rank writes ``OUT/rank{R}.npz``: per configuration the reference and data-parallel
losses, overflow flags and final weights. With ``--checkpoints`` the data-parallel run also
saves per-rank checkpoints (ModelCheckpoint) that rank 0 loads back with
``load_distributed_checkpoint``.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

STEPS = 6
BATCH = 64
FEATURES, HIDDEN, CLASSES = 20, 32, 4
OVERFLOW_STEP = 2


def make_data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((STEPS * BATCH, FEATURES)).astype(np.float32)
    y = rng.integers(0, CLASSES, STEPS * BATCH).astype(np.int32)
    return x, y


def build(ms, nn, seed):
    ms.set_seed(seed)

    class MLP(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(FEATURES, HIDDEN)
            self.relu = nn.ReLU()
            self.fc2 = nn.Dense(HIDDEN, CLASSES)

        def construct(self, x):
            return self.fc2(self.relu(self.fc1(x)))
    return MLP()


class Recorder:
    """Collects the loss (and overflow flag) of every step."""

    def __init__(self):
        from mscore.train.callback import Callback

        class _Cb(Callback):
            def __init__(cb):
                super().__init__()
                cb.losses, cb.overflows = [], []

            def on_train_step_end(cb, run_context):
                out = run_context.original_args().net_outputs
                if isinstance(out, (tuple, list)):
                    cb.losses.append(float(out[0].asnumpy()))
                    cb.overflows.append(bool(out[1].asnumpy()))
                else:
                    cb.losses.append(float(out.asnumpy()))
                    cb.overflows.append(False)
        self.callback = _Cb()


def train(ms, nn, amp_level, x, y, batch, seed, callbacks=()):
    from mscore.amp import DynamicLossScaleManager
    from mscore.dataset import NumpySlicesDataset
    net = build(ms, nn, seed)
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    kwargs = {}
    if amp_level == "O2":
        kwargs["loss_scale_manager"] = DynamicLossScaleManager(init_loss_scale=2.0 ** 10,
                                                               scale_factor=2, scale_window=2)
    model = ms.Model(net, nn.CrossEntropyLoss(), opt, amp_level=amp_level, **kwargs)
    dataset = NumpySlicesDataset({"x": x, "y": y}, shuffle=True).batch(batch)
    rec = Recorder()
    model.train(1, dataset, callbacks=[rec.callback, *callbacks])
    weights = {p.name: p.asnumpy().astype(np.float32) for p in net.trainable_params()}
    return rec.callback.losses, rec.callback.overflows, weights


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", required=True)
    p.add_argument("--configs", required=True, help="comma-separated MODE:AMP")
    p.add_argument("--out", required=True)
    p.add_argument("--checkpoints", action="store_true")
    args = p.parse_args()

    import mscore as ms
    from mscore import nn
    from mscore.communication import get_group_size, get_rank, init
    ms.set_context(backend=args.backend)
    init()
    rank, size = get_rank(), get_group_size()
    from mscore.dataset import config
    config.set_seed(11)
    x, y = make_data()
    results = {"size": np.array(size)}
    for cfg in args.configs.split(","):
        mode, amp_level = cfg.split(":")
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
        xs = x.copy()
        ms.reset_auto_parallel_context()
        if amp_level == "O2":
            # Row 1 of the (shuffled) batch OVERFLOW_STEP lands in rank 1's shard (the order
            # of the unsharded pipeline, read outside data-parallel mode).
            from mscore.dataset import NumpySlicesDataset
            order = NumpySlicesDataset({"x": x}, shuffle=True)._indices(0)
            xs[order[OVERFLOW_STEP * BATCH + 1]] = 1e6
        ref = train(ms, nn, amp_level, xs, y, BATCH, seed=1)
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                     gradients_mean=True)
        callbacks = []
        if args.checkpoints:
            from mscore.train import CheckpointConfig, LossMonitor, ModelCheckpoint
            callbacks = [ModelCheckpoint(
                f"dp_{mode}_{amp_level}", os.path.join(args.out, "ckpt"),
                CheckpointConfig(save_checkpoint_steps=STEPS, keep_checkpoint_max=1))]
            if amp_level == "O0":  # (the injected overflow's loss is not finite on rank 1)
                callbacks.append(LossMonitor(STEPS))
        dp = train(ms, nn, amp_level, xs, y, BATCH // size, seed=1 + rank, callbacks=callbacks)
        ms.reset_auto_parallel_context()
        for tag, (losses, overflows, weights) in (("ref", ref), ("dp", dp)):
            results[f"{cfg}/{tag}/losses"] = np.array(losses)
            results[f"{cfg}/{tag}/overflows"] = np.array(overflows)
            for name, w in weights.items():
                results[f"{cfg}/{tag}/w/{name}"] = w
        if args.checkpoints:
            results[f"{cfg}/ckpt"] = np.array(callbacks[0].latest_ckpt_file_name)
    np.savez(os.path.join(args.out, f"rank{rank}.npz"), **results)
    print(f"worker rank {rank} of {size} done", flush=True)


if __name__ == "__main__":
    main()
