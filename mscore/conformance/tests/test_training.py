"""Level 5: 20 training steps of an MLP and a CNN (Conv2d-BatchNorm2d-ReLU-MaxPool2d-Flatten-
Dense) with Momentum, from the same initial weights and the same batches, compared step by step
with the reference: the loss of every step, then every parameter and buffer at the end.

The reference runs the same float32 program on the numpy backend (training is compared in the
dtype it runs in; rounding differences are allowed to accumulate over the 20 steps).
"""
from __future__ import annotations

import numpy as np
import pytest

import mscore as ms
from mscore import nn
from mscore.conformance.harness import stable_seed
from mscore.conformance.kit import _REFERENCE_CACHE

STEPS = 20
BATCH = 8


class MLP(nn.Cell):
    """Dense-ReLU-Dense-ReLU-Dense."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(12, 16)
        self.fc2 = nn.Dense(16, 16)
        self.fc3 = nn.Dense(16, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


class CNN(nn.Cell):
    """Conv2d-BatchNorm2d-ReLU-MaxPool2d-Flatten-Dense."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="same")
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 3 * 3, 4)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.bn(self.conv(x))))))


MODELS = {"mlp": (MLP, (12,)), "cnn": (CNN, (1, 6, 6))}


def _batches(name):
    rng = np.random.default_rng(stable_seed("training", name))
    _, shape = MODELS[name]
    xs = rng.standard_normal((STEPS, BATCH) + shape).astype(np.float32)
    ys = rng.integers(0, 4, size=(STEPS, BATCH)).astype(np.int32)
    return xs, ys


def _train(name):
    """Build the model from seed 0 and train it; returns losses, parameters and buffers."""
    def run():
        ms.set_seed(0)
        net = MODELS[name][0]()
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
        train_net = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
        train_net.set_train(True)
        xs, ys = _batches(name)
        losses = []
        for step in range(STEPS):
            loss = train_net(ms.Tensor(xs[step]), ms.Tensor(ys[step]))
            losses.append(float(loss.asnumpy()))
        return {"losses": np.asarray(losses),
                "parameters": {p.name: p for p in net.get_parameters()}}
    return run


@pytest.mark.parametrize("case", sorted(MODELS))
@pytest.mark.parametrize("dtype", ("float32",))
def test_train_20_steps(kit, case, dtype):
    """PYNATIVE training matches the reference step by step."""
    expected = _reference(kit, case)
    actual = kit.run(_train(case))
    _compare(kit, actual, expected, dtype)


class GraphCase:
    """A model trained in GRAPH_MODE (its own row in the matrix)."""

    def __init__(self, model):
        self.model = model
        self.feature = f"{model} (GRAPH_MODE)"

    def __repr__(self):
        return self.model


@pytest.mark.mscore_needs("compile")
@pytest.mark.parametrize("case", [GraphCase("mlp")], ids=["mlp"])
@pytest.mark.parametrize("dtype", ("float32",))
def test_train_20_steps_graph_mode(kit, case, dtype):
    """GRAPH_MODE (the whole step compiled by the backend) matches the reference."""
    expected = _reference(kit, case.model)
    with kit.graph_mode():
        actual = kit.run(_train(case.model))
    _compare(kit, actual, expected, dtype)


def _reference(kit, case):
    # The same float32 program on the numpy backend, cached for the session.
    key = ("training", case)
    if key not in _REFERENCE_CACHE:
        with kit.on_reference():
            result = _train(case)()
            _REFERENCE_CACHE[key] = {"losses": result["losses"],
                                     "parameters": {k: v.asnumpy() for k, v in
                                                    result["parameters"].items()}}
    return _REFERENCE_CACHE[key]


def _compare(kit, actual, expected, dtype):
    # Losses step by step first: the first step that drifts is the most useful message.
    kit.assert_close(actual["losses"], expected["losses"], dtype, "loss per step", factor=20.0)
    kit.assert_tree_close(actual["parameters"], expected["parameters"], dtype,
                          "parameters after 20 steps", factor=50.0)
