"""Automatic mixed precision: levels, cast lists, build_train_network, loss scaling."""
import math
import os
import warnings

import numpy as np
import pytest
from _helpers import available_backends, each_backend

import mscore as ms
from mscore import amp, dispatch, nn, ops

SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
OTHER_BACKENDS = available_backends(exclude=("numpy",))


backend = each_backend(seed=0)


# --------------------------------------------------------------------------------------
# The kit's network with every kind of cell the lists name, and a white-listed Primitive.
from mscore.conformance.tests.test_amp import AmpNet as MixedNet  # noqa: E402
from mscore.conformance.tests.test_amp import expected_dtypes  # noqa: E402


def _record(net):
    """Hooks recording (input dtype, output dtype) of each named sub-cell and the MatMul."""
    seen = {}

    def hook_for(name):
        def hook(cell, inputs, output):
            seen[name] = (inputs[0].dtype.name, output.dtype.name)
        return hook

    for name in ("conv", "bn", "relu", "dense", "ln"):
        getattr(net, name).register_forward_hook(hook_for(name))
    prim = net.matmul
    original = prim.compute

    def recording_compute(a, b):
        out = original(a, b)
        seen["matmul"] = (a.dtype.name, out.dtype.name)
        return out

    prim.compute = recording_compute
    return seen


def _expected(level, low):
    """Each cell computes in the kit's expected dtype and returns that dtype (the casts back to
    float32 of O1 and of black-listed cells at O2 sit in wrappers outside the hooked cell)."""
    if level == "O0":
        return dict.fromkeys(("conv", "bn", "relu", "dense", "ln", "matmul"),
                             ("float32", "float32"))
    return {k: (v, v) for k, v in expected_dtypes(level, low).items()}


def _forward_dtypes(level, dtype):
    ms.set_seed(0)
    net = MixedNet()
    seen = _record(net)
    converted = amp.auto_mixed_precision(net, level, dtype)
    x = ms.Tensor(np.random.default_rng(2).normal(size=(2, 1, 4, 4)).astype(np.float32))
    out = converted(x)
    return seen, out


@pytest.mark.parametrize("level", ["O0", "O1", "O2", "O3"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_level_dtypes_per_cell(backend, level, dtype):
    seen, out = _forward_dtypes(level, getattr(ms, dtype))
    assert seen == _expected(level, dtype)
    assert out.dtype is ms.float32
    assert out.shape == (2, 3)


def _assert_close_in(dtype, got, want, what, factor=1.0):
    """Within the conformance kit's tolerance for ``dtype`` (a few roundings of it, relative
    to the largest value), not a hand-picked bound."""
    from mscore.conformance import harness
    c = harness.compare(got, want, dtype, what=what, factor=factor)
    assert c.ok, c.message


@pytest.mark.skipif(not OTHER_BACKENDS, reason="no backend besides the numpy reference is "
                                               "installed and usable here")
@pytest.mark.parametrize("other", OTHER_BACKENDS)
@pytest.mark.parametrize("level", ["O1", "O2", "O3"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_level_outputs_agree_with_numpy(other, level, dtype):
    low = getattr(ms, dtype)
    ms.set_context(backend=other)
    try:
        got = _forward_dtypes(level, low)[1].asnumpy().astype(np.float64)
    finally:
        ms.set_context(backend="numpy")
    want = _forward_dtypes(level, low)[1].asnumpy().astype(np.float64)
    _assert_close_in(dtype, got, want, f"{other} {level} {dtype} vs numpy")


@pytest.mark.parametrize("level", ["O1", "O2", "O3"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_stays_near_float32(level, dtype):
    """The numpy reference at each level differs from O0 by the roundings of the low
    dtype only (two of them: the low-precision layers, then the final cast)."""
    low = getattr(ms, dtype)
    ms.set_context(backend="numpy")
    mixed = _forward_dtypes(level, low)[1].asnumpy().astype(np.float64)
    full = _forward_dtypes("O0", low)[1].asnumpy().astype(np.float64)
    _assert_close_in(dtype, mixed, full, f"numpy {level} {dtype} vs O0", factor=2.0)
    assert not np.array_equal(mixed, full), "the low dtype changed nothing: not applied?"


def test_master_weights_stay_float32():
    net = MixedNet()
    converted = amp.auto_mixed_precision(net, "O3", ms.float16)
    converted(ms.Tensor(np.ones((1, 1, 4, 4), np.float32)))
    assert all(p.dtype is ms.float32 for p in net.get_parameters())
    names = [p.name for p in converted.get_parameters()]
    assert names == [p.name for p in net.get_parameters()]
    assert "conv.weight" in names


def test_bad_level_dtype_and_network():
    net = MixedNet()
    with pytest.raises(ValueError, match="^The amp level O4 is not supported$"):
        amp.auto_mixed_precision(net, "O4")
    with pytest.raises(ValueError, match="dtype"):
        amp.auto_mixed_precision(net, "O2", ms.float32)
    with pytest.raises(TypeError, match="network"):
        amp.auto_mixed_precision(object(), "O2")


def test_reapplying_warns():
    net = amp.auto_mixed_precision(MixedNet(), "O2")
    with pytest.warns(UserWarning, match="already converted"):
        amp.auto_mixed_precision(net, "O3")


def test_lists_are_copies_with_mindspore_entries():
    white = amp.get_white_list()
    names = {c.__name__ for c in white}
    assert names == {"Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose",
                     "Conv3dTranspose", "Dense", "LSTMCell", "RNNCell", "GRUCell", "Conv2D",
                     "Conv3D", "Conv2DTranspose", "Conv3DTranspose", "MatMul", "BatchMatMul",
                     "PReLU", "ReLU", "Ger"}
    white.clear()
    assert len(amp.get_white_list()) == 19
    black = amp.get_black_list()
    assert {c.__name__ for c in black} == {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                                           "LayerNorm"}
    black.append(nn.Dense)
    assert nn.Dense not in amp.get_black_list()


def test_custom_mixed_precision_rules():
    with pytest.raises(ValueError, match="exactly one"):
        amp.custom_mixed_precision(MixedNet())
    with pytest.raises(ValueError, match="exactly one"):
        amp.custom_mixed_precision(MixedNet(), white_list=[nn.Dense], black_list=[nn.LayerNorm])
    with pytest.raises(TypeError, match="Cell classes"):
        amp.custom_mixed_precision(MixedNet(), black_list=[ops.MatMul])
    net = MixedNet()
    seen = _record(net)
    converted = amp.custom_mixed_precision(net, white_list=[nn.Dense, ops.MatMul])
    converted(ms.Tensor(np.ones((2, 1, 4, 4), np.float32)))
    assert seen["dense"] == ("float16", "float16")
    assert seen["conv"] == ("float32", "float32")
    assert seen["matmul"] == ("float16", "float16")
    net = MixedNet()
    seen = _record(net)
    converted = amp.custom_mixed_precision(net, black_list=[nn.Dense], dtype=ms.bfloat16)
    out = converted(ms.Tensor(np.ones((2, 1, 4, 4), np.float32)))
    assert seen["dense"] == ("float32", "float32")
    assert seen["bn"] == ("bfloat16", "bfloat16")
    assert out.dtype is ms.float32


def test_to_float_and_astype_manual_conversion_amp_tutorial():
    class NetworkFP16(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.dense_relu_sequential = nn.SequentialCell(
                nn.Dense(16, 8).to_float(ms.float16), nn.ReLU(),
                nn.Dense(8, 4).to_float(ms.float16))

        def construct(self, x):
            return self.dense_relu_sequential(self.flatten(x))

    class NetworkFP16Manual(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.dense_relu_sequential = nn.SequentialCell(nn.Dense(16, 8), nn.ReLU(),
                                                           nn.Dense(8, 4))

        def construct(self, x):
            x = self.flatten(x).astype(ms.float16)
            return self.dense_relu_sequential(x).astype(ms.float32)

    x = ms.Tensor(np.ones((2, 4, 4), np.float32))
    assert NetworkFP16()(x).dtype is ms.float16
    assert NetworkFP16Manual()(x).dtype is ms.float32


def test_autocast_op_lists():
    a = ms.Tensor(np.ones((2, 3), np.float32))
    b = ms.Tensor(np.ones((3, 2), np.float32))
    with amp.autocast(ms.float16):
        assert ops.matmul(a, b).dtype is ms.float16
        assert ops.exp(a.astype(ms.float16)).dtype is ms.float32
        assert (a + 1.0).dtype is ms.float32
        s = ops.softmax(ops.matmul(a, b), -1)
        assert s.dtype is ms.float32
    assert ops.matmul(a, b).dtype is ms.float32
    assert "matmul" in amp.LOW_PRECISION_OPS and "exp" in amp.FP32_OPS
    with pytest.raises(ValueError, match="dtype"):
        with amp.autocast(ms.float32):
            pass
    assert dispatch.autocast_policy() is None


def test_auto_level_is_op_level_policy(backend):
    net = MixedNet()
    seen = _record(net)
    out = amp.auto_mixed_precision(net, "auto")(ms.Tensor(np.ones((2, 1, 4, 4), np.float32)))
    assert out.dtype is ms.float32
    assert seen["matmul"][1] == "float16"   # matmul is on the low-precision list
    assert seen["ln"][1] == "float32"       # normalisation statistics run in float32


# --------------------------------------------------------------------------------------
# build_train_network
class Tiny(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def construct(self, x):
        return self.bn(self.dense(x))


def _parts():
    net = Tiny()
    return net, nn.Momentum(net.trainable_params(), 0.1, 0.9), nn.CrossEntropyLoss()


def test_build_levels_and_defaults():
    from mscore.nn.wrap.loss_scale import TrainOneStepWithLossScaleCell
    net, opt, loss = _parts()
    cell = amp.build_train_network(net, opt, loss, level="O0")
    assert isinstance(cell, nn.TrainOneStepCell)
    net, opt, loss = _parts()
    cell = amp.build_train_network(net, opt, loss, level="O2")
    assert isinstance(cell, TrainOneStepWithLossScaleCell)
    assert float(cell.scale_sense.asnumpy()) == 2.0 ** 24
    assert net.dense.compute_dtype is ms.float16 and net.bn.backbone.compute_dtype is ms.float32
    net, opt, loss = _parts()
    cell = amp.build_train_network(net, opt, loss, level="O3")
    assert isinstance(cell, nn.TrainOneStepCell)
    assert net.bn.compute_dtype is ms.float16
    net, opt, loss = _parts()
    cell = amp.build_train_network(net, opt, loss, level="O2", keep_batchnorm_fp32=False,
                                   loss_scale_manager=None)
    assert isinstance(cell, nn.TrainOneStepCell) and net.bn.compute_dtype is ms.float16
    net, opt, loss = _parts()
    # O0's keep_batchnorm_fp32 is False, so an fp16 cast_model_type converts as O3 does.
    amp.build_train_network(net, opt, loss, level="O0", cast_model_type=ms.float16)
    assert net.dense.compute_dtype is ms.float16 and net.bn.compute_dtype is ms.float16
    net, opt, loss = _parts()
    amp.build_train_network(net, opt, loss, level="O0", cast_model_type=ms.float16,
                            keep_batchnorm_fp32=True)
    assert net.bn.backbone.compute_dtype is ms.float32
    net, opt, loss = _parts()
    manager = amp.FixedLossScaleManager(64.0, drop_overflow_update=False)
    cell = amp.build_train_network(net, opt, loss, level="O2", loss_scale_manager=manager)
    assert isinstance(cell, nn.TrainOneStepCell)


def test_build_argument_checks(monkeypatch):
    net, opt, loss = _parts()
    with pytest.raises(ValueError, match="unsupported keyword"):
        amp.build_train_network(net, opt, loss, level="O2", keep_bn=True)
    with pytest.raises(ValueError, match="level"):
        amp.build_train_network(net, opt, loss, level="O5")
    with pytest.raises(ValueError, match="boost_level"):   # O1/O2: tests/test_boost.py
        amp.build_train_network(net, opt, loss, level="O0", boost_level="O3")
    with pytest.raises(ValueError, match="auto"):
        amp.build_train_network(net, opt, loss, level="auto")
    with pytest.raises(TypeError, match="loss_scale_manager"):
        amp.build_train_network(net, opt, loss, level="O2", loss_scale_manager=128)
    from mscore.amp import build
    monkeypatch.setattr(build.context, "get_context",
                        lambda key: "GPU" if key == "device_target" else None)
    assert build.resolve_auto_level("auto") == "O2"
    monkeypatch.setattr(build.context, "get_context",
                        lambda key: "Ascend" if key == "device_target" else None)
    assert build.resolve_auto_level("auto") == "O3"


def test_loss_is_computed_in_float32_for_fp16_model():
    seen = {}

    class Recorder(nn.Cell):
        def construct(self, logits, label):
            seen["dtypes"] = (logits.dtype, label.dtype)
            return ops.mse_loss(logits, label)

    net = nn.Dense(4, 3)
    opt = nn.SGD(net.trainable_params(), 0.1)
    cell = amp.build_train_network(net, opt, Recorder(), level="O3")
    x = ms.Tensor(np.ones((2, 4), np.float32))
    y = ms.Tensor(np.zeros((2, 3), np.float16))
    loss = cell(x, y)
    assert seen["dtypes"] == (ms.float32, ms.float32)
    assert loss.dtype is ms.float32


# --------------------------------------------------------------------------------------
# Loss scaling
def _reference_scales(init, factor, window, overflows):
    """The rule of DESIGN.md, written out independently: the scale used at each step."""
    scale, good, used = init, 0, []
    for ov in overflows:
        used.append(scale)
        if ov:
            scale, good = max(scale / factor, 1.0), 0
        else:
            good += 1
            if good == window:
                scale, good = scale * factor, 0
    return used, scale


# From 16 (32 after the first window) eight overflows in a row would take the scale to 1/8
# without the floor of 1, so the floor is reached and held for three steps.
PATTERN = [False, False, False, True, False, False, False, False, True, True, True, True,
           True, True, True, True, False, False, False, False, False, False, False]


def test_dynamic_manager_and_scaler_follow_the_rule_and_agree():
    expected, final = _reference_scales(16.0, 2, 3, PATTERN)
    manager = amp.DynamicLossScaleManager(16.0, 2, 3)
    scaler = amp.DynamicLossScaler(16.0, 2, 3)
    from_manager, from_scaler = [], []
    for ov in PATTERN:
        from_manager.append(manager.get_loss_scale())
        from_scaler.append(float(scaler.scale_value.asnumpy()))
        manager.update_loss_scale(ov)
        scaler.adjust(ms.Tensor(not ov))
    assert from_manager == expected
    assert from_scaler == expected
    assert manager.get_loss_scale() == final
    # The floor of 1: the scale reaches it and stays there while overflows continue (a
    # manager without the floor would go down to 1/8 and fail the equalities above).
    assert min(expected) == 1.0
    assert expected.count(1.0) >= 3


def test_update_cell_matches_manager():
    from mscore.nn.wrap.loss_scale import DynamicLossScaleUpdateCell
    cell = DynamicLossScaleUpdateCell(16.0, 2, 3)
    scale = ms.Parameter(ms.Tensor(16.0, ms.float32), name="scale", requires_grad=False)
    expected, _ = _reference_scales(16.0, 2, 3, PATTERN)
    used = []
    for ov in PATTERN:
        used.append(float(scale.asnumpy()))
        assert bool(cell(scale, ms.Tensor(ov))) == ov
    assert used == expected


def test_scaler_and_manager_argument_checks():
    with pytest.raises(ValueError, match="loss_scale"):
        amp.FixedLossScaleManager(0.5)
    with pytest.raises(ValueError, match="scale_value"):
        amp.StaticLossScaler(0.0)
    with pytest.raises(ValueError, match="scale_value"):
        amp.DynamicLossScaler(0.5, 2, 10)
    with pytest.raises(ValueError, match="scale_window"):
        amp.DynamicLossScaleManager(2.0 ** 10, 2, 0)
    with pytest.raises(ValueError, match="scale_factor"):
        amp.DynamicLossScaleManager(2.0 ** 10, 1, 10)
    with pytest.raises(TypeError, match="drop_overflow_update"):
        amp.FixedLossScaleManager(128.0, drop_overflow_update="yes")
    fixed = amp.FixedLossScaleManager()
    assert fixed.get_loss_scale() == 128.0 and fixed.get_drop_overflow_update() is True
    dyn = amp.DynamicLossScaleManager()
    assert dyn.get_loss_scale() == 2.0 ** 24 and dyn.scale_window == 2000
    s = amp.StaticLossScaler(8.0)
    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(s.scale(x).asnumpy(), [8.0, 16.0])
    np.testing.assert_array_equal(s.unscale((x, [x]))[1][0].asnumpy(), [0.125, 0.25])


def test_all_finite(backend):
    ok = [ms.Tensor(np.ones((3,), np.float32)), ms.Tensor(np.zeros((2, 2), np.float16))]
    assert bool(amp.all_finite(ok)) is True
    for bad in (np.inf, -np.inf, np.nan):
        arr = np.ones((4,), np.float32)
        arr[2] = bad
        assert bool(amp.all_finite(ok + [ms.Tensor(arr)])) is False
    assert amp.init_status().shape == (8,)


class InjectNet(nn.Cell):
    """A regression net whose loss can be made to give inf gradients on demand."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 1)
        self.poison = ms.Parameter(ms.Tensor(0.0, ms.float32), name="poison",
                                   requires_grad=False)

    def construct(self, x, y):
        loss = ops.mse_loss(self.dense(x), y)
        # poison = inf makes d(loss)/dw inf while leaving the forward value finite-or-not.
        return loss + self.poison * ops.sum(self.dense.weight)


def test_injected_overflow_skips_step_and_scale_follows_manager(backend):
    from mscore.nn.wrap.loss_scale import TrainOneStepWithLossScaleCell
    net = InjectNet()
    opt = nn.SGD(net.trainable_params(), 0.01)
    manager = amp.DynamicLossScaleManager(16.0, 2, 2)
    step = TrainOneStepWithLossScaleCell(net, opt, manager.get_update_cell())
    x = ms.Tensor(np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32))
    y = ms.Tensor(np.ones((4, 1), np.float32))
    pattern = [False, False, True, False, True, True, False, False, False]
    reference = amp.DynamicLossScaleManager(16.0, 2, 2)
    for ov in pattern:
        before = net.dense.weight.asnumpy().copy()
        net.poison.set_data(ms.Tensor(np.inf if ov else 0.0, ms.float32))
        loss, overflow, scale = step(x, y)
        assert bool(overflow) == ov
        assert float(scale.asnumpy()) == reference.get_loss_scale()
        reference.update_loss_scale(ov)
        after = net.dense.weight.asnumpy()
        if ov:
            np.testing.assert_array_equal(after, before)
        else:
            assert not np.array_equal(after, before)
    assert float(step.scale_sense.asnumpy()) == reference.get_loss_scale()


def test_unscaled_gradients_reach_optimizer(backend):
    from mscore.nn.wrap.loss_scale import TrainOneStepWithLossScaleCell
    ms.set_seed(3)
    x = ms.Tensor(np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32))
    y = ms.Tensor(np.ones((4, 1), np.float32))
    results = []
    for scale in (1.0, 1024.0):
        ms.set_seed(3)
        net = InjectNet()
        opt = nn.SGD(net.trainable_params(), 0.1)
        step = TrainOneStepWithLossScaleCell(net, opt, ms.Tensor(scale, ms.float32))
        step(x, y)
        results.append(net.dense.weight.asnumpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


def test_floor_of_one_is_reported_not_looped(backend):
    from mscore.nn.wrap.loss_scale import TrainOneStepWithLossScaleCell
    net = InjectNet()
    net.poison.set_data(ms.Tensor(np.inf, ms.float32))
    opt = nn.SGD(net.trainable_params(), 0.01)
    step = TrainOneStepWithLossScaleCell(net, opt, amp.DynamicLossScaleManager(4.0, 2, 10)
                                         .get_update_cell(), max_consecutive_overflows=6)
    x = ms.Tensor(np.ones((2, 3), np.float32))
    y = ms.Tensor(np.ones((2, 1), np.float32))
    with pytest.raises(RuntimeError, match="6 consecutive"):
        for _ in range(10):
            step(x, y)
    assert float(step.scale_sense.asnumpy()) == 1.0
    assert TrainOneStepWithLossScaleCell(net, opt, ms.Tensor(1.0)).max_consecutive_overflows \
        == 1000


# --------------------------------------------------------------------------------------
# The Automatic Mix Precision tutorial's network on digits at every level and dtype.
class AmpTutorialNet(nn.Cell):
    """The Automatic Mix Precision tutorial's network (Dense 512-512 with ReLU) for 8x8 digits."""

    def __init__(self, n_in=64):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(n_in, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(), nn.Dense(512, 10))

    def construct(self, x):
        return self.dense_relu_sequential(self.flatten(x))


def _digits():
    from sklearn.datasets import load_digits
    data = load_digits()
    x = (data.images / 16.0).astype(np.float32)
    y = data.target.astype(np.int32)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(x))
    x, y = x[order], y[order]
    return (x[:1400], y[:1400]), (x[1400:], y[1400:])


def _train_accuracy(level, dtype, epochs=3, batch=50):
    (xtr, ytr), (xte, yte) = _digits()
    ms.set_seed(0)
    net = AmpTutorialNet()
    loss_fn = nn.CrossEntropyLoss()
    opt = nn.SGD(net.trainable_params(), 0.1, momentum=0.9)
    if level == "O1":  # build_train_network's O1 is float16; bfloat16 goes through amp directly
        cell = nn.TrainOneStepCell(
            nn.WithLossCell(amp.auto_mixed_precision(net, "O1", dtype), loss_fn), opt)
    else:
        kwargs = {}
        if level in ("O2", "O3"):
            kwargs["cast_model_type"] = dtype
        if level == "O2":
            kwargs["loss_scale_manager"] = amp.DynamicLossScaleManager(2.0 ** 12, 2, 50)
        cell = amp.build_train_network(net, opt, loss_fn, level=level, **kwargs)
    cell.set_train()
    for _ in range(epochs):
        for i in range(0, len(xtr), batch):
            out = cell(ms.Tensor(xtr[i:i + batch]), ms.Tensor(ytr[i:i + batch]))
    loss = out[0] if isinstance(out, tuple) else out
    assert math.isfinite(float(loss.asnumpy()))
    net.set_train(False)
    logits = net(ms.Tensor(xte)).asnumpy().astype(np.float32)
    return float((logits.argmax(1) == yte).mean())


_BASELINES = {}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_amp_tutorial_trains_at_every_level_like_O0(backend, dtype):
    if backend == "jax" and dtype == "float16" and not SLOW:
        # jax compiles every op again for each dtype: its float16 run is the slowest of
        # these; its bfloat16 run and the other backends' float16 runs stay
        pytest.skip("jax's float16 run of the tutorial: set MSCORE_SLOW_TESTS=1")
    low = getattr(ms, dtype)
    if backend not in _BASELINES:
        _BASELINES[backend] = _train_accuracy("O0", ms.float32)
    base = _BASELINES[backend]
    assert base > 0.9
    for level in ("O1", "O2", "O3"):
        acc = _train_accuracy(level, low)
        assert abs(acc - base) <= 0.01 + 1e-9, (level, dtype, acc, base)


def test_functional_loss_scaler_loop_from_amp_tutorial():
    """The seed's value_and_grad + DynamicLossScaler + all_finite training loop."""
    (xtr, ytr), _ = _digits()
    ms.set_seed(0)
    model = amp.auto_mixed_precision(AmpTutorialNet(), "O2")
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(model.trainable_params(), 1e-1, momentum=0.9)
    loss_scaler = amp.DynamicLossScaler(scale_value=2 ** 10, scale_factor=2, scale_window=50)

    def forward_fn(data, label):
        logits = model(data)
        loss = loss_fn(logits, label)
        return loss_scaler.scale(loss), logits

    grad_fn = ms.value_and_grad(forward_fn, None, model.trainable_params(), has_aux=True)
    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in list(range(0, 1000, 50)) * 2:
            (loss, _), grads = grad_fn(ms.Tensor(xtr[i:i + 50]), ms.Tensor(ytr[i:i + 50]))
            loss = loss_scaler.unscale(loss)
            is_finite = amp.all_finite(grads)
            if is_finite:
                grads = loss_scaler.unscale(grads)
                optimizer(grads)
            loss_scaler.adjust(is_finite)
            losses.append(float(loss.asnumpy()))
    assert losses[-1] < 0.5 * losses[0]


def test_graph_mode_reads_the_overflow_streak_every_interval(backend, monkeypatch):
    from mscore.nn.wrap.loss_scale import TrainOneStepWithLossScaleCell
    monkeypatch.setattr(TrainOneStepWithLossScaleCell, "GRAPH_CHECK_INTERVAL", 3)
    net = InjectNet()
    net.poison.set_data(ms.Tensor(np.inf, ms.float32))
    opt = nn.SGD(net.trainable_params(), 0.01)
    step = TrainOneStepWithLossScaleCell(net, opt, amp.DynamicLossScaleManager(4.0, 2, 10)
                                         .get_update_cell(), max_consecutive_overflows=4)
    x = ms.Tensor(np.ones((2, 3), np.float32))
    y = ms.Tensor(np.ones((2, 1), np.float32))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        for _ in range(5):  # calls 1-5: the streak is only read at call 3 (3 < 4)
            step(x, y)
        assert step.consecutive_overflows == 5
        with pytest.raises(RuntimeError, match="6 consecutive"):
            step(x, y)  # call 6 reads it: past the limit
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_only_the_scaler_keeps_the_scale_finite():
    # MindSpore 2.10: DynamicLossScaler grows the scale only while the product stays finite;
    # DynamicLossScaleUpdateCell and DynamicLossScaleManager grow it to inf (the next step
    # overflows and halves it). Checked with the oracle at these values.
    from mscore.nn.wrap.loss_scale import DynamicLossScaleUpdateCell
    top = float(2.0 ** 127)
    cell = DynamicLossScaleUpdateCell(top, 2, 1)
    scale = ms.Parameter(ms.Tensor(top, ms.float32), name="scale", requires_grad=False)
    scaler = amp.DynamicLossScaler(top, 2, 1)
    manager = amp.DynamicLossScaleManager(2.0 ** 1023, 2, 1)
    for _ in range(2):
        cell(scale, ms.Tensor(False))
        scaler.adjust(ms.Tensor(True))
        manager.update_loss_scale(False)
    assert float(scale.asnumpy()) == np.inf
    assert manager.get_loss_scale() == np.inf
    assert float(scaler.scale_value.asnumpy()) == top


def test_manager_raises_once_overflows_exceed_its_limit():
    manager = amp.DynamicLossScaleManager(4.0, 2, 10)
    assert manager.bad_step_max == 1000
    for _ in range(manager.bad_step_max):   # MindSpore tolerates bad_step_max in a row
        manager.update_loss_scale(True)
    assert manager.get_loss_scale() == 1.0
    with pytest.raises(RuntimeError, match="1001 consecutive"):
        manager.update_loss_scale(True)
