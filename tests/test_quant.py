"""Quantization-aware training (``mscore.train.quant``): the fake quantization against
MindSpore's documented outputs and an independent numpy implementation of the documented
formulas, straight-through gradients, quant delay, BatchNorm folding and freezing, the network
rewrite and its argument checks, loading a float network, and the int8 ONNX (run in
onnxruntime) and MINDIR exports, on every backend."""
import os
import sys

import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test, use_backend

import mscore as ms
from mscore import nn
from mscore.train.quant import (
    ActQuant,
    Conv2dBnFoldQuant,
    Conv2dBnWithoutFoldQuant,
    Conv2dQuant,
    DenseQuant,
    FakeQuantWithMinMaxObserver,
    convert_quant_network,
    export,
    load_nonquant_param_into_quant_net,
)

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
import make_quant_mindir  # noqa: E402

BACKENDS = available_backends()
QUANT_IO = np.load(os.path.join(DATA, "quant", "quant_io.npz"))
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
# JAX compiles every op for every new shape when it runs eagerly: the default run keeps the
# cheap checks on it, MSCORE_SLOW_TESTS=1 adds the rest.
FAST_BACKENDS = [b for b in BACKENDS if b != "jax" or SLOW]


_numpy_context = numpy_context_each_test()


# -- an independent numpy implementation of MindSpore 1.x's documented formulas ---------------
def ref_grid(x_min, x_max, bits=8, symmetric=False, narrow=False):
    """(scale, lo, hi) float32 arrays of the nudged grid of [x_min, x_max]."""
    qmin, qmax = -2 ** (bits - 1) + (1 if narrow else 0), 2 ** (bits - 1) - 1
    x_min, x_max = np.float32(x_min), np.float32(x_max)
    if symmetric:
        x_max = np.maximum(x_max, -x_min)
        x_min = -x_max
    scale = (x_max - x_min) / np.float32(qmax - qmin)
    safe = np.where(scale > 0, scale, np.float32(1))
    zp = np.floor(np.clip(np.float32(qmin) - x_min / safe, qmin, qmax) + np.float32(0.5))
    return scale, (np.float32(qmin) - zp) * scale, (np.float32(qmax) - zp) * scale


def ref_fake_quant(x, scale, lo, hi):
    safe = np.where(scale > 0, scale, np.float32(1))
    levels = np.floor((np.clip(x, lo, hi) - lo) / safe + np.float32(0.5))
    return (levels * scale + lo).astype(np.float32)


def assert_on_grid(actual, expected, x, scale, lo, hi):
    """Equal to float32 rounding, except that a value within 2**-12 of a level of the
    halfway point between two levels rounds up (mscore's rule, robust to division that is
    a few ulps off) where the reference may round down: one step."""
    actual = np.asarray(actual, np.float64)
    diff = np.abs(actual - expected)
    steps = (np.clip(x, lo, hi).astype(np.float64) - lo) / np.where(scale > 0, scale, 1)
    tie = np.abs(steps - np.floor(steps) - 0.5) < 1e-3
    one_step = np.isclose(diff, np.broadcast_to(scale, diff.shape), rtol=1e-3)
    ok = (diff <= 1e-6 * np.maximum(1, np.abs(expected))) | (tie & one_step)
    assert ok.all(), f"{(~ok).sum()} values off the reference grid: max diff {diff.max()}"


def ref_conv(x, w, b=None):
    """'valid' 2-d convolution, stride 1 (float64)."""
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), w.shape[2:], (2, 3))
    out = np.einsum("nchwij,ocij->nohw", win, w.astype(np.float64))
    return out if b is None else out + b.reshape(1, -1, 1, 1)


# -- the fake quantization ------------------------------------------------------------------
# MindSpore 1.2's documented examples (nn.FakeQuantWithMinMaxObserver, nn.TensorAddQuant,
# nn.MulQuant, nn.ActQuant): a default observer (range [-6, 6], inference) on these inputs.
DOC_INPUT = np.array([[1, 2, 1], [-2, 0, -1]], np.float32)
DOC_CASES = [
    (DOC_INPUT, [[0.9882355, 1.9764705, 0.9882355], [-1.9764705, 0., -0.9882355]]),
    (DOC_INPUT + 1, [[1.9764705, 3.011765, 1.9764705], [-0.9882355, 0.9882355, 0.]]),
    (DOC_INPUT * 2, [[1.9764705, 4.0000005, 1.9764705], [-4., 0., -1.9764705]]),
]


@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_mindspore_documented_outputs(backend):
    use_backend(backend)
    scale, lo, hi = ref_grid(-6, 6)
    for x, want in DOC_CASES:
        out = FakeQuantWithMinMaxObserver()(ms.Tensor(x)).asnumpy()
        assert_on_grid(out, np.asarray(want, np.float32), x, scale, lo, hi)
    act = ActQuant(nn.ReLU(), FakeQuantWithMinMaxObserver())
    x = np.array([[1, 2, -1], [-2, 0, -1]], np.float32)
    assert_on_grid(act(ms.Tensor(x)).asnumpy(),
                   np.array([[0.9882355, 1.9764705, 0.], [0., 0., 0.]], np.float32),
                   np.maximum(x, 0), scale, lo, hi)


CONFIGS = [dict(bits=b, symmetric=s, narrow=n, ema=e, per_channel=p)
           for b, s, n, e, p in [(8, False, False, True, False), (8, True, False, False, False),
                                 (8, False, True, False, True), (7, True, True, True, True),
                                 (4, False, False, False, False), (4, True, True, True, True)]]


def _observer_case(cfg, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((4, 3, 5)) * np.array([0.5, 2.0, 9.0]).reshape(1, 3, 1)
         + 0.3).astype(np.float32)
    obs = FakeQuantWithMinMaxObserver(
        min_init=-2, max_init=3, ema=cfg["ema"], ema_decay=0.9, per_channel=cfg["per_channel"],
        channel_axis=1, num_channels=3, num_bits=cfg["bits"], symmetric=cfg["symmetric"],
        narrow_range=cfg["narrow"])
    axes = (0, 2) if cfg["per_channel"] else None
    bmin, bmax = x.min(axis=axes), x.max(axis=axes)
    if cfg["ema"]:
        bmin = np.float32(0.9) * np.float32(-2) + np.float32(0.1) * bmin
        bmax = np.float32(0.9) * np.float32(3) + np.float32(0.1) * bmax
    new_min = np.minimum(bmin, 0).astype(np.float32).reshape(-1)
    new_max = np.maximum(bmax, 0).astype(np.float32).reshape(-1)
    return obs, x, new_min, new_max


def _check_observer(cfg, seed=0):
    obs, x, new_min, new_max = _observer_case(cfg, seed)
    obs.set_train(True)
    out = obs(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(obs.minq.asnumpy(), new_min, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(obs.maxq.asnumpy(), new_max, rtol=1e-6, atol=1e-7)
    shape = (1, -1, 1) if cfg["per_channel"] else ()
    scale, lo, hi = (a.reshape(shape) for a in ref_grid(new_min, new_max, cfg["bits"],
                                                          cfg["symmetric"], cfg["narrow"]))
    assert_on_grid(out, ref_fake_quant(x, scale, lo, hi), x, scale, lo, hi)
    levels = np.unique(np.round((out - lo) / scale))
    qmin = -2 ** (cfg["bits"] - 1) + (1 if cfg["narrow"] else 0)
    assert levels.min() >= 0 and levels.max() <= 2 ** (cfg["bits"] - 1) - 1 - qmin
    obs.set_train(False)   # inference uses the stored range, updates nothing
    assert_on_grid(obs(ms.Tensor(x * 3)).asnumpy(), ref_fake_quant(x * 3, scale, lo, hi),
                   x * 3, scale, lo, hi)
    np.testing.assert_array_equal(obs.minq.asnumpy(), new_min)
    np.testing.assert_array_equal(obs.maxq.asnumpy(), new_max)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(f"{k}{int(v)}"
                                                               for k, v in c.items()))
def test_observer_matches_reference(cfg):
    _check_observer(cfg)


@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_observer_matches_reference_on_every_backend(backend):
    use_backend(backend)
    _check_observer(CONFIGS[3], seed=1)


@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_straight_through_gradient(backend):
    """dOut/dX is 1 inside the nudged range and 0 outside, in training (range just updated)
    and in inference; the weights of a DenseQuant get the same masked gradient."""
    use_backend(backend)
    rng = np.random.default_rng(2)
    x = rng.uniform(-3, 3, (6, 5)).astype(np.float32)
    g = rng.standard_normal((6, 5)).astype(np.float32)
    for training in (True, False):
        obs = FakeQuantWithMinMaxObserver(min_init=-1, max_init=1.5, ema=True, ema_decay=0.99)
        obs.set_train(training)
        grad = ms.grad(lambda t, obs=obs: (obs(t) * ms.Tensor(g)).sum())(ms.Tensor(x)).asnumpy()
        lo_hi = (np.float32(0.99) * np.float32(-1) + np.float32(0.01) * x.min(),
                 np.float32(0.99) * np.float32(1.5) + np.float32(0.01) * x.max()) \
            if training else (-1, 1.5)
        _, lo, hi = ref_grid(*lo_hi)
        np.testing.assert_array_equal(grad, g * ((x >= lo) & (x <= hi)))
    dense = nn.Dense(5, 3)
    w = rng.uniform(-0.3, 0.3, (3, 5)).astype(np.float32)
    dense.weight.set_data(ms.Tensor(w))
    layer = DenseQuant(dense, FakeQuantWithMinMaxObserver(
        min_init=-0.2, max_init=0.2, per_channel=True, channel_axis=0, num_channels=3))
    gy = rng.standard_normal((6, 3)).astype(np.float32)
    grads = ms.grad(lambda t: (layer(t) * ms.Tensor(gy)).sum(), None,
                    [layer.weight])(ms.Tensor(x))
    _, lo, hi = ref_grid(-0.2, 0.2)
    np.testing.assert_allclose(grads[0].asnumpy(), (gy.T @ x) * ((w >= lo) & (w <= hi)),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_quant_delay(backend):
    """The output is the input for the first quant_delay training steps; the range is
    observed from the first step; inference always quantizes."""
    use_backend(backend)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    obs = FakeQuantWithMinMaxObserver(quant_delay=2, num_bits=4)
    obs.set_train(True)
    for step in range(3):
        out = obs(ms.Tensor(x)).asnumpy()
        assert obs.step.asnumpy().tolist() == [step + 1]
        scale, lo, hi = ref_grid(-1, 1, bits=4)
        want = x if step < 2 else ref_fake_quant(x, scale, lo, hi)
        assert_on_grid(out, want, x, scale, lo, hi)
    obs.set_train(False)
    fresh = FakeQuantWithMinMaxObserver(quant_delay=5, num_bits=4, min_init=-1, max_init=1)
    assert_on_grid(fresh(ms.Tensor(x)).asnumpy(), ref_fake_quant(x, scale, lo, hi), x, scale,
                   lo, hi)


def _bn_fold_case(rng):
    conv = nn.Conv2d(2, 3, 3, pad_mode="valid", has_bias=True)
    bn = nn.BatchNorm2d(3, momentum=0.8)
    values = {"conv.weight": rng.standard_normal((3, 2, 3, 3)) * 0.4,
              "conv.bias": rng.standard_normal(3) * 0.1,
              "bn.gamma": rng.uniform(0.5, 1.5, 3), "bn.beta": rng.standard_normal(3) * 0.1,
              "bn.moving_mean": rng.standard_normal(3) * 0.2,
              "bn.moving_variance": rng.uniform(0.5, 2.0, 3)}
    for key, value in values.items():
        owner, name = key.split(".")
        getattr(conv if owner == "conv" else bn, name).set_data(
            ms.Tensor(value.astype(np.float32)))
    obs = FakeQuantWithMinMaxObserver(per_channel=True, channel_axis=0, num_channels=3)
    return Conv2dBnFoldQuant(conv, bn, obs, freeze_bn=1), \
        {k: v.astype(np.float32) for k, v in values.items()}


def _ref_folded_conv(x, v, mean, var):
    """conv(x, fq(W * s)) with s = gamma / sqrt(var + eps), per-channel weight grid."""
    s = (v["bn.gamma"] / np.sqrt(var + np.float32(1e-5))).astype(np.float32)
    w = v["conv.weight"] * s.reshape(-1, 1, 1, 1)
    scale, lo, hi = (a.reshape(-1, 1, 1, 1) for a in ref_grid(
        np.minimum(w.min(axis=(1, 2, 3)), 0), np.maximum(w.max(axis=(1, 2, 3)), 0)))
    return ref_conv(x, ref_fake_quant(w, scale, lo, hi)), s


@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_batchnorm_fold_and_freeze(backend):
    """Step 1 normalises with batch statistics and updates the moving ones; from step 2
    (freeze_bn=1) the moving statistics normalise and stay; inference is the folded layer."""
    use_backend(backend)
    rng = np.random.default_rng(3)
    layer, v = _bn_fold_case(rng)
    x = rng.standard_normal((4, 2, 6, 6)).astype(np.float32)
    layer.set_train(True)
    y1 = layer(ms.Tensor(x)).asnumpy()
    z, s = _ref_folded_conv(x, v, v["bn.moving_mean"], v["bn.moving_variance"])
    z = z / s.reshape(1, -1, 1, 1) + v["conv.bias"].reshape(1, -1, 1, 1)
    mean, var = z.mean(axis=(0, 2, 3)), z.var(axis=(0, 2, 3))
    want = (z - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5) \
        * v["bn.gamma"].reshape(1, -1, 1, 1) + v["bn.beta"].reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y1, want, rtol=1e-4, atol=1e-4)
    n = z.size / 3
    moving_mean = 0.8 * v["bn.moving_mean"] + 0.2 * mean
    moving_var = 0.8 * v["bn.moving_variance"] + 0.2 * var * n / (n - 1)
    np.testing.assert_allclose(layer.moving_mean.asnumpy(), moving_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.asnumpy(), moving_var, rtol=1e-5)

    y2 = layer(ms.Tensor(x)).asnumpy()   # frozen
    mm, mv = layer.moving_mean.asnumpy(), layer.moving_variance.asnumpy()
    z, s = _ref_folded_conv(x, v, mm, mv)
    folded = z + (v["bn.beta"] + (v["conv.bias"] - mm) * s).reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y2, folded, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(layer.moving_mean.asnumpy(), mm)
    np.testing.assert_array_equal(layer.moving_variance.asnumpy(), mv)
    assert layer.step.asnumpy().tolist() == [2]
    layer.set_train(False)
    np.testing.assert_allclose(layer(ms.Tensor(x)).asnumpy(), folded, rtol=1e-4, atol=1e-4)


# -- the rewrite ----------------------------------------------------------------------------
class SeedNetwork(nn.Cell):
    """Seed 004's network (smaller input)."""

    def __init__(self, n_in=64):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(n_in, 32), nn.ReLU(), nn.Dense(32, 32), nn.ReLU(), nn.Dense(32, 10))

    def construct(self, x):
        return self.dense_relu_sequential(self.flatten(x))


def lenet(channels=1):
    return nn.SequentialCell(
        nn.Conv2d(channels, 4, 3, pad_mode="same", has_bias=True), nn.BatchNorm2d(4), nn.ReLU(),
        nn.MaxPool2d(2, 2), nn.Conv2d(4, 6, 3, pad_mode="valid"), nn.BatchNorm2d(6),
        nn.ReLU(), nn.Flatten(), nn.Dense(6 * 2 * 2, 10))


def test_convert_seed_network_structure_and_names():
    net = SeedNetwork()
    float_names = [p.name for p in net.get_parameters()]
    q = convert_quant_network(net)
    assert q is net
    seq = q.dense_relu_sequential
    assert list(seq.name_cells()) == ["0", "2", "4"]
    for key, act in (("0", nn.ReLU), ("2", nn.ReLU), ("4", type(None))):
        block = seq.name_cells()[key]
        assert isinstance(block, nn.DenseBnAct) and isinstance(block.dense, DenseQuant)
        assert isinstance(block.activation, ActQuant) and isinstance(block.activation.act, act)
        assert block.activation.fake_quant_act.ema and block.activation.fake_quant_act.ema_decay \
            == 0.999
        assert not block.dense.fake_quant_weight.ema
    names = [p.name for p in q.get_parameters()]
    assert names[:2] == float_names[:2] and set(float_names) <= set(names)
    assert "dense_relu_sequential.0.dense.fake_quant_weight.minq" in names
    assert "dense_relu_sequential.4.activation.fake_quant_act.maxq" in names
    assert len(q.trainable_params()) == len(float_names)
    count = len(names)
    assert convert_quant_network(q) is q and len(list(q.get_parameters())) == count


def test_convert_conv_blocks():
    folded = convert_quant_network(lenet(), freeze_bn=7, per_channel=(True, False))
    assert list(folded.name_cells()) == ["0", "3", "4", "7", "8"]
    core = folded[0].conv
    assert isinstance(core, Conv2dBnFoldQuant) and core.freeze_bn == 7
    assert core.fake_quant_weight.per_channel and core.fake_quant_weight.num_channels == 4
    assert isinstance(folded[2].conv, Conv2dBnFoldQuant) and folded[2].batchnorm is None
    unfolded = convert_quant_network(lenet(), bn_fold=False)
    assert isinstance(unfolded[0].conv, Conv2dBnWithoutFoldQuant)
    assert isinstance(unfolded[0].conv.batchnorm, nn.BatchNorm2d)

    class Custom(nn.Cell):   # attributes: each layer alone, with an output observer
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)
            self.block = nn.Conv2dBnAct(2, 2, 3, has_bn=True, activation="relu")
            self.head = nn.DenseBnAct(2, 3, has_bn=True, activation=nn.Tanh(), after_fake=False)

    custom = Custom()
    with pytest.raises(ValueError, match="Tanh"):   # MindSpore quantizes a few activations
        convert_quant_network(custom)
    custom = Custom()
    custom.head.activation = nn.ReLU6()
    convert_quant_network(custom, bn_fold=False)
    assert isinstance(custom.conv.conv, Conv2dQuant)
    assert isinstance(custom.conv.activation, ActQuant) and custom.conv.activation.act is None
    assert isinstance(custom.block.conv, Conv2dBnWithoutFoldQuant) and not custom.block.has_bn
    assert isinstance(custom.head.dense, DenseQuant) and custom.head.has_bn
    assert isinstance(custom.head.activation.act, nn.ReLU6)


BAD_ARGS = [
    (dict(network=None), TypeError), (dict(bn_fold=1), TypeError),
    (dict(freeze_bn=-1), ValueError), (dict(freeze_bn=1.5), TypeError),
    (dict(quant_delay=(0, -1)), ValueError), (dict(quant_delay=(0, 1, 2)), ValueError),
    (dict(quant_delay=True), TypeError), (dict(num_bits=(8, 6)), ValueError),
    (dict(num_bits=-8), ValueError), (dict(num_bits="8"), TypeError),
    (dict(per_channel=(False, True)), ValueError), (dict(per_channel=(1, 0)), TypeError),
    (dict(symmetric=[True, None]), TypeError), (dict(narrow_range="yes"), TypeError),
]


@pytest.mark.parametrize("kwargs,exc", BAD_ARGS, ids=[str(k) for k, _ in BAD_ARGS])
def test_convert_argument_checks(kwargs, exc):
    network = kwargs.pop("network", SeedNetwork())
    with pytest.raises(exc):
        convert_quant_network(network, **kwargs)


def test_convert_scalar_and_pair_arguments():
    q = convert_quant_network(SeedNetwork(), quant_delay=3, num_bits=[4, 7], symmetric=True)
    block = q.dense_relu_sequential[0]
    w, a = block.dense.fake_quant_weight, block.activation.fake_quant_act
    assert (w.quant_delay, a.quant_delay, w.num_bits, a.num_bits) == (3, 3, 4, 7)
    assert w.symmetric and a.symmetric


def test_load_nonquant_param_into_quant_net(tmp_path):
    float_net = lenet()
    ms.save_checkpoint(float_net, str(tmp_path / "f.ckpt"))
    params = ms.load_checkpoint(str(tmp_path / "f.ckpt"))
    q = convert_quant_network(lenet())
    with pytest.raises(ValueError, match="step"):
        load_nonquant_param_into_quant_net(q, params)
    load_nonquant_param_into_quant_net(q, params, ["step"])
    for name, value in params.items():
        np.testing.assert_array_equal(q.parameters_dict()[name].asnumpy(), value.asnumpy())
    np.testing.assert_array_equal(q[0].conv.fake_quant_weight.minq.asnumpy(), [-6])
    wrong = dict(params, **{"0.weight": ms.Tensor(np.zeros((4, 1, 5, 5), np.float32))})
    before = q[0].conv.gamma.asnumpy()
    with pytest.raises(ValueError, match="shape"):
        load_nonquant_param_into_quant_net(q, wrong, ["step"])
    np.testing.assert_array_equal(q[0].conv.gamma.asnumpy(), before)
    with pytest.raises(TypeError):
        load_nonquant_param_into_quant_net(q, list(params.items()))


# -- training and export ---------------------------------------------------------------------
def _train_a_little(net, x, y, steps=4, lr=0.05):
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                               nn.Momentum(net.trainable_params(), lr, 0.9))
    step.set_train()
    losses = [float(step(ms.Tensor(x), ms.Tensor(y)).asnumpy()) for _ in range(steps)]
    net.set_train(False)
    return losses


def _digits_like(n, seed=0):
    """Integer pixel levels 0..16 scaled to [0, 1] (lossless on the input grid mean=0,
    std_dev=16) and labels that depend on them."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 17, (n, 1, 8, 8)).astype(np.float32) / 16
    y = (x.reshape(n, -1)[:, :10].argmax(1)).astype(np.int32)
    return x, y


def _ort(path, x, optimize):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return session.run(None, {"input_0": x})[0]


def _output_scale(q):
    observer = [c for _, c in q.cells_and_names()
                if isinstance(c, FakeQuantWithMinMaxObserver)][-1]
    return float(ref_grid(observer.minq.asnumpy()[0], observer.maxq.asnumpy()[0])[0])


@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_export_int8_onnx_runs_in_onnxruntime(backend, tmp_path):
    """The int8 QDQ model: int8 weights, int32 biases, no float weights; onnxruntime's
    outputs equal mscore's fake-quantized forward up to the requantization of the output
    (float QDQ semantics) and in argmax with its integer kernels; ~4x smaller than float."""
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    use_backend(backend)
    ms.set_seed(5)
    x, y = _digits_like(48)
    for name, float_net in {"seed": SeedNetwork(), "lenet": lenet()}.items():
        q = convert_quant_network(float_net, per_channel=(name == "lenet", False))
        _train_a_little(q, x, y)
        want = q(ms.Tensor(x)).asnumpy()
        path = str(tmp_path / f"{name}_int8")
        export(q, ms.Tensor(x), file_name=path, mean=0, std_dev=16, file_format="ONNX")
        model = onnx.load(path + ".onnx")
        kinds = {i.name: i.data_type for i in model.graph.initializer}
        assert any(k.startswith("weight_q") and t == onnx.TensorProto.INT8
                   for k, t in kinds.items())
        assert any(k.startswith("bias_q") and t == onnx.TensorProto.INT32
                   for k, t in kinds.items())
        big_floats = [i.name for i in model.graph.initializer
                      if i.data_type == onnx.TensorProto.FLOAT and np.prod(i.dims) > 16
                      and not i.name.startswith(("bias_scale", "weight_scale"))]
        assert big_floats == []
        step = _output_scale(q)
        plain = _ort(path + ".onnx", x, False)
        assert np.abs(plain - want).max() <= 2 * step + 1e-6
        assert np.mean(np.abs(plain - want) > 1e-5) < 0.1
        fused = _ort(path + ".onnx", x, True)
        assert (fused.argmax(1) == want.argmax(1)).mean() >= 0.95
    if backend == "numpy":   # size: int8 weights against the float export of the float net
        from mscore.train.serialization import export as float_export
        def mlp():
            return nn.SequentialCell(nn.Dense(256, 256), nn.ReLU(), nn.Dense(256, 10))
        float_net, q = mlp(), convert_quant_network(mlp())
        example = ms.Tensor(np.zeros((1, 256), np.float32))
        float_export(float_net, example, file_name=str(tmp_path / "f"), file_format="ONNX")
        export(q, example, file_name=str(tmp_path / "q"), file_format="ONNX")
        ratio = os.path.getsize(tmp_path / "f.onnx") / os.path.getsize(tmp_path / "q.onnx")
        assert 3.5 < ratio <= 4.2


def _without_producer_version(path):
    from mscore.train.proto import mind_ir_pb2
    model = mind_ir_pb2.ModelProto()
    with open(path, "rb") as f:
        model.ParseFromString(f.read())
    model.ClearField("producer_version")
    return model


@pytest.mark.parametrize("name", make_quant_mindir.NETS)
@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_quantized_mindir_is_the_file_mindspore_ran(backend, name, tmp_path):
    """The MINDIR of a quantized network (the fake-quantized float graph): mscore's file ran
    in MindSpore 2.10 with mscore's outputs (recorded by tests/data/make_quant_mindir.py);
    mscore runs it alike, and exporting the same network again writes the same graph."""
    use_backend(backend)
    x = ms.Tensor(QUANT_IO["input"])
    want = QUANT_IO[f"{name}/ms"]
    fixture = os.path.join(DATA, "quant", f"mscore_{name}.mindir")
    np.testing.assert_allclose(nn.GraphCell(ms.load(fixture))(x).asnumpy(), want, rtol=0,
                               atol=1e-5)
    q = make_quant_mindir.build(ms, name)
    for p in q.get_parameters():
        p.set_data(ms.Tensor(QUANT_IO[f"{name}/param/{p.name}"]))
    q.set_train(False)
    np.testing.assert_allclose(q(x).asnumpy(), want, rtol=0, atol=1e-5)
    export(q, x, file_name=str(tmp_path / name), file_format="MINDIR")
    assert _without_producer_version(str(tmp_path / f"{name}.mindir")) == \
        _without_producer_version(fixture)


def test_export_argument_checks(tmp_path):
    q = convert_quant_network(SeedNetwork(16))
    x = ms.Tensor(np.zeros((1, 16), np.float32))
    with pytest.raises(NotImplementedError, match="AIR"):
        export(q, x, file_name=str(tmp_path / "q"))
    for kwargs, exc in ((dict(file_format="PB"), ValueError), (dict(file_format=1), TypeError),
                        (dict(mean="0", file_format="ONNX"), TypeError),
                        (dict(std_dev=0, file_format="ONNX"), ValueError),
                        (dict(mean=300, file_format="ONNX"), ValueError)):
        with pytest.raises(exc):
            export(q, x, file_name=str(tmp_path / "q"), **kwargs)
    with pytest.raises(TypeError):
        export(None, x, file_name=str(tmp_path / "q"), file_format="ONNX")
    assert not os.path.exists(tmp_path / "q.onnx")


@pytest.mark.skipif("jax" not in BACKENDS, reason="the jax backend is not installed")
def test_graph_mode_step_equals_numpy():
    """A compiled quantization-aware train step (jax GRAPH_MODE) updates the weights, the
    observed ranges and the delay counters as the numpy reference does eagerly."""
    x, y = _digits_like(8)
    results, start = [], None
    for backend, mode in (("numpy", ms.PYNATIVE_MODE), ("jax", ms.GRAPH_MODE)):
        use_backend(backend)
        ms.set_context(mode=mode)
        q = convert_quant_network(SeedNetwork(), quant_delay=(0, 1))
        if start is None:
            start = {p.name: p.asnumpy() for p in q.get_parameters()}
        for p in q.get_parameters():
            p.set_data(ms.Tensor(start[p.name]))
        losses = _train_a_little(q, x, y, steps=3)
        results.append((losses, {p.name: p.asnumpy() for p in q.get_parameters()}))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    for name, value in results[0][1].items():
        np.testing.assert_allclose(results[1][1][name], value, rtol=1e-4, atol=1e-6,
                                   err_msg=name)


@pytest.mark.skipif(not SLOW, reason="MSCORE_SLOW_TESTS=1 runs the QAT of bench/quant_digits.py")
@pytest.mark.parametrize("net", ["mlp", "lenet"])
def test_qat_on_digits_is_within_a_point_of_float(net, tmp_path):
    """bench/quant_digits.py's measurement: QAT fine-tuning ends within 1 point of the same
    float fine-tuning; onnxruntime's int8 model agrees with mscore's fake-quantized forward
    on >= 99% of the test set; the int8 file is > 3.4x smaller."""
    pytest.importorskip("sklearn")
    pytest.importorskip("onnxruntime")
    import argparse
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "bench"))
    import quant_digits
    backend = "torch" if "torch" in BACKENDS else "numpy"
    use_backend(backend)
    args = argparse.Namespace(float_epochs=10, qat_epochs=4, batch=32, lr=0.02, qat_lr=0.005,
                              seed=1)
    data = quant_digits.load_digits_arrays(str(tmp_path / "idx"))
    r = quant_digits.run_net(net, data, args, str(tmp_path))
    assert abs(r["qat_acc"] - r["float_acc"]) <= 0.01 + 1e-9, r
    assert r["float_acc"] > 0.95 and r["argmax_agree"] >= 0.99, r
    assert r["float_bytes"] / r["int8_bytes"] > 3.4, r
