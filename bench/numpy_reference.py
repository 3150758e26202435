"""Steps per second of mscore's numpy reference backend on two small training loops.

Plain script: ``python bench/numpy_reference.py [--steps N] [--warmup N] [--batch N]``.
It trains an MLP 784-512-512-10 and a CNN (Conv2d-BatchNorm2d-ReLU-MaxPool2d-Flatten-Dense)
on one random MNIST-shaped batch with ``nn.Momentum`` through ``nn.TrainOneStepCell``, runs a
few warm-up steps, then times a loop and prints steps/second. The numbers are a baseline for
the reference backend (and its reference autodiff), not a comparison between libraries.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import mscore as ms
from mscore import nn


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


def measure(net, batch, warmup, steps, lr):
    """(steps/second, first loss, last loss) of ``steps`` timed train steps."""
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 10, batch).astype(np.int32))
    opt = nn.Momentum(net.trainable_params(), lr, 0.9)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
    train.set_train()
    first = float(train(x, y).asnumpy())
    for _ in range(warmup):
        train(x, y)
    start = time.perf_counter()
    for _ in range(steps):
        loss = train(x, y)
    last = float(loss.asnumpy())  # forces completion on asynchronous backends
    return steps / (time.perf_counter() - start), first, last


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="timed steps (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="warm-up steps (default 3)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.warmup < 0 or args.batch < 1:
        parser.error("--steps and --batch must be >= 1, --warmup >= 0")
    ms.set_context(backend="numpy")
    ms.set_seed(0)
    print(f"mscore {ms.__version__}, backend numpy, batch {args.batch}, "
          f"{args.warmup} warm-up + {args.steps} timed steps")
    # The CNN's 6272-wide Dense oscillates at lr 0.01 with momentum 0.9; 0.002 descends.
    for name, make, lr in (("MLP 784-512-512-10", MLP, 0.01),
                           ("CNN conv-bn-relu-pool-dense", CNN, 0.002)):
        rate, first, last = measure(make(), args.batch, args.warmup, args.steps, lr)
        print(f"{name:30s} {rate:8.2f} steps/s   loss {first:.4f} -> {last:.4f}")


if __name__ == "__main__":
    main()
