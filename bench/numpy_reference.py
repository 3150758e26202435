"""mscore's numpy reference backend against a hand-written numpy step, and its throughput.

``python bench/numpy_reference.py [--steps 10] [--rounds 9] [--batch 64] [--clock cpu]``

1. MLP 784-512-512-10 (ReLU), softmax cross entropy, momentum SGD (lr 0.01, momentum 0.9),
   batch 64: ``nn.TrainOneStepCell`` on backend numpy (reference autodiff) against the same
   step written by hand with numpy (forward, closed-form backward, momentum update), from the
   same weights on the same batch. The losses of both are compared first; then interleaved
   rounds of ``--steps`` steps each (the order alternates) give the median time per step and
   the ratio mscore / hand-written.
2. Steps per second of the MLP and of a CNN (Conv2d-BatchNorm2d-ReLU-MaxPool2d-Flatten-Dense)
   on mscore alone, a baseline for the reference backend.

Run it with one BLAS thread (``OMP_NUM_THREADS=1``) for a like-for-like ratio.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import mscore as ms
from mscore import nn

LR, MOMENTUM = 0.01, 0.9


class MLP(nn.Cell):
    """784-512-512-10 with ReLU."""

    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.body = nn.SequentialCell(nn.Dense(784, 512), nn.ReLU(), nn.Dense(512, 512),
                                      nn.ReLU(), nn.Dense(512, 10))

    def construct(self, x):
        return self.body(self.flatten(x))


class CNN(nn.Cell):
    """Conv2d(1, 32, 3)-BatchNorm2d-ReLU-MaxPool2d(2)-Flatten-Dense(32*14*14, 10)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 32, 3)
        self.bn = nn.BatchNorm2d(32)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(32 * 14 * 14, 10)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.bn(self.conv(x))))))


class HandWrittenMLP:
    """The MLP's train step written directly with numpy: what the reference backend's step
    is compared with."""

    def __init__(self, weights):
        self.params = [w.copy() for w in weights]          # w1, b1, w2, b2, w3, b3
        self.moments = [np.zeros_like(w) for w in weights]

    def step(self, x, y):
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = x @ w1.T + b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w2.T + b2
        a2 = np.maximum(h2, 0)
        logits = a2 @ w3.T + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        n = x.shape[0]
        rows = np.arange(n)
        loss = (np.log(s[:, 0]) - shifted[rows, y]).mean()
        d = e / s
        d[rows, y] -= 1
        d /= n
        grads = [None] * 6
        grads[4], grads[5] = d.T @ a2, d.sum(axis=0)
        d = (d @ w3) * (h2 > 0)
        grads[2], grads[3] = d.T @ a1, d.sum(axis=0)
        d = (d @ w2) * (h1 > 0)
        grads[0], grads[1] = d.T @ x, d.sum(axis=0)
        for p, v, g in zip(self.params, self.moments, grads):
            v *= MOMENTUM
            v += g
            p -= LR * v
        return loss


def _mscore_step(net, lr):
    opt = nn.Momentum(net.trainable_params(), lr, MOMENTUM)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
    train.set_train()
    return train


def compare_mlp(args, out):
    """Median s/step of mscore and the hand-written step, and the ratio."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, args.batch).astype(np.int32)
    ms.set_seed(0)
    net = MLP()
    native = HandWrittenMLP([p.asnumpy() for p in net.trainable_params()])
    train = _mscore_step(net, LR)
    xt, yt = ms.Tensor(x), ms.Tensor(y)
    pairs = [(float(train(xt, yt).asnumpy()), float(native.step(x, y))) for _ in range(3)]
    diff = max(abs(a - b) / abs(b) for a, b in pairs)
    print(f"same model check (first 3 losses, mscore vs hand-written): max rel diff {diff:.1e}",
          file=out)
    if diff > 1e-4:
        print("ERROR: the losses differ; not a like-for-like comparison", file=out)
        return None
    fns = {"mscore": lambda: train(xt, yt), "hand-written": lambda: native.step(x, y)}
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    for fn in fns.values():
        for _ in range(args.warmup):
            fn()
    times = {k: [] for k in fns}
    for r in range(args.rounds):
        for name in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
            t0 = clock()
            for _ in range(args.steps):
                fns[name]()
            times[name].append((clock() - t0) / args.steps)
    med = {k: statistics.median(v) for k, v in times.items()}
    per_round = statistics.median(a / b for a, b in zip(times["mscore"], times["hand-written"]))
    spread = max((max(v) - min(v)) / statistics.median(v) for v in times.values())
    for name, t in med.items():
        print(f"MLP {name:13s} {t * 1e3:8.3f} ms/step {1 / t:8.1f} steps/s", file=out)
    print(f"ratio mscore/hand-written numpy = {med['mscore'] / med['hand-written']:.3f} "
          f"(median of per-round ratios {per_round:.3f}; round spread up to "
          f"{spread * 100:.0f}%)", file=out)
    return med


def throughput(net, batch, warmup, steps, lr):
    """(steps/second, first loss, last loss) of ``steps`` timed train steps of mscore."""
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 10, batch).astype(np.int32))
    train = _mscore_step(net, lr)
    first = float(train(x, y).asnumpy())
    for _ in range(warmup):
        train(x, y)
    start = time.perf_counter()
    for _ in range(steps):
        loss = train(x, y)
    last = float(loss.asnumpy())
    return steps / (time.perf_counter() - start), first, last


def main(argv=None, out=sys.stdout):
    """Run the comparison and the throughput baseline; 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="steps per timed round")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds")
    parser.add_argument("--warmup", type=int, default=3, help="warm-up steps (default 3)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: this process's CPU time (steadier on a shared machine)")
    parser.add_argument("--skip-cnn", action="store_true", help="only the MLP comparison")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1 or args.warmup < 0 or args.batch < 1:
        parser.error("--steps, --rounds and --batch must be >= 1, --warmup >= 0")
    ms.set_context(backend="numpy")
    print(f"mscore {ms.__version__}, backend numpy, numpy {np.__version__}, batch {args.batch}, "
          f"{args.rounds} rounds x {args.steps} steps ({args.clock} clock)", file=out)
    if compare_mlp(args, out) is None:
        return 2
    if args.skip_cnn:
        return 0
    # The CNN's 6272-wide Dense oscillates at lr 0.01 with momentum 0.9; 0.002 descends.
    ms.set_seed(0)
    rate, first, last = throughput(CNN(), args.batch, args.warmup, args.steps, 0.002)
    print(f"CNN conv-bn-relu-pool-dense   {rate:8.2f} steps/s (mscore)   loss {first:.4f} -> "
          f"{last:.4f}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
