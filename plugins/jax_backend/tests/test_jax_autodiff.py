"""jax's native autodiff behind ``value_and_grad``: against finite differences, the
contract's edge cases, and BatchNorm updates inside value_and_grad and a jitted step
without leaked tracers."""
from __future__ import annotations

import numpy as np
from _jax_compare import JB, assert_close, jax, jnp, leaked_tracers

import mscore as ms
from mscore import nn, ops
from mscore.compile import graph


# -- native autodiff ---------------------------------------------------------------------------
def _grad_probe_fn(x, w_conv, w_dense, ln_w):
    """A scalar through conv, pooling, dense, fused softmax/layer_norm/attention/CE, where,
    indexing and erf."""
    h = ops.conv2d(x, w_conv, pad_mode="pad", padding=1)
    h = ops.max_pool2d(ops.tanh(h), 2, 2)
    h = ops.avg_pool2d(h, 2, 1)
    h = ops.reshape(h, (h.shape[0], -1))
    h = ops.matmul(h, w_dense)
    h = ops.layer_norm(h, (h.shape[1],), ln_w, None, 1e-5)
    q = ops.reshape(h, (2, 1, 2, 3))
    att = ops.scaled_dot_product_attention(q, q, q, is_causal=True)
    logits = ops.reshape(att, (2, 6))[:, :4] + ops.erf(h[:, 1:5])
    logits = ops.where(logits > 2.0, logits * 0.5, logits)
    ce = ops.cross_entropy(logits, ms.Tensor(np.array([1, 3], np.int32)))
    return ce + ops.sum(ops.softmax(logits, 1)[:, 0] ** 2)


def test_value_and_grad_matches_finite_differences():
    """Gradients of a function through every fused op and the structured primitives, by
    jax.value_and_grad inside one compiled step, against central differences in float64."""
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 2, 6, 6))
    weights = [rng.normal(size=(3, 2, 3, 3)) * 0.5, rng.normal(size=(12, 6)) * 0.5,
               rng.normal(size=(6,))]
    params = [ms.Parameter(ms.Tensor(w, ms.float64), name=f"w{i}")
              for i, w in enumerate(weights)]
    xt = ms.Tensor(x, ms.float64)
    assert xt.dtype is ms.float64 and jax.config.jax_enable_x64  # float64 switched x64 on

    class Grads(nn.Cell):
        def __init__(self):
            super().__init__()
            self.ws = ms.ParameterTuple(params)

        def construct(self, x):
            fn = lambda x: _grad_probe_fn(x, *self.ws)  # noqa: E731
            value, (gx, gws) = ms.value_and_grad(fn, 0, list(self.ws))(x)
            return value, gx, gws

    value, gx, gws = Grads()(xt)
    assert value.dtype is ms.float64
    forward = jax.jit(lambda *a: _grad_probe_fn(*[ms.Tensor._wrap(v) for v in a])._data)
    eps = 1e-6
    primals = [x] + weights
    grads = [gx] + list(gws)
    for k, (base, g) in enumerate(zip(primals, grads)):
        g = g.asnumpy()
        assert g.shape == base.shape and g.dtype == np.float64
        for flat in rng.choice(base.size, size=min(6, base.size), replace=False):
            idx = np.unravel_index(flat, base.shape)
            vals = []
            for sign in (1, -1):
                pert = [p.copy() for p in primals]
                pert[k][idx] += sign * eps
                vals.append(float(forward(*pert)))
            fd = (vals[0] - vals[1]) / (2 * eps)
            assert abs(g[idx] - fd) <= 1e-6 * max(1.0, abs(fd)), (k, idx, g[idx], fd)
    assert leaked_tracers(params) == []


def test_pynative_value_and_grad_matches_finite_differences():
    ms.set_context(backend="jax", mode=ms.PYNATIVE_MODE)
    rng = np.random.default_rng(6)
    x0, w0 = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    w = ms.Parameter(ms.Tensor(w0, ms.float64), name="w")
    f = lambda x: ops.sum(ops.tanh(ops.matmul(x, w)) ** 2)  # noqa: E731
    _, (gx, gw) = ms.value_and_grad(f, 0, [w])(ms.Tensor(x0, ms.float64))

    def numeric(x, wv):
        return float(np.sum(np.tanh(x @ wv) ** 2))
    eps = 1e-6
    for base, g, which in ((x0, gx.asnumpy(), 0), (w0, gw[0].asnumpy(), 1)):
        fd = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            plus, minus = base.copy(), base.copy()
            plus[idx] += eps
            minus[idx] -= eps
            args_p = (plus, w0) if which == 0 else (x0, plus)
            args_m = (minus, w0) if which == 0 else (x0, minus)
            fd[idx] = (numeric(*args_p) - numeric(*args_m)) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    assert leaked_tracers([w]) == []


def test_value_and_grad_contract_edge_cases():
    f = lambda a, n: (jnp.sum(a * a) * n.sum(), [a])  # noqa: E731
    a = JB.from_numpy(np.array([1.0, 2.0], np.float32))
    n = JB.from_numpy(np.array([3], np.int32))
    (value, aux), grads = JB.value_and_grad(f, [a, n], True)
    assert float(value) == 15.0 and np.allclose(np.asarray(aux[0]), [1, 2])
    assert np.allclose(np.asarray(grads[0]), [6.0, 12.0])
    assert np.asarray(grads[1]).dtype == np.int32 and not np.asarray(grads[1]).any()
    (value, aux), grads = JB.value_and_grad(lambda: (jnp.float32(2.0), None), [], True)
    assert grads == [] and float(value) == 2.0


class BNNet(nn.Cell):
    """Dense -> batch_norm (running statistics as non-trainable Parameters) -> loss."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(3)
        self.w = ms.Parameter(ms.Tensor(rng.normal(size=(4, 5)).astype(np.float32)), name="w")
        self.gamma = ms.Parameter(ms.Tensor(np.ones(5, np.float32)), name="gamma")
        self.beta = ms.Parameter(ms.Tensor(np.zeros(5, np.float32)), name="beta")
        self.mean = ms.Parameter(ms.Tensor(np.zeros(5, np.float32)), name="mean",
                                 requires_grad=False)
        self.var = ms.Parameter(ms.Tensor(np.ones(5, np.float32)), name="var",
                                requires_grad=False)

    def construct(self, x):
        h = ops.matmul(x, self.w)
        h = ops.batch_norm(h, self.mean, self.var, self.gamma, self.beta, training=True,
                           momentum=0.1)
        return ops.mean(ops.tanh(h) ** 2)


def _bn_grads(backend):
    ms.set_context(backend=backend, mode=ms.PYNATIVE_MODE)
    net = BNNet()
    x = ms.Tensor(np.random.default_rng(4).normal(size=(6, 4)).astype(np.float32))
    loss, grads = ms.value_and_grad(net, None, net.trainable_params())(x)
    return net, [loss.asnumpy()] + [g.asnumpy() for g in grads] + \
        [net.mean.asnumpy(), net.var.asnumpy()]


def test_batchnorm_update_inside_value_and_grad_does_not_leak():
    ref_net, ref = _bn_grads("numpy")
    net, got = _bn_grads("jax")
    assert leaked_tracers(net.get_parameters()) == []
    assert not np.allclose(got[-2], 0)  # the running mean moved
    for a, e in zip(got, ref):
        assert_close(a, e, factor=4)


class SGDStep(nn.Cell):
    """A whole train step: value_and_grad of ``net``, then an SGD update of its weights."""

    def __init__(self, net, lr=0.1):
        super().__init__()
        self.net = net
        self.lr = lr
        self.weights = net.trainable_params()
        self.grad_fn = ms.value_and_grad(net, None, self.weights)

    def construct(self, *inputs):
        loss, grads = self.grad_fn(*inputs)
        for w, g in zip(self.weights, grads):
            w.assign_value(w - g * self.lr)
        return loss


def _bn_steps(backend, mode, steps=3):
    ms.set_context(backend=backend, mode=mode)
    step = SGDStep(BNNet())
    x = ms.Tensor(np.random.default_rng(4).normal(size=(6, 4)).astype(np.float32))
    losses = [float(step(x).asnumpy()) for _ in range(steps)]
    return step, losses


def test_batchnorm_update_inside_jitted_step():
    _, ref = _bn_steps("numpy", ms.PYNATIVE_MODE)
    before = graph.trace_count
    step, got = _bn_steps("jax", ms.GRAPH_MODE)
    assert graph.trace_count - before == 1
    assert leaked_tracers(step.get_parameters()) == []
    ref_net, _ = _bn_steps("numpy", ms.PYNATIVE_MODE)
    ms.set_context(backend="numpy")
    ref_mean = ref_net.net.mean.asnumpy()
    assert_close(got, ref, factor=4)
    assert_close(step.net.mean.asnumpy(), ref_mean, factor=4)
