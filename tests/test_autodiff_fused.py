"""The fused VJP rules of the reference autodiff (mscore/autodiff/fused.py).

Every case differentiates ``sum(f(inputs) * c)`` (``c`` a fixed random cotangent) on the
numpy backend in float64 with ``ms.value_and_grad`` and checks the gradient of every floating
input three ways: the fused rule was used (a spy on the op), it equals central finite
differences of the untraced forward, and it equals the composite's gradient (the same
function differentiated primitive by primitive under ``composite_gradients()``).
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
from _helpers import available_backends, load_script, numpy_context_each_test, use_backend

import mscore as ms
from mscore import nn, ops
from mscore.autodiff import fused
from mscore.common.parameter import Parameter

R = np.random.default_rng(20261122)


def n(*shape, scale=1.0):
    return R.standard_normal(shape) * scale


def away(*shape):
    return R.uniform(0.3, 2.0, size=shape) * R.choice([-1.0, 1.0], size=shape)


def labels(shape, c, ignore=None):
    t = R.integers(0, c, size=shape).astype(np.int64)
    if ignore is not None:
        t.reshape(-1)[1] = ignore
    return t


def probs(*shape):
    p = R.uniform(0.1, 1.0, size=shape)
    return p / p.sum(axis=1, keepdims=True)


def _bn_train(affine):
    def fn(x, *wb):
        c = x.shape[1]
        rm = Parameter(ops.zeros((c,), x.dtype), name="rm", requires_grad=False)
        rv = Parameter(ops.ones((c,), x.dtype), name="rv", requires_grad=False)
        w, b = wb if affine else (None, None)
        return ops.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)
    return fn


class Case:
    """``fn(*Tensors)`` on ``inputs``; ``op`` is the fused op that must record the node;
    ``diff``: the differentiated positions (default: every float64 input)."""

    def __init__(self, op, label, inputs, fn, diff=None):
        self.op, self.label, self.inputs, self.fn = op, label, inputs, fn
        self.diff = diff

    @property
    def id(self):
        return f"{self.op}-{self.label}"


def _conv_layer(x):
    ms.set_seed(3)
    layer = nn.Conv2d(2, 3, 3, stride=2, pad_mode="pad", padding=1, has_bias=True,
                      dtype=ms.float64)
    rng = np.random.default_rng(3)
    layer.weight.set_data(ms.Tensor(rng.standard_normal((3, 2, 3, 3))))
    layer.bias.set_data(ms.Tensor(rng.standard_normal((3,))))
    return layer(x)


CASES = [
    Case("relu", "ops", [away(3, 4)], ops.relu),
    Case("relu", "cell", [away(2, 5)], lambda x: nn.ReLU()(x)),
    Case("gelu", "erf", [n(3, 4, scale=2.0)], lambda x: ops.gelu(x, "none")),
    Case("gelu", "tanh_cell", [n(3, 4, scale=2.0)], lambda x: nn.GELU()(x)),
    Case("dense", "3d_bias", [n(2, 3, 4), n(5, 4), n(5)], ops.dense),
    Case("dense", "1d_no_bias", [n(4), n(3, 4)], ops.dense),
    Case("softmax", "axis1", [n(2, 5, 3, scale=2.0)], lambda x: ops.softmax(x, 1)),
    Case("log_softmax", "axis0", [n(4, 3, scale=2.0)], lambda x: ops.log_softmax(x, 0)),
    Case("cross_entropy", "mean_ignore_index", [n(6, 5, scale=2.0), labels((6,), 5, -100)],
         lambda x, t: ops.cross_entropy(x, t)),
    Case("cross_entropy", "sum_smoothing", [n(6, 5, scale=2.0), labels((6,), 5, 3)],
         lambda x, t: ops.cross_entropy(x, t, ignore_index=3, reduction="sum",
                                        label_smoothing=0.2)),
    Case("cross_entropy", "none", [n(6, 5, scale=2.0), labels((6,), 5)],
         lambda x, t: ops.cross_entropy(x, t, reduction="none")),
    Case("softmax_cross_entropy", "weight_smoothing_mean",
         [n(6, 5, scale=2.0), labels((6,), 5, -1), R.uniform(0.5, 2.0, 5)],
         lambda x, t, w: ops.cross_entropy(x, t, w, ignore_index=-1, label_smoothing=0.1)),
    Case("softmax_cross_entropy", "nd_weight_none",
         [n(3, 4, 2, 2, scale=2.0), labels((3, 2, 2), 4, -100), R.uniform(0.5, 2.0, 4)],
         lambda x, t, w: ops.cross_entropy(x, t, w, reduction="none", label_smoothing=0.3)),
    Case("softmax_cross_entropy", "nd_sum_ignore",
         [n(2, 3, 4, scale=2.0), labels((2, 4), 3, -100)],
         lambda x, t: ops.cross_entropy(x, t, reduction="sum")),
    Case("softmax_cross_entropy", "probabilities_mean_smoothing", [n(6, 5, scale=2.0),
                                                                   probs(6, 5)],
         lambda x, t: ops.cross_entropy(x, t, label_smoothing=0.2)),
    Case("softmax_cross_entropy", "probabilities_nd_weight",
         [n(2, 3, 4, scale=2.0), probs(2, 3, 4), R.uniform(0.5, 2.0, 3)],
         lambda x, t, w: ops.cross_entropy(x, t, w, reduction="none")),
    Case("cross_entropy", "loss_cell_sparse", [n(6, 5, scale=2.0), labels((6,), 5)],
         lambda x, t: nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")(x, t)),
    Case("softmax_cross_entropy", "loss_cell_dense", [n(6, 5, scale=2.0), probs(6, 5)],
         lambda x, t: nn.SoftmaxCrossEntropyWithLogits(reduction="sum")(x, t)),
    Case("layer_norm", "affine", [n(3, 4, 6), n(6), n(6)],
         lambda x, w, b: ops.layer_norm(x, (6,), w, b, 1e-5)),
    Case("layer_norm", "2d_shape_plain", [n(3, 4, 6)],
         lambda x: ops.layer_norm(x, (4, 6), None, None, 1e-5)),
    Case("batch_norm", "train_affine", [n(4, 3, 2, 2), n(3), n(3)], _bn_train(True)),
    Case("batch_norm", "train_plain", [n(5, 3)], _bn_train(False)),
    Case("batch_norm", "eval",
         [n(4, 3, 2, 2), n(3), n(3), n(3), R.uniform(0.5, 2.0, 3)],
         lambda x, w, b, m, v: ops.batch_norm(x, m, v, w, b, training=False, eps=1e-5),
         diff=(0, 1, 2)),
    Case("conv_bias", "ops_stride_groups", [n(2, 4, 5, 5), n(6, 2, 3, 3), n(6)],
         lambda x, w, b: ops.conv2d(x, w, b, stride=(2, 1), pad_mode="pad", padding=1,
                                    groups=2)),
    Case("conv_bias", "cell", [n(2, 2, 5, 4)], _conv_layer),
    Case("attention", "plain", [n(2, 3, 4), n(2, 5, 4), n(2, 5, 3)],
         ops.scaled_dot_product_attention),
    Case("attention", "causal_scale", [n(2, 2, 4, 3), n(2, 2, 4, 3), n(2, 2, 4, 2)],
         lambda q, k, v: ops.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7)),
    Case("attention", "bool_mask_broadcast_kv", [n(2, 2, 3, 4), n(1, 2, 5, 4), n(2, 1, 5, 3),
                                                 R.random((3, 5)) > 0.3],
         lambda q, k, v, m: ops.scaled_dot_product_attention(q, k, v, attn_mask=m)),
    Case("attention", "float_mask", [n(2, 3, 4), n(2, 5, 4), n(2, 5, 3), n(1, 3, 5)],
         lambda q, k, v, m: ops.scaled_dot_product_attention(q, k, v, attn_mask=m)),
]
CASES[-2].inputs[3][:, 0] = True   # every query keeps a key


_numpy_context = numpy_context_each_test()


def _float_positions(inputs):
    return tuple(i for i, x in enumerate(inputs) if x.dtype == np.float64)


def _objective(case):
    def f(*xs):
        out = case.fn(*xs)
        rng = np.random.default_rng(11)
        cot = rng.uniform(0.5, 1.5, size=out.shape) * rng.choice([-1.0, 1.0], size=out.shape)
        return ops.sum(out * ms.Tensor(cot))
    return f


def _grads(case, positions):
    args = [ms.Tensor(x) for x in case.inputs]
    value, grads = ms.value_and_grad(_objective(case), grad_position=positions)(*args)
    return float(value.asnumpy()), [g.asnumpy() for g in grads]


def _finite_difference(case, positions, k, idx, h=1e-6):
    f = _objective(case)
    out = []
    for sign in (1.0, -1.0):
        xs = [x.copy() for x in case.inputs]
        xs[positions[k]][idx] += sign * h
        out.append(float(f(*[ms.Tensor(x) for x in xs]).asnumpy()))
    return (out[0] - out[1]) / (2 * h)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fused_rule(case, monkeypatch):
    """The fused rule records the op, and its gradient equals finite differences and the
    composite's gradient."""
    positions = case.diff or _float_positions(case.inputs)
    calls = []
    original = fused.OPS[case.op]

    def spy(*args, **kwargs):
        calls.append(case.op)
        return original(*args, **kwargs)
    monkeypatch.setitem(fused.OPS, case.op, spy)
    value, grads = _grads(case, positions)
    assert calls, f"the fused op {case.op!r} was not used"
    with fused.composite_gradients():
        calls.clear()
        c_value, c_grads = _grads(case, positions)
        assert not calls, "composite_gradients() did not turn the fused op off"
    assert np.isclose(value, c_value, rtol=1e-12, atol=1e-12)
    rng = np.random.default_rng(5)
    for k, (g, cg) in enumerate(zip(grads, c_grads)):
        assert g.shape == case.inputs[positions[k]].shape
        np.testing.assert_allclose(g, cg, rtol=1e-9, atol=1e-11,
                                   err_msg=f"grad {k}: fused vs composite")
        flat = list(np.ndindex(g.shape))
        for j in rng.choice(len(flat), size=min(6, len(flat)), replace=False):
            idx = flat[j]
            fd = _finite_difference(case, positions, k, idx)
            assert abs(g[idx] - fd) <= 1e-6 * max(1.0, abs(fd)), (
                f"grad {k} at {idx}: {g[idx]} vs finite difference {fd}")


def test_every_fused_op_is_checked():
    """A new fused op needs a case here."""
    assert set(fused.OPS) == {c.op for c in CASES}


@pytest.mark.parametrize("backend", available_backends())
def test_batch_norm_eval_gradients_match_mindspore(backend):
    """In inference the running statistics get zero gradients, the other inputs MindSpore's
    (tests/data/batch_norm_eval_grad.json, recorded by make_batch_norm_eval_grad.py)."""
    import json
    from pathlib import Path
    use_backend(backend)
    record = json.loads((Path(__file__).parent / "data" / "batch_norm_eval_grad.json")
                        .read_text())
    names = ("x", "running_mean", "running_var", "weight", "bias")
    args = [ms.Tensor(np.asarray(record["inputs"][k], np.float32)) for k in names]
    cot = ms.Tensor(np.asarray(record["cotangent"], np.float32))

    def loss(x, m, v, w, b):
        return ops.sum(ops.batch_norm(x, m, v, w, b, training=False, eps=1e-5) * cot)
    for ctx in (contextlib.nullcontext, fused.composite_gradients):
        with ctx():
            grads = ms.grad(loss, (0, 1, 2, 3, 4))(*args)
        for k, g in zip(names, grads):
            want = np.asarray(record["grads"][k], np.float32)
            np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-4,
                                       atol=1e-5 * max(1.0, float(np.abs(want).max())),
                                       err_msg=f"{backend}: grad of {k}")


def test_batch_norm_statistics_match_composite():
    """The fused training batch norm updates the running statistics like the composite."""
    x = ms.Tensor(n(6, 3, 2))
    results = []
    for ctx in (fused.composite_gradients, None):
        ms.set_seed(0)
        layer = nn.BatchNorm1d(3, dtype=ms.float64)
        layer.set_train()
        net = nn.SequentialCell([layer])
        grad_fn = ms.value_and_grad(lambda v, net=net: ops.sum(net(v) * 1.5), 0,
                                    net.trainable_params())
        if ctx is None:
            grad_fn(x)
        else:
            with ctx():
                grad_fn(x)
        results.append([layer.moving_mean.asnumpy(), layer.moving_variance.asnumpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    xm = x.asnumpy()
    n_ = xm.shape[0] * xm.shape[2]
    np.testing.assert_allclose(results[1][0], 0.1 * xm.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(results[1][1], 0.9 + 0.1 * xm.var(axis=(0, 2)) * n_ / (n_ - 1),
                               rtol=1e-12)


@pytest.mark.parametrize("dtype", [ms.float16, ms.bfloat16])
def test_half_precision_normalisation_in_float32(dtype):
    """Half-precision layer/batch norm inputs are normalised in float32: the fused gradient
    matches the float64 one to the half dtype's precision."""
    x64 = n(4, 3, 5)
    w64, b64 = n(5), n(5)
    cot = R.uniform(0.5, 1.5, size=(4, 3, 5))

    def loss(x, w, b):
        return ops.sum(ops.cast(ops.layer_norm(x, (5,), w, b, 1e-5), ms.float64) *
                       ms.Tensor(cot))
    want = ms.grad(loss, (0, 1, 2))(*[ms.Tensor(v) for v in (x64, w64, b64)])
    half = [ms.Tensor(v, dtype=dtype) for v in (x64, w64, b64)]
    got = ms.grad(loss, (0, 1, 2))(*half)
    for g, w in zip(got, want):
        assert g.dtype is dtype
        np.testing.assert_allclose(g.asnumpy().astype(np.float64), w.asnumpy(), rtol=0.05,
                                   atol=0.05 * float(np.abs(w.asnumpy()).max()))


def test_first_layer_input_gradient_is_not_computed():
    """Only traced inputs get gradients: no conv_transpose / input matmul for the data."""
    counting = load_script("bench", "count_calls").counting
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Conv2d(2, 4, 3, has_bias=True, dtype=ms.float64), nn.ReLU(),
                             nn.Flatten(), nn.Dense(4 * 6 * 6, 3, dtype=ms.float64)])
    x = ms.Tensor(n(2, 2, 6, 6))
    grad_fn = ms.value_and_grad(lambda v: ops.sum(net(v)), None, net.trainable_params())
    with counting() as counter:
        grad_fn(x)
    assert counter.counts["conv_transpose"] == 0
    assert counter.counts["matmul"] == 3          # dense forward, weight and input grads
    with counting() as counter:
        ms.value_and_grad(lambda v: ops.sum(net(v)), 0)(x)
    assert counter.counts["conv_transpose"] == 1  # asked for: computed
    dense = nn.Dense(5, 3, dtype=ms.float64)
    with counting() as counter:
        ms.value_and_grad(lambda v: ops.sum(dense(v)), None, dense.trainable_params())(
            ms.Tensor(n(4, 5)))
    assert counter.counts["matmul"] == 2          # forward and weight grad only
