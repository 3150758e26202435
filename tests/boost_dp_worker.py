"""Worker of tests/test_boost_adasum.py (started by ``mscore run`` with 2 processes; not a test
module).

Each rank trains a linear model (``Dense(FEATURES, CLASSES)``, MSE loss, SGD) for ``STEPS``
steps on its half of every batch, in DATA_PARALLEL mode with boost level O2 reduced to AdaSum
(``{"boost": {"mode": "manual", "less_bn": False, "grad_freeze": False}}``), twice:

* ``adasum``: ``device_number`` 1, so the 2 processes are 2 server groups and AdaSum
  combines their weight changes;
* ``fallback``: the default ``device_number`` 8, too few processes for 2 groups: the usual
  data-parallel step (gradients averaged), as MindSpore does.

and once more with level O1 reduced to gradient freezing (``freeze``) on a chain of four
Dense layers without biases (2 groups, the continuous schedule 0 1 0 1: every other step
trains only the last layer), whose per-group cells reduce the gradients of their group.

Rank 1 starts from other weights, so rank 0's broadcast is needed to match. Each rank writes
``OUT/rank{R}.npz`` with, per configuration, whether AdaSum is on, the losses and the
weights after every step.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

STEPS = 4
BATCH = 16                  # rows per step over both ranks
FEATURES, CLASSES = 6, 3
LR = 0.2


def data():
    """``(x, y)`` of every step: (STEPS, BATCH, FEATURES) and (STEPS, BATCH, CLASSES)."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((STEPS, BATCH, FEATURES)).astype(np.float32)
    y = rng.standard_normal((STEPS, BATCH, CLASSES)).astype(np.float32)
    # the ranks' halves pull in different directions, so AdaSum differs from the mean
    y[:, BATCH // 2:] *= -2.0
    return x, y


def initial_weights(seed=3):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((CLASSES, FEATURES)).astype(np.float32) * 0.3,
            rng.standard_normal((CLASSES,)).astype(np.float32) * 0.1)


def run(config, rank, ms, nn, boost):
    w, b = initial_weights(seed=3 if rank == 0 else 4)
    net = nn.Dense(FEATURES, CLASSES, weight_init=ms.Tensor(w), bias_init=ms.Tensor(b))
    opt = nn.SGD(net.trainable_params(), LR)
    settings = {"boost": {"mode": "manual", "less_bn": False, "grad_freeze": False}}
    if config == "adasum":
        settings["common"] = {"device_number": 1}
    auto = boost.AutoBoost("O2", settings)
    net2, opt2 = auto.network_auto_process_train(net, opt)
    train = boost.BoostTrainOneStepCell(nn.WithLossCell(net2, nn.MSELoss()), opt2)
    train.set_train()
    x, y = data()
    half = BATCH // 2
    rows = slice(rank * half, (rank + 1) * half)
    losses, weights, biases = [], [], []
    for step in range(STEPS):
        loss = train(ms.Tensor(x[step, rows]), ms.Tensor(y[step, rows]))
        losses.append(float(loss.asnumpy()))
        weights.append(net.weight.asnumpy().copy())
        biases.append(net.bias.asnumpy().copy())
    return {f"{config}_enabled": np.array(train.enable_adasum),
            f"{config}_losses": np.array(losses), f"{config}_weights": np.stack(weights),
            f"{config}_biases": np.stack(biases)}


CHAIN = ((5, FEATURES), (5, 5), (4, 5), (CLASSES, 4))


def chain_weights(seed=5):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) * 0.5 for shape in CHAIN]


def run_freeze(rank, ms, nn, boost):
    layers = [nn.Dense(s[1], s[0], weight_init=ms.Tensor(w), has_bias=False)
              for s, w in zip(CHAIN, chain_weights(5 if rank == 0 else 6))]
    net = nn.SequentialCell(layers)
    settings = {"boost": {"mode": "manual", "less_bn": False},
                "grad_freeze": {"param_groups": 2, "freeze_type": 0, "freeze_p": 0.5,
                                "total_steps": STEPS}}
    auto = boost.AutoBoost("O1", settings)
    net2, opt2 = auto.network_auto_process_train(net, nn.SGD(net.trainable_params(), LR))
    train = boost.BoostTrainOneStepCell(nn.WithLossCell(net2, nn.MSELoss()), opt2)
    train.set_train()
    x, y = data()
    half = BATCH // 2
    rows = slice(rank * half, (rank + 1) * half)
    weights = []
    for step in range(STEPS):
        train(ms.Tensor(x[step, rows]), ms.Tensor(y[step, rows]))
        weights.append(np.concatenate([layer.weight.asnumpy().ravel() for layer in layers]))
    return {"freeze_weights": np.stack(weights)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--mode", default="pynative")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import mscore as ms
    from mscore import boost, nn
    from mscore.communication import get_rank, init
    ms.set_context(backend=args.backend,
                   mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    init()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                 gradients_mean=True)
    rank = get_rank()
    results = {}
    for config in ("adasum", "fallback"):
        results.update(run(config, rank, ms, nn, boost))
    results.update(run_freeze(rank, ms, nn, boost))
    np.savez(os.path.join(args.out, f"rank{rank}.npz"), **results)


if __name__ == "__main__":
    main()
