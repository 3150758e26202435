"""Boost levels O0 / O1 / O2 on a ResNet-like conv net with BatchNorm: steps/s and accuracy.

The data are scikit-learn's handwritten digits (1797 images of 8 x 8, 80 % train / 20 % test,
scaled to [0, 1]); the network is a small ResNet: a conv-BN-ReLU stem (16 channels), two basic
blocks, a strided projection block to 32 channels and one more basic block, global average
pooling and a Dense head (10 BatchNorm layers, 11 parameter blocks for gradient freezing).
Each level trains its own copy from the same weights with the same batches (Momentum 0.9,
``amp.build_train_network(..., boost_level=level)``, so O1/O2 are MindSpore's defaults:
less BN with the FN head and gradient centralization, gradient freezing with 10 groups; O2
adds AdaSum, which in one process changes nothing, as in MindSpore).

The levels are measured *interleaved*: every epoch runs each of them in turn (the order
rotating from epoch to epoch), so a change of the machine's load hits them alike. The first
epoch warms up; after it a step's time counts unless the step traced a program (GRAPH_MODE
compiles each freezing group's step on first use). "steps/s" is over all timed epochs; "vs O0"
is the median over the timed epochs of the epoch's steps/s against O0's in the same epoch
(robust to a burst of load on a shared machine). Steps are timed by the process's CPU time
unless ``--clock wall``. The seeds promise O1 "about 20% faster, same accuracy" and O2 "about
30% faster, accuracy within 3%" (MindSpore's numbers for ResNet-50 on Ascend); the last
column repeats the promise next to what we get.

    python bench/boost.py [--backends numpy,torch,jax] [--mode pynative|graph] [--epochs 4]
                          [--breakdown] [--clock cpu|wall]

One BLAS / intra-op thread (set before the libraries load).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

# The process's CPU time (every thread of it): on a shared machine the wall clock also counts
# the other processes' time slices. --clock wall switches.
CLOCK = time.process_time
LEVELS = ("O0", "O1", "O2")
PROMISE = {"O0": "-", "O1": "~20% faster, same accuracy", "O2": "~30% faster, accuracy -3% at most"}
# --breakdown: O1's two features alone (AutoBoost's manual mode)
PARTS = {"O1 lessBN": {"boost": {"mode": "manual", "grad_freeze": False}},
         "O1 freeze": {"boost": {"mode": "manual", "less_bn": False}}}


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", default="numpy,torch,jax")
    p.add_argument("--mode", default="pynative", choices=("pynative", "graph"))
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--clock", default="cpu", choices=("cpu", "wall"),
                   help="time steps by the process's CPU time (default) or the wall clock")
    p.add_argument("--breakdown", action="store_true",
                   help="also O1 with only less BN and with only gradient freezing")
    return p.parse_args(argv)


def digits():
    """(train_x, train_y, test_x, test_y): float32 (N, 1, 8, 8) in [0, 1], int32 labels."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int32)
    order = np.random.default_rng(0).permutation(len(x))
    x, y = x[order], y[order]
    cut = int(0.8 * len(x))
    return x[:cut], y[:cut], x[cut:], y[cut:]


def build_net(ms):
    nn = ms.nn

    class Basic(nn.Cell):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, has_bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, has_bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.project = stride != 1 or cin != cout
            if self.project:
                self.down = nn.Conv2d(cin, cout, 1, stride=stride, has_bias=False)
                self.bnd = nn.BatchNorm2d(cout)

        def construct(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            if self.project:
                x = self.bnd(self.down(x))
            return self.relu(y + x)

    class ResNetLike(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 16, 3, has_bias=False)
            self.bn = nn.BatchNorm2d(16)
            self.relu = nn.ReLU()
            self.layer1 = nn.SequentialCell([Basic(16, 16, 1), Basic(16, 16, 1)])
            self.layer2 = nn.SequentialCell([Basic(16, 32, 2), Basic(32, 32, 1)])
            self.pool = nn.AvgPool2d(4, 4)
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(32, 10)

        def construct(self, x):
            x = self.relu(self.bn(self.conv(x)))
            x = self.layer2(self.layer1(x))
            return self.fc(self.flatten(self.pool(x)))

    return ResNetLike()


def _weights(ms, net, seed):
    rng = np.random.default_rng(seed)
    for p in sorted(net.get_parameters(), key=lambda p: p.name):
        shape = tuple(p.shape)
        if p.name.endswith(("moving_mean", "beta", "bias")):
            value = np.zeros(shape)
        elif p.name.endswith(("moving_variance", "gamma")):
            value = np.ones(shape)
        else:
            value = rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))
        p.set_data(ms.Tensor(value.astype(np.float32)))


class Run:
    """One level's network, train cell and counters."""

    def __init__(self, ms, level, args):
        from mscore import amp, boost, nn
        self.level = level
        self.net = build_net(ms)
        _weights(ms, self.net, args.seed)
        opt = nn.Momentum(self.net.trainable_params(), args.lr, 0.9)
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        np.random.seed(args.seed)      # the freezing schedule draws from numpy's generator
        net = self.net
        if level in PARTS:
            net, opt = boost.AutoBoost("O1", PARTS[level]).network_auto_process_train(net, opt)
        self.train = amp.build_train_network(net, opt, loss,
                                             boost_level="O1" if level in PARTS else level)
        self.train.set_train()
        self.eval_net = getattr(self.train.network, "_backbone", self.net)
        self.seconds, self.steps, self.traced = 0.0, 0, 0
        self.losses = []
        self.retraces_every_call = False
        self.per_epoch = []

    def epoch(self, ms, batches):
        """One epoch; the first one only warms up (allocations, compilation). After it a
        step that traced a program is not timed either (a freezing group's first step),
        unless the backend traces on every call (a GRAPH_MODE that runs the program
        eagerly, as torch's default does)."""
        from mscore.compile import graph
        warm_up = not self.losses
        traced, seconds, steps = 0, 0.0, 0
        for x, y in batches:
            before = graph.trace_count
            start = CLOCK()
            loss = self.train(x, y)
            value = float(loss.asnumpy())      # waits for the step
            spent = CLOCK() - start
            did_trace = graph.trace_count != before
            traced += did_trace
            if warm_up:
                continue
            if did_trace and not self.retraces_every_call:
                self.traced += 1
            else:
                seconds += spent
                steps += 1
        if warm_up:
            self.retraces_every_call = traced == len(batches)
        else:
            self.seconds += seconds
            self.steps += steps
            self.per_epoch.append(steps / seconds if seconds else float("nan"))
        self.losses.append(value)

    def accuracy(self, ms, x, y):
        self.eval_net.set_train(False)
        right = 0
        for i in range(0, len(x), 120):
            logits = self.eval_net(ms.Tensor(x[i:i + 120])).asnumpy()
            right += int((logits.argmax(1) == y[i:i + 120]).sum())
        self.eval_net.set_train(True)
        return right / len(x)


def bench_backend(name, args, data):
    import mscore as ms
    ms.set_context(backend=name, mode=ms.GRAPH_MODE if args.mode == "graph" else
                   ms.PYNATIVE_MODE)
    if name == "torch":
        import torch
        torch.set_num_threads(1)
    train_x, train_y, test_x, test_y = data
    levels = LEVELS + (tuple(PARTS) if args.breakdown else ())
    runs = [Run(ms, level, args) for level in levels]
    rng = np.random.default_rng(args.seed)
    for epoch in range(args.epochs):
        order = rng.permutation(len(train_x))
        batches = [(ms.Tensor(train_x[idx]), ms.Tensor(train_y[idx]))
                   for idx in (order[i:i + args.batch]
                               for i in range(0, len(order) - args.batch + 1, args.batch))]
        for k in range(len(runs)):       # interleaved, the order rotating each epoch
            runs[(epoch + k) % len(runs)].epoch(ms, batches)
    results = []
    for run in runs:
        removed = len(run.eval_net.removed_batch_norms) if hasattr(
            run.eval_net, "removed_batch_norms") else 0
        ratios = np.array(run.per_epoch) / np.array(runs[0].per_epoch)
        results.append({"level": run.level, "steps_per_s": run.steps / run.seconds,
                        "vs_o0": float(np.nanmedian(ratios)) - 1.0,
                        "accuracy": run.accuracy(ms, test_x, test_y),
                        "final_loss": run.losses[-1], "traced_steps": run.traced,
                        "bn_removed": removed})
    return results


def main(argv=None):
    global CLOCK
    args = _parse(argv)
    if args.clock == "wall":
        CLOCK = time.perf_counter
    data = digits()
    print(f"boost levels on a ResNet-like net, sklearn digits ({len(data[0])} train / "
          f"{len(data[2])} test), batch {args.batch}, {args.epochs} epochs, mode {args.mode}, "
          f"one thread, {args.clock} clock; levels interleaved per epoch")
    print(f"{'backend':8} {'level':9} {'steps/s':>8} {'vs O0':>7} {'accuracy':>9} "
          f"{'loss':>7} {'BN off':>6}  promise")
    for name in args.backends.split(","):
        try:
            results = bench_backend(name, args, data)
        except Exception as exc:
            print(f"{name:8} skipped: {type(exc).__name__}: {exc}")
            continue
        for r in results:
            print(f"{name:8} {r['level']:9} {r['steps_per_s']:8.2f} "
                  f"{r['vs_o0']:+7.1%} {r['accuracy']:9.3f} "
                  f"{r['final_loss']:7.3f} {r['bn_removed']:6d}  {PROMISE.get(r['level'], '')}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
