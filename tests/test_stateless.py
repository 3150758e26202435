"""``stateless_call`` over nn cells: outputs and buffer updates come back as values and no
Parameter is mutated (the basis of compiled train steps)."""
import numpy as np
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import nn
from mscore.common.parameter import stateless_call

_numpy_context = numpy_context_each_test(seed=0)


def T(a):
    return ms.Tensor(np.asarray(a))


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, has_bias=True)
        self.bn = nn.BatchNorm2d(3, momentum=0.5)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(3 * 4 * 4, 2)

    def construct(self, x):
        return self.fc(self.flatten(self.relu(self.bn(self.conv(x)))))


def _snapshot(cell):
    return {p.name: p.asnumpy().copy() for p in cell.get_parameters()}


def test_stateless_forward_returns_batchnorm_updates_and_mutates_nothing():
    net = Net().set_train(True)
    x = T(np.random.default_rng(0).standard_normal((4, 2, 4, 4)).astype(np.float32))
    params = list(net.get_parameters())
    before = _snapshot(net)
    # new values for every parameter: the call must use them, not the stored ones
    values = [ms.Tensor(p.asnumpy() * 1.5)._data for p in params]
    out, new_values, others = stateless_call(lambda: net(x), params, values)
    assert others == []
    after = _snapshot(net)
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)
    # the same forward run eagerly on a copy holding the new values
    twin = Net().set_train(True)
    for p, v in zip(twin.get_parameters(), values):
        p.set_data(ms.Tensor(v))
    want = twin(x)
    np.testing.assert_allclose(out.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-6)
    by_name = {p.name: ms.Tensor(v).asnumpy() for p, v in zip(params, new_values)}
    np.testing.assert_allclose(by_name["bn.moving_mean"], twin.bn.moving_mean.asnumpy(),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(by_name["bn.moving_variance"],
                               twin.bn.moving_variance.asnumpy(), rtol=1e-6, atol=1e-7)
    assert not np.allclose(by_name["bn.moving_mean"], before["bn.moving_mean"] * 1.5)
    # trainable parameters come back unchanged by a forward pass
    np.testing.assert_array_equal(by_name["fc.weight"], before["fc.weight"] * np.float32(1.5))


def test_stateless_train_step_matches_eager_step():
    ms.set_seed(1)
    net = Net()
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt).set_train()
    rng = np.random.default_rng(1)
    x = T(rng.standard_normal((4, 2, 4, 4)).astype(np.float32))
    y = T(rng.integers(0, 2, 4).astype(np.int32))
    params = list(train.get_parameters())
    before = _snapshot(train)
    values = [p._data for p in params]
    loss, new_values, others = stateless_call(lambda: train(x, y), params, values)
    assert others == []
    for name, v in _snapshot(train).items():
        np.testing.assert_array_equal(v, before[name], err_msg=name)
    eager_loss = train(x, y)  # now mutate for real
    np.testing.assert_allclose(loss.asnumpy(), eager_loss.asnumpy(), rtol=1e-6)
    changed = set()
    for p, v in zip(params, new_values):
        np.testing.assert_allclose(ms.Tensor(v).asnumpy(), p.asnumpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=p.name)
        if not np.array_equal(before[p.name], p.asnumpy()):
            changed.add(p.name)
    # weights, velocities and both BatchNorm statistics moved (conv.bias feeds a BatchNorm,
    # so its gradient is zero up to rounding)
    for name in ("conv.weight", "bn.gamma", "bn.beta", "fc.weight", "fc.bias",
                 "moments.fc.weight", "moments.bn.gamma", "bn.moving_mean",
                 "bn.moving_variance"):
        assert name in changed, name


def test_stateless_optimizer_step_with_dynamic_lr_threads_global_step():
    w = ms.Parameter(T(np.ones(3, np.float32)), name="w")
    opt = nn.SGD([w], [0.5, 0.25])
    params = list(opt.get_parameters())
    values = [p._data for p in params]
    g = (T(np.ones(3, np.float32)),)
    _, new_values, _ = stateless_call(lambda: opt(g), params, values)
    assert int(opt.global_step.asnumpy()[0]) == 0
    np.testing.assert_array_equal(w.asnumpy(), np.ones(3))
    new = {p.name: ms.Tensor(v).asnumpy() for p, v in zip(params, new_values)}
    np.testing.assert_allclose(new["w"], np.full(3, 0.5))
    assert int(new["global_step"][0]) == 1
    # a second call from the returned state uses the next rate
    _, newer, _ = stateless_call(lambda: opt(g), params, new_values)
    newer = {p.name: ms.Tensor(v).asnumpy() for p, v in zip(params, newer)}
    np.testing.assert_allclose(newer["w"], np.full(3, 0.25))
