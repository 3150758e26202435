"""MindSpore model-zoo training code written with ``P``/``C``/``F`` runs unchanged: a 1.x-style
train-one-step cell with ``C.GradOperation(get_by_list=True, sens_param=True)``, a
sensitivity made with ``P.Fill``/``P.DType``/``P.Shape``, the ``_grad_scale`` and
``clip_grad`` ``MultitypeFuncGraph`` + ``HyperMap`` patterns and ``F.depend`` — on every
backend, PYNATIVE and GRAPH mode, against the same SGD steps computed with numpy."""
import os

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore import nn, ops
from mscore.ops import composite as C
from mscore.ops import functional as F
from mscore.ops import operations as P

GRADIENT_CLIP_TYPE = 1
GRADIENT_CLIP_VALUE = 0.5

clip_grad = C.MultitypeFuncGraph("clip_grad")


@clip_grad.register("Number", "Number", "Tensor")
def _clip_grad(clip_type, clip_value, grad):
    """Clip by value (type 0) or by norm (type 1), as in the model zoo."""
    if clip_type not in (0, 1):
        return grad
    dt = F.dtype(grad)
    if clip_type == 0:
        return ops.clip_by_value(grad, F.cast(F.tuple_to_array((-clip_value,)), dt),
                                 F.cast(F.tuple_to_array((clip_value,)), dt))
    norm = P.Sqrt()(P.ReduceSum()(P.Square()(grad)))
    scale = clip_value / P.Maximum()(norm, clip_value)
    return grad * F.cast(scale, dt)


grad_scale = C.MultitypeFuncGraph("grad_scale")
reciprocal = P.Reciprocal()


@grad_scale.register("Tensor", "Tensor")
def tensor_grad_scale(scale, grad):
    return grad * F.cast(reciprocal(scale), F.dtype(grad))


class TrainOneStepWithSens(nn.Cell):
    """The 1.x model-zoo train step: scaled sensitivity, unscale, clip, update."""

    def __init__(self, network, optimizer, sens=4.0):
        super().__init__(auto_prefix=False)
        self.network = network
        self.weights = optimizer.parameters
        self.optimizer = optimizer
        self.grad = C.GradOperation(get_by_list=True, sens_param=True)
        self.sens = sens
        self.hyper_map = C.HyperMap()
        self.cast = P.Cast()

    def construct(self, data, label):
        weights = self.weights
        loss = self.network(data, label)
        sens = P.Fill()(P.DType()(loss), P.Shape()(loss), self.sens)
        grads = self.grad(self.network, weights)(data, label, sens)
        grads = self.hyper_map(F.partial(grad_scale, F.scalar_to_tensor(self.sens)), grads)
        grads = self.hyper_map(F.partial(clip_grad, GRADIENT_CLIP_TYPE, GRADIENT_CLIP_VALUE),
                               grads)
        return F.depend(loss, self.optimizer(grads))


def _numpy_steps(w, b, x, y, lr, steps):
    losses = []
    for _ in range(steps):
        pred = x @ w.T + b
        d = pred - y
        losses.append(float((d ** 2).mean()))
        gw = 2 * (d.T @ x) / d.size
        gb = 2 * d.sum(0) / d.size
        gw = gw * min(1.0, GRADIENT_CLIP_VALUE / max(np.sqrt((gw ** 2).sum()),
                                                      GRADIENT_CLIP_VALUE))
        gb = gb * min(1.0, GRADIENT_CLIP_VALUE / max(np.sqrt((gb ** 2).sum()),
                                                      GRADIENT_CLIP_VALUE))
        w, b = w - lr * gw, b - lr * gb
    return losses, w, b


def _cases():
    # jax in PYNATIVE mode compiles every op separately (seconds here): MSCORE_SLOW_TESTS=1
    slow = os.environ.get("MSCORE_SLOW_TESTS") == "1"
    return [(b, m) for b in available_backends() for m in ("pynative", "graph")
            if slow or (b, m) != ("jax", "pynative")]


@pytest.mark.parametrize("backend,mode", _cases())
def test_model_zoo_train_step(backend, mode):
    use_backend(backend)
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        rng = np.random.default_rng(4)
        x = rng.standard_normal((16, 3)).astype(np.float32)
        y = (x @ np.array([[2.0], [-1.0], [0.5]]) + 1.0).astype(np.float32)
        net = nn.Dense(3, 1)
        w0, b0 = net.weight.asnumpy().copy(), net.bias.asnumpy().copy()
        step = TrainOneStepWithSens(nn.WithLossCell(net, nn.MSELoss()),
                                    nn.SGD(net.trainable_params(), 0.1))
        step.set_train()
        losses = [float(step(ms.Tensor(x), ms.Tensor(y)).asnumpy()) for _ in range(5)]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    want, w, b = _numpy_steps(w0.astype(np.float64), b0.astype(np.float64), x, y, 0.1, 5)
    np.testing.assert_allclose(losses, want, rtol=1e-4)
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=1e-4, atol=1e-5)
