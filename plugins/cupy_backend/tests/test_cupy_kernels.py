"""The reference autodiff's one-kernel path on the CuPy stand-in: relu and sparse softmax
cross-entropy through the backend's kernels (mscore.autodiff.kernels), checked against numpy
formulas and finite differences, and the MLP train step's kernel count against the
hand-written CuPy step's (bench/cupy_vs_native.py --count). On a CUDA device the kernels
themselves are compared with the stand-in's formulas (skipped with the probe's reason
elsewhere; the conformance kit's fused level on ``cupy`` compares them with the composites)."""
from __future__ import annotations

import numpy as np
import pytest
from _helpers import central_differences, load_script
from test_cupy_backend import needs_gpu, standin_backend

import mscore as ms
from mscore import nn, ops
from mscore.plugin.registry import get_registry
from mscore_cupy.backend import CupyBackend

COUNT = load_script("bench", "count_calls")
CUPY_BENCH = load_script("bench", "cupy_vs_native")


@pytest.fixture
def cupy_sim():
    with standin_backend() as name:
        yield name


def _numpy_cross_entropy(x, t, ignore_index, reduction):
    """Cross entropy of logits (N, C, d...) and class indices (N, d...) in float64."""
    xr = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])
    tr = t.reshape(-1)
    shifted = xr - xr.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    valid = tr != ignore_index
    loss = np.where(valid, -logp[np.arange(tr.size), np.where(valid, tr, 0)], 0.0)
    if reduction == "none":
        return loss.reshape(t.shape)
    return loss.sum() / (valid.sum() if reduction == "mean" else 1.0)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("shape", [(6, 5), (3, 5, 2)])
def test_cross_entropy_kernel_path_value_and_gradient(cupy_sim, reduction, ignore_index, shape):
    ms.set_context(backend=cupy_sim)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape) * 2.0
    t = rng.integers(0, shape[1], size=(shape[0],) + shape[2:]).astype(np.int32)
    t.reshape(-1)[1] = ignore_index
    cot = rng.uniform(0.5, 1.5, size=t.shape if reduction == "none" else ())

    def loss(v):
        out = ops.cross_entropy(v, ms.Tensor(t), ignore_index=ignore_index,
                                reduction=reduction)
        return ops.sum(out * ms.Tensor(cot))

    with COUNT.counting() as counter:
        value, grad = ms.value_and_grad(loss)(ms.Tensor(x))
    assert counter.counts["sparse_nll_rows"] == 1 and counter.counts["sparse_xent_grad"] == 1
    assert counter.counts["scatter_add"] == 0 and counter.counts["getitem"] == 0
    want = float(np.sum(_numpy_cross_entropy(x, t, ignore_index, reduction) * cot))
    np.testing.assert_allclose(float(value.asnumpy()), want, rtol=1e-12)
    fd = central_differences(lambda v: float(np.sum(
        _numpy_cross_entropy(v, t, ignore_index, reduction) * cot)), x)
    np.testing.assert_allclose(grad.asnumpy(), fd, rtol=1e-6, atol=1e-8)


def test_relu_kernel_path_value_and_gradient(cupy_sim):
    ms.set_context(backend=cupy_sim)
    rng = np.random.default_rng(4)
    x = rng.uniform(0.2, 2.0, (4, 5)) * rng.choice([-1.0, 1.0], (4, 5))
    cot = rng.uniform(0.5, 1.5, (4, 5))

    with COUNT.counting() as counter:
        value, grad = ms.value_and_grad(lambda v: ops.sum(ops.relu(v) * ms.Tensor(cot)))(
            ms.Tensor(x))
    assert counter.counts["relu"] == 1 and counter.counts["relu_backward"] == 1
    assert counter.counts["greater"] == 0 and counter.counts["where"] == 0
    np.testing.assert_allclose(float(value.asnumpy()), np.sum(np.maximum(x, 0) * cot),
                               rtol=1e-12)
    np.testing.assert_allclose(grad.asnumpy(), np.where(x > 0, cot, 0.0), rtol=0, atol=0)


def test_relu_kernel_gives_the_composites_nan_and_zero(cupy_sim):
    """relu(nan) is 0 and the gradient at 0 is 0 on the kernel path, as on the composite."""
    x = np.array([np.nan, 0.0, -0.0, -1.0, 3.0], np.float32)
    results = {}
    for backend in ("numpy", cupy_sim):
        ms.set_context(backend=backend)
        value, grad = ms.value_and_grad(lambda v: ops.sum(ops.relu(v)))(ms.Tensor(x))
        results[backend] = (ops.relu(ms.Tensor(x)).asnumpy(), grad.asnumpy())
    np.testing.assert_array_equal(results[cupy_sim][0], [0.0, 0.0, 0.0, 0.0, 3.0])
    np.testing.assert_array_equal(results[cupy_sim][1], [0.0, 0.0, 0.0, 0.0, 1.0])
    for a, b in zip(results["numpy"], results[cupy_sim]):
        np.testing.assert_array_equal(a, b)


def test_hand_written_counter_counts_one_per_array_module_op():
    """Operators, in-place ops, reductions, fancy reads and writes and creation functions
    count one each; views count nothing."""
    cp = CUPY_BENCH.CountingArrayModule()
    a = cp.asarray(np.ones((3, 4), np.float32))
    b = cp.asarray(np.ones((4, 2), np.float32))
    rows, cols = cp.arange(3), cp.asarray(np.array([0, 1, 1]))
    cp.counts.clear()
    c = a @ b + 1.0              # matmul, add
    m = c.T.mean()               # view; one reduction
    c[rows, cols] -= 1           # fancy read, subtract, fancy write
    _ = cp.maximum(c, 0)[:, 0]   # maximum; basic slice is a view
    _ = cp.arange(3)             # creation
    assert sum(cp.counts.values()) == 8, cp.counts
    assert cp.counts["getitem"] == 1 and cp.counts["setitem"] == 1
    np.testing.assert_allclose(float(m), 5.0)


@pytest.mark.parametrize("optimizer", ["sgd", "momentum"])
def test_mlp_step_launches_no_more_kernels_than_the_hand_written_step(cupy_sim, optimizer):
    """bench/cupy_vs_native.py --count: the same losses on both sides, and the stand-in's
    mscore step makes at most as many CuPy kernels as the hand-written CuPy step (the
    load-independent proxy for its launches: 57 against 46 with plain SGD before the
    fused kernels)."""
    result = CUPY_BENCH.count(batch=8, steps=1,
                              momentum=0.9 if optimizer == "momentum" else None)
    assert result["backend"] == "cupy_sim"
    ms_losses, native_losses = result["losses"]
    np.testing.assert_allclose(ms_losses, native_losses, rtol=1e-5)
    summary, counts = result["mscore"]
    native = sum(result["native"].values())
    assert summary["kernels"] <= native, (summary, counts, result["native"])
    assert counts["relu_backward"] == 2 and counts["sparse_xent_grad"] == 1


def test_label_check_kernel_on_the_device_path(cupy_sim):
    """The stand-in takes the device path of the label check (one backend call): ignored
    labels count for nothing, an out-of-range one raises at the next host read."""
    ms.set_context(backend=cupy_sim)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    logp = x - np.log(np.exp(x.astype(np.float64)).sum(1, keepdims=True))
    with COUNT.counting() as counter:
        got = nn.CrossEntropyLoss()(ms.Tensor(x), ms.Tensor(np.array([0, -100, 3], np.int32)))
    assert counter.counts["class_label_check"] == 1 and counter.counts["any"] == 0
    np.testing.assert_allclose(float(got.asnumpy()), -(logp[0, 0] + logp[2, 3]) / 2,
                               rtol=1e-6)
    with pytest.raises(ValueError, match=r"labels.*\[0, 4\).*5"):
        nn.CrossEntropyLoss()(ms.Tensor(x), ms.Tensor(np.array([0, 5, 3], np.int32))).asnumpy()
    with pytest.raises(ValueError, match="-100"):   # no ignore_index here
        nn.SoftmaxCrossEntropyWithLogits(sparse=True)(
            ms.Tensor(x), ms.Tensor(np.array([0, -100, 3], np.int32))).asnumpy()


# == on a CUDA device ==============================================================================
def _device_and_host(make):
    """``make(backend)`` on the CUDA backend (as numpy) and on the stand-in."""
    gpu = get_registry().get("cupy")
    out = make(gpu, gpu.from_numpy)
    got = [gpu.to_numpy(o) for o in (out if isinstance(out, tuple) else (out,))]
    want = make(CupyBackend(xp=np), lambda a: a)
    return got, list(want if isinstance(want, tuple) else (want,))


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_kernels_on_device_match_the_standin(dtype):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((33, 7)) * 2).astype(dtype)
    x[0, :3] = [np.nan, 0.0, -0.0]
    g = rng.standard_normal((33, 7)).astype(dtype)
    got, want = _device_and_host(lambda b, put: b.relu(put(x)))
    np.testing.assert_array_equal(got[0], want[0])
    got, want = _device_and_host(lambda b, put: b.relu_backward(put(g), put(x)))
    np.testing.assert_array_equal(got[0], want[0])
    sh = x[1:, :] - x[1:, :].max(axis=1, keepdims=True)
    s = np.exp(sh).sum(axis=1, keepdims=True)
    t = rng.integers(0, 7, 32).astype(np.int32)
    t[[1, 2]] = [-100, 9]                         # ignored; out of range (picks nothing)
    got, want = _device_and_host(
        lambda b, put: b.sparse_nll_rows(put(sh[:, ::1]), put(s), put(t), -100))
    for a, e in zip(got, want):
        np.testing.assert_allclose(a, e, rtol=5e-3 if dtype == np.float16 else 1e-6)
    valid = (t != -100).astype(dtype).reshape(32, 1)
    for scale in (np.asarray(0.25, dtype), rng.uniform(0.5, 2, (32, 1)).astype(dtype)):
        got, want = _device_and_host(lambda b, put, scale=scale: b.sparse_xent_grad(
            put(np.exp(sh)), put(s), put(t), put(valid), put(scale)))
        np.testing.assert_allclose(got[0], want[0], rtol=5e-3 if dtype == np.float16 else 1e-6,
                                   atol=1e-7)


@needs_gpu
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64])
def test_label_check_on_device_matches_the_standin(dtype):
    labels = np.array([0, 4, 5, 3, 200 if dtype == np.uint8 else -7, 2], dtype)
    for ignore in (None, 3):
        got, want = _device_and_host(
            lambda b, put, ignore=ignore: b.class_label_check(put(labels), 5, ignore))
        np.testing.assert_array_equal(got[0], want[0])
        assert bool(got[1]) is bool(want[1]) is True
    got, _ = _device_and_host(lambda b, put: b.class_label_check(put(labels[:2]), 5, None))
    assert bool(got[1]) is False


@needs_gpu
@pytest.mark.parametrize("optimizer", ["sgd", "momentum"])
def test_mlp_step_on_device_counts_and_losses(optimizer):
    """bench/cupy_vs_native.py --count on the GPU: the same first losses as the hand-written
    CuPy step, and no more kernels."""
    try:
        result = CUPY_BENCH.count(batch=64, steps=1,
                                  momentum=0.9 if optimizer == "momentum" else None)
    finally:
        ms.set_context(backend="numpy", device_target="CPU", device_id=0)
    assert result["backend"] == "cupy"
    np.testing.assert_allclose(*result["losses"], rtol=1e-4)
    assert result["mscore"][0]["kernels"] <= sum(result["native"].values())
