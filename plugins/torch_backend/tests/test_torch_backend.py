"""The torch backend plugin (plugins/torch_backend): registration, creation and transfer
of every dtype, random streams, the fused overflow check and devices (CPU, CUDA when
present). Ops are in test_torch_ops/test_torch_fused_ops, autodiff in test_torch_autodiff,
GRAPH_MODE and training runs in test_torch_graph_mode."""
from __future__ import annotations

import math
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from _torch_compare import CUDA, RNG, assert_close, both, rnd, run_on, torch

import mscore as ms
from mscore import ops
from mscore.plugin.registry import get_registry


# -- registration -----------------------------------------------------------------------------
def test_entry_point_spec_and_probe():
    reg = get_registry()
    spec = reg.spec("torch")
    assert spec.plugin == "torch"
    assert spec.version.split("+")[0] == torch.__version__.split("+")[0]
    assert {"native_autodiff", "compile"} <= spec.capabilities
    assert set(spec.dtypes) >= {"float16", "bfloat16", "float32", "float64"}
    available, reason, devices = spec.probe()
    assert available and reason == ""
    assert devices[0] == "CPU"
    assert len(devices) == 1 + (torch.cuda.device_count() if CUDA else 0)
    desc = reg.describe("torch")
    assert desc["status"] == "available"


def test_importing_the_plugin_does_not_import_torch():
    code = ("import sys, mscore, mscore_torch.plugin as p; "
            "specs = p.mscore_register_backends(); "
            "assert specs[0].name == 'torch'; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_no_missing_primitives_and_direct_bindings():
    from mscore.plugin.backend import missing_primitives
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    assert missing_primitives(b) == []
    # Cheap dispatch: one-to-one ops call torch with no wrapper frame.
    assert b.add is torch.add and b.matmul is torch.matmul and b.where is torch.where


# -- creation, transfer, dtypes ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8",
                                   "int16", "int32", "int64", "uint8", "bool"])
def test_numpy_round_trip_every_dtype(dtype):
    ms.set_context(backend="torch")
    np_dtype = getattr(ms, dtype if dtype != "bool" else "bool_").np_dtype
    src = (RNG.uniform(-3, 3, (3, 4)) * 10).astype(np_dtype)
    t = ms.Tensor(src)
    assert t.dtype is getattr(ms, dtype if dtype != "bool" else "bool_")
    back = t.asnumpy()
    assert back.dtype == np_dtype
    np.testing.assert_array_equal(back.view(np.uint8), src.view(np.uint8))
    back[...] = 0  # a copy: the tensor keeps its values
    np.testing.assert_array_equal(t.asnumpy().view(np.uint8), src.view(np.uint8))


def test_bfloat16_bits_survive_and_cast_matches_numpy():
    ms.set_context(backend="torch")
    src = np.array([1.0, -2.5, 3.140625, 1e-3, 65504.0, np.inf], dtype=ml_dtypes.bfloat16)
    t = ms.Tensor(src)
    assert t._data.dtype == torch.bfloat16
    np.testing.assert_array_equal(t.asnumpy().view(np.uint16), src.view(np.uint16))
    x = rnd(50)
    both(lambda a: ops.cast(a, ms.bfloat16), x, dtype="float32")
    both(lambda a: ops.cast(a, ms.float16), x, dtype="float64")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "int64", "bool"])
def test_zero_dim_round_trip(dtype):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    dt = getattr(ms, dtype if dtype != "bool" else "bool_")
    t = b.from_numpy(np.asarray(1.0), dt)
    assert tuple(t.shape) == () and b.dtype(t) is dt
    back = b.to_numpy(t)
    assert back.shape == () and back.dtype == dt.np_dtype and back.astype(np.float64) == 1.0


def test_creation_ops():
    both(lambda: (ops.zeros((2, 3)), ops.ones((2,), ms.int32), ops.full((2, 2), 1.5),
                  ops.arange(0, 5), ops.arange(0.0, 1.0, 0.25), ops.eye(3, 4),
                  ops.arange(5, dtype=ms.float16)), dtype=None)


def test_nonstandard_input_arrays_are_copied():
    ms.set_context(backend="torch")
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = src[:, ::2]                      # not contiguous
    ro = src.copy()
    ro.setflags(write=False)                # read-only
    np.testing.assert_array_equal(ms.Tensor(view).asnumpy(), view)
    np.testing.assert_array_equal(ms.Tensor(ro).asnumpy(), ro)
    t = ms.Tensor(src)
    src[0, 0] = 100
    assert t.asnumpy()[0, 0] == 0


# -- random streams ----------------------------------------------------------------------------
def test_random_streams_are_counter_based_and_deterministic():
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    s0 = b.rng_state(7)
    assert s0.dtype == torch.int64 and s0.tolist() == [7, 0]
    u1, s1 = b.random_uniform(s0, (1000,), ms.float32)
    u2, s2 = b.random_uniform(s0, (1000,), ms.float32)
    assert s1.tolist() == [7, 1] and torch.equal(u1, u2)
    u3, _ = b.random_uniform(s1, (1000,), ms.float32)
    assert not torch.equal(u1, u3)
    other, _ = b.random_uniform(b.rng_state(8), (1000,), ms.float32)
    assert not torch.equal(u1, other)
    # The first n values of a longer draw are the same: values depend on (seed, counter, i).
    longer, _ = b.random_uniform(s0, (2000,), ms.float32)
    assert torch.equal(longer[:1000], u1)
    assert s0.tolist() == [7, 0]  # states are values, never mutated


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_random_distributions(dtype):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    dt = getattr(ms, dtype)
    u, s = b.random_uniform(b.rng_state(3), (200, 100), dt)
    n, _ = b.random_normal(s, (200, 100), dt)
    assert u.dtype == b.native_dtype(dt) and tuple(u.shape) == (200, 100)
    uf, nf = u.double(), n.double()
    assert 0.0 <= uf.min().item() and uf.max().item() < 1.0
    # 20000 draws: the standard errors are 0.002 (mean of U) and 0.007 (mean of N).
    assert abs(uf.mean().item() - 0.5) < 0.01
    assert abs(uf.var().item() - 1 / 12) < 0.005
    assert abs(nf.mean().item()) < 0.03 and abs(nf.std().item() - 1) < 0.03
    assert abs(((nf.abs() < 1).double().mean().item()) - 0.6827) < 0.02
    hist = torch.histc(uf.float(), bins=10, min=0, max=1) / uf.numel()
    assert torch.all((hist - 0.1).abs() < 0.012)


def test_dropout_and_global_stream_through_ops():
    ms.set_context(backend="torch")
    ms.set_seed(11)
    a = ops.dropout(ops.ones((4000,)), p=0.25).asnumpy()
    ms.set_seed(11)
    b = ops.dropout(ops.ones((4000,)), p=0.25).asnumpy()
    c = ops.dropout(ops.ones((4000,)), p=0.25).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)
    assert abs((a == 0).mean() - 0.25) < 0.03
    np.testing.assert_allclose(a[a != 0], 1 / 0.75, rtol=1e-6)


# -- overflow check --------------------------------------------------------------------------
def test_all_finite_one_pass_one_sync(monkeypatch):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    arrays = [torch.randn(5, 3), torch.randn(7).half(), torch.randn(2, 2).bfloat16(),
              torch.arange(4), torch.randn(3).double()]
    assert b.all_finite(arrays) is True
    assert b.all_finite([]) is True
    syncs = []
    original = torch.Tensor.item

    def counting_item(self):
        syncs.append(1)
        return original(self)
    monkeypatch.setattr(torch.Tensor, "item", counting_item)
    for k, bad in enumerate((math.inf, -math.inf, math.nan)):
        broken = [a.clone() for a in arrays]
        broken[k + 1 if k < 2 else 4].view(-1)[0] = bad
        syncs.clear()
        assert b.all_finite(broken) is False
        assert len(syncs) == 1
    monkeypatch.undo()
    # 65504 is finite in float16; the check must not overflow on large finite values.
    assert b.all_finite([torch.full((3,), 65504.0, dtype=torch.float16)]) is True


# -- devices ----------------------------------------------------------------------------------
@pytest.mark.skipif(CUDA, reason="checks the error on a machine without CUDA")
def test_gpu_without_cuda_is_a_clear_error():
    ms.set_context(backend="torch")
    with pytest.raises(ValueError, match="device_target"):
        ms.set_context(device_target="GPU")
    assert ms.context.current_backend().device == "CPU"
    with pytest.raises(ValueError, match="device_target"):
        ms.set_context(device_target="Ascend")


def test_cpu_device_stats_and_sync():
    ms.set_context(backend="torch", device_target="CPU")
    b = ms.context.current_backend()
    assert b.memory_stats() == {}
    b.synchronize()
    assert ms.Tensor(np.ones(2))._data.device.type == "cpu"


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
def test_cuda_placement_matches_cpu():
    x, w = rnd(4, 3, 6, 6), rnd(5, 3, 3, 3)

    def fn(a, b):
        out = ops.relu(ops.conv2d(a, b, pad_mode="same"))
        return ms.value_and_grad(lambda p, q: ops.sum(ops.softmax(ops.conv2d(
            p, q, pad_mode="same"), 1) * ops.arange(5, dtype=ms.float32).reshape(
            1, 5, 1, 1)), (0, 1))(a, b), out
    ref = run_on("torch", fn, x, w, dtypes=ms.float32, device="CPU")
    got = run_on("torch", fn, x, w, dtypes=ms.float32, device="GPU")
    b = ms.context.current_backend()
    assert b.device == "GPU:0"
    assert ms.Tensor(np.ones(2))._data.device.type == "cuda"
    assert b.memory_stats()["bytes_in_use"] > 0
    assert_close(got, ref, "float32", factor=50.0)
    u_cpu = run_on("torch", lambda: ops.uniform((100,), seed=5), device="CPU")
    u_gpu = run_on("torch", lambda: ops.uniform((100,), seed=5), device="GPU")
    np.testing.assert_array_equal(u_cpu, u_gpu)  # counter-based: same stream on every device


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
@pytest.mark.parametrize("spread", ["small", "full_range"])
def test_exact_int_matmul_wraps_around_like_numpy(dtype, spread, monkeypatch):
    """The integer matmul CUDA lacks, on the CPU: exact, wrapping in the dtype, batched
    with broadcasting; the float64 path (small values) and the blocked int64 path (over
    several blocks here)."""
    from mscore_torch import ops as tb
    monkeypatch.setattr(tb, "_INT_MATMUL_CHUNK", 64)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    low, high = (info.min, info.max) if spread == "full_range" else (max(info.min, -5), 6)
    a = rng.integers(low, high, size=(2, 1, 3, 40), endpoint=True, dtype=dtype)
    b = rng.integers(low, high, size=(4, 40, 5), endpoint=True, dtype=dtype)
    got = tb.exact_int_matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    expected = np.matmul(a, b)          # numpy's integer loop wraps in the dtype
    assert got.dtype == expected.dtype and got.shape == (2, 4, 3, 5)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_matmul_on_cuda_matches_the_cpu(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(4)
    a = rng.integers(info.min, info.max, size=(3, 16), endpoint=True, dtype=dtype)
    b = rng.integers(info.min, info.max, size=(16, 2), endpoint=True, dtype=dtype)
    ms.set_context(backend="torch", device_target="GPU")
    try:
        got = ms.ops.matmul(ms.Tensor(a), ms.Tensor(b)).asnumpy()
    finally:
        ms.set_context(device_target="CPU")
    np.testing.assert_array_equal(got, np.matmul(a, b))
