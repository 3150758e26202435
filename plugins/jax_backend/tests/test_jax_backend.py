"""The jax backend plugin: registration and probe, device selection, random streams, the
overflow check and the x64 switch. Ops are in test_jax_ops, native autodiff in
test_jax_autodiff, GRAPH_MODE in test_jax_graph_mode, training runs in
test_jax_training."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from _jax_compare import JB, PLUGIN_DIR, REG, jax, rand

import mscore as ms
from mscore import ops
from mscore.common import dtype as mdt


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


# -- random streams and the overflow check ----------------------------------------------
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
    good = [JB.from_numpy(rand(3, 3)), JB.from_numpy(np.arange(4, dtype=np.int32))]
    assert JB.all_finite(good) is True
    bad = good + [JB.from_numpy(np.array([1.0, np.inf], np.float16))]
    assert JB.all_finite(bad) is False
    assert JB.all_finite([JB.from_numpy(np.array([np.nan], np.float32))]) is False
    assert JB.all_finite([]) is True
    traced = jax.jit(lambda xs: JB.all_finite(xs))(bad)
    assert traced.shape == () and not bool(traced)


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
