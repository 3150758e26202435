"""The layers beyond what the MindSpore oracle covers: gradients against central
finite differences (float64, reference autodiff), numpy references for the layers MindSpore
2.10 cannot run on CPU (ReplicationPad, InstanceNorm, MatrixDiag*, Unfold, Roll,
MultiFieldEmbeddingLookup, PSNR/SSIM/MSSSIM, ClipByNorm with an axis), training-mode
randomness (channel dropout, RReLU), and the same values and gradients on every installed
backend."""
import os
import zlib

import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test, use_backend

import mscore as ms
from mscore import nn, ops

F64 = ms.float64
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"


_numpy_context = numpy_context_each_test(seed=0)


def T(a):
    return ms.Tensor(np.asarray(a))


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [] if out is None else [out]


def set_params(cell, dtype=np.float64):
    """Every trainable parameter set from its name (the same values on every backend)."""
    for name, p in cell.parameters_and_names():
        if p.requires_grad:
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            p.set_data(T(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(dtype)))
    return cell


def grad_check(cell, *inputs, probes=6, eps=1e-6, rtol=1e-5, atol=1e-8, seed=0):
    """``ms.value_and_grad`` of ``sum(outputs * R)`` with respect to the float64 inputs and
    the trainable parameters against central differences at ``probes`` random entries of
    each (every entry of small tensors)."""
    params = cell.trainable_params()
    floats = tuple(i for i, a in enumerate(inputs)
                   if isinstance(a, np.ndarray) and a.dtype == np.float64)
    wrap = [T(a) if isinstance(a, np.ndarray) else a for a in inputs]
    weights = [rand(*o.shape, seed=100 + k) for k, o in enumerate(_flat(cell(*wrap)))]

    def loss_np(*xs):
        outs = _flat(cell(*[T(a) if isinstance(a, np.ndarray) else a for a in xs]))
        return sum(float((o.asnumpy().astype(np.float64) * w).sum())
                   for o, w in zip(outs, weights))

    def loss_ms(*xs):
        total = None
        for o, w in zip(_flat(cell(*xs)), weights):
            term = (o * T(w.astype(np.float64))).sum()
            total = term if total is None else total + term
        return total

    fn = ms.value_and_grad(loss_ms, floats or None, params or None)
    value, grads = fn(*wrap)
    assert float(value.asnumpy()) == pytest.approx(loss_np(*inputs), rel=1e-10, abs=1e-12)
    if floats and params:
        in_grads, w_grads = grads
    elif floats:
        in_grads, w_grads = grads, ()
    else:
        in_grads, w_grads = (), grads
    in_grads = in_grads if isinstance(in_grads, (tuple, list)) else (in_grads,)
    rng = np.random.default_rng(seed)

    def probe(shape):
        idx = list(np.ndindex(shape))
        return idx if len(idx) <= probes else [idx[i] for i in
                                               rng.choice(len(idx), probes, replace=False)]

    for k, pos in enumerate(floats):
        x = inputs[pos]
        for idx in probe(x.shape):
            args = list(inputs)
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            args[pos] = xp
            hi = loss_np(*args)
            args[pos] = xm
            num = (hi - loss_np(*args)) / (2 * eps)
            got = in_grads[k].asnumpy()[idx]
            assert got == pytest.approx(num, rel=rtol, abs=atol), f"input {pos}{idx}"
    for p, g in zip(params, w_grads):
        base = p.asnumpy().copy()
        for idx in probe(base.shape):
            v = base.copy()
            v[idx] += eps
            p.set_data(T(v))
            hi = loss_np(*inputs)
            v[idx] -= 2 * eps
            p.set_data(T(v))
            num = (hi - loss_np(*inputs)) / (2 * eps)
            p.set_data(T(base))
            assert g.asnumpy()[idx] == pytest.approx(num, rel=rtol, abs=atol), \
                f"{p.name}{idx}"


# -- gradients -----------------------------------------------------------------------------------
def test_recurrent_gradients():
    lstm = set_params(nn.LSTM(3, 4, 2, bidirectional=True, dtype=F64))
    seq = T(np.array([3, 1], np.int32))
    grad_check(lstm, rand(3, 2, 3), None, seq)
    gru = set_params(nn.GRU(3, 4, batch_first=True, dtype=F64))
    grad_check(gru, rand(2, 3, 3, seed=1), rand(1, 2, 4, seed=2))
    rnn = set_params(nn.RNN(3, 4, nonlinearity="relu", has_bias=False, dtype=F64))
    grad_check(rnn, rand(3, 2, 3, seed=3))


def test_attention_gradients():
    mha = set_params(nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True,
                                           dtype=F64))
    kpm = T(np.array([[False, True, False], [False, False, False]]))
    grad_check(mha, rand(2, 2, 4), rand(3, 2, 4, seed=1), rand(3, 2, 4, seed=2), kpm)
    sep = set_params(nn.MultiheadAttention(4, 2, kdim=3, vdim=5, dtype=F64))
    mask = np.triu(np.full((2, 3), -1e9), 1)
    grad_check(sep, rand(2, 2, 4), rand(3, 2, 3, seed=3), rand(3, 2, 5, seed=4), None, False,
               mask)
    layer = set_params(nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True,
                                                  dtype=F64))
    grad_check(layer, rand(3, 2, 4, seed=5))
    dec = set_params(nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, activation="gelu",
                                                dtype=F64))
    grad_check(dec, rand(2, 2, 4, seed=6), rand(3, 2, 4, seed=7))


def test_normalization_and_dense_gradients():
    grad_check(set_params(nn.GroupNorm(2, 4, dtype=F64)), rand(2, 4, 3))
    inorm = set_params(nn.InstanceNorm2d(3, dtype=F64))
    grad_check(inorm, rand(2, 3, 2, 3, seed=1))
    grad_check(set_params(nn.BiDense(3, 2, 4, dtype=F64)), rand(2, 3), rand(2, 2, seed=2))
    grad_check(set_params(nn.Linear(3, 2, dtype=F64)), rand(4, 3, seed=3))
    grad_check(nn.LRN(1, 1.0, 0.5, 0.75), rand(1, 4, 2, 2, seed=4))


@pytest.mark.parametrize("cell,shape", [
    (nn.AdaptiveAvgPool2d((2, 3)), (1, 2, 5, 4)),
    (nn.AdaptiveMaxPool2d((2, 3)), (1, 2, 5, 4)),
    (nn.AdaptiveMaxPool3d((2, 1, 2)), (1, 1, 3, 2, 3)),
    (nn.MaxPool2d(3, 2, pad_mode="pad", padding=1, ceil_mode=True), (1, 2, 5, 4)),
    (nn.MaxPool1d(2, 1, pad_mode="pad", dilation=2), (2, 1, 6)),
    (nn.AvgPool3d(2, 2, pad_mode="pad", ceil_mode=True, divisor_override=3), (1, 1, 3, 3, 2)),
    (nn.LPPool2d(2, 2), (1, 1, 4, 4)),
    (nn.FractionalMaxPool2d(2, output_size=(2, 2),
                            _random_samples=T(np.array([[[0.3, 0.8]]], np.float32))),
     (1, 1, 5, 4)),
    (nn.ReflectionPad2d((1, 2, 2, 0)), (1, 1, 3, 4)),
    (nn.ReplicationPad1d((2, 1)), (1, 2, 3)),
    (nn.Pad(((0, 1), (2, 2)), mode="SYMMETRIC"), (3, 4)),
    (nn.Upsample(size=(3, 5), mode="bilinear"), (1, 1, 2, 3)),
    (nn.Upsample(size=(3, 5), mode="bicubic", align_corners=True), (1, 1, 2, 3)),
    (nn.Upsample(size=(3, 5)), (1, 1, 2, 3)),
    (nn.PixelShuffle(2), (1, 4, 2, 2)),
    (nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "same"), (1, 2, 3, 3)),
    (nn.GLU(), (2, 4)),
    (nn.Softmin(0), (3, 2)),
    (nn.Mish(), (2, 3)),
    (nn.SoftShrink(0.3), (2, 3)),
])
def test_composite_gradients(cell, shape):
    grad_check(cell, rand(*shape, seed=sum(shape)), probes=8)


def test_max_gradients_go_to_the_first_maximum():
    # Window 1 is all zeros, window 2 holds 1.0 twice: each gradient goes to the window's
    # first maximum in row-major order (MindSpore and torch), not shared among the ties.
    x = np.zeros((1, 1, 2, 4))
    x[0, 0, 0, 3] = x[0, 0, 1, 2] = 1.0
    grad = ms.grad(lambda t: nn.AdaptiveMaxPool2d((1, 2))(t).sum())(T(x)).asnumpy()
    want = np.zeros_like(x)
    want[0, 0, 0, 0] = want[0, 0, 0, 3] = 1.0
    np.testing.assert_array_equal(grad, want)
    _, idx = nn.AdaptiveMaxPool2d((1, 2), return_indices=True)(T(x))
    np.testing.assert_array_equal(idx.asnumpy().reshape(-1), [0, 3])


class _Fn(nn.Cell):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, *xs):
        return self.fn(*xs)


def test_special_function_gradients():
    x = np.array([0.3, 1.7, 4.2, -0.6])
    grad_check(_Fn(ops.lgamma), x, probes=4, rtol=1e-5)
    grad_check(_Fn(ops.digamma), x, probes=4, rtol=1e-4)
    a, v = np.array([0.5, 2.0, 3.0]), np.array([0.4, 2.5, 6.0])
    grad_check(_Fn(ops.igamma), a, v, probes=3, rtol=1e-4)
    from scipy import special
    np.testing.assert_allclose(ops.lgamma(T(x)).asnumpy(), special.gammaln(x), rtol=1e-10)
    np.testing.assert_allclose(ops.digamma(T(x)).asnumpy(), special.digamma(x), rtol=1e-9)
    np.testing.assert_allclose(ops.igamma(T(a), T(v)).asnumpy(), special.gammainc(a, v),
                               rtol=1e-9)


def test_unpool_gradient_is_a_gather():
    x = rand(1, 1, 4, 4)
    pooled, idx = nn.MaxPool2d(3, 1, pad_mode="pad", padding=1, return_indices=True)(T(x))
    unpool = nn.MaxUnpool2d(3, 1, 1)
    out = unpool(pooled, idx, output_size=(4, 4)).asnumpy()
    flat = np.zeros(16)
    flat[idx.asnumpy().reshape(-1)] = pooled.asnumpy().reshape(-1)   # written once
    np.testing.assert_allclose(out.reshape(-1), flat)
    g = rand(1, 1, 4, 4, seed=9)
    grad = ms.grad(lambda p: (unpool(p, idx, output_size=(4, 4)) * T(g)).sum())(pooled)
    np.testing.assert_allclose(grad.asnumpy().reshape(-1),
                               g.reshape(-1)[idx.asnumpy().reshape(-1)])


# -- numpy references for layers MindSpore runs only on GPU/Ascend ---------------------------------
def test_replication_pad():
    x = rand(2, 3, 4)
    np.testing.assert_allclose(nn.ReplicationPad1d((2, 1))(T(x)).asnumpy(),
                               np.pad(x, ((0, 0), (0, 0), (2, 1)), mode="edge"))
    np.testing.assert_allclose(nn.ReplicationPad2d((1, 0, 2, 3))(T(x)).asnumpy(),
                               np.pad(x, ((0, 0), (2, 3), (1, 0)), mode="edge"))
    x5 = rand(1, 2, 2, 3, 2)
    np.testing.assert_allclose(nn.ReplicationPad3d(1)(T(x5)).asnumpy(),
                               np.pad(x5, ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1)), mode="edge"))
    with pytest.raises(TypeError):
        nn.ReplicationPad2d([1, 1, 1, 1])


def test_instance_norm_and_its_moving_statistics():
    x = rand(3, 2, 4, 5)
    net = nn.InstanceNorm2d(2, momentum=0.25, gamma_init=ms.Tensor(np.array([2.0, 0.5],
                                                                             np.float32)))
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-5) * np.array([2.0, 0.5]).reshape(1, 2, 1, 1)
    np.testing.assert_allclose(net(T(x.astype(np.float32))).asnumpy(), want, rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(net.moving_mean.asnumpy(), 0.0)          # eval: unchanged
    net.set_train()
    net(T(x.astype(np.float32)))
    n = 20
    np.testing.assert_allclose(net.moving_mean.asnumpy(), 0.25 * mean.mean(axis=0).reshape(-1),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.moving_variance.asnumpy(),
                               0.75 + 0.25 * (var * n / (n - 1)).mean(axis=0).reshape(-1),
                               rtol=1e-5)
    assert [k for k, _ in net.parameters_and_names()] == ["moving_mean", "moving_variance",
                                                          "gamma", "beta"]
    with pytest.raises(ValueError):
        nn.InstanceNorm1d(2)(T(x))
    nn.InstanceNorm3d(2)(T(rand(1, 2, 2, 2, 2)))


def test_matrix_diag_cells():
    x = rand(2, 3, 4)
    np.testing.assert_allclose(nn.MatrixDiag()(T(x[0, 0])).asnumpy(), np.diag(x[0, 0]))
    np.testing.assert_allclose(nn.MatrixDiagPart()(T(x)).asnumpy(),
                               np.stack([np.diag(m) for m in x]))
    d = rand(2, 3, seed=1)
    want = x.copy()
    for b in range(2):
        want[b][np.arange(3), np.arange(3)] = d[b]
    np.testing.assert_allclose(nn.MatrixSetDiag()(T(x), T(d)).asnumpy(), want)


def _patches_ref(x, k, s, r, padding):
    """TensorFlow's extract_image_patches on NCHW, by loops: depth = (i, j, c)."""
    n, c, h, w = x.shape
    eff = [r[a] * (k[a] - 1) + 1 for a in range(2)]
    if padding == "same":
        outs = [-(-h // s[0]), -(-w // s[1])]
        pads = [max((o - 1) * st + e - size, 0) for o, st, e, size in
                zip(outs, s, eff, (h, w))]
        x = np.pad(x, ((0, 0), (0, 0), (pads[0] // 2, pads[0] - pads[0] // 2),
                       (pads[1] // 2, pads[1] - pads[1] // 2)))
    else:
        outs = [(h - eff[0]) // s[0] + 1, (w - eff[1]) // s[1] + 1]
    out = np.zeros((n, k[0] * k[1] * c, outs[0], outs[1]))
    for i in range(k[0]):
        for j in range(k[1]):
            for y in range(outs[0]):
                for z in range(outs[1]):
                    out[:, (i * k[1] + j) * c:(i * k[1] + j + 1) * c, y, z] = \
                        x[:, :, y * s[0] + i * r[0], z * s[1] + j * r[1]]
    return out


@pytest.mark.parametrize("k,s,r,padding", [((2, 2), (1, 1), (1, 1), "valid"),
                                           ((2, 3), (2, 1), (1, 2), "valid"),
                                           ((3, 2), (2, 2), (1, 1), "same")])
def test_unfold_extracts_tensorflow_patches(k, s, r, padding):
    x = rand(2, 3, 6, 7)
    net = nn.Unfold([1, *k, 1], [1, *s, 1], [1, *r, 1], padding)
    np.testing.assert_allclose(net(T(x)).asnumpy(), _patches_ref(x, k, s, r, padding))


def test_roll():
    x = rand(3, 4)
    np.testing.assert_allclose(nn.Roll(2, 1)(T(x)).asnumpy(), np.roll(x, 2, 1))
    np.testing.assert_allclose(nn.Roll([1, -1], [0, 1])(T(x)).asnumpy(),
                               np.roll(x, (1, -1), (0, 1)))
    np.testing.assert_allclose(ops.roll(T(x), 5).asnumpy(), np.roll(x, 5))


@pytest.mark.parametrize("operator", ["SUM", "MEAN", "MAX"])
def test_multi_field_embedding_lookup(operator):
    net = set_params(nn.MultiFieldEmbeddingLookup(6, 3, 3, operator=operator), np.float32)
    table = net.embedding_table.asnumpy().astype(np.float64)
    ids = np.array([[0, 5, 2, 2], [1, 3, 4, 0]], np.int32)
    values = np.array([[1.0, 0.5, 0.0, 2.0], [1.0, 1.0, -1.0, 0.0]], np.float32)
    fields = np.array([[0, 0, 2, 2], [1, 1, 1, 0]], np.int32)
    out = net(T(ids), T(values), T(fields)).asnumpy()
    want = np.zeros((2, 3, 3))
    for b in range(2):
        for f in range(3):
            sel = [j for j in range(4) if fields[b, j] == f]
            vecs = [values[b, j] * table[ids[b, j]] for j in sel]
            if operator == "SUM" and vecs:
                want[b, f] = np.sum(vecs, 0)
            elif operator == "MEAN" and vecs:
                count = sum(abs(values[b, j]) for j in sel)
                want[b, f] = np.sum(vecs, 0) / count if count else 0.0
            elif operator == "MAX":
                kept = [v for v, j in zip(vecs, sel) if values[b, j] != 0]
                want[b, f] = np.max(kept, 0) if kept else 0.0
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_embedding_lookup_max_norm_and_clip_by_norm_axis():
    net = set_params(nn.EmbeddingLookup(5, 3, max_norm=0.4), np.float32)
    table = net.embedding_table.asnumpy()
    ids = np.array([[0, 4], [7, -1]], np.int32)
    out = net(T(ids)).asnumpy()
    rows = table[np.clip(ids, 0, 4)] * ((ids >= 0) & (ids < 5))[..., None]
    norm = np.linalg.norm(rows, axis=-1, keepdims=True)
    np.testing.assert_allclose(out, rows * 0.4 / np.maximum(norm, 0.4), rtol=1e-6)
    x = rand(2, 3, 4).astype(np.float32)
    got = nn.ClipByNorm(axis=1)(T(x), T(np.float32(0.7))).asnumpy()
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(got, x * 0.7 / np.maximum(norm, 0.7), rtol=1e-6)


def _ssim_ref(a, b, max_val, size, sigma, k1, k2):
    """MindSpore's SSIM algorithm in numpy: per-channel Gaussian 'valid' filtering."""
    from numpy.lib.stride_tricks import sliding_window_view
    coords = np.arange(-size // 2 + 1, size // 2 + 1)
    g = np.exp(-(coords[:, None] ** 2 + coords[None, :] ** 2) / (2 * sigma ** 2))
    g /= g.sum()

    def f(img):
        return np.einsum("ijkl,kl->ij", sliding_window_view(img, g.shape), g)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    ssim = np.zeros(a.shape[:2])
    cs = np.zeros(a.shape[:2])
    for n in range(a.shape[0]):
        for c in range(a.shape[1]):
            x, y = a[n, c], b[n, c]
            mx, my = f(x), f(y)
            sx, sy, sxy = f(x * x) - mx * mx, f(y * y) - my * my, f(x * y) - mx * my
            v1, v2 = 2 * sxy + c2, sx + sy + c2
            ssim[n, c] = ((2 * mx * my + c1) * v1 / ((mx * mx + my * my + c1) * v2)).mean()
            cs[n, c] = (v1 / v2).mean()
    return ssim, cs


def test_image_quality_measures():
    rng = np.random.default_rng(3)
    a = rng.random((2, 2, 12, 12)).astype(np.float32)
    b = np.clip(a + rng.normal(0, 0.1, a.shape), 0, 1).astype(np.float32)
    mse = ((a.astype(np.float64) - b) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(nn.PSNR()(T(a), T(b)).asnumpy(), 10 * np.log10(1 / mse),
                               rtol=1e-5)
    a8, b8 = (a * 255).astype(np.uint8), (b * 255).astype(np.uint8)
    mse8 = ((a8 / 255.0 - b8 / 255.0) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(nn.PSNR(255)(T(a8), T(b8)).asnumpy(), 10 * np.log10(1 / mse8),
                               rtol=1e-4)
    ssim, _ = _ssim_ref(a, b, 1.0, 11, 1.5, 0.01, 0.03)
    np.testing.assert_allclose(nn.SSIM()(T(a), T(b)).asnumpy(), ssim.mean(1), rtol=1e-4)
    assert [k for k, _ in nn.SSIM().parameters_and_names()] == ["conv.weight"]
    factors = (0.3, 0.7)
    net = nn.MSSSIM(power_factors=factors, filter_size=3, filter_sigma=1.0)
    s0, cs0 = _ssim_ref(a, b, 1.0, 3, 1.0, 0.01, 0.03)
    a2 = a.reshape(2, 2, 6, 2, 6, 2).mean(axis=(3, 5))
    b2 = b.reshape(2, 2, 6, 2, 6, 2).mean(axis=(3, 5))
    s1, _ = _ssim_ref(a2, b2, 1.0, 3, 1.0, 0.01, 0.03)
    want = (np.maximum(cs0, 0) ** 0.3 * np.maximum(s1, 0) ** 0.7).mean(1)
    np.testing.assert_allclose(net(T(a), T(b)).asnumpy(), want, rtol=1e-4)


# -- training-mode randomness ----------------------------------------------------------------------
@pytest.mark.parametrize("cell,shape", [(nn.Dropout1d(0.5), (8, 16, 5)),
                                        (nn.Dropout2d(0.5), (8, 16, 3, 3)),
                                        (nn.Dropout3d(0.25), (8, 16, 2, 2, 2)),
                                        (nn.Dropout1d(0.5), (16, 5))])
def test_channel_dropout_drops_whole_channels(cell, shape):
    cell.set_train()
    x = np.abs(rand(*shape)) + 1.0
    out = cell(T(x)).asnumpy()
    p = cell.p
    lead = 1 if len(shape) == 2 else 2
    planes = out.reshape(shape[:lead] + (-1,))
    ref = x.reshape(shape[:lead] + (-1,))
    dropped = np.all(planes == 0, axis=-1)
    kept = np.all(np.isclose(planes, ref / (1 - p)), axis=-1)
    assert np.all(dropped | kept)                  # each channel dropped or scaled whole
    assert 0.1 < dropped.mean() < 0.9
    cell.set_train(False)
    np.testing.assert_array_equal(cell(T(x)).asnumpy(), x)


def test_rrelu_slopes():
    x = -np.abs(rand(2000)) - 0.1
    net = nn.RReLU(0.1, 0.3)
    np.testing.assert_allclose(net(T(x)).asnumpy(), x * 0.2)       # eval: the mean slope
    net.set_train()
    slopes = net(T(x)).asnumpy() / x
    assert slopes.min() >= 0.1 and slopes.max() < 0.3 and abs(slopes.mean() - 0.2) < 0.01
    pos = np.abs(rand(5)) + 0.1
    np.testing.assert_allclose(net(T(pos)).asnumpy(), pos)


def test_rnn_parameter_views_and_dropout_between_layers():
    lstm = nn.LSTM(3, 4, 2, bidirectional=True, dropout=0.5)
    assert [p.name for p in lstm.w_ih_list] == ["weight_ih_l0", "weight_ih_l0_reverse",
                                                "weight_ih_l1", "weight_ih_l1_reverse"]
    assert len(lstm.b_hh_list) == 4 and len(nn.GRU(3, 4, has_bias=False).b_ih_list) == 0
    x = T(rand(4, 2, 3).astype(np.float32))
    a, _ = lstm(x)
    b, _ = lstm(x)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())      # eval: no dropout
    lstm.set_train()
    c, _ = lstm(x)
    assert not np.allclose(a.asnumpy(), c.asnumpy())


# -- every backend gives the numpy reference's values and gradients --------------------------------
def _case_lstm():
    return (set_params(nn.LSTM(3, 4, 1, bidirectional=True), np.float32),
            (rand(3, 2, 3).astype(np.float32), None, np.array([3, 2], np.int32)))


def _case_mha():
    return (set_params(nn.MultiheadAttention(4, 2), np.float32),
            (rand(2, 2, 4).astype(np.float32), rand(3, 2, 4, seed=1).astype(np.float32),
             rand(3, 2, 4, seed=2).astype(np.float32),
             np.array([[False, True, False], [False, False, False]])))


def _case_encoder():
    return (set_params(nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0), np.float32),
            (rand(3, 2, 4).astype(np.float32),))


def _case_pools():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pad = nn.ReflectionPad2d(1)
            self.pool = nn.MaxPool2d(2, 2, pad_mode="pad", return_indices=True)
            self.unpool = nn.MaxUnpool2d(2)
            self.adapt = nn.AdaptiveMaxPool2d((2, 3))
            self.up = nn.Upsample(size=(5, 5), mode="bilinear")
            self.norm = nn.GroupNorm(1, 2)

        def construct(self, x):
            y, i = self.pool(self.pad(x))
            return self.norm(self.up(self.adapt(self.unpool(y, i))))
    return set_params(Net(), np.float32), (rand(1, 2, 4, 4).astype(np.float32),)


_CASES = {"lstm": _case_lstm, "mha": _case_mha, "encoder": _case_encoder,
          "pools": _case_pools}


def _values_and_grads(make):
    ms.set_seed(0)
    cell, inputs = make()
    args = [T(a) if isinstance(a, np.ndarray) else a for a in inputs]
    floats = tuple(i for i, a in enumerate(inputs)
                   if isinstance(a, np.ndarray) and a.dtype == np.float32)

    def loss(*xs):
        total = None
        for k, o in enumerate(_flat(cell(*xs))):
            w = T(rand(*o.shape, seed=50 + k).astype(np.float32))
            total = (o * w).sum() if total is None else total + (o * w).sum()
        return total
    value, grads = ms.value_and_grad(loss, floats, cell.trainable_params())(*args)
    return float(value.asnumpy()), [g.asnumpy() for g in _flat(grads)]


@pytest.mark.parametrize("case", sorted(_CASES))
@pytest.mark.parametrize("backend", [b for b in available_backends() if b != "numpy"])
def test_backends_agree(backend, case):
    if not SLOW and backend == "jax":
        pytest.skip("jax compiles every op on first use (10-20 s a case here): "
                    "MSCORE_SLOW_TESTS=1 runs it")
    use_backend("numpy")
    ref_value, ref_grads = _values_and_grads(_CASES[case])
    use_backend(backend)
    value, grads = _values_and_grads(_CASES[case])
    assert value == pytest.approx(ref_value, rel=1e-4, abs=1e-5)
    assert len(grads) == len(ref_grads)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g, r, rtol=2e-3, atol=2e-4)
