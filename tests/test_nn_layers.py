"""nn layers and losses: outputs against numpy references, gradients against central finite
differences in float64, train/eval behaviour, amp casting and argument validation."""
import itertools
import math

import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test

import mscore as ms
from mscore import nn

F64 = ms.float64


_numpy_context = numpy_context_each_test(seed=0)


def T(a):
    return ms.Tensor(np.asarray(a))


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# -- gradient checking ----------------------------------------------------------------------------
def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check_grads(cell, *inputs, eps=1e-6, rtol=1e-6, atol=1e-8, diff_inputs=True):
    """``ms.value_and_grad`` of ``sum(cell(*inputs) * R)`` (R fixed random) with respect to the
    float inputs and the trainable parameters, against central finite differences."""
    params = cell.trainable_params()
    for p in params:
        assert p.dtype is F64, f"{p.name} must be float64 for the gradient check"
    float_pos = tuple(i for i, a in enumerate(inputs)
                      if diff_inputs and isinstance(a, np.ndarray) and a.dtype == np.float64)
    first = _outputs(cell(*[T(a) if isinstance(a, np.ndarray) else a for a in inputs]))
    weights = [rand(*o.shape, seed=100 + k) for k, o in enumerate(first)]

    def loss_np(*xs):
        outs = _outputs(cell(*[T(a) if isinstance(a, np.ndarray) else a for a in xs]))
        return sum(float((o.asnumpy() * w).sum()) for o, w in zip(outs, weights))

    def loss_ms(*xs):
        outs = _outputs(cell(*xs))
        total = None
        for o, w in zip(outs, weights):
            term = (o * T(w)).sum()
            total = term if total is None else total + term
        return total

    grad_fn = ms.value_and_grad(loss_ms, float_pos if float_pos else None, params or None)
    value, grads = grad_fn(*[T(a) if isinstance(a, np.ndarray) else a for a in inputs])
    np.testing.assert_allclose(float(value.asnumpy()), loss_np(*inputs), rtol=1e-10, atol=1e-12)
    if float_pos and params:
        in_grads, w_grads = grads
    elif float_pos:
        in_grads, w_grads = grads, ()
    else:
        in_grads, w_grads = (), grads
    # inputs
    for k, pos in enumerate(float_pos):
        x = inputs[pos]
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            args = list(inputs)
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            args[pos] = xp
            hi = loss_np(*args)
            args[pos] = xm
            num[idx] = (hi - loss_np(*args)) / (2 * eps)
        np.testing.assert_allclose(in_grads[k].asnumpy(), num, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {pos}")
    # parameters
    for p, g in zip(params, w_grads):
        base = p.asnumpy().copy()
        num = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            v = base.copy()
            v[idx] += eps
            p.set_data(T(v))
            hi = loss_np(*inputs)
            v[idx] -= 2 * eps
            p.set_data(T(v))
            num[idx] = (hi - loss_np(*inputs)) / (2 * eps)
        p.set_data(T(base))
        np.testing.assert_allclose(g.asnumpy(), num, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of {p.name}")


# -- numpy references -----------------------------------------------------------------------------
def conv_ref(x, w, stride, pads, dilation, groups):
    """Direct N-d cross-correlation; pads: (before, after) per spatial axis."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(pads))
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    k = w.shape[2:]
    out_sp = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
              for i in range(nd)]
    out = np.zeros((n, o) + tuple(out_sp))
    og = o // groups
    for pos in itertools.product(*[range(s) for s in out_sp]):
        for kk in itertools.product(*[range(s) for s in k]):
            idx = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
            patch = xp[(slice(None), slice(None)) + idx]          # (n, c)
            for g in range(groups):
                out[(slice(None), slice(g * og, (g + 1) * og)) + pos] += \
                    patch[:, g * cg:(g + 1) * cg] @ w[(slice(g * og, (g + 1) * og),
                                                       slice(None)) + kk].T
    return out


def conv_transpose_ref(x, w, stride, pads, output_padding, dilation, groups):
    """Transposed convolution by scattering; w: (C_in, O // groups, *k)."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    og = w.shape[1]
    cg = c // groups
    k = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 + output_padding[i]
            for i in range(nd)]
    out = np.zeros((n, og * groups) + tuple(full))
    for pos in itertools.product(*[range(s) for s in x.shape[2:]]):
        for kk in itertools.product(*[range(s) for s in k]):
            idx = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
            for g in range(groups):
                out[(slice(None), slice(g * og, (g + 1) * og)) + idx] += \
                    x[(slice(None), slice(g * cg, (g + 1) * cg)) + pos] @ \
                    w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]
    sl = tuple(slice(lo, full[i] - hi) for i, (lo, hi) in enumerate(pads))
    return out[(slice(None), slice(None)) + sl]


def pool_ref(x, kernel, stride, pads, kind, count_include_pad=True):
    nd = len(kernel)
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, [(0, 0), (0, 0)] + list(pads), constant_values=fill)
    ones = np.pad(np.ones(x.shape[2:]), list(pads))
    out_sp = [(xp.shape[2 + i] - kernel[i]) // stride[i] + 1 for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(out_sp))
    for pos in itertools.product(*[range(s) for s in out_sp]):
        sl = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + kernel[i]) for i in range(nd))
        win = xp[(slice(None), slice(None)) + sl].reshape(x.shape[:2] + (-1,))
        if kind == "max":
            out[(slice(None), slice(None)) + pos] = win.max(-1)
        else:
            cnt = math.prod(kernel) if count_include_pad else ones[sl].sum()
            out[(slice(None), slice(None)) + pos] = win.sum(-1) / cnt
    return out


def same_pads(spatial, kernel, stride, dilation=None):
    dilation = dilation or (1,) * len(kernel)
    pads = []
    for s, k, st, d in zip(spatial, kernel, stride, dilation):
        total = max((-(-s // st) - 1) * st + d * (k - 1) + 1 - s, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- Dense ----------------------------------------------------------------------------------------
def test_dense_matches_numpy_and_default_init():
    net = nn.Dense(6, 4, activation="relu")
    assert net.weight.shape == (4, 6) and net.bias.shape == (4,)
    bound = 1 / math.sqrt(6)
    assert np.abs(net.weight.asnumpy()).max() <= bound
    assert np.abs(net.bias.asnumpy()).max() <= bound
    x = rand(3, 6).astype(np.float32)
    want = np.maximum(x @ net.weight.asnumpy().T + net.bias.asnumpy(), 0)
    np.testing.assert_allclose(net(T(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    x3 = rand(2, 3, 6).astype(np.float32)
    np.testing.assert_allclose(net(T(x3)).asnumpy(),
                               np.maximum(x3 @ net.weight.asnumpy().T + net.bias.asnumpy(), 0),
                               rtol=1e-5, atol=1e-6)


def test_dense_gradients():
    check_grads(nn.Dense(4, 3, dtype=F64), rand(2, 4))
    check_grads(nn.Dense(4, 3, has_bias=False, activation=nn.Tanh(), dtype=F64), rand(2, 4))


def test_dense_amp_contract_casts_weights_where_used():
    net = nn.Dense(8, 4).to_float(ms.float16)
    x = rand(5, 8).astype(np.float32)
    out = net(T(x))
    assert out.dtype is ms.float16
    assert net.weight.dtype is ms.float32
    want = x.astype(np.float16).astype(np.float32) @ \
        net.weight.asnumpy().astype(np.float16).astype(np.float32).T + net.bias.asnumpy()
    np.testing.assert_allclose(out.asnumpy().astype(np.float32), want, rtol=2e-2, atol=2e-2)
    # gradients reach the float32 master weights as float32
    grads = ms.grad(lambda x: net(x).astype(ms.float32).sum(), None,
                    net.trainable_params())(T(x))
    assert all(g.dtype is ms.float32 for g in grads)
    np.testing.assert_allclose(grads[1].asnumpy(), np.full(4, 5.0), rtol=1e-3)


def test_dense_validation():
    with pytest.raises(TypeError, match="in_channels"):
        nn.Dense(2.0, 3)
    with pytest.raises(ValueError, match="out_channels"):
        nn.Dense(2, 0)
    with pytest.raises(TypeError, match="has_bias"):
        nn.Dense(2, 3, has_bias=1)
    with pytest.raises(ValueError, match="weight_init"):
        nn.Dense(2, 3, weight_init=T(np.zeros((2, 3), np.float32)))
    with pytest.raises(KeyError):
        nn.Dense(2, 3, activation="nope")
    with pytest.raises(ValueError, match="last axis"):
        nn.Dense(2, 3)(T(np.zeros((4, 5), np.float32)))
    with pytest.raises(TypeError, match="the input argument must be Tensor"):
        nn.Dense(2, 3)(np.zeros((4, 2)))


# -- convolutions ---------------------------------------------------------------------------------
@pytest.mark.parametrize("pad_mode,padding,stride,dilation,group", [
    ("same", 0, 1, 1, 1), ("same", 0, 2, 1, 1), ("valid", 0, 1, 2, 1),
    ("pad", (1, 0, 2, 1), 2, 1, 2), ("pad", 1, 1, 1, 2),
])
def test_conv2d_matches_reference(pad_mode, padding, stride, dilation, group):
    net = nn.Conv2d(4, 6, 3, stride=stride, pad_mode=pad_mode, padding=padding,
                    dilation=dilation, group=group, has_bias=True, dtype=F64)
    assert net.weight.shape == (6, 4 // group, 3, 3)
    x = rand(2, 4, 7, 6)
    if pad_mode == "same":
        pads = same_pads((7, 6), (3, 3), (stride,) * 2, (dilation,) * 2)
    elif pad_mode == "valid":
        pads = [(0, 0), (0, 0)]
    else:
        p = (padding,) * 4 if isinstance(padding, int) else padding
        pads = [(p[0], p[1]), (p[2], p[3])]
    want = conv_ref(x, net.weight.asnumpy(), (stride,) * 2, pads, (dilation,) * 2, group) + \
        net.bias.asnumpy().reshape(1, -1, 1, 1)
    out = net(T(x)).asnumpy()
    if pad_mode == "same":
        assert out.shape[2:] == (-(-7 // stride), -(-6 // stride))
    np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-12)


def test_conv_gradients_1d_2d_3d():
    check_grads(nn.Conv2d(2, 3, 2, stride=1, pad_mode="pad", padding=1, has_bias=True,
                          dtype=F64), rand(1, 2, 3, 3))
    check_grads(nn.Conv1d(2, 2, 3, pad_mode="same", has_bias=True, dtype=F64), rand(2, 2, 5))
    check_grads(nn.Conv3d(1, 2, 2, pad_mode="valid", dtype=F64), rand(1, 1, 3, 3, 2))


def test_conv1d_and_conv3d_match_reference():
    net = nn.Conv1d(3, 4, 3, stride=2, pad_mode="pad", padding=1, has_bias=True, dtype=F64)
    assert net.weight.shape == (4, 3, 1, 3)  # MindSpore's layout
    x = rand(2, 3, 9)
    want = conv_ref(x, net.weight.asnumpy()[:, :, 0], (2,), [(1, 1)], (1,), 1) + \
        net.bias.asnumpy()[None, :, None]
    np.testing.assert_allclose(net(T(x)).asnumpy(), want, rtol=1e-10, atol=1e-12)
    net3 = nn.Conv3d(2, 2, (2, 3, 1), pad_mode="same", dtype=F64)
    x3 = rand(1, 2, 3, 4, 2)
    want3 = conv_ref(x3, net3.weight.asnumpy(), (1, 1, 1),
                     same_pads((3, 4, 2), (2, 3, 1), (1, 1, 1)), (1, 1, 1), 1)
    np.testing.assert_allclose(net3(T(x3)).asnumpy(), want3, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("pad_mode,padding,stride,output_padding", [
    ("same", 0, 2, 0), ("valid", 0, 2, 0), ("pad", 1, 2, 1), ("pad", 0, 1, 0),
])
def test_conv2d_transpose_matches_reference(pad_mode, padding, stride, output_padding):
    net = nn.Conv2dTranspose(4, 6, 3, stride=stride, pad_mode=pad_mode, padding=padding,
                             output_padding=output_padding, group=2, has_bias=True, dtype=F64)
    assert net.weight.shape == (4, 3, 3, 3)
    x = rand(2, 4, 3, 4)
    if pad_mode == "same":
        total = max(3 - stride, 0)
        pads = [(total // 2, total - total // 2)] * 2
    elif pad_mode == "valid":
        pads = [(0, 0)] * 2
    else:
        pads = [(padding, padding)] * 2
    want = conv_transpose_ref(x, net.weight.asnumpy(), (stride,) * 2, pads, (0, 0), (1, 1),
                              2) + net.bias.asnumpy().reshape(1, -1, 1, 1)
    # MindSpore's Conv2dTranspose appends output_padding as zeros after the bias
    # (tests/data/mindspore_fidelity_fixes.json records it)
    want = np.pad(want, ((0, 0), (0, 0), (0, output_padding), (0, output_padding)))
    out = net(T(x)).asnumpy()
    if pad_mode == "same":
        assert out.shape[2:] == (3 * stride, 4 * stride)
    if pad_mode == "valid":
        assert out.shape[2:] == (2 * stride + 3, 3 * stride + 3)
    np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-12)


def test_conv_transpose_1d_3d_and_gradients():
    net1 = nn.Conv1dTranspose(2, 3, 3, stride=2, pad_mode="valid", has_bias=True, dtype=F64)
    assert net1.weight.shape == (2, 3, 1, 3)
    x1 = rand(2, 2, 4)
    want1 = conv_transpose_ref(x1, net1.weight.asnumpy()[:, :, 0], (2,), [(0, 0)], (0,), (1,),
                               1) + net1.bias.asnumpy()[None, :, None]
    np.testing.assert_allclose(net1(T(x1)).asnumpy(), want1, rtol=1e-10, atol=1e-12)
    net3 = nn.Conv3dTranspose(2, 2, 2, stride=2, pad_mode="same", dtype=F64)
    x3 = rand(1, 2, 2, 2, 3)
    want3 = conv_transpose_ref(x3, net3.weight.asnumpy(), (2, 2, 2), [(0, 0)] * 3, (0, 0, 0),
                               (1, 1, 1), 1)
    np.testing.assert_allclose(net3(T(x3)).asnumpy(), want3, rtol=1e-10, atol=1e-12)
    check_grads(nn.Conv2dTranspose(2, 2, 2, stride=2, pad_mode="pad", padding=1,
                                   has_bias=True, dtype=F64), rand(1, 2, 2, 3))
    check_grads(net1, rand(1, 2, 3))


def test_conv_validation():
    with pytest.raises(ValueError, match="padding"):
        nn.Conv2d(2, 2, 3, pad_mode="same", padding=1)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.Conv2d(2, 2, 3, pad_mode="SAME!")
    with pytest.raises(ValueError, match="group"):
        nn.Conv2d(3, 4, 3, group=2)
    with pytest.raises(TypeError, match="kernel_size"):
        nn.Conv2d(2, 2, (3, 3, 3))
    with pytest.raises(ValueError, match="data_format"):
        nn.Conv2d(2, 2, 3, data_format="NHWC")
    with pytest.raises(ValueError, match="channels"):
        nn.Conv2d(2, 2, 3)(T(np.zeros((1, 3, 4, 4), np.float32)))
    with pytest.raises(ValueError, match="4-d"):
        nn.Conv2d(2, 2, 3)(T(np.zeros((2, 4, 4), np.float32)))


# -- normalisation --------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm1d, (6, 3)), (nn.BatchNorm1d, (4, 3, 5)),
                                       (nn.BatchNorm2d, (4, 3, 2, 3)),
                                       (nn.BatchNorm3d, (2, 3, 2, 2, 2))])
def test_batchnorm_train_and_eval_statistics(cls, shape):
    bn = cls(3, momentum=0.8, gamma_init=T(np.array([1.0, 2.0, 0.5], np.float32)),
             beta_init=T(np.array([0.0, 0.1, -0.2], np.float32)))
    names = [p.name for p in bn.get_parameters()]
    prefix = "bn2d." if cls is nn.BatchNorm3d else ""   # MindSpore's names
    assert names == [prefix + n for n in ("moving_mean", "moving_variance", "gamma", "beta")]
    assert [p.name for p in bn.trainable_params()] == [prefix + "gamma", prefix + "beta"]
    stats = bn.bn2d if cls is nn.BatchNorm3d else bn
    x = rand(*shape, seed=1).astype(np.float32) * 2 + 1
    axes = (0,) + tuple(range(2, len(shape)))
    bshape = (1, 3) + (1,) * (len(shape) - 2)
    g, b = stats.gamma.asnumpy().reshape(bshape), stats.beta.asnumpy().reshape(bshape)
    bn.set_train(True)
    out = bn(T(x)).asnumpy()
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-5) * g + b, rtol=1e-4,
                               atol=1e-5)
    n = x.size // 3
    rm = 0.8 * 0 + 0.2 * mean.reshape(3)
    rv = 0.8 * 1 + 0.2 * var.reshape(3) * n / (n - 1)
    np.testing.assert_allclose(stats.moving_mean.asnumpy(), rm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats.moving_variance.asnumpy(), rv, rtol=1e-5, atol=1e-6)
    bn.set_train(False)
    x2 = rand(*shape, seed=2).astype(np.float32)
    out2 = bn(T(x2)).asnumpy()
    want2 = (x2 - rm.reshape(bshape)) / np.sqrt(rv.reshape(bshape) + 1e-5) * g + b
    np.testing.assert_allclose(out2, want2, rtol=1e-4, atol=1e-5)
    # eval leaves the statistics alone
    np.testing.assert_allclose(stats.moving_mean.asnumpy(), rm, rtol=1e-5, atol=1e-6)


def test_batchnorm_use_batch_statistics_overrides_mode():
    x = rand(4, 2, 3, 3, seed=3).astype(np.float32) + 3
    bn = nn.BatchNorm2d(2, use_batch_statistics=True)
    bn.set_train(False)
    out = bn(T(x)).asnumpy()
    assert abs(out.mean()) < 1e-5  # normalised by batch statistics although in eval mode
    assert not np.allclose(bn.moving_mean.asnumpy(), 0)
    bn2 = nn.BatchNorm2d(2, use_batch_statistics=False)
    bn2.set_train(True)
    np.testing.assert_allclose(bn2(T(x)).asnumpy(), x / np.sqrt(1 + 1e-5), rtol=1e-5)
    np.testing.assert_array_equal(bn2.moving_mean.asnumpy(), [0, 0])


def test_batchnorm_gradients_train_and_eval():
    bn = nn.BatchNorm2d(2, gamma_init="normal", beta_init="normal", dtype=F64)
    bn.set_train(True)
    check_grads(bn, rand(3, 2, 2, 2, seed=4))
    bn.set_train(False)
    check_grads(bn, rand(3, 2, 2, 2, seed=5))
    bn1 = nn.BatchNorm1d(3, dtype=F64).set_train(True)
    check_grads(bn1, rand(4, 3, seed=6))


def test_batchnorm_amp_keeps_float32_statistics():
    bn = nn.BatchNorm2d(2).to_float(ms.float16)
    bn.set_train(True)
    x = rand(4, 2, 3, 3, seed=7).astype(np.float32)
    out = bn(T(x))
    assert out.dtype is ms.float16
    assert bn.moving_mean.dtype is ms.float32 and bn.gamma.dtype is ms.float32
    # statistics of the float16 input are accumulated in float32, as cuDNN does
    xh = x.astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), 0.1 * xh.mean((0, 2, 3)), rtol=1e-5,
                               atol=1e-7)
    want = (xh - xh.mean((0, 2, 3), keepdims=True)) / np.sqrt(
        xh.var((0, 2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(out.asnumpy().astype(np.float32), want, rtol=2e-3, atol=2e-3)


def test_batchnorm_validation():
    with pytest.raises(ValueError, match="momentum"):
        nn.BatchNorm2d(2, momentum=1.5)
    with pytest.raises(ValueError, match="eps"):
        nn.BatchNorm2d(2, eps=0)
    with pytest.raises(TypeError, match="use_batch_statistics"):
        nn.BatchNorm2d(2, use_batch_statistics=1)
    with pytest.raises(ValueError, match="4-d"):
        nn.BatchNorm2d(2)(T(np.zeros((2, 2), np.float32)))
    with pytest.raises(ValueError, match="channels"):
        nn.BatchNorm1d(2)(T(np.zeros((2, 3), np.float32)))


def test_layernorm_matches_numpy_and_gradients():
    ln = nn.LayerNorm((4,), gamma_init="normal", beta_init="normal")
    x = rand(3, 4, seed=8).astype(np.float32)
    m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    want = (x - m) / np.sqrt(v + 1e-7) * ln.gamma.asnumpy() + ln.beta.asnumpy()
    np.testing.assert_allclose(ln(T(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)
    # normalise over (3, 4) but scale per last axis only
    ln2 = nn.LayerNorm((4,), begin_norm_axis=1, begin_params_axis=-1, epsilon=1e-5, dtype=F64)
    x2 = rand(2, 3, 4, seed=9)
    m2, v2 = x2.mean((1, 2), keepdims=True), x2.var((1, 2), keepdims=True)
    np.testing.assert_allclose(ln2(T(x2)).asnumpy(), (x2 - m2) / np.sqrt(v2 + 1e-5),
                               rtol=1e-10, atol=1e-12)
    check_grads(nn.LayerNorm((2, 3), begin_norm_axis=1, begin_params_axis=1,
                             gamma_init="normal", beta_init="normal", dtype=F64),
                rand(2, 2, 3, seed=10))
    check_grads(ln2, rand(2, 3, 4, seed=11))
    with pytest.raises(ValueError, match="normalized_shape"):
        nn.LayerNorm((5,))(T(x))
    with pytest.raises(TypeError, match="normalized_shape"):
        nn.LayerNorm("4")


# -- pooling --------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kind", [(nn.MaxPool2d, "max"), (nn.AvgPool2d, "avg")])
@pytest.mark.parametrize("kernel,stride,pad_mode,padding", [
    (2, 2, "valid", 0), (3, 1, "same", 0), (3, 2, "same", 0), (3, 2, "pad", 1)])
def test_pool2d_matches_reference(cls, kind, kernel, stride, pad_mode, padding):
    x = rand(2, 3, 5, 6, seed=12)
    out = cls(kernel, stride, pad_mode=pad_mode, padding=padding)(T(x)).asnumpy()
    k, s = (kernel,) * 2, (stride,) * 2
    if pad_mode == "same":
        pads, include = same_pads((5, 6), k, s), False
        assert out.shape[2:] == (-(-5 // stride), -(-6 // stride))
    else:
        pads, include = [(padding, padding)] * 2, True
    np.testing.assert_allclose(out, pool_ref(x, k, s, pads, kind, include), rtol=1e-12)


def test_pool1d_unbatched_and_gradients():
    x = rand(2, 3, 7, seed=13)
    np.testing.assert_allclose(nn.MaxPool1d(3, 2)(T(x)).asnumpy(),
                               pool_ref(x, (3,), (2,), [(0, 0)], "max"), rtol=1e-12)
    np.testing.assert_allclose(nn.AvgPool1d(2, 1, "pad", 1)(T(x)).asnumpy(),
                               pool_ref(x, (2,), (1,), [(1, 1)], "avg"), rtol=1e-12)
    x3 = rand(3, 4, 4, seed=14)
    np.testing.assert_allclose(nn.MaxPool2d(2, 2)(T(x3)).asnumpy(),
                               pool_ref(x3[None], (2, 2), (2, 2), [(0, 0)] * 2, "max")[0])
    check_grads(nn.MaxPool2d(2, 1), rand(1, 2, 3, 3, seed=15))
    check_grads(nn.AvgPool2d(3, 2, "same"), rand(1, 1, 4, 5, seed=16))
    check_grads(nn.AvgPool1d(2, 2), rand(2, 1, 4, seed=17))


def test_pool_validation():
    with pytest.raises(ValueError, match="ceil_mode"):
        nn.MaxPool2d(2, ceil_mode=True)
    with pytest.raises(ValueError, match="padding"):
        nn.MaxPool2d(2, pad_mode="valid", padding=1)
    with pytest.raises(ValueError, match="padding"):
        nn.AvgPool2d(3, pad_mode="pad", padding=2)
    with pytest.raises(ValueError, match="3-d or 4-d"):
        nn.MaxPool2d(2)(T(np.zeros((2, 2), np.float32)))


# -- activations ----------------------------------------------------------------------------------
_ACTS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.LeakyReLU(0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    (nn.Sigmoid(), sigmoid),
    (nn.Tanh(), np.tanh),
    (nn.SiLU(), lambda x: x * sigmoid(x)),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    (nn.GELU(approximate=False),
     lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))),
    (nn.Softmax(), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (nn.Softmax(axis=0), lambda x: np.exp(x) / np.exp(x).sum(0, keepdims=True)),
    (nn.LogSoftmax(), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
]


@pytest.mark.parametrize("cell,ref", _ACTS, ids=[f"{type(c).__name__}{i}"
                                                  for i, (c, _) in enumerate(_ACTS)])
def test_activation_matches_numpy_and_gradient(cell, ref):
    x = rand(3, 4, seed=18) * 4
    x[0, 0] = 7.0  # above ReLU6's cap
    np.testing.assert_allclose(cell(T(x)).asnumpy(), ref(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cell(T(x.astype(np.float32))).asnumpy(), ref(x), rtol=1e-5,
                               atol=1e-6)
    check_grads(cell, x)


def test_prelu_and_get_activation():
    p = nn.PReLU(3, 0.3)
    x = rand(2, 3, 2, seed=19)
    np.testing.assert_allclose(p(T(x)).asnumpy(), np.where(x > 0, x, 0.3 * x), rtol=1e-6)
    p.w.set_data(T(np.array([0.1, 0.2, 0.3])))
    check_grads(p, x)
    assert isinstance(nn.get_activation("relu"), nn.ReLU)
    assert nn.get_activation(None) is None
    with pytest.raises(KeyError):
        nn.get_activation("swishy")
    with pytest.raises(ValueError, match="w"):
        nn.PReLU(3, T(np.ones(2, np.float32)))


def test_flatten():
    x = rand(2, 3, 4, 5)
    np.testing.assert_array_equal(nn.Flatten()(T(x)).asnumpy(), x.reshape(2, -1))
    np.testing.assert_array_equal(nn.Flatten(1, 2)(T(x)).asnumpy(), x.reshape(2, 12, 5))
    with pytest.raises(ValueError, match="start_dim"):
        nn.Flatten(3, 1)(T(x))


def test_dropout_train_and_eval():
    x = np.ones((200, 50), np.float32)
    d = nn.Dropout(p=0.3)
    assert d.p == 0.3
    np.testing.assert_array_equal(d(T(x)).asnumpy(), x)  # eval mode: identity
    d.set_train(True)
    out = d(T(x)).asnumpy()
    kept = out != 0
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    assert abs(kept.mean() - 0.7) < 0.02
    assert nn.Dropout(keep_prob=0.8).p == pytest.approx(0.2)
    assert nn.Dropout(keep_prob=0.8, p=0.5).p == 0.5
    with pytest.raises(ValueError, match="p"):
        nn.Dropout(p=1.0)
    with pytest.raises(ValueError, match="keep_prob"):
        nn.Dropout(keep_prob=0.0)


# -- embedding and RNN cells ----------------------------------------------------------------------
def test_embedding_lookup_one_hot_padding_and_gradient():
    emb = nn.Embedding(6, 3, padding_idx=2)
    table = emb.embedding_table.asnumpy()
    np.testing.assert_array_equal(table[2], 0)
    ids = np.array([[0, 2, 5], [5, 5, 1]], np.int32)
    np.testing.assert_array_equal(emb(T(ids)).asnumpy(), table[ids])
    emb1 = nn.Embedding(6, 3, use_one_hot=True, embedding_table=T(table))
    np.testing.assert_allclose(emb1(T(ids)).asnumpy(), table[ids], rtol=1e-6)
    # the gradient accumulates over repeated ids
    w = rand(2, 3, 3, seed=20)
    g = ms.grad(lambda i: (emb(i) * T(w.astype(np.float32))).sum(), None,
                emb.trainable_params())(T(ids))[0].asnumpy()
    want = np.zeros((6, 3))
    np.add.at(want, ids, w)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)
    with pytest.raises(TypeError, match="ids"):
        emb(T(np.zeros((2,), np.float32)))


def _rnn_params(cell):
    return [p.asnumpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]


def test_rnn_cells_match_numpy_and_gradients():
    x, h, c = rand(2, 3, seed=21), rand(2, 4, seed=22), rand(2, 4, seed=23)
    rnn = nn.RNNCell(3, 4, dtype=F64)
    wi, wh, bi, bh = _rnn_params(rnn)
    assert wi.shape == (4, 3) and np.abs(wi).max() <= 0.5
    np.testing.assert_allclose(rnn(T(x), T(h)).asnumpy(),
                               np.tanh(x @ wi.T + bi + h @ wh.T + bh), rtol=1e-12)
    relu = nn.RNNCell(3, 4, nonlinearity="relu", dtype=F64)
    wi, wh, bi, bh = _rnn_params(relu)
    np.testing.assert_allclose(relu(T(x), T(h)).asnumpy(),
                               np.maximum(x @ wi.T + bi + h @ wh.T + bh, 0), rtol=1e-12)
    lstm = nn.LSTMCell(3, 4, dtype=F64)
    wi, wh, bi, bh = _rnn_params(lstm)
    gates = x @ wi.T + bi + h @ wh.T + bh
    i, f, g, o = np.split(gates, 4, -1)
    c2 = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h2 = sigmoid(o) * np.tanh(c2)
    out_h, out_c = lstm(T(x), (T(h), T(c)))
    np.testing.assert_allclose(out_h.asnumpy(), h2, rtol=1e-12)
    np.testing.assert_allclose(out_c.asnumpy(), c2, rtol=1e-12)
    gru = nn.GRUCell(3, 4, dtype=F64)
    wi, wh, bi, bh = _rnn_params(gru)
    gi, gh = x @ wi.T + bi, h @ wh.T + bh
    r = sigmoid(gi[:, :4] + gh[:, :4])
    z = sigmoid(gi[:, 4:8] + gh[:, 4:8])
    n = np.tanh(gi[:, 8:] + r * gh[:, 8:])
    np.testing.assert_allclose(gru(T(x), T(h)).asnumpy(), n + z * (h - n), rtol=1e-12)
    small_x, small_h = rand(1, 2, seed=24), rand(1, 2, seed=25)
    check_grads(nn.RNNCell(2, 2, dtype=F64), small_x, small_h)
    check_grads(nn.GRUCell(2, 2, dtype=F64), small_x, small_h)

    class LSTMWrap(nn.Cell):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(2, 2, dtype=F64)

        def construct(self, x, h, c):
            return self.cell(x, (h, c))

    check_grads(LSTMWrap(), small_x, small_h, rand(1, 2, seed=26))
    with pytest.raises(ValueError, match="hx"):
        nn.GRUCell(3, 4)(T(x.astype(np.float32)), T(np.zeros((2, 5), np.float32)))


# -- losses ----------------------------------------------------------------------------------------
def _log_softmax(z, axis=1):
    z = z - z.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


class _LossOnLogits(nn.Cell):
    """Loss as a function of the logits only, for the gradient check."""

    def __init__(self, loss, labels):
        super().__init__()
        self.loss, self.labels = loss, labels

    def construct(self, logits):
        return self.loss(logits, self.labels)


def test_mse_and_l1_losses():
    a, b = rand(3, 4, seed=27), rand(3, 4, seed=28)
    for reduction, red in (("mean", np.mean), ("sum", np.sum), ("none", lambda v: v)):
        np.testing.assert_allclose(nn.MSELoss(reduction)(T(a), T(b)).asnumpy(),
                                   red((a - b) ** 2), rtol=1e-12)
        np.testing.assert_allclose(nn.L1Loss(reduction)(T(a), T(b)).asnumpy(),
                                   red(np.abs(a - b)), rtol=1e-12)
    check_grads(_LossOnLogits(nn.MSELoss(), T(b)), a)
    check_grads(_LossOnLogits(nn.L1Loss("sum"), T(b)), a)
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss("avg")
    with pytest.raises(ValueError, match="shape"):
        nn.MSELoss()(T(a), T(b[:2]))


def test_softmax_cross_entropy_with_logits():
    z = rand(4, 5, seed=29)
    y = np.array([0, 3, 4, 1])
    logp = _log_softmax(z)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True)
    assert loss.reduction == "none"
    np.testing.assert_allclose(loss(T(z), T(y.astype(np.int32))).asnumpy(),
                               -logp[np.arange(4), y], rtol=1e-12)
    onehot = np.eye(5)[y]
    dense = nn.SoftmaxCrossEntropyWithLogits(reduction="mean")
    np.testing.assert_allclose(dense(T(z), T(onehot)).asnumpy(),
                               -(onehot * logp).sum(1).mean(), rtol=1e-12)
    soft = np.abs(rand(4, 5, seed=30))
    soft /= soft.sum(1, keepdims=True)
    np.testing.assert_allclose(nn.SoftmaxCrossEntropyWithLogits(reduction="sum")(
        T(z), T(soft)).asnumpy(), -(soft * logp).sum(), rtol=1e-12)
    # MindSpore 1.x's is_grad keyword is accepted
    nn.SoftmaxCrossEntropyWithLogits(is_grad=False, sparse=True, reduction="mean")
    check_grads(_LossOnLogits(nn.SoftmaxCrossEntropyWithLogits(True, "mean"),
                              T(y.astype(np.int32))), z)
    check_grads(_LossOnLogits(nn.SoftmaxCrossEntropyWithLogits(False, "sum"), T(soft)), z)
    with pytest.raises(TypeError, match="labels"):
        loss(T(z), T(onehot))


def test_cross_entropy_loss_weight_ignore_index_smoothing():
    z = rand(5, 4, seed=31)
    y = np.array([0, 3, -100, 1, 3])
    w = np.array([1.0, 2.0, 0.5, 3.0], np.float32)   # MindSpore takes float16/float32 weights
    logp = _log_softmax(z)
    valid = y != -100
    ys = np.where(valid, y, 0)
    nll = -logp[np.arange(5), ys] * w[ys] * valid
    loss = nn.CrossEntropyLoss(weight=T(w))
    np.testing.assert_allclose(loss(T(z), T(y)).asnumpy(), nll.sum() / (w[ys] * valid).sum(),
                               rtol=1e-12)
    np.testing.assert_allclose(nn.CrossEntropyLoss(reduction="none")(T(z), T(y)).asnumpy(),
                               -logp[np.arange(5), ys] * valid, rtol=1e-12)
    ls = 0.1
    y2 = np.array([0, 3, 2, 1, 3])
    smooth = -(logp.mean(1))
    per = (1 - ls) * -logp[np.arange(5), y2] + ls * smooth
    np.testing.assert_allclose(nn.CrossEntropyLoss(label_smoothing=ls)(T(z), T(y2)).asnumpy(),
                               per.mean(), rtol=1e-12)
    # class probabilities and (N, C, d) inputs
    p = np.abs(rand(5, 4, seed=32))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(nn.CrossEntropyLoss()(T(z), T(p)).asnumpy(),
                               -(p * logp).sum(1).mean(), rtol=1e-12)
    z3 = rand(2, 4, 3, seed=33)
    y3 = np.array([[0, 1, 3], [2, 2, 0]])
    lp3 = _log_softmax(z3)
    want3 = -np.take_along_axis(lp3, y3[:, None], 1).mean()
    np.testing.assert_allclose(nn.CrossEntropyLoss()(T(z3), T(y3)).asnumpy(), want3,
                               rtol=1e-12)
    check_grads(_LossOnLogits(nn.CrossEntropyLoss(weight=T(w), label_smoothing=0.2), T(y)), z)
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(ValueError, match="labels"):
        nn.CrossEntropyLoss()(T(z), T(y[:3]))


def test_bce_with_logits_loss():
    z = rand(3, 4, seed=34) * 3
    y = (rand(3, 4, seed=35) > 0).astype(np.float64)
    pw = np.array([1.0, 2.0, 0.5, 1.5])
    w = np.array([0.5, 1.0, 1.0, 2.0])
    s = sigmoid(z)
    per = -(pw * y * np.log(s) + (1 - y) * np.log(1 - s)) * w
    loss = nn.BCEWithLogitsLoss("mean", T(w), T(pw))
    np.testing.assert_allclose(loss(T(z), T(y)).asnumpy(), per.mean(), rtol=1e-10)
    plain = -(y * np.log(s) + (1 - y) * np.log(1 - s))
    np.testing.assert_allclose(nn.BCEWithLogitsLoss("none")(T(z), T(y)).asnumpy(), plain,
                               rtol=1e-10)
    check_grads(_LossOnLogits(loss, T(y)), z)
    with pytest.raises(TypeError, match="weight"):
        nn.BCEWithLogitsLoss(weight=np.ones(4))


def test_loss_base_get_loss():
    class Scaled(nn.LossBase):
        def construct(self, logits, labels):
            return self.get_loss((logits - labels) ** 2, 2.0)

    a, b = rand(2, 3, seed=36), rand(2, 3, seed=37)
    np.testing.assert_allclose(Scaled()(T(a), T(b)).asnumpy(), (2 * (a - b) ** 2).mean(),
                               rtol=1e-12)
    np.testing.assert_allclose(Scaled("sum")(T(a), T(b)).asnumpy(), (2 * (a - b) ** 2).sum(),
                               rtol=1e-12)


def test_parameter_names_follow_attribute_paths():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.features = nn.SequentialCell(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
            self.head = nn.Dense(2, 2)

    names = [p.name for p in Net().get_parameters()]
    assert names == ["features.0.weight", "features.1.moving_mean",
                     "features.1.moving_variance", "features.1.gamma", "features.1.beta",
                     "head.weight", "head.bias"]


# -- other installed backends against the numpy reference ---------------------------------------
def _other_backends():
    return available_backends(exclude=("numpy",))


class _AllLayers(nn.Cell):
    """One of most layers, so a single forward/backward compares them all."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, has_bias=True)
        self.bn = nn.BatchNorm2d(4, momentum=0.7)
        self.prelu = nn.PReLU(4)
        self.pool = nn.MaxPool2d(2, 2)
        self.avg = nn.AvgPool2d(3, 1, "same")
        self.convt = nn.Conv2dTranspose(4, 2, 2, stride=2, has_bias=True)
        self.conv1 = nn.Conv1d(2, 3, 3, pad_mode="pad", padding=1)
        self.ln = nn.LayerNorm((3,), gamma_init="normal")
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(3 * 8 * 8 // 8 * 8 // 8, 5, activation="gelu")
        self.emb = nn.Embedding(6, 5)
        self.lstm = nn.LSTMCell(5, 5)
        self.gru = nn.GRUCell(5, 5)
        self.act = nn.SequentialCell(nn.SiLU(), nn.Sigmoid(), nn.Tanh(), nn.LeakyReLU(),
                                     nn.ReLU6(), nn.ReLU(), nn.LogSoftmax())

    def construct(self, x, ids):
        y = self.avg(self.pool(self.prelu(self.bn(self.conv(x)))))        # (N, 4, 4, 4)
        y = self.convt(y)                                                  # (N, 2, 8, 8)
        y = self.conv1(self.flatten(y).reshape(x.shape[0], 2, 64))        # (N, 3, 64)
        y = self.ln(y.transpose(0, 2, 1))                                  # (N, 64, 3)
        y = self.fc(y.reshape(x.shape[0], -1)[:, :self.fc.in_channels])    # (N, 5)
        e = self.emb(ids)
        h, c = self.lstm(y, (e, e))
        return self.act(self.gru(h, c))


def _run_all_layers(backend):
    ms.set_context(backend=backend)
    # a compiling backend (jax) runs the steps as compiled programs, as its users would
    compiled = ms.context.current_backend().compile is not None
    ms.set_context(mode=ms.GRAPH_MODE if compiled else ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = _AllLayers()
    rng = np.random.default_rng(0)
    x = T(rng.standard_normal((2, 2, 8, 8)).astype(np.float32))
    ids = T(np.array([1, 4], np.int32))
    y = T(np.array([0, 3], np.int32))
    opt = nn.Adam(net.trainable_params(), 1e-2, weight_decay=1e-3)
    train = nn.TrainOneStepCell(nn.WithLossCell(_Pair(net, ids), nn.CrossEntropyLoss()), opt)
    train.set_train()
    losses = [float(train(x, y).asnumpy()) for _ in range(2)]
    net.set_train(False)
    out = net(x, ids).asnumpy()
    state = {p.name: p.asnumpy() for p in net.get_parameters()}
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    return losses, out, state


class _Pair(nn.Cell):
    def __init__(self, net, ids):
        super().__init__(auto_prefix=False)
        self.net, self.ids = net, ids

    def construct(self, x):
        return self.net(x, self.ids)


@pytest.mark.parametrize("backend", _other_backends())
def test_layers_train_the_same_on_every_backend(backend):
    ref_losses, ref_out, ref_state = _run_all_layers("numpy")
    losses, out, state = _run_all_layers(backend)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, ref_out, rtol=1e-3, atol=1e-4)
    assert state.keys() == ref_state.keys()
    for name in ref_state:
        np.testing.assert_allclose(state[name], ref_state[name], rtol=1e-3, atol=1e-4,
                                   err_msg=name)


@pytest.mark.parametrize("kw", [{}, {"begin_norm_axis": 1}])
def test_layernorm_half_precision_normalises_in_float32(kw):
    ln = nn.LayerNorm((3,), gamma_init="normal", beta_init="normal", **kw).to_float(ms.float16)
    x = (rand(2, 4, 3, seed=40) * 10 + 50).astype(np.float32)  # large mean: fp16 would lose it
    out = ln(T(x))
    assert out.dtype is ms.float16 and ln.gamma.dtype is ms.float32
    xh = x.astype(np.float16).astype(np.float64)
    axes = (-1,) if not kw else (1, 2)
    want = (xh - xh.mean(axes, keepdims=True)) / np.sqrt(xh.var(axes, keepdims=True) + 1e-7)
    want = want * ln.gamma.asnumpy() + ln.beta.asnumpy()
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=2e-3, atol=2e-3)
