"""The jax backend plugin: primitive and fused ops against the numpy reference, native
autodiff against finite differences, stateless calls without leaked tracers, GRAPH_MODE (one
jax.jit per signature, donated buffers, threaded random state), and whole training runs that
match the numpy backend step for step."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from _backend_compare import assert_close as _assert_close  # noqa: E402

import mscore as ms  # noqa: E402
from mscore import nn, ops  # noqa: E402
from mscore.common import dtype as mdt  # noqa: E402
from mscore.compile import graph  # noqa: E402
from mscore.plugin.registry import get_registry  # noqa: E402

PLUGIN_DIR = Path(__file__).resolve().parents[1]


def _ensure_plugin():
    """Use the installed entry point, or register the plugin from the checkout."""
    reg = get_registry()
    if "jax" not in reg.names():
        sys.path.insert(0, str(PLUGIN_DIR))
        from mscore_jax import plugin
        reg.register_plugin(plugin, "jax")
    return reg


REG = _ensure_plugin()
JB = REG.get("jax")
NB = REG.get("numpy")
from mscore_jax.backend import is_tracer  # noqa: E402

# (rtol, atol relative to the largest magnitude) per dtype, as the conformance kit uses.
TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-6), "float16": (3e-3, 1.5e-3),
       "bfloat16": (2e-2, 1e-2)}


def assert_close(actual, expected, dtype="float32", factor=1.0, what="", min_scale=0.0):
    """The shared comparison (:mod:`_backend_compare`) with jax's tolerances; ``min_scale``
    for quantities that are rounding noise around zero, like the gradient of a bias that
    BatchNorm cancels."""
    _assert_close(actual, expected, dtype, factor, tol=TOL, what=what, min_scale=min_scale)


def _both(op, inputs, dtype="float32", factor=1.0, **attrs):
    """Run backend op ``op`` on numpy and on jax from the same numpy inputs; compare."""
    def prep(backend, x):
        if isinstance(x, np.ndarray):
            return backend.from_numpy(x)
        if isinstance(x, list):
            return [prep(backend, v) for v in x]
        if isinstance(x, tuple):
            return tuple(prep(backend, v) for v in x)
        return x
    ref = getattr(NB, op)(*prep(NB, inputs), **attrs)
    out = getattr(JB, op)(*prep(JB, inputs), **attrs)
    assert_close(JB.to_numpy(out), NB.to_numpy(ref), dtype, factor, what=op)
    return JB.to_numpy(out)


RNG = np.random.default_rng(1234)


def _rand(*shape, dtype="float32", positive=False):
    x = RNG.normal(size=shape)
    if positive:
        x = np.abs(x) + 0.1
    return x.astype(mdt.get_dtype(dtype).np_dtype)


# -- registration -----------------------------------------------------------------------------
def test_spec_probe_and_capabilities():
    spec = REG.spec("jax")
    assert spec.version == jax.__version__
    assert {"native_autodiff", "compile", "donation"} <= spec.capabilities
    ok, reason, devices = spec.probe()
    assert ok, reason
    assert "CPU" in devices
    from mscore.plugin.backend import missing_primitives
    assert missing_primitives(JB) == []
    for name in ("softmax", "log_softmax", "layer_norm", "cross_entropy", "attention",
                 "value_and_grad", "compile"):
        assert callable(getattr(JB, name)), name


def test_import_mscore_does_not_import_jax():
    code = ("import sys, mscore\nfrom mscore.plugin.registry import get_registry\n"
            "r = get_registry(); r.names(); r.spec('jax')\nprint('jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(PLUGIN_DIR)}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_device_selection():
    ms.set_context(backend="jax", device_target="CPU")
    assert JB.device == "CPU"
    if not any(d.platform == "gpu" for d in jax.devices()):
        with pytest.raises(ValueError, match="device_target"):
            ms.set_context(device_target="GPU")
        assert ms.get_context("device_target") == "CPU"
    with pytest.raises(ValueError, match="device_id"):
        JB.set_device("CPU", 7)
    assert isinstance(JB.memory_stats(), dict)
    JB.synchronize()


# -- primitive ops against numpy ---------------------------------------------------------------
UNARY = ["neg", "abs", "exp", "tanh", "sin", "cos", "erf", "sign", "floor", "ceil", "isfinite"]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", UNARY + ["log", "sqrt"])
def test_unary(op, dtype):
    x = _rand(3, 5, dtype=dtype, positive=op in ("log", "sqrt"))
    _both(op, (x,), dtype)


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", BINARY + ["pow"])
def test_binary_broadcasting(op, dtype):
    a = _rand(2, 3, 4, dtype=dtype, positive=op == "pow")
    b = _rand(3, 1, dtype=dtype)
    _both(op, (a, b), dtype)


def test_integer_and_bool_ops():
    a = np.array([7, -7, 9, -9, 0], np.int32)
    b = np.array([2, 2, -4, 4, 3], np.int32)
    assert list(_both("div", (a, b))) == [3, -3, -2, -2, 0]  # truncation toward zero
    _both("div", (a.reshape(1, 5), b[:1].reshape(1, 1)))    # broadcasting
    _both("add", (a, b))
    _both("maximum", (a, b))
    p = np.array([True, False, True])
    q = np.array([True, True, False])
    _both("logical_and", (p, q))
    _both("logical_or", (p, q))
    _both("logical_not", (p,))
    _both("where", (p, np.arange(3, dtype=np.float32), np.zeros(3, np.float32)))


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), ((1,), True), ((0, 2), False)])
def test_reductions(op, axis, keepdims):
    _both(op, (_rand(3, 4, 5),), axis=axis, keepdims=keepdims)


def test_reductions_bool_and_arg():
    m = RNG.normal(size=(4, 5)) > 0
    for op in ("all", "any"):
        _both(op, (m,), axis=(1,), keepdims=False)
        _both(op, (m,), axis=None, keepdims=True)
    x = _rand(4, 5)
    x[1, 2] = x[1, 4] = x.max() + 1  # ties: the first index wins
    for op in ("argmax", "argmin"):
        _both(op, (x,), axis=1)
    assert JB.dtype(JB.argmax(JB.from_numpy(x), axis=0)) in (mdt.int64, mdt.int32)


def test_shape_ops_and_creation():
    x = _rand(2, 3, 4)
    _both("reshape", (x, (4, 6)))
    _both("transpose", (x, (2, 0, 1)))
    _both("broadcast_to", (_rand(3, 1), (2, 3, 5)))
    _both("concat", ([_rand(2, 3), _rand(4, 3)],), axis=0)
    _both("pad", (x, ((0, 0), (1, 2), (3, 0)), 1.5))
    _both("full", ((2, 3), 2.5, mdt.float32))
    _both("arange", (0.5, 3.0, 0.25, mdt.float32))
    _both("arange", (2, 11, 3, mdt.int32))
    _both("cast", (np.array([1.7, -1.7, 2.5], np.float32), mdt.int32))
    _both("cast", (x, mdt.bfloat16), "bfloat16")
    assert JB.shape(JB.from_numpy(x)) == (2, 3, 4)
    for d in (mdt.float16, mdt.bfloat16, mdt.float32, mdt.int8, mdt.int16, mdt.int32,
              mdt.uint8, mdt.bool_):
        arr = JB.full((2,), 1, d)
        assert JB.dtype(arr) is d
        assert JB.to_numpy(arr).dtype == d.np_dtype


def test_getitem_and_scatter_add():
    x = _rand(5, 4)
    idx = np.array([0, 3, 3, 1])
    _both("getitem", (x, (slice(1, 4), None, Ellipsis, 2)))
    _both("getitem", (x, (idx,)))
    _both("getitem", (x, (Ellipsis, idx[:2])))
    upd = _rand(4, 4)
    out = _both("scatter_add", (x, (idx,), upd))  # repeated index 3 accumulates
    assert np.allclose(out[3], x[3] + upd[1] + upd[2], rtol=1e-6)
    _both("scatter_add", (x, (slice(0, 2), 1), _rand(2)))
    with pytest.raises(IndexError):
        JB.getitem(JB.from_numpy(x), (7,))
    with pytest.raises(IndexError):
        JB.getitem(JB.from_numpy(x), (Ellipsis, -5))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_matmul(dtype):
    _both("matmul", (_rand(2, 3, 4, dtype=dtype), _rand(4, 5, dtype=dtype)), dtype,
          factor=4.0)


CONV_CASES = [
    # x shape, w shape, stride, padding, dilation, groups
    ((2, 3, 9), (4, 3, 3), (2,), ((1, 1),), (1,), 1),
    ((2, 4, 8, 7), (6, 2, 3, 2), (1, 2), ((1, 0), (0, 1)), (2, 1), 2),
    ((1, 2, 5, 6, 4), (2, 2, 2, 3, 1), (1, 1, 2), ((0, 1), (1, 1), (0, 0)), (1, 1, 1), 1),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv(case):
    xs, ws, stride, padding, dilation, groups = case
    _both("conv", (_rand(*xs), _rand(*ws)), factor=4.0, stride=stride, padding=padding,
          dilation=dilation, groups=groups)


@pytest.mark.parametrize("case", [
    ((2, 4, 5), (4, 3, 3), (2,), ((1, 1),), (1,), (1,), 1),
    ((1, 4, 4, 3), (4, 2, 3, 2), (2, 1), ((1, 0), (0, 1)), (1, 0), (1, 2), 2),
    ((1, 2, 3, 3, 2), (2, 1, 2, 2, 2), (2, 2, 1), ((0, 0), (1, 0), (0, 1)), (0, 1, 0),
     (1, 1, 1), 1),
])
def test_conv_transpose(case):
    xs, ws, stride, padding, out_pad, dilation, groups = case
    _both("conv_transpose", (_rand(*xs), _rand(*ws)), factor=4.0, stride=stride,
          padding=padding, output_padding=out_pad, dilation=dilation, groups=groups)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_pooling(nd):
    x = _rand(2, 3, *([6] * nd))
    kernel, stride, padding = (3,) * nd, (2,) * nd, ((1, 1),) * nd
    _both("max_pool", (x,), kernel=kernel, stride=stride, padding=padding)
    for cip in (True, False):
        _both("avg_pool", (x,), kernel=kernel, stride=stride, padding=padding,
              count_include_pad=cip)
    h = x.astype(np.float16)
    _both("avg_pool", (h,), "float16", kernel=kernel, stride=stride, padding=padding,
          count_include_pad=False)
    xi = (x * 10).astype(np.int32)
    _both("max_pool", (xi,), kernel=kernel, stride=stride, padding=padding)


def test_random_streams():
    s0 = JB.rng_state(42)
    u1, s1 = JB.random_uniform(s0, (1000,), mdt.float32)
    u2, s2 = JB.random_uniform(s1, (1000,), mdt.float32)
    u1b, _ = JB.random_uniform(JB.rng_state(42), (1000,), mdt.float32)
    u1, u2, u1b = (np.asarray(v) for v in (u1, u2, u1b))
    assert np.array_equal(u1, u1b)            # same state, same values
    assert not np.array_equal(u1, u2)         # the state advances
    assert u1.min() >= 0 and u1.max() < 1 and abs(u1.mean() - 0.5) < 0.05
    n, _ = JB.random_normal(s2, (4000,), mdt.float32)
    n = np.asarray(n)
    assert abs(n.mean()) < 0.08 and abs(n.std() - 1) < 0.08
    h, _ = JB.random_uniform(s0, (8,), mdt.bfloat16)
    assert JB.dtype(h) is mdt.bfloat16
    big = JB.rng_state(2 ** 63 - 5)  # 64-bit seeds fit the two key words
    assert JB.shape(big) == (2,)
    ms.set_context(backend="jax")
    ms.set_seed(7)
    a = ops.uniform((5,)).asnumpy()
    ms.set_seed(7)
    assert np.array_equal(a, ops.uniform((5,)).asnumpy())
    assert not np.array_equal(a, ops.uniform((5,)).asnumpy())


def test_all_finite():
    good = [JB.from_numpy(_rand(3, 3)), JB.from_numpy(np.arange(4, dtype=np.int32))]
    assert JB.all_finite(good) is True
    bad = good + [JB.from_numpy(np.array([1.0, np.inf], np.float16))]
    assert JB.all_finite(bad) is False
    assert JB.all_finite([JB.from_numpy(np.array([np.nan], np.float32))]) is False
    assert JB.all_finite([]) is True
    traced = jax.jit(lambda xs: JB.all_finite(xs))(bad)
    assert traced.shape == () and not bool(traced)


# -- fused ops against the core composite (on numpy) -------------------------------------------
def _functional_both(fn, *np_inputs, dtype="float32", factor=1.0):
    outs = []
    for name in ("numpy", "jax"):
        ms.set_context(backend=name)
        out = fn(*[ms.Tensor(x) for x in np_inputs])
        outs.append(out.asnumpy())
    assert_close(outs[1], outs[0], dtype, factor)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fused_softmax_layer_norm(dtype):
    x = _rand(3, 4, 6, dtype=dtype)
    _functional_both(lambda t: ops.softmax(t, 1), x, dtype=dtype)
    _functional_both(lambda t: ops.log_softmax(t, -1), x, dtype=dtype, factor=2)
    w, b = _rand(4, 6, dtype=dtype), _rand(4, 6, dtype=dtype)
    _functional_both(lambda t, w, b: ops.layer_norm(t, (4, 6), w, b, 1e-5), x, w, b,
                     dtype=dtype, factor=4)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_fused_cross_entropy(reduction, smoothing):
    logits = _rand(6, 5)
    target = np.array([0, 4, 2, -100, 1, 3], np.int32)
    _functional_both(lambda x, t: ops.cross_entropy(x, t, ignore_index=-100,
                                                    reduction=reduction,
                                                    label_smoothing=smoothing),
                     logits, target)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask_kind", [None, "bool", "float"])
def test_fused_attention(causal, mask_kind):
    q, k, v = _rand(2, 3, 4, 8), _rand(2, 3, 5, 8), _rand(2, 3, 5, 8)
    mask = None
    if mask_kind == "bool":
        mask = RNG.normal(size=(4, 5)) > -0.5
        mask[:, 0] = True
    elif mask_kind == "float":
        mask = _rand(4, 5)
    inputs = (q, k, v) + ((mask,) if mask is not None else ())
    _functional_both(lambda q, k, v, *m: ops.scaled_dot_product_attention(
        q, k, v, attn_mask=m[0] if m else None, is_causal=causal), *inputs, factor=2)


# -- native autodiff ---------------------------------------------------------------------------
def _leaked(params):
    return [p.name for p in params if is_tracer(p._data)]


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
    assert _leaked(params) == []


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
    assert _leaked([w]) == []


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
    assert _leaked(net.get_parameters()) == []
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
    assert _leaked(step.get_parameters()) == []
    ref_net, _ = _bn_steps("numpy", ms.PYNATIVE_MODE)
    ms.set_context(backend="numpy")
    ref_mean = ref_net.net.mean.asnumpy()
    assert_close(got, ref, factor=4)
    assert_close(step.net.mean.asnumpy(), ref_mean, factor=4)


# -- GRAPH_MODE --------------------------------------------------------------------------------
class Affine(nn.Cell):
    """y = x @ w (+ dropout when p > 0); one trainable weight, one step counter buffer."""

    def __init__(self, p=0.0):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.eye(3, dtype=np.float32)), name="w")
        self.calls = ms.Parameter(ms.Tensor(np.zeros((), np.float32)), name="calls",
                                  requires_grad=False)
        self.p = p

    def construct(self, x, scale=1.0):
        self.calls.assign_value(self.calls + 1.0)
        y = ops.matmul(x, self.w) * scale
        return ops.dropout(y, self.p) if self.p else y


def _x(n=2):
    return ms.Tensor(np.arange(3 * n, dtype=np.float32).reshape(n, 3))


def test_graph_traces_once_per_signature():
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    net = Affine()
    start = graph.trace_count
    for _ in range(4):
        out = net(_x())
    assert graph.trace_count - start == 1
    assert float(net.calls.asnumpy()) == 4.0           # the buffer update came back each time
    np.testing.assert_allclose(out.asnumpy(), _x().asnumpy())
    net(_x(5))                                          # a new batch shape: one more trace
    net(_x(5))
    net(_x())                                           # the first shape is still compiled
    assert graph.trace_count - start == 2
    net(_x(), 2.0)                                      # a Python scalar is part of the key
    net(_x(), 2.0)
    assert graph.trace_count - start == 3
    net.set_train(True)                                 # the training flag too
    net(_x())
    assert graph.trace_count - start == 4
    assert graph.cache_size(net) == 4
    graph.clear_cache(net)
    assert graph.cache_size(net) == 0
    net(_x())
    assert graph.trace_count - start == 5
    assert _leaked(net.get_parameters()) == []


def _donate_every_size(monkeypatch):
    from mscore_jax import compile as jax_compile
    monkeypatch.setattr(jax_compile, "DONATE_MIN_SIZE", 0)


def test_graph_donates_state_but_protects_shared_arrays(monkeypatch):
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    _donate_every_size(monkeypatch)   # the mechanics, on small arrays
    net = Affine()
    net(_x())
    net(_x())
    # Steady state: only the Parameter holds its array, so it is donated and XLA writes the
    # updated value into the same buffer.
    ptr = net.calls._data.unsafe_buffer_pointer()
    w_ptr = net.w._data.unsafe_buffer_pointer()
    net(_x())
    assert net.calls._data.unsafe_buffer_pointer() == ptr
    # A Parameter the step only reads (w) comes back as its own input buffer: the state
    # outputs are ordered like the inputs, so donation pairs each with itself.
    assert net.w._data.unsafe_buffer_pointer() == w_ptr
    # A Tensor sharing the buffer (param.value()) keeps it: the step copies, never donates.
    held = net.calls.value()
    before = held.asnumpy().copy()
    ptr = held._data.unsafe_buffer_pointer()
    net(_x())
    assert not held._data.is_deleted()
    np.testing.assert_array_equal(held.asnumpy(), before)
    assert net.calls._data.unsafe_buffer_pointer() != ptr
    assert float(net.calls.asnumpy()) == before + 1
    # Two Parameters sharing one array must not be donated twice.
    shared = ms.Tensor(np.ones((3, 3), np.float32))

    class Two(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = ms.Parameter(shared, name="a")
            self.b = ms.Parameter(shared, name="b")

        def construct(self, x):
            self.a.assign_value(self.a + 1.0)
            return ops.matmul(x, self.a) + ops.matmul(x, self.b)

    two = Two()
    assert two.a._data is two.b._data
    out = two(_x())
    np.testing.assert_allclose(out.asnumpy(), _x().asnumpy() @ np.full((3, 3), 3.0))
    np.testing.assert_array_equal(two.b.asnumpy(), np.ones((3, 3)))
    np.testing.assert_array_equal(shared.asnumpy(), np.ones((3, 3)))


def test_donation_can_be_switched_off(monkeypatch):
    backend = get_registry().get("jax")
    seen = {}
    real_jit = jax.jit

    def spy(fn, donate_argnums=()):
        seen["donate"] = donate_argnums
        return real_jit(fn, donate_argnums=donate_argnums)

    monkeypatch.setattr(jax, "jit", spy)
    monkeypatch.delenv("MSCORE_JAX_DONATE", raising=False)
    backend.compile(lambda a: a, donate_argnums=(0,))
    assert seen["donate"] == (0,)
    monkeypatch.setenv("MSCORE_JAX_DONATE", "never")
    backend.compile(lambda a: a, donate_argnums=(0,))
    assert seen["donate"] == ()
    monkeypatch.setenv("MSCORE_JAX_DONATE", "sometimes")
    with pytest.raises(ValueError, match="MSCORE_JAX_DONATE"):
        backend.compile(lambda a: a, donate_argnums=(0,))


def test_graph_threads_the_random_stream():
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    ms.set_seed(11)
    net = Affine(p=0.5)
    x = ms.Tensor(np.ones((4, 3), np.float32))
    start = graph.trace_count
    graph_masks = [net(x).asnumpy() != 0 for _ in range(3)]
    assert graph.trace_count - start == 1
    assert not np.array_equal(graph_masks[0], graph_masks[1])   # a new mask every step
    ms.set_seed(11)                                             # restart the stream
    again = net(x).asnumpy() != 0
    assert np.array_equal(again, graph_masks[0])
    # PYNATIVE on jax draws from the same stream in the same order.
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(11)
    eager = [net(x).asnumpy() != 0 for _ in range(3)]
    for a, b in zip(eager, graph_masks):
        assert np.array_equal(a, b)


def test_graph_errors_are_clear():
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    net = Affine()
    # keyword arguments are part of the program (MindSpore's GRAPH_MODE takes them too)
    np.testing.assert_allclose(net(_x(), scale=2.0).asnumpy(), _x().asnumpy() * 2.0)
    with pytest.raises(TypeError, match="argument 1"):
        net(_x(), {"scale": 2.0})

    class Branchy(nn.Cell):
        def construct(self, x):
            if ops.sum(x) > 0:           # Python control flow on a traced value
                return x
            return -x

    with pytest.raises(Exception) as info:
        Branchy()(_x())
    assert "GRAPH_MODE" in "\n".join(getattr(info.value, "__notes__", []))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert Branchy()(_x()).shape == (2, 3)                  # fine eagerly
    ms.set_context(mode=ms.GRAPH_MODE)
    eager_cell = Branchy()
    eager_cell.jit_disabled = True
    assert eager_cell(_x()).shape == (2, 3)                 # opted out of compilation
    outsider = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="outsider")

    class Sneaky(nn.Cell):
        def construct(self, x):
            outsider.assign_value(ops.sum(x, 0))
            return x

    with pytest.raises(RuntimeError, match="outsider"):
        Sneaky()(_x())
    assert not is_tracer(outsider._data)


def test_graph_cell_inside_value_and_grad():
    """A GRAPH_MODE cell called under ms.value_and_grad (jax tracers as inputs): gradients
    flow through the compiled program and the buffer update comes back concrete."""
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    net = Affine()
    x = _x()
    loss_fn = lambda x: ops.sum(net(x) ** 2)  # noqa: E731
    value, grads = ms.value_and_grad(loss_fn, None, [net.w])(x)
    xn = x.asnumpy()
    np.testing.assert_allclose(value.asnumpy(), np.sum(xn ** 2), rtol=1e-6)
    np.testing.assert_allclose(grads[0].asnumpy(), 2 * xn.T @ xn, rtol=1e-6)
    assert float(net.calls.asnumpy()) == 1.0
    assert _leaked(net.get_parameters()) == []


# -- whole training runs: jax (PYNATIVE and GRAPH) against the numpy backend -------------------
def _mlp():
    return nn.SequentialCell(nn.Dense(12, 16), nn.ReLU(), nn.Dense(16, 16), nn.Tanh(),
                             nn.Dense(16, 5))


class SmallCNN(nn.Cell):
    """conv -> BatchNorm -> relu -> maxpool -> conv -> relu -> avgpool -> dense."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, pad_mode="same", has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 6, 3, pad_mode="valid")
        self.avg = nn.AvgPool2d(2, 1)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(6, 5)

    def construct(self, x):
        x = self.pool(self.relu(self.bn(self.conv1(x))))
        x = self.avg(self.relu(self.conv2(x)))
        return self.fc(self.flatten(x))


def _batches(kind, steps):
    """``steps`` batches cycling over 4 fixed ones, labelled by a fixed linear rule (a
    learnable task, so the loss must go down)."""
    rng = np.random.default_rng(21)
    shape = (8, 12) if kind == "mlp" else (8, 2, 8, 8)
    proj = rng.normal(size=(int(np.prod(shape[1:])), 5))
    fixed = []
    for _ in range(4):
        x = rng.normal(size=shape).astype(np.float32)
        fixed.append((x, np.argmax(x.reshape(8, -1) @ proj, axis=1).astype(np.int32)))
    return [fixed[i % 4] for i in range(steps)]


_REFERENCE = {}


def _train(backend, mode, kind, steps=20):
    ms.set_context(backend=backend, mode=mode)
    ms.set_seed(3)                       # the same initial weights on every backend
    net = _mlp() if kind == "mlp" else SmallCNN()
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
    step.set_train()
    losses = [float(step(ms.Tensor(x), ms.Tensor(y)).asnumpy())
              for x, y in _batches(kind, steps)]
    weights = {p.name: p.asnumpy() for p in step.get_parameters()
               if p.name != "global_rng_state"}
    return np.array(losses), weights, step


@pytest.mark.parametrize("mode", ["PYNATIVE", "GRAPH"])
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_matches_numpy(kind, mode):
    if kind not in _REFERENCE:
        _REFERENCE[kind] = _train("numpy", ms.PYNATIVE_MODE, kind)[:2]
    ref_losses, ref_weights = _REFERENCE[kind]
    start = graph.trace_count
    losses, weights, step = _train("jax", getattr(ms, f"{mode}_MODE"), kind)
    assert graph.trace_count - start == (1 if mode == "GRAPH" else 0)
    assert ref_losses[-1] < ref_losses[0]            # it does learn
    assert_close(losses, ref_losses, factor=5, what="losses")
    for name, w in ref_weights.items():             # BatchNorm statistics included
        assert_close(weights[name], w, factor=5, what=name, min_scale=1.0)
    assert _leaked(step.get_parameters()) == []


def _loss_scaled(backend, mode, steps=8):
    ms.set_context(backend=backend, mode=mode)
    ms.set_seed(3)
    net = _mlp()
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    # A scale so large that the first steps overflow: they must be skipped, the scale must
    # halve each time, then grow again after scale_window good steps.
    update = nn.DynamicLossScaleUpdateCell(2.0 ** 126, 2.0, 2)
    step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                                            opt, update)
    step.set_train()
    trace = []
    for x, y in _batches("mlp", steps):
        loss, overflow, scale = step(ms.Tensor(x), ms.Tensor(y))
        trace.append((float(loss.asnumpy()), bool(overflow.asnumpy()),
                      float(scale.asnumpy())))
    weights = {p.name: p.asnumpy() for p in net.get_parameters()}
    return trace, weights, step


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy overflows on purpose
def test_loss_scaled_graph_step_matches_numpy():
    ref, ref_w, _ = _loss_scaled("numpy", ms.PYNATIVE_MODE)
    start = graph.trace_count
    got, got_w, step = _loss_scaled("jax", ms.GRAPH_MODE)
    assert graph.trace_count - start == 1
    overflows = [o for _, o, _ in ref]
    assert any(overflows) and not all(overflows)
    assert [o for _, o, _ in got] == overflows
    assert [s for _, _, s in got] == [s for _, _, s in ref]
    assert_close([v for v, _, _ in got], [v for v, _, _ in ref], factor=5)
    for name, w in ref_w.items():
        assert_close(got_w[name], w, factor=5, what=name, min_scale=1.0)
    assert _leaked(step.get_parameters()) == []


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's fp16 overflows (expected)
def test_amp_o2_graph_step_matches_numpy():
    from mscore import amp

    def run(backend, mode):
        ms.set_context(backend=backend, mode=mode)
        ms.set_seed(3)
        net = SmallCNN()
        opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
        step = amp.build_train_network(net, opt, nn.CrossEntropyLoss(), level="O2")
        step.set_train()
        out = []
        for x, y in _batches("cnn", 4):
            loss, overflow, scale = step(ms.Tensor(x), ms.Tensor(y))
            out.append((float(loss.asnumpy()), bool(overflow.asnumpy()),
                        float(scale.asnumpy())))
        return out, net

    ref, _ = run("numpy", ms.PYNATIVE_MODE)
    got, net = run("jax", ms.GRAPH_MODE)
    assert [o for _, o, _ in got] == [o for _, o, _ in ref]
    assert [s for _, _, s in got] == [s for _, _, s in ref]
    assert_close([v for v, _, _ in got], [v for v, _, _ in ref], "float16", factor=4)
    assert net.conv1.weight.dtype is ms.float32       # master weights stay fp32
    assert _leaked(net.get_parameters()) == []


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fused_batch_norm_and_addcmul(training, dtype):
    x = _rand(4, 3, 5, 2, dtype=dtype)
    rm, rv = _rand(3), _rand(3, positive=True)
    w, b = _rand(3, dtype=dtype), _rand(3, dtype=dtype)
    results = []
    for name in ("numpy", "jax"):
        ms.set_context(backend=name)
        mean = ms.Parameter(ms.Tensor(rm), name="m", requires_grad=False)
        var = ms.Parameter(ms.Tensor(rv), name="v", requires_grad=False)
        out = ops.batch_norm(ms.Tensor(x), mean, var, ms.Tensor(w), ms.Tensor(b),
                             training=training, momentum=0.2, eps=1e-3)
        results.append((out.asnumpy(), mean.asnumpy(), var.asnumpy()))
    (o_ref, m_ref, v_ref), (o, m, v) = results
    assert o.dtype == o_ref.dtype
    assert_close(o, o_ref, dtype, factor=4)
    assert_close(m, m_ref, dtype, factor=4)  # statistics of half data: half tolerance
    assert_close(v, v_ref, dtype, factor=4)
    assert training or np.array_equal(m, rm)
    _functional_both(lambda a, b, c: ops.addcmul(a, b, c, value=-0.5),
                     _rand(3, 1, 4, dtype=dtype), _rand(2, 4, dtype=dtype),
                     _rand(4, dtype=dtype), dtype=dtype, factor=2)


def test_graph_read_only_state_is_aliased_not_copied(monkeypatch):
    """A scalar state the step only reads (a learning rate) keeps its buffer even when the
    step also returns a scalar (the loss): state outputs pair with their own inputs."""
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    _donate_every_size(monkeypatch)

    class Step(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lr = ms.Parameter(ms.Tensor(np.float32(0.5)), name="lr", requires_grad=False)
            self.w = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="w")

        def construct(self, x):
            loss = ops.sum(x * self.w)
            self.w.assign_value(self.w - self.lr * x)
            return loss

    step = Step()
    x = ms.Tensor(np.ones(3, np.float32))
    step(x)
    lr_ptr = step.lr._data.unsafe_buffer_pointer()
    loss = step(x)
    assert step.lr._data.unsafe_buffer_pointer() == lr_ptr
    assert float(loss.asnumpy()) == 1.5 and float(step.lr.asnumpy()) == 0.5


def test_graph_donates_large_state_only():
    """By default only state arrays of at least DONATE_MIN_SIZE elements are donated: a
    scalar counter's old buffer stays readable, a 64-element weight's is reused."""
    from mscore_jax.backend import DONATE_MIN_SIZE
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    side = int(np.sqrt(DONATE_MIN_SIZE))

    class Step(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.ones((side, side), np.float32)), name="w")
            self.calls = ms.Parameter(ms.Tensor(np.float32(0)), name="calls",
                                      requires_grad=False)

        def construct(self, x):
            self.calls.assign_value(self.calls + 1.0)
            self.w.assign_value(self.w * 0.5)
            return ops.sum(ops.matmul(x, self.w))

    step = Step()
    x = ms.Tensor(np.ones((2, side), np.float32))
    step(x)
    w_ptr = step.w._data.unsafe_buffer_pointer()
    calls_before = step.calls._data
    step(x)
    assert step.w._data.unsafe_buffer_pointer() == w_ptr           # donated, written in place
    assert not calls_before.is_deleted() and float(calls_before) == 1.0   # kept
    assert float(step.calls.asnumpy()) == 2.0
    np.testing.assert_array_equal(step.w.asnumpy(), np.full((side, side), 0.25, np.float32))


def test_x64_is_enabled_only_when_a_64_bit_type_is_requested():
    """In a fresh process: 32-bit work leaves JAX's process-wide x64 flag off; the first
    int64 (or float64) array switches it on, so a declared 64-bit dtype is always real."""
    code = "\n".join([
        "import numpy as np, jax, mscore as ms",
        "ms.set_context(backend='jax')",
        "a = ms.Tensor(np.array([1, 2], np.int32)) + 1",
        "print(a.dtype, a.asnumpy().dtype, jax.config.jax_enable_x64)",
        "b = ms.Tensor(np.array([1, 2], np.int64))",
        "f = ms.Tensor(np.array([1.5], np.float64))",
        "print(b.dtype, b.asnumpy().dtype, f.dtype, jax.config.jax_enable_x64)",
    ])
    env = {**os.environ, "PYTHONPATH": str(PLUGIN_DIR)}
    env.pop("MSCORE_JAX_ENABLE_X64", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.strip().splitlines()
    assert first == "int32 int32 False"
    assert second == "int64 int64 float64 True"
