"""``mscore.boost`` checked with numbers computed independently (numpy), and the cases of the
MindSpore oracle where mscore deliberately differs (``differs`` in boost_oracle.json).

The oracle itself runs in ``tests/test_boost_oracle.py``; AdaSum across two processes in
``tests/test_boost_adasum.py``.
"""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends, use_backend
from _oracle import load

import mscore as ms
from mscore import _state, boost, nn
from mscore.boost import adasum as adasum_module

sys.path.insert(0, str(Path(__file__).parent / "data"))
import boost_nets

ORACLE = load("boost_oracle.json")["cases"]
NETS = boost_nets.build(ms)


def recorded(name):
    """The plain value MindSpore recorded for case ``name``."""
    def plain(v):
        kind, value = next(iter(v.items()))
        if kind == "list":
            return [plain(x) for x in value]
        if kind == "dict":
            return {k: plain(x) for k, x in value.items()}
        if kind == "array":
            return np.array(value, dtype=np.float64)
        return value
    return plain(ORACLE[name]["result"])


@pytest.fixture(autouse=True)
def _fresh():
    _state.reset()
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    yield
    _state.reset()
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)


def loss_net(net):
    return nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))


# -- AutoBoost: where mscore differs ------------------------------------------------------------
def test_autoboost_is_not_a_singleton_and_manual_mode_does_not_leak():
    assert ORACLE["autoboost_singleton"]["differs"]
    boost.AutoBoost("O1")
    assert boost.AutoBoost("O2").level == "O2"
    assert boost.AutoBoost().level == "O0"
    boost.AutoBoost("O1", {"boost": {"mode": "manual", "less_bn": False}})
    assert boost.AutoBoost("O1").boost_config["less_bn"] is True


def test_autoboost_split_groups_int_and_bad_settings():
    assert boost.AutoBoost("O1", {"common": {"gradient_split_groups": 5}}).gradient_groups == [5]
    with pytest.raises(TypeError, match="boost_config_dict"):
        boost.AutoBoost("O1", "/path/boost.json")
    with pytest.raises(TypeError, match="'less_bn' must be a bool"):
        boost.AutoBoost("O1", {"boost": {"mode": "manual", "less_bn": "yes"}})
    with pytest.raises(TypeError, match="'param_groups' must be an int"):
        boost.AutoBoost("O1", {"grad_freeze": {"param_groups": 2.5}})


def test_train_cells_read_the_autoboost_that_made_their_optimizer():
    net = NETS["plain"]()
    accumulate = boost.AutoBoost("O0", {"boost": {"mode": "manual", "grad_accumulation": True},
                                        "grad_accumulation": {"grad_accumulation_step": 3}})
    opt = nn.SGD(net.trainable_params(), 0.1)
    _, opt = accumulate.network_auto_process_train(net, opt)
    boost.AutoBoost("O0")   # made later: the optimizer's own configuration still wins
    train = boost.BoostTrainOneStepCell(loss_net(net), opt)
    assert train.use_grad_accumulation and train.max_accumulation_step == 3
    assert boost.boost.current().level == "O0"


# -- train cells: where mscore differs ----------------------------------------------------------
def test_default_sens_returns_the_loss():
    net = boost_nets.fill(ms, NETS["plain"]())
    train = boost.BoostTrainOneStepCell(loss_net(net), nn.Momentum(net.trainable_params(),
                                                                   0.05, 0.9))
    train.set_train()
    x, y = boost_nets.inputs(ms)
    losses = [float(train(x, y).asnumpy()) for _ in range(3)]
    np.testing.assert_allclose(losses, recorded("boost_train_cell_plain_losses")[0], rtol=1e-5)


def test_sens_must_be_a_number():
    net = NETS["plain"]()
    with pytest.raises(TypeError, match="sens"):
        boost.BoostTrainOneStepCell(loss_net(net), nn.Momentum(net.trainable_params(), 0.1,
                                                               0.9), "x")


@pytest.mark.parametrize("kind", ["tensor", "dynamic"])
def test_loss_scaled_step_trains_as_the_unscaled_one(kind):
    # MindSpore 2.10 cannot run this cell on CPU (NPUGetFloatStatusV2); the reference is its
    # unscaled BoostTrainOneStepCell on the same numbers: a power-of-2 scale changes nothing.
    net = boost_nets.fill(ms, NETS["plain"]())
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    if kind == "tensor":
        sense = ms.Tensor(np.float32(1024.0))
    else:
        sense = nn.DynamicLossScaleUpdateCell(loss_scale_value=2.0 ** 10, scale_factor=2,
                                              scale_window=2)
    train = boost.BoostTrainOneStepWithLossScaleCell(loss_net(net), opt, sense)
    train.set_train()
    x, y = boost_nets.inputs(ms)
    outs = [train(x, y) for _ in range(3)]
    np.testing.assert_allclose([float(o[0].asnumpy()) for o in outs],
                               recorded("boost_train_cell_plain_losses")[0], rtol=1e-5)
    assert [bool(o[1].asnumpy()) for o in outs] == [False] * 3
    scales = [float(o[2].asnumpy()) for o in outs]
    # the dynamic scale grows after scale_window (2) good steps
    assert scales == ([1024.0] * 3 if kind == "tensor" else [1024.0, 1024.0, 2048.0])


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the step overflows
def test_loss_scaled_step_skips_overflow_and_keeps_the_weights():
    net = boost_nets.fill(ms, NETS["plain"]())
    before = {p.name: p.asnumpy().copy() for p in net.trainable_params()}
    train = boost.BoostTrainOneStepWithLossScaleCell(
        loss_net(net), nn.Momentum(net.trainable_params(), 0.05, 0.9),
        ms.Tensor(np.full((1,), np.finfo(np.float32).max, np.float32)))
    train.set_train()
    x, y = boost_nets.inputs(ms)
    loss, overflow, _ = train(x, y)
    assert bool(overflow.asnumpy()) and np.isfinite(float(loss.asnumpy()))
    for p in net.trainable_params():
        np.testing.assert_array_equal(p.asnumpy(), before[p.name])


# -- gradient centralization (no CPU kernel in MindSpore 2.10) ------------------------------------
def _centralised(g):
    return g - g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)


def test_gradient_centralization_against_numpy():
    conv_w = np.linspace(-1, 1, 576).reshape(4, 16, 3, 3).astype(np.float32)
    mat = np.linspace(0, 1, 32).reshape(4, 8).astype(np.float32)
    g1 = np.cos(np.arange(576)).reshape(4, 16, 3, 3).astype(np.float32)
    g2 = np.sin(np.arange(32)).reshape(4, 8).astype(np.float32)
    p1, p2 = ms.Parameter(ms.Tensor(conv_w), name="conv_w"), ms.Parameter(ms.Tensor(mat),
                                                                          name="mat")
    opt = nn.Momentum([{"params": [p1, p2], "grad_centralization": True}], 0.1, 0.9)
    opt((ms.Tensor(g1), ms.Tensor(g2)))
    opt((ms.Tensor(g1), ms.Tensor(g2)))
    v1 = _centralised(g1)
    v1_2 = 0.9 * v1 + v1     # momentum after two steps
    np.testing.assert_allclose(p1.asnumpy(), conv_w - 0.1 * v1 - 0.1 * v1_2, rtol=1e-5,
                               atol=1e-6)
    # (4, 8): its second dimension is not a multiple of 16, so it is left alone
    np.testing.assert_allclose(p2.asnumpy(), mat - 0.1 * g2 - 0.1 * (1.9 * g2), rtol=1e-5,
                               atol=1e-6)
    # weight decay comes first, then centralization
    q = ms.Parameter(ms.Tensor(conv_w), name="q")
    sgd = nn.SGD([{"params": [q], "grad_centralization": True, "weight_decay": 0.5}], 0.1)
    sgd((ms.Tensor(g1),))
    np.testing.assert_allclose(q.asnumpy(), conv_w - 0.1 * _centralised(g1 + 0.5 * conv_w),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="grad_centralization"):
        nn.SGD([{"params": [q], "grad_centralization": 1}], 0.1)
    # MindSpore's AdamWeightDecay and AdamOffload take the key and ignore it
    for kind in (nn.AdamWeightDecay, nn.AdamOffload):
        flagged, plain = (ms.Parameter(ms.Tensor(conv_w), name=n) for n in ("f", "p"))
        kind([{"params": [flagged], "grad_centralization": True}], 0.1)((ms.Tensor(g1),))
        kind([{"params": [plain]}], 0.1)((ms.Tensor(g1),))
        np.testing.assert_array_equal(flagged.asnumpy(), plain.asnumpy(), err_msg=kind.__name__)
        assert not np.array_equal(plain.asnumpy(), conv_w)


def test_o1_defaults_centralise_and_train():
    net = boost_nets.fill(ms, NETS["plain"]())
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    np.random.seed(0)
    net2, opt2 = boost.AutoBoost("O1").network_auto_process_train(net, opt)
    assert isinstance(net2, boost.LessBN) and isinstance(opt2, boost.FreezeOpt)
    # the centralised groups are MindSpore's (recorded by OptimizerProcess)
    groups = recorded("optimizer_process_gc_groups")[0]
    flagged = {name for names, gc in groups if gc for name in names}
    sub = opt2.opts[0]
    assert {p.name for p, gc in zip(sub.parameters, sub.grad_centralization_flags) if gc} == \
        flagged - {"fc.weight"}   # fc became FN, which is not centralised
    train = boost.BoostTrainOneStepCell(loss_net(net2), opt2)
    train.set_train()
    x, y = boost_nets.inputs(ms, batch=8)
    losses = [float(train(x, y).asnumpy()) for _ in range(6)]
    assert losses[-1] < losses[0]


# -- gradient freezing against numpy --------------------------------------------------------------
class Chain(nn.Cell):
    """x @ W1.T @ W2.T @ W3.T @ W4.T: four blocks of gradient freezing, no biases."""

    def __init__(self, weights):
        super().__init__()
        self.l1, self.l2, self.l3, self.l4 = [
            nn.Dense(w.shape[1], w.shape[0], weight_init=ms.Tensor(w), has_bias=False)
            for w in weights]

    def construct(self, x):
        return self.l4(self.l3(self.l2(self.l1(x))))


def _chain_grads(ws, x, y):
    """Gradients of mean((x W1' W2' W3' W4' - y)^2) by the chain rule (numpy)."""
    acts = [x]
    for w in ws:
        acts.append(acts[-1] @ w.T)
    d = 2.0 * (acts[-1] - y) / acts[-1].size
    grads = [None] * len(ws)
    for i in reversed(range(len(ws))):
        grads[i] = d.T @ acts[i]
        d = d @ ws[i]
    return grads


def test_freezing_trains_only_the_scheduled_group():
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(s).astype(np.float32) * 0.5
          for s in ((5, 4), (5, 5), (3, 5), (2, 3))]
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = rng.standard_normal((6, 2)).astype(np.float32)
    net = Chain(ws)
    freeze = boost.GradientFreeze(2, 0, 0.5, 4)
    groups = freeze.split_parameters_groups(net, 2)
    assert [[p.name for p in g] for g in groups] == [
        ["l1.weight", "l2.weight", "l3.weight", "l4.weight"], ["l4.weight"]]
    # continuous: int(0.5 * 1 // 0.5 + 0.5) = 1 zero, then group 1: 0 1 0 1 ...
    assert freeze.generate_freeze_index_sequence(2, 0, 0.5, 4) == [0, 1, 0, 1]
    ln = nn.WithLossCell(net, nn.MSELoss())
    ln, opt = freeze.freeze_generate(ln, nn.SGD(net.trainable_params(), 0.1))
    train = boost.BoostTrainOneStepCell(ln, opt)
    train.set_train()
    want = [w.astype(np.float64) for w in ws]
    for step in range(3):
        grads = _chain_grads(want, x.astype(np.float64), y.astype(np.float64))
        trained = range(4) if step % 2 == 0 else [3]
        for i in trained:
            want[i] = want[i] - 0.1 * grads[i]
        train(ms.Tensor(x), ms.Tensor(y))
        for i, layer in enumerate((net.l1, net.l2, net.l3, net.l4)):
            np.testing.assert_allclose(layer.weight.asnumpy(), want[i], rtol=1e-5, atol=1e-6,
                                       err_msg=f"step {step} layer {i}")
    assert int(train.step.asnumpy()) == 3


def test_freeze_opt_keeps_one_state_per_group_and_refuses_direct_use():
    net = NETS["plain"]()
    ps = net.trainable_params()
    f = boost.FreezeOpt(nn.Momentum(ps, 0.1, 0.9), [ps, ps[6:]], [0, 1])
    names = [p.name for p in f.get_parameters() if p.name.startswith("boost_")]
    assert "boost_0moments.conv1.weight" in names and "boost_1moments.fc.bias" in names
    assert "boost_1moments.conv1.weight" not in names
    assert [p.name for p in ps][0] == "conv1.weight"   # the network's names are untouched
    with pytest.raises(RuntimeError, match="BoostTrainOneStepCell"):
        f(tuple(ps))


# -- gradient accumulation equals one big batch ----------------------------------------------------
def _linear_step(w, b, x, y, lr):
    out = x @ w.T + b
    d = 2.0 * (out - y) / out.size
    return w - lr * (d.T @ x), b - lr * d.sum(0)


def test_gradient_accumulation_equals_a_big_batch():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((2, 4)).astype(np.float32)
    b = rng.standard_normal((2,)).astype(np.float32)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.standard_normal((8, 2)).astype(np.float32)
    want_w, want_b = _linear_step(w.astype(np.float64), b.astype(np.float64), x, y, 0.3)
    # the cell on its own, fed the gradients of the two halves
    net = nn.Dense(4, 2, weight_init=ms.Tensor(w), bias_init=ms.Tensor(b))
    acc = boost.GradientAccumulation(2, nn.SGD(net.trainable_params(), 0.3))
    grad_fn = ms.value_and_grad(nn.WithLossCell(net, nn.MSELoss()), None,
                                net.trainable_params())
    for half in (slice(0, 4), slice(4, 8)):
        loss, grads = grad_fn(ms.Tensor(x[half]), ms.Tensor(y[half]))
        acc(loss, grads)
        if half.start == 0:
            np.testing.assert_array_equal(net.weight.asnumpy(), w)   # not yet
    np.testing.assert_allclose(net.weight.asnumpy(), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bias.asnumpy(), want_b, rtol=1e-5, atol=1e-6)
    assert int(acc._accumulation_step.asnumpy()) == 0
    assert all(not a.asnumpy().any() for a in acc._grad_accumulation)
    # the same through BoostTrainOneStepCell with the AutoBoost switch
    net = nn.Dense(4, 2, weight_init=ms.Tensor(w), bias_init=ms.Tensor(b))
    boost.AutoBoost("O0", {"boost": {"mode": "manual", "grad_accumulation": True},
                           "grad_accumulation": {"grad_accumulation_step": 2}})
    train = boost.BoostTrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                        nn.SGD(net.trainable_params(), 0.3))
    for half in (slice(0, 4), slice(4, 8)):
        train(ms.Tensor(x[half]), ms.Tensor(y[half]))
    np.testing.assert_allclose(net.weight.asnumpy(), want_w, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="max_accumulation_step"):
        boost.GradientAccumulation(0, nn.SGD(net.trainable_params(), 0.3))


# -- less BN ------------------------------------------------------------------------------------
def test_fn_head_against_numpy():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((5, 7)).astype(np.float32)
    x = rng.standard_normal((3, 7)).astype(np.float32)
    x[0] = 1e-4     # below the norm floor sqrt(1e-4)
    cell = boost.less_batch_normalization.CommonHeadLastFN(7, 5, ms.Tensor(w), "zeros", False)
    cell.multiplier.set_data(ms.Tensor(np.array([2.5], np.float32)))

    def norm(a):
        return a / np.sqrt(np.maximum((a * a).sum(1, keepdims=True), 1e-4))
    np.testing.assert_allclose(cell(ms.Tensor(x)).asnumpy(), 2.5 * norm(x) @ norm(w).T,
                               rtol=1e-5, atol=1e-6)


def test_removed_batch_norms_pass_through_and_keep_names():
    net = boost_nets.fill(ms, NETS["basic"]())
    names = sorted(net.parameters_dict())
    bn = net.blocks[0].bn1
    lb = boost.LessBN(net)
    x, _ = boost_nets.inputs(ms)
    lb.set_train(False)
    lb(x)
    assert lb.removed_batch_norms == ["bn", "blocks.0.bn1", "blocks.0.bnd", "blocks.1.bn1"]
    assert sorted(net.parameters_dict()) == names    # checkpoints keep their keys
    removed = net.blocks[0].bn1
    assert removed is not bn and removed.removed is bn and removed.gamma is bn.gamma
    np.testing.assert_array_equal(removed(x[:, :1].broadcast_to((4, 16, 8, 8))).asnumpy(),
                                  x[:, :1].broadcast_to((4, 16, 8, 8)).asnumpy())
    boost.LessBN(net)        # wrapping again: nothing more
    assert lb.removed_batch_norms == ["bn", "blocks.0.bn1", "blocks.0.bnd", "blocks.1.bn1"]


def test_a_network_that_cannot_be_traced_keeps_its_batch_norms():
    net = boost_nets.fill(ms, NETS["basic"]())
    net.blocks[1].bn1.use_batch_statistics = True     # batch statistics in inference too
    lb = boost.LessBN(net)
    x, _ = boost_nets.inputs(ms)
    with pytest.warns(RuntimeWarning, match="keeps all of them"):
        lb(x)
    assert lb.removed_batch_norms == []
    with pytest.raises(TypeError, match="network"):
        boost.LessBN(nn.Dense)


# -- build_train_network and Model --------------------------------------------------------------
def test_build_train_network_applies_the_level():
    net = NETS["plain"]()
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    cell = ms.amp.build_train_network(net, opt, nn.SoftmaxCrossEntropyWithLogits(sparse=True),
                                      boost_level="O1")
    assert isinstance(cell, boost.BoostTrainOneStepCell)
    assert isinstance(cell.optimizer, boost.FreezeOpt) and cell.freeze
    assert type(net.fc).__name__ == "CommonHeadLastFN"
    plain = NETS["plain"]()
    cell = ms.amp.build_train_network(plain, nn.Momentum(plain.trainable_params(), 0.1, 0.9),
                                      nn.SoftmaxCrossEntropyWithLogits(sparse=True))
    assert type(cell) is nn.TrainOneStepCell and type(plain.fc).__name__ == "Dense"


def test_build_train_network_o2_amp_with_boost_trains():
    net = boost_nets.fill(ms, NETS["plain"]())
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    np.random.seed(0)
    cell = ms.amp.build_train_network(net, opt, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                                 reduction="mean"),
                                      level="O2", boost_level="O1",
                                      loss_scale_manager=ms.amp.DynamicLossScaleManager(2 ** 10))
    assert isinstance(cell, boost.BoostTrainOneStepWithLossScaleCell)
    cell.set_train()
    x, y = boost_nets.inputs(ms, batch=8)
    outs = [cell(x, y) for _ in range(4)]
    assert all(np.isfinite(float(o[0].asnumpy())) for o in outs)
    assert not any(bool(o[1].asnumpy()) for o in outs)
    assert float(outs[-1][0].asnumpy()) < float(outs[0][0].asnumpy())


def test_model_boosts_without_metrics_and_evaluates_the_boosted_network():
    assert ORACLE["model_boost_without_metrics"]["differs"]
    net = boost_nets.fill(ms, NETS["plain"]())
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    model = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True), opt,
                           boost_level="O1")
    assert isinstance(model.train_network.optimizer, boost.FreezeOpt)
    assert isinstance(model.predict_network, boost.LessBN)
    with pytest.warns(DeprecationWarning, match="acc_level"):
        model = ms.train.Model(NETS["plain"](), nn.SoftmaxCrossEntropyWithLogits(sparse=True),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9), acc_level="O1")
    assert isinstance(model.train_network, boost.BoostTrainOneStepCell)
    with pytest.warns(RuntimeWarning, match="optimizer must be defined"):
        ms.train.Model(NETS["plain"](), nn.SoftmaxCrossEntropyWithLogits(sparse=True),
                       boost_level="O2")


def test_model_checks_boost_level_and_config_up_front():
    assert ORACLE["model_boost_level_bad_without_optimizer"]["differs"]
    assert recorded("model_boost_level_bad_without_optimizer") == "WithLossCell"
    with pytest.raises(ValueError, match="boost_level"):
        ms.train.Model(NETS["plain"](), nn.SoftmaxCrossEntropyWithLogits(sparse=True),
                       boost_level="O5")
    assert ORACLE["model_boost_config_dict_not_a_dict"]["error"]["type"] == "AttributeError"
    net = NETS["plain"]()
    for caught in (TypeError, AttributeError):
        with pytest.raises(caught, match="boost_config_dict: expected a dict"):
            ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True),
                           nn.Momentum(net.trainable_params(), 0.1, 0.9), metrics={"acc"},
                           boost_level="O1", boost_config_dict=["x"])


# -- not implemented, with reasons ----------------------------------------------------------------
def test_dim_reduce_and_group_loss_scale_say_why():
    with pytest.raises(ValueError, match="weight_load_dir"):
        boost.AutoBoost("O1", {"boost": {"mode": "manual", "dim_reduce": True}}) \
            .network_auto_process_train(NETS["plain"](), nn.SGD(NETS["plain"]()
                                                               .trainable_params(), 0.1))
    with pytest.raises(NotImplementedError, match="dim_reduce"):
        boost.DimReduce(None, None, None, None, 32, 0.55, 0.9, 0.001, 0.4, 0, 1)
    manager = boost.GroupLossScaleManager(4096, [])
    manager.set_loss_scale_status(2, 1024.0)
    assert [float(p.asnumpy()) for p in manager.dynamic_loss_scale] == [1.0, 1024.0, 1024.0, 1.0]
    with pytest.raises(NotImplementedError, match="_DynamicLossScale"):
        manager(ms.Tensor(np.ones(2, np.float32)), 0, 1)


# -- AdaSum's combination (the collectives are in test_boost_adasum.py) ---------------------------
def _numpy_adasum(a, b):
    dot = a @ b
    return (1 - dot / (2 * (a @ a))) * a + (1 - dot / (2 * (b @ b))) * b


def test_adasum_tree_against_numpy():
    rng = np.random.default_rng(5)
    rows = [rng.standard_normal(12) for _ in range(4)]
    tensors = [ms.Tensor(r.astype(np.float32)) for r in rows]
    got = adasum_module.combine(tensors, divisible=True).asnumpy()
    want = _numpy_adasum(_numpy_adasum(rows[0], rows[1]), _numpy_adasum(rows[2], rows[3]))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    same = adasum_module.combine([tensors[0], tensors[0]], True).asnumpy()
    np.testing.assert_allclose(same, rows[0], rtol=1e-5)            # parallel: averaged
    a, b = np.array([1.0, 0.0]), np.array([0.0, 2.0])
    orth = adasum_module.combine([ms.Tensor(a.astype(np.float32)),
                                  ms.Tensor(b.astype(np.float32))], True).asnumpy()
    np.testing.assert_allclose(orth, a + b, atol=1e-6)               # orthogonal: added
    scalar = adasum_module.combine(tensors, divisible=False).asnumpy()
    np.testing.assert_allclose(scalar, np.mean(rows, axis=0), rtol=1e-5, atol=1e-6)


# -- GRAPH_MODE where the step is compiled ------------------------------------------------------
class Tiny(nn.Cell):
    """conv-bn-relu, a basic residual block, a Dense head: small enough to compile quickly."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, has_bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.conv1 = nn.Conv2d(4, 4, 3, has_bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, has_bias=False)
        self.bn2 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 4 * 4, 10)

    def construct(self, x):
        x = self.relu(self.bn(self.conv(x)))
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.fc(self.flatten(self.relu(y + x)))


def _tiny_o1_losses(mode, steps=4):
    ms.set_context(mode=mode)
    net = boost_nets.fill(ms, Tiny())
    config = {"grad_freeze": {"param_groups": 2, "freeze_type": 0, "freeze_p": 0.5,
                              "total_steps": steps}}
    net2, opt2 = boost.AutoBoost("O1", config).network_auto_process_train(
        net, nn.Momentum(net.trainable_params(), 0.05, 0.9))
    train = boost.BoostTrainOneStepCell(loss_net(net2), opt2)
    train.set_train()
    rng = np.random.default_rng(4)
    x = ms.Tensor(rng.standard_normal((4, 3, 4, 4)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 10, 4).astype(np.int32))
    losses = [float(train(x, y).asnumpy()) for _ in range(steps)]
    return losses, net2.removed_batch_norms


@pytest.mark.parametrize("backend", [b for b in available_backends() if b != "numpy"])
def test_compiled_o1_equals_eager(backend):
    """The LessBN analysis also works when its first call is inside a compiled program, and
    every group's compiled step trains as the eager one (numpy's)."""
    eager, removed = _tiny_o1_losses(ms.PYNATIVE_MODE, steps=3)
    use_backend(backend)
    compiled, removed_compiled = _tiny_o1_losses(ms.GRAPH_MODE, steps=3)
    assert removed == removed_compiled == ["bn1"]   # the basic block's first BN
    np.testing.assert_allclose(compiled, eager, rtol=1e-4, atol=1e-5)


def test_warnings_are_quiet_for_a_plain_o1_run():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _tiny_o1_losses(ms.PYNATIVE_MODE, steps=2)


def test_optimizers_record_how_they_were_built():
    net = nn.Dense(3, 2)
    opt = nn.Momentum(net.get_parameters(), 0.1, 0.9, use_nesterov=True)   # an iterator
    assert len(opt.parameters) == 2 and opt.init_learning_rate == 0.1
    assert opt.init_args == {"momentum": 0.9, "weight_decay": 0.0, "loss_scale": 1.0,
                             "use_nesterov": True}
    again = boost.OptimizerProcess(opt).generate_new_optimizer()
    assert type(again) is nn.Momentum and again.use_nesterov and len(again.parameters) == 2

    class Mine(nn.SGD):
        def __init__(self, params, learning_rate=0.3, extra=7):
            super().__init__(params, learning_rate)
            self.extra = extra
    mine = Mine(net.trainable_params(), extra=9)
    assert mine.init_args == {"extra": 9} and mine.init_learning_rate == 0.3
