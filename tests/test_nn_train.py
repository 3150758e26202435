"""End-to-end training with nn layers, losses, optimizers and wrapper cells (numpy backend)."""
import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import nn

_numpy_context = numpy_context_each_test(seed=0)


def _blobs(n, features, classes, seed=0):
    """Linearly separable-ish Gaussian blobs."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, features)) * 3
    y = rng.integers(0, classes, n)
    x = centers[y] + rng.standard_normal((n, features))
    return x.astype(np.float32), y.astype(np.int32)


class CNN(nn.Cell):
    """Conv2d-BatchNorm2d-ReLU-MaxPool2d-Flatten-Dense."""

    def __init__(self, classes=3):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 4 * 4, classes)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.bn(self.conv(x))))))


def _train(net, loss_fn, opt, x, y, steps):
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    train.set_train()
    return [float(train(x, y).asnumpy()) for _ in range(steps)]


def test_mlp_momentum_loss_falls():
    x, y = _blobs(64, 20, 5)
    net = nn.SequentialCell(nn.Dense(20, 32), nn.ReLU(), nn.Dense(32, 5))
    losses = _train(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.05, 0.9),
                    ms.Tensor(x), ms.Tensor(y), 25)
    assert all(np.isfinite(losses))
    assert losses[-1] < 0.3 * losses[0]
    logits = net(ms.Tensor(x)).asnumpy()
    assert (logits.argmax(1) == y).mean() > 0.9


def test_cnn_momentum_loss_falls_and_batchnorm_statistics_move():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 3, 16).astype(np.int32)
    net = CNN()
    before = net.bn.moving_mean.asnumpy().copy()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    losses = _train(net, loss_fn, nn.Momentum(net.trainable_params(), 0.05, 0.9),
                    ms.Tensor(x), ms.Tensor(y), 20)
    assert losses[-1] < 0.2 * losses[0]
    assert not np.allclose(net.bn.moving_mean.asnumpy(), before)
    # the moving statistics are buffers, not trained
    names = [p.name for p in net.trainable_params()]
    assert "bn.moving_mean" not in names and "bn.gamma" in names


@pytest.mark.parametrize("make_opt", [
    lambda ps: nn.SGD(ps, 0.1),
    lambda ps: nn.SGD(ps, 0.05, momentum=0.9, nesterov=True),
    lambda ps: nn.Adam(ps, 0.01),
    lambda ps: nn.AdamWeightDecay(ps, 0.01, weight_decay=1e-4),
    lambda ps: nn.Momentum(ps, nn.CosineDecayLR(0.001, 0.05, 20), 0.9),
], ids=["sgd", "sgd-nesterov", "adam", "adamw", "momentum-cosine"])
def test_every_optimizer_trains_an_mlp(make_opt):
    x, y = _blobs(48, 10, 3, seed=2)
    net = nn.SequentialCell(nn.Dense(10, 16), nn.Tanh(), nn.Dense(16, 3))
    losses = _train(net, nn.CrossEntropyLoss(), make_opt(net.trainable_params()),
                    ms.Tensor(x), ms.Tensor(y), 20)
    assert losses[-1] < 0.5 * losses[0]


def test_mse_regression_with_dense():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    w = rng.standard_normal((4, 1)).astype(np.float32)
    y = x @ w + 0.5
    net = nn.Dense(4, 1)
    losses = _train(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1), ms.Tensor(x),
                    ms.Tensor(y), 60)
    assert losses[-1] < 1e-3
    np.testing.assert_allclose(net.weight.asnumpy(), w.T, atol=0.05)
    np.testing.assert_allclose(net.bias.asnumpy(), [0.5], atol=0.05)


def test_train_one_step_sens_scales_the_update():
    x, y = _blobs(8, 3, 2, seed=4)
    results = []
    for sens in (1.0, 2.0):
        ms.set_seed(0)
        net = nn.Dense(3, 2)
        w0 = net.weight.asnumpy().copy()
        train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                                    nn.SGD(net.trainable_params(), 0.1), sens=sens)
        train(ms.Tensor(x), ms.Tensor(y))
        results.append(net.weight.asnumpy() - w0)
    np.testing.assert_allclose(results[1], 2 * results[0], rtol=1e-5, atol=1e-7)


def test_with_eval_cell_returns_loss_outputs_label():
    x, y = _blobs(8, 3, 2, seed=5)
    net = nn.Dense(3, 2)
    loss, out, label = nn.WithEvalCell(net, nn.CrossEntropyLoss(), add_cast_fp32=True)(
        ms.Tensor(x), ms.Tensor(y))
    logits = x @ net.weight.asnumpy().T + net.bias.asnumpy()
    np.testing.assert_allclose(out.asnumpy(), logits, rtol=1e-5, atol=1e-6)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    np.testing.assert_allclose(float(loss.asnumpy()), -logp[np.arange(8), y].mean(), rtol=1e-5)
    np.testing.assert_array_equal(label.asnumpy(), y)


def test_wrapper_argument_validation():
    net = nn.Dense(3, 2)
    opt = nn.SGD(net.trainable_params())
    with pytest.raises(TypeError, match="network"):
        nn.TrainOneStepCell(lambda x: x, opt)
    with pytest.raises(TypeError, match="sens"):
        nn.TrainOneStepCell(net, opt, sens="2")
    with pytest.raises(TypeError, match="backbone"):
        nn.WithLossCell(None, nn.MSELoss())
    with pytest.raises(TypeError, match="loss_fn"):
        nn.WithLossCell(net, 3)
    # wrapper cells do not prefix the backbone's parameter names
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    assert [p.name for p in train.network.trainable_params()] == ["weight", "bias"]
