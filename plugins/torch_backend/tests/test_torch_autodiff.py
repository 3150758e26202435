"""torch autograd behind ``value_and_grad``: against the reference autodiff on numpy and
against central differences in float64; unused and integer primals; stop_gradient."""
from __future__ import annotations

import numpy as np
import pytest
from _torch_compare import both, rnd, run_on, torch

import mscore as ms
from mscore import ops


# -- autodiff -------------------------------------------------------------------------------
def _mlp_loss(x, w1, w2, y):
    h = ops.tanh(ops.matmul(x, w1))
    h = ops.gelu(h)
    logits = ops.matmul(h, w2)
    return ops.cross_entropy(logits, y) + ops.mean(ops.square(w1)) * 0.1


def test_value_and_grad_matches_reference_autodiff():
    x, w1, w2 = rnd(5, 4), rnd(4, 6), rnd(6, 3)
    y = np.array([0, 2, 1, 1, 0])

    def fn(a, b, c):
        return ms.value_and_grad(lambda a, b, c: _mlp_loss(a, b, c, ms.Tensor(y)),
                                 (0, 1, 2))(a, b, c)
    both(fn, x, w1, w2, dtype="float64")


def test_gradients_against_central_differences_float64():
    ms.set_context(backend="torch")
    x0, w0 = rnd(1, 2, 6), rnd(3, 2, 3)

    def loss(x, w):
        z = ops.conv1d(x, w, None, 1, "pad", 1)                       # (1, 3, 6)
        pooled = ops.max_pool(x, 2, 1, 0, nd=1)
        return (ops.sum(ops.sin(z) * ops.softmax(z, -1)) + ops.sum(pooled * pooled)
                + ops.sum(x[:, :, ::-1] * z[:, :2, :]) + ops.sum(ops.layer_norm(z, (6,))[0, 0]))

    grads = ms.grad(loss, (0, 1))(ms.Tensor(x0), ms.Tensor(w0))
    eps = 1e-6
    for k, base in enumerate((x0, w0)):
        numeric = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            plus, minus = base.copy(), base.copy()
            plus[i] += eps
            minus[i] -= eps
            args_p = [ms.Tensor(plus if j == k else b) for j, b in enumerate((x0, w0))]
            args_m = [ms.Tensor(minus if j == k else b) for j, b in enumerate((x0, w0))]
            numeric[i] = (loss(*args_p).item() - loss(*args_m).item()) / (2 * eps)
        np.testing.assert_allclose(grads[k].asnumpy(), numeric, rtol=1e-6, atol=1e-8)


def test_value_and_grad_unused_and_integer_primals_get_zeros():
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    unused = torch.tensor([3.0], dtype=torch.float64)
    idx = torch.tensor([1, 0])

    def fn(a, u, i):
        return (a[i] * a).sum(), [a * 2]

    (value, aux), grads = b.value_and_grad(fn, [x, unused, idx], True)
    assert value.item() == pytest.approx(4.0)
    assert not value.requires_grad and not aux[0].requires_grad
    np.testing.assert_allclose(grads[0].numpy(), [4.0, 2.0])  # f = 2 a0 a1
    np.testing.assert_array_equal(grads[1].numpy(), [0.0])
    np.testing.assert_array_equal(grads[2].numpy(), [0, 0])
    assert not x.requires_grad  # the caller's arrays are untouched


def test_stop_gradient_is_detach():
    def fn(a):
        return ms.grad(lambda z: ops.sum(z * ops.stop_gradient(z)))(a)
    got = both(fn, rnd(4), dtype="float64")
    x = run_on("numpy", lambda a: a, rnd(4))
    assert got.shape == x.shape
