"""Level 4: automatic mixed precision and loss scaling.

For each amp level and low-precision dtype: the dtype every sub-cell computes in (recorded by
forward hooks) must be MindSpore's, the outputs must match the numpy reference running the
same converted program, and a loss-scaled train step must skip an injected overflow with the
scale following the manager's rule.
"""
from __future__ import annotations

import numpy as np
import pytest

import mscore as ms
from mscore import amp, nn, ops
from mscore.conformance.harness import Tolerance

LEVELS = ("O1", "O2", "O3")
LOW = ("float16", "bfloat16")


class AmpNet(nn.Cell):
    """Conv2d-BatchNorm2d-ReLU-Flatten-Dense-LayerNorm and a white-listed MatMul primitive."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, pad_mode="same", has_bias=True)
        self.bn = nn.BatchNorm2d(3)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.dense = nn.Dense(3 * 4 * 4, 6)
        self.ln = nn.LayerNorm((6,))
        self.matmul = ops.MatMul()
        self.w = ms.Parameter(ms.Tensor(np.linspace(-1, 1, 18, dtype=np.float32)
                                        .reshape(6, 3)), name="w")

    def construct(self, x):
        x = self.relu(self.bn(self.conv(x)))
        x = self.ln(self.dense(self.flatten(x)))
        return self.matmul(x, self.cast_param(self.w))


CELLS = ("conv", "bn", "relu", "dense", "ln")


def expected_dtypes(level, low):
    """MindSpore's compute dtype of each sub-cell (and the MatMul) at ``level``."""
    f32 = "float32"
    if level == "O1":
        table = {"conv": low, "bn": f32, "relu": f32, "dense": low, "ln": f32}
    elif level == "O2":
        table = {"conv": low, "bn": f32, "relu": low, "dense": low, "ln": f32}
    else:
        table = dict.fromkeys(CELLS, low)
    table["matmul"] = low
    return table


def _run_level(level, low, x):
    """Build AmpNet from seed 0, convert it, run it in eval mode; returns (dtypes, output)."""
    ms.set_seed(0)
    net = AmpNet()
    seen = {}
    for name in CELLS:
        cell = getattr(net, name)
        cell.register_forward_hook(
            lambda c, inputs, out, name=name: seen.__setitem__(name, inputs[0].dtype.name))
    original = net.matmul.compute

    def recording(a, b):
        seen["matmul"] = a.dtype.name
        return original(a, b)

    net.matmul.compute = recording
    converted = amp.auto_mixed_precision(net, level, getattr(ms, low))
    converted.set_train(False)
    out = converted(ms.Tensor(x))
    return seen, out.dtype.name, out.asnumpy().astype(np.float64)


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("case", LEVELS)
def test_amp_level_dtypes_and_outputs(kit, case, dtype):
    """Each sub-cell computes in MindSpore's dtype and the output matches the reference."""
    kit.require_dtype(dtype)
    x = kit.normal((2, 1, 4, 4)).astype(np.float32)
    kit.activate()
    seen, out_dtype, out = _run_level(case, dtype, x)
    assert seen == expected_dtypes(case, dtype), (
        f"{kit.declarer}: the cells computed in {seen}, expected {expected_dtypes(case, dtype)}")
    assert out_dtype == "float32", f"the network's output is {out_dtype}, expected float32"
    with kit.on_reference():
        _, _, ref = _run_level(case, dtype, x)
    # Half-precision layers ahead of a LayerNorm: a few ulps of the low dtype, relative to 1.
    tol = {"float16": Tolerance(2e-2, 2e-2), "bfloat16": Tolerance(1.5e-1, 1.5e-1)}[dtype]
    kit.assert_close(out, ref, dtype, f"{case} output", tol=tol)


def _overflow_run(pattern):
    """A loss-scaled SGD step per entry; True injects an inf gradient. Returns the scale each
    step used, the overflow flags and whether the weights moved."""
    ms.set_seed(0)
    net = _Poisoned()
    opt = nn.SGD(net.trainable_params(), 0.01)
    manager = amp.DynamicLossScaleManager(16.0, 2, 2)
    step = nn.TrainOneStepWithLossScaleCell(net, opt, manager.get_update_cell())
    x = ms.Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    y = ms.Tensor(np.ones((4, 1), np.float32))
    scales, flags, moved = [], [], []
    for poisoned in pattern:
        before = net.dense.weight.asnumpy().copy()
        net.poison.set_data(ms.Tensor(np.inf if poisoned else 0.0, ms.float32))
        _, overflow, scale = step(x, y)
        scales.append(float(scale.asnumpy()))
        flags.append(bool(overflow))
        moved.append(not np.array_equal(before, net.dense.weight.asnumpy()))
    return scales, flags, moved


class _Poisoned(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 1)
        self.poison = ms.Parameter(ms.Tensor(0.0, ms.float32), name="poison",
                                   requires_grad=False)

    def construct(self, x, y):
        return ops.mse_loss(self.dense(x), y) + self.poison * ops.sum(self.dense.weight)


@pytest.mark.parametrize("dtype", ("float32",))
@pytest.mark.parametrize("case", ("injected_overflow",))
def test_loss_scaling_skips_injected_overflow(kit, case, dtype):
    """Overflowing steps leave the weights alone; the scale follows the manager's rule."""
    pattern = [False, False, True, False, True, True, False, False, False]
    kit.activate()
    scales, flags, moved = _overflow_run(pattern)
    manager = amp.DynamicLossScaleManager(16.0, 2, 2)
    expected = []
    for ov in pattern:
        expected.append(manager.get_loss_scale())
        manager.update_loss_scale(ov)
    assert flags == pattern, f"overflow flags {flags}, expected {pattern}"
    assert moved == [not p for p in pattern], (
        f"steps that updated the weights {moved}, expected {[not p for p in pattern]}")
    assert scales == expected, f"loss scales {scales}, expected {expected}"


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("case", ("mlp_O2_10_steps",))
def test_amp_o2_training_matches_reference(kit, case, dtype):
    """Ten O2 steps with dynamic loss scaling: the losses match the reference's."""
    kit.require_dtype(dtype)
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((10, 8, 12)).astype(np.float32)
    ys = rng.integers(0, 4, size=(10, 8)).astype(np.int32)

    def train():
        ms.set_seed(0)
        net = nn.SequentialCell(nn.Dense(12, 16), nn.ReLU(), nn.Dense(16, 4))
        opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
        cell = amp.build_train_network(net, opt, nn.CrossEntropyLoss(), level="O2",
                                       cast_model_type=getattr(ms, dtype),
                                       loss_scale_manager=amp.DynamicLossScaleManager(2.0 ** 8))
        cell.set_train()
        return np.array([float(cell(ms.Tensor(x), ms.Tensor(y))[0].asnumpy())
                         for x, y in zip(xs, ys)])

    kit.activate()
    losses = train()
    with kit.on_reference():
        ref = train()
    tol = {"float16": Tolerance(2e-2, 2e-2), "bfloat16": Tolerance(1e-1, 1e-1)}[dtype]
    kit.assert_close(losses, ref, dtype, "loss per step", tol=tol)
