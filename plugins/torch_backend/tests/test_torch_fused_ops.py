"""The torch backend's fused ops (softmax family, layer/batch norm, cross entropy,
attention, relu/dense/addcmul) against the core's composites on the numpy backend, values
and gradients."""
from __future__ import annotations

import numpy as np
import pytest
from _torch_compare import RNG, both, rnd, torch

import mscore as ms
from mscore import ops


# -- fused ops against the core's composites on numpy ----------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_softmax_family(dtype):
    x = rnd(3, 4, 5) * 3
    both(lambda a: (ops.softmax(a, 1), ops.log_softmax(a, -1), ops.softmax(a, 0)), x,
         dtype=dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_layer_norm(dtype):
    x, w, b = rnd(4, 3, 6), rnd(3, 6), rnd(3, 6)
    both(lambda a, g, c: (ops.layer_norm(a, (6,), None, None, 1e-5),
                          ops.layer_norm(a, (3, 6), g, c, 1e-3)), x, w, b, dtype=dtype)


def test_layer_norm_half_input_float32_params():
    x, w, b = rnd(4, 6), rnd(6), rnd(6)

    def fn(a, g, c):
        return ops.layer_norm(ops.cast(a, ms.float16), (6,), g, c)
    both(fn, x, w, b, dtype="float32", factor=100.0)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_batch_norm_updates_running_statistics(training, dtype):
    x, g, b = rnd(4, 3, 5, 5), rnd(3), rnd(3)
    rm, rv = rnd(3), rnd(3, low=0.5, high=2.0)

    def fn(a, gamma, beta, mean0, var0):
        mean = ms.Parameter(mean0, name="mean", requires_grad=False)
        var = ms.Parameter(var0, name="var", requires_grad=False)
        out = ops.batch_norm(a, mean, var, gamma, beta, training, 0.1, 1e-5)
        return out, mean.value(), var.value()
    both(fn, x, g, b, rm, rv, dtype=dtype, factor=5.0)


def test_batch_norm_gradients_and_half_input():
    x, g, b = rnd(4, 3, 2, 2), rnd(3), rnd(3)

    def fn(a, gamma, beta):
        mean = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), requires_grad=False)
        var = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), requires_grad=False)
        loss = lambda a, gamma, beta: ops.sum(ops.mul(ops.batch_norm(  # noqa: E731
            a, mean, var, gamma, beta, True), ops.arange(48, dtype=ms.float32).reshape(
            4, 3, 2, 2)))
        return ms.grad(loss, (0, 1, 2))(a, gamma, beta)
    both(fn, x, g, b, dtype="float32", factor=20.0)

    def half(a, gamma, beta):
        mean = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), requires_grad=False)
        var = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), requires_grad=False)
        out = ops.batch_norm(ops.cast(a, ms.float16), mean, var, gamma, beta, True)
        return ops.cast(out, ms.float32), mean.value(), var.value()
    both(half, x, g, b, dtype="float32", factor=300.0)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy(reduction, smoothing):
    x = rnd(6, 5) * 2
    t = np.array([0, 4, -100, 2, 2, 1])

    def fn(a):
        return ops.cross_entropy(a, ms.Tensor(t), ignore_index=-100, reduction=reduction,
                                 label_smoothing=smoothing)
    both(fn, x, dtype="float64")
    both(fn, x, dtype="float32")
    both(fn, x, dtype="float16", factor=2.0)


def test_cross_entropy_int32_targets_and_gradient():
    x = rnd(4, 3)
    t = np.array([0, 2, 1, 1], dtype=np.int32)
    both(lambda a: ms.grad(lambda z: ops.cross_entropy(z, ms.Tensor(t)))(a), x,
         dtype="float64")


@pytest.mark.parametrize("variant", ["plain", "causal", "bool_mask", "float_mask",
                                     "causal_and_mask", "scale"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_attention(variant, dtype):
    q, k, v = rnd(2, 2, 4, 8), rnd(2, 2, 6, 8), rnd(2, 2, 6, 8)
    mask_bool = RNG.uniform(size=(4, 6)) > 0.3
    mask_bool[:, 0] = True  # every row keeps at least one key
    mask_float = rnd(4, 6)

    def fn(a, b, c):
        kw = {}
        if variant in ("bool_mask", "causal_and_mask"):
            kw["attn_mask"] = ms.Tensor(mask_bool)
        if variant == "float_mask":
            kw["attn_mask"] = ms.Tensor(mask_float, dtype=a.dtype)
        if variant in ("causal", "causal_and_mask"):
            kw["is_causal"] = True
        if variant == "scale":
            kw["scale"] = 0.3
        return ops.scaled_dot_product_attention(a, b, c, **kw)
    both(fn, q, k, v, dtype=dtype, factor=2.0)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_fused_relu_dense_addcmul_values_and_gradients(dtype):
    """The hot-path fused ops (relu, dense, addcmul) give the composites' values, and relu's
    gradient is 0 at exactly 0 as in MindSpore."""
    x = rnd(4, 5)
    x[0, :2] = 0.0
    w, b, c = rnd(3, 5), rnd(3), rnd(4, 5)

    def fn(a, weight, bias, other):
        relu = ops.relu(a)
        lin = ops.dense(a, weight, bias)
        lin1 = ops.dense(a[0], weight)                   # 1-d input, no bias
        acm = ops.addcmul(a, other, a, value=0.5)
        cell = ms.nn.ReLU()(a)
        grads = ms.grad(lambda p, q, r: ops.sum(ops.relu(ops.dense(p, q, r)) * 1.5)
                        + ops.sum(ops.relu(p)), (0, 1, 2))(a, weight, bias)
        return relu, lin, lin1, acm, cell, grads
    ms.set_context(backend="torch")
    b_ = ms.context.current_backend()
    assert b_.relu is torch.relu and b_.addcmul is torch.addcmul
    both(fn, x, w, b, c, dtype=dtype, factor=2.0)
    g = ms.grad(lambda p: ops.sum(ops.relu(p)))(ms.Tensor(x, dtype=getattr(ms, dtype)))
    np.testing.assert_array_equal(g.asnumpy().astype(np.float64), (x > 0).astype(np.float64))


def test_nn_dense_and_relu_cells_use_the_fused_ops(monkeypatch):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    seen = []
    monkeypatch.setattr(b, "dense", lambda x, w, bias: seen.append("dense") or
                        torch.nn.functional.linear(x, w, bias))
    monkeypatch.setattr(b, "relu", lambda x: seen.append("relu") or torch.relu(x))
    ms.set_seed(0)
    net = ms.nn.SequentialCell([ms.nn.Dense(4, 3), ms.nn.ReLU()])
    out = net(ms.Tensor(np.ones((2, 4), np.float32)))
    assert seen == ["dense", "relu"]
    w, bias = (p.asnumpy() for p in net.trainable_params())
    np.testing.assert_allclose(out.asnumpy(), np.maximum(np.ones((2, 4)) @ w.T + bias, 0),
                               rtol=1e-6)
