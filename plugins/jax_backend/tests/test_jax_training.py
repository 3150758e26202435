"""Whole training runs on jax, PYNATIVE and GRAPH, against the numpy backend step for
step: MLP and CNN, a loss-scaled step and an AMP O2 step."""
from __future__ import annotations

import numpy as np
import pytest
from _jax_compare import assert_close, leaked_tracers

import mscore as ms
from mscore import nn
from mscore.compile import graph


# -- whole training runs: jax (PYNATIVE and GRAPH) against the numpy backend -------------------
def _mlp():
    return nn.SequentialCell(nn.Dense(12, 16), nn.ReLU(), nn.Dense(16, 16), nn.Tanh(),
                             nn.Dense(16, 5))


class SmallCNN(nn.Cell):
    """conv -> BatchNorm -> relu -> maxpool -> conv -> relu -> avgpool -> dense."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, pad_mode="same", has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 6, 3, pad_mode="valid")
        self.avg = nn.AvgPool2d(2, 1)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(6, 5)

    def construct(self, x):
        x = self.pool(self.relu(self.bn(self.conv1(x))))
        x = self.avg(self.relu(self.conv2(x)))
        return self.fc(self.flatten(x))


def _batches(kind, steps):
    """``steps`` batches cycling over 4 fixed ones, labelled by a fixed linear rule (a
    learnable task, so the loss must go down)."""
    rng = np.random.default_rng(21)
    shape = (8, 12) if kind == "mlp" else (8, 2, 8, 8)
    proj = rng.normal(size=(int(np.prod(shape[1:])), 5))
    fixed = []
    for _ in range(4):
        x = rng.normal(size=shape).astype(np.float32)
        fixed.append((x, np.argmax(x.reshape(8, -1) @ proj, axis=1).astype(np.int32)))
    return [fixed[i % 4] for i in range(steps)]


_REFERENCE = {}


def _train(backend, mode, kind, steps=20):
    ms.set_context(backend=backend, mode=mode)
    ms.set_seed(3)                       # the same initial weights on every backend
    net = _mlp() if kind == "mlp" else SmallCNN()
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
    step.set_train()
    losses = [float(step(ms.Tensor(x), ms.Tensor(y)).asnumpy())
              for x, y in _batches(kind, steps)]
    weights = {p.name: p.asnumpy() for p in step.get_parameters()
               if p.name != "global_rng_state"}
    return np.array(losses), weights, step


@pytest.mark.parametrize("mode", ["PYNATIVE", "GRAPH"])
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_matches_numpy(kind, mode):
    if kind not in _REFERENCE:
        _REFERENCE[kind] = _train("numpy", ms.PYNATIVE_MODE, kind)[:2]
    ref_losses, ref_weights = _REFERENCE[kind]
    start = graph.trace_count
    losses, weights, step = _train("jax", getattr(ms, f"{mode}_MODE"), kind)
    assert graph.trace_count - start == (1 if mode == "GRAPH" else 0)
    assert ref_losses[-1] < ref_losses[0]            # it does learn
    assert_close(losses, ref_losses, factor=5, what="losses")
    for name, w in ref_weights.items():             # BatchNorm statistics included
        assert_close(weights[name], w, factor=5, what=name, min_scale=1.0)
    assert leaked_tracers(step.get_parameters()) == []


def _loss_scaled(backend, mode, steps=8):
    ms.set_context(backend=backend, mode=mode)
    ms.set_seed(3)
    net = _mlp()
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    # A scale so large that the first steps overflow: they must be skipped, the scale must
    # halve each time, then grow again after scale_window good steps.
    update = nn.DynamicLossScaleUpdateCell(2.0 ** 126, 2.0, 2)
    step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                                            opt, update)
    step.set_train()
    trace = []
    for x, y in _batches("mlp", steps):
        loss, overflow, scale = step(ms.Tensor(x), ms.Tensor(y))
        trace.append((float(loss.asnumpy()), bool(overflow.asnumpy()),
                      float(scale.asnumpy())))
    weights = {p.name: p.asnumpy() for p in net.get_parameters()}
    return trace, weights, step


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy overflows on purpose
def test_loss_scaled_graph_step_matches_numpy():
    ref, ref_w, _ = _loss_scaled("numpy", ms.PYNATIVE_MODE)
    start = graph.trace_count
    got, got_w, step = _loss_scaled("jax", ms.GRAPH_MODE)
    assert graph.trace_count - start == 1
    overflows = [o for _, o, _ in ref]
    assert any(overflows) and not all(overflows)
    assert [o for _, o, _ in got] == overflows
    assert [s for _, _, s in got] == [s for _, _, s in ref]
    assert_close([v for v, _, _ in got], [v for v, _, _ in ref], factor=5)
    for name, w in ref_w.items():
        assert_close(got_w[name], w, factor=5, what=name, min_scale=1.0)
    assert leaked_tracers(step.get_parameters()) == []


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's fp16 overflows (expected)
def test_amp_o2_graph_step_matches_numpy():
    from mscore import amp

    def run(backend, mode):
        ms.set_context(backend=backend, mode=mode)
        ms.set_seed(3)
        net = SmallCNN()
        opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
        step = amp.build_train_network(net, opt, nn.CrossEntropyLoss(), level="O2")
        step.set_train()
        out = []
        for x, y in _batches("cnn", 4):
            loss, overflow, scale = step(ms.Tensor(x), ms.Tensor(y))
            out.append((float(loss.asnumpy()), bool(overflow.asnumpy()),
                        float(scale.asnumpy())))
        return out, net

    ref, _ = run("numpy", ms.PYNATIVE_MODE)
    got, net = run("jax", ms.GRAPH_MODE)
    assert [o for _, o, _ in got] == [o for _, o, _ in ref]
    assert [s for _, _, s in got] == [s for _, _, s in ref]
    assert_close([v for v, _, _ in got], [v for v, _, _ in ref], "float16", factor=4)
    assert net.conv1.weight.dtype is ms.float32       # master weights stay fp32
    assert leaked_tracers(net.get_parameters()) == []
