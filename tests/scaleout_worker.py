"""Worker of tests/test_scaleout.py (started by ``mscore run`` with 2 workers; not a test
module).

Each configuration trains a small MLP twice in this process: alone on whole batches of 64
rows (the reference), then in DATA_PARALLEL mode on this rank's 32 rows, and records the
final weights, the optimizer states, the bytes of optimizer state this rank holds and how
many collectives of each kind ran per update. Configurations (``--configs``, comma-separated):

* ``po:MODE:OPT`` — the parallel optimizer (threshold 0: every parameter sharded) with
  ``TrainOneStepCell``; MODE ``pynative|graph``, OPT ``momentum|adam``;
* ``po_o2[:graph]`` — the parallel optimizer under ``Model`` with O2 and a dynamic loss
  scale; the batch of step ``OVERFLOW_STEP`` overflows on rank 1 only, so every rank must
  skip it;
* ``acc`` — ``grad_accumulation_step=4`` (micro-batches of 8 rows per rank) against one
  step on the batch of 64: the gradients are reduced once per update;
* ``acc_po`` — accumulation and the parallel optimizer together;
* ``acc_po_shard`` — the same with ``optimizer_level='level2'`` (gradient_accumulation_shard):
  every micro-batch reduce-scatters into sums of this rank's slices.

With ``--checkpoint DIR`` the ``po:pynative:adam`` run saves this rank's checkpoint of the
train cell in ``DIR/rank_R/net.ckpt`` and the job's strategy file ``DIR/strategy.ckpt``, then
loads its own file into a new sharded train cell (the same number of ranks) and records the
largest difference to the saved values.

The ``acc_po`` and ``acc_po_shard`` runs with ``--checkpoint`` also save a checkpoint between
two updates (``DIR/CFG/rank_R/net.ckpt``, the rank-local or sliced accumulated gradients in
it) beside the single process's sums and weights at that point; and each rank checks that
loading the other rank's file into its cell is refused.

Each rank writes ``OUT/rank{R}.npz``.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

STEPS = 4
BATCH = 64
ACC = 4
FEATURES, HIDDEN, CLASSES = 20, 32, 4
OVERFLOW_STEP = 1
MID_CALLS = 6   # a checkpoint between updates: one update, then two calls summed
KINDS = ("all_reduce", "all_reduce_coalesced", "reduce_scatter", "all_gather")


def make_data():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((STEPS * BATCH, FEATURES)).astype(np.float32)
    y = rng.integers(0, CLASSES, STEPS * BATCH).astype(np.int32)
    return x, y


def build(ms, nn, seed):
    ms.set_seed(seed)
    return nn.SequentialCell([nn.Dense(FEATURES, HIDDEN), nn.ReLU(),
                              nn.Dense(HIDDEN, CLASSES)])


def make_optimizer(nn, net, kind):
    if kind == "adam":
        return nn.Adam(net.trainable_params(), learning_rate=0.01, weight_decay=1e-3)
    return nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)


class Counter:
    """Counts the calls of each collective of the job's Collectives object."""

    def __init__(self, coll):
        self.counts = dict.fromkeys(KINDS, 0)
        for kind in KINDS:
            original = getattr(coll, kind)
            if original is None:
                continue
            setattr(coll, kind, self._counted(kind, original))

    def _counted(self, kind, original):
        def run(*args, **kwargs):
            self.counts[kind] += 1
            return original(*args, **kwargs)
        return run

    def reset(self):
        for kind in KINDS:
            self.counts[kind] = 0


def states_of(opt):
    """{name: value} of the optimizer's state Parameters."""
    return {p.name: p.asnumpy() for name, tup in opt._param_tuples.items()
            if name != "parameters" for p in tup}


def train_steps(ms, nn, x, y, rows, seed, opt_kind, micro=1):
    """TrainOneStepCell over STEPS batches; ``rows(step)`` the slice of the batch this
    process trains on, in ``micro`` micro-batches."""
    net = build(ms, nn, seed)
    opt = make_optimizer(nn, net, opt_kind)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), opt)
    for s in range(STEPS):
        lo, hi = rows(s)
        size = (hi - lo) // micro
        for m in range(micro):
            a, b = lo + m * size, lo + (m + 1) * size
            step(ms.Tensor(x[a:b]), ms.Tensor(y[a:b]))
    weights = {p.name: p.asnumpy() for p in net.trainable_params()}
    return weights, states_of(opt), step


def train_model_o2(ms, nn, x, y, seed, batch):
    from mscore.amp import DynamicLossScaleManager
    from mscore.dataset import NumpySlicesDataset
    net = build(ms, nn, seed)
    opt = make_optimizer(nn, net, "momentum")
    manager = DynamicLossScaleManager(init_loss_scale=2.0 ** 10, scale_factor=2, scale_window=2)
    model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), opt,
                     amp_level="O2", loss_scale_manager=manager)
    dataset = NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch)
    overflows = []

    class Overflows(ms.train.Callback):
        def on_train_step_end(self, run_context):
            overflows.append(bool(run_context.original_args().net_outputs[1].asnumpy()))
    model.train(1, dataset, callbacks=[Overflows()])
    weights = {p.name: p.asnumpy().astype(np.float32) for p in net.trainable_params()}
    return weights, np.array(overflows)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", required=True)
    p.add_argument("--configs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--checkpoint", default=None)
    args = p.parse_args()

    import mscore as ms
    from mscore import nn
    from mscore.communication import get_group_size, get_rank, init, management
    ms.set_context(backend=args.backend)
    init()
    rank, size = get_rank(), get_group_size()
    counter = Counter(management.collectives())
    x, y = make_data()
    half = BATCH // size
    whole = lambda s: (s * BATCH, (s + 1) * BATCH)                       # noqa: E731
    mine = lambda s: (s * BATCH + rank * half, s * BATCH + (rank + 1) * half)  # noqa: E731
    out = {"size": np.array(size)}

    def record(cfg, tag, weights, states=None):
        for name, w in weights.items():
            out[f"{cfg}/{tag}/w/{name}"] = w
        for name, s in (states or {}).items():
            out[f"{cfg}/{tag}/s/{name}"] = s

    for cfg in args.configs.split(","):
        parts = cfg.split(":")
        ms.reset_auto_parallel_context()
        ms.set_context(mode=ms.GRAPH_MODE if "graph" in parts else ms.PYNATIVE_MODE)
        dp = dict(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        sharded = dict(enable_parallel_optimizer=True,
                       parallel_optimizer_config={"parallel_optimizer_threshold": 0})
        if parts[0] == "po":
            opt_kind = parts[2]
            ref_w, ref_s, ref_cell = train_steps(ms, nn, x, y, whole, 1, opt_kind)
            ms.set_auto_parallel_context(**dp, **sharded)
            counter.reset()
            w, s, cell = train_steps(ms, nn, x, y, mine, 1 + rank, opt_kind)
            record(cfg, "ref", ref_w, ref_s)
            record(cfg, "dp", w, s)
            out[f"{cfg}/counts"] = np.array([counter.counts[k] for k in KINDS])
            out[f"{cfg}/state_bytes"] = np.array([_state_bytes(ref_cell.optimizer),
                                                  cell.optimizer.state_bytes()])
            if args.checkpoint and cfg == "po:pynative:adam":
                out["reload_difference"] = np.array(save_and_reload(
                    ms, nn, cell, args.checkpoint, rank, opt_kind))
        elif parts[0] == "po_o2":
            xs = x.copy()
            xs[OVERFLOW_STEP * BATCH + half + 1] = 1e6   # a row of rank 1's shard
            ref, ref_overflows = train_model_o2(ms, nn, xs, y, 1, BATCH)
            ms.set_auto_parallel_context(**dp, **sharded)
            from mscore.dataset import config
            config.set_seed(3)
            got, overflows = train_model_o2(ms, nn, xs, y, 1 + rank, BATCH // size)
            record(cfg, "ref", ref)
            record(cfg, "dp", got)
            out[f"{cfg}/overflows"] = np.stack([ref_overflows, overflows])
        elif cfg in ("acc", "acc_po", "acc_po_shard"):
            ref_w, _, _ = train_steps(ms, nn, x, y, whole, 1, "momentum")
            options = {"acc": {}, "acc_po": sharded, "acc_po_shard": dict(
                sharded, parallel_optimizer_config={"parallel_optimizer_threshold": 0,
                                                    "optimizer_level": "level2"})}[cfg]
            ms.set_auto_parallel_context(**dp, grad_accumulation_step=ACC, **options)
            counter.reset()
            w, _, cell = train_steps(ms, nn, x, y, mine, 1 + rank, "momentum", micro=ACC)
            record(cfg, "ref", ref_w)
            record(cfg, "dp", w)
            out[f"{cfg}/accu_bytes"] = np.array(sum(
                int(np.prod(p.shape)) * p.dtype.itemsize for p in cell.micro_step.sums))
            out[f"{cfg}/counts"] = np.array([counter.counts[k] for k in KINDS])
            if args.checkpoint and cfg != "acc":
                ref_sums, ref_w = save_mid_accumulation(
                    ms, nn, x, y, dp, options, os.path.join(args.checkpoint, cfg), rank, size)
                record(cfg, "mid", ref_w, ref_sums)
        ms.reset_auto_parallel_context()
    np.savez(os.path.join(args.out, f"rank{rank}.npz"), **out)
    print(f"worker rank {rank} of {size} done", flush=True)


def save_and_reload(ms, nn, cell, directory, rank, opt_kind):
    """Save ``cell`` (and the strategy file), load the file into a new sharded cell; the
    largest absolute difference between the two cells' parameters."""
    ms.set_auto_parallel_context(strategy_ckpt_save_file=os.path.join(directory,
                                                                      "strategy.ckpt"))
    path = os.path.join(directory, f"rank_{rank}", "net.ckpt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ms.save_checkpoint(cell, path)
    net = build(ms, nn, 100 + rank)
    fresh = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), make_optimizer(nn, net, opt_kind))
    not_loaded, _ = ms.load_param_into_net(fresh, ms.load_checkpoint(path))
    assert not not_loaded, not_loaded
    saved = {p.name: p.asnumpy() for p in cell.get_parameters()}
    loaded = {p.name: p.asnumpy() for p in fresh.get_parameters()}
    assert sorted(saved) == sorted(loaded), (sorted(saved), sorted(loaded))
    # the other rank's file is refused: its slices are not this rank's
    from mscore.communication import comm_func
    comm_func.barrier()
    other = os.path.join(directory, f"rank_{1 - rank}", "net.ckpt")
    try:
        ms.load_param_into_net(fresh, ms.load_checkpoint(other))
        raise AssertionError(f"rank {rank} loaded rank {1 - rank}'s slices")
    except ValueError as exc:
        assert other in str(exc) and f"rank {1 - rank} of 2" in str(exc), exc
    return max(float(np.max(np.abs(saved[k] - loaded[k]))) for k in saved)


def save_mid_accumulation(ms, nn, x, y, dp, options, directory, rank, size):
    """Train ``MID_CALLS`` calls of ``ACC``-step accumulation (an update, then two calls
    summed) alone on whole micro-batches, then in the job on this rank's; the job saves
    ``directory/rank_R/net.ckpt`` and the strategy file there. Returns the single process's
    accumulated sums and weights."""
    def calls(step, rows):
        for c in range(MID_CALLS):
            lo, hi = rows(c)
            step(ms.Tensor(x[lo:hi]), ms.Tensor(y[lo:hi]))
    micro = BATCH // ACC
    ms.reset_auto_parallel_context()
    ms.set_auto_parallel_context(grad_accumulation_step=ACC)
    net = build(ms, nn, 1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), make_optimizer(nn, net, "momentum"))
    calls(step, lambda c: (c * micro, (c + 1) * micro))
    ref_sums = {s.name: s.asnumpy() for s in step.micro_step.sums}
    ref_w = {p.name: p.asnumpy() for p in net.trainable_params()}
    ms.reset_auto_parallel_context()
    ms.set_auto_parallel_context(**dp, grad_accumulation_step=ACC, **options,
                                 strategy_ckpt_save_file=os.path.join(directory,
                                                                      "strategy.ckpt"))
    net = build(ms, nn, 1 + rank)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), make_optimizer(nn, net, "momentum"))
    share = micro // size
    calls(step, lambda c: (c * micro + rank * share, c * micro + (rank + 1) * share))
    path = os.path.join(directory, f"rank_{rank}", "net.ckpt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ms.save_checkpoint(step, path)
    return ref_sums, ref_w


def _state_bytes(opt):
    return sum(int(np.prod(p.shape)) * p.dtype.itemsize for name, tup in
               opt._param_tuples.items() if name != "parameters" for p in tup)


if __name__ == "__main__":
    main()
