"""Tests of the CuPy backend plugin (``plugins/cupy_backend``, package ``mscore_cupy``).

Three parts:

- plugin plumbing that needs no device: entry point, registration, probe, the unavailable
  error, ``mscore backends``;
- the backend's device-independent logic, run with numpy standing in for CuPy
  (``CupyBackend(xp=numpy)``): the fused overflow check's table and bit test, the scatter
  dtype plan, the counter-based random stream, argument validation, and whole training steps
  through the registry;
- the same logic on a CUDA device against the numpy reference, skipped with the probe's
  reason where there is none. On a GPU machine, run just this file with
  ``pytest plugins/cupy_backend/tests`` (see ``bench/gpu_check.py`` for the cross-backend check).
"""
from __future__ import annotations

import contextlib
import importlib.util
import sys
import types
from importlib import metadata
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from _backend_compare import assert_close

import mscore as ms
from mscore import ops
from mscore.plugin.backend import missing_primitives
from mscore.plugin.registry import BackendUnavailableError, get_registry

try:
    import mscore_cupy
except ImportError:  # not pip-installed: test the code from the checkout all the same
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import mscore_cupy  # noqa: F401
from mscore_cupy import plugin as cupy_plugin
from mscore_cupy.backend import CupyBackend, _scan_table_on_host, scatter_accumulator

AVAILABLE, REASON, DEVICES = cupy_plugin.probe()
needs_gpu = pytest.mark.skipif(not AVAILABLE, reason=f"cupy backend unavailable: {REASON}")
without_gpu = pytest.mark.skipif(AVAILABLE, reason="a CUDA device is present")

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = {"float16": np.dtype(np.float16), "bfloat16": BF16,
          "float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}
TOL = {"float16": 3e-3, "bfloat16": 2e-2, "float32": 2e-5, "float64": 1e-10}


def _installed():
    try:
        metadata.version("mscore-cupy")
        return True
    except metadata.PackageNotFoundError:
        return False


# == plugin plumbing ===============================================================================
@pytest.mark.skipif(not _installed(), reason="mscore-cupy is not pip-installed: "
                    "pip install -e plugins/cupy_backend")
def test_entry_point_and_registration():
    eps = {ep.name: ep.value for ep in metadata.entry_points(group="mscore.backends")}
    assert eps.get("cupy") == "mscore_cupy.plugin"
    registry = get_registry()
    assert "cupy" in registry.names()
    spec = registry.spec("cupy")
    assert spec.plugin == "cupy"
    assert spec.devices == ("GPU",)
    assert "native_autodiff" not in spec.capabilities   # reference autodiff, not a copy
    found = cupy_plugin.cupy_distribution()
    assert spec.version == (found[1] if found else "not installed")


def test_version_and_dtype_tables():
    assert cupy_plugin._version_tuple("14.2.0") == (14, 2, 0)
    assert cupy_plugin._version_tuple("14.0.0rc1") == (14, 0, 0)
    assert cupy_plugin._version_tuple("13") == (13, 0, 0)
    assert not cupy_plugin.bfloat16_supported("13.6.0", "2.4.0")
    assert not cupy_plugin.bfloat16_supported("14.0.0", "2.1.1")
    assert cupy_plugin.bfloat16_supported("14.0.0", "2.1.2")
    assert cupy_plugin.bfloat16_supported("15.1.0", "3.0.0")
    assert not cupy_plugin.bfloat16_supported(None, "2.4.0")
    assert "bfloat16" not in cupy_plugin.declared_dtypes("13.6.0", "2.4.0")
    with_bf16 = cupy_plugin.declared_dtypes("14.2.0", "2.4.0")
    assert with_bf16[:4] == ("float16", "bfloat16", "float32", "float64")
    spec = cupy_plugin.make_spec()
    found = cupy_plugin.cupy_distribution()
    expect_bf16 = bool(found) and cupy_plugin.bfloat16_supported(found[1], np.__version__)
    assert ("bfloat16" in spec.dtypes) == expect_bf16


def _fake_cupy(count=None, error=None):
    def get_count():
        if error is not None:
            raise error
        return count
    return types.SimpleNamespace(cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=get_count)))


def test_probe_reports_without_raising(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)          # `import cupy` -> ImportError
    ok, reason, devices = cupy_plugin.probe()
    assert (ok, devices) == (False, [])
    assert reason.startswith("no CUDA device: CuPy cannot be imported")
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(error=RuntimeError("driver too old")))
    assert cupy_plugin.probe() == (False, "no CUDA device: RuntimeError: driver too old", [])
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(count=0))
    assert cupy_plugin.probe() == (False, "no CUDA device: the CUDA runtime reports 0 "
                                          "devices", [])
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(count=2))
    assert cupy_plugin.probe() == (True, "2 CUDA device(s)", ["GPU:0", "GPU:1"])


@without_gpu
def test_unavailable_here_is_reported_and_selecting_it_fails_clearly():
    assert REASON.startswith("no CUDA device:") and DEVICES == []
    registry = get_registry()
    if "cupy" not in registry.names():
        pytest.skip("mscore-cupy is not pip-installed: pip install -e plugins/cupy_backend")
    row = registry.describe("cupy")
    assert row["status"] == f"unavailable: {REASON}"
    x = ms.Tensor(np.arange(3.0, dtype=np.float32))
    with pytest.raises(BackendUnavailableError, match="'cupy' is installed but unavailable: "
                                                      "no CUDA device"):
        ms.set_context(backend="cupy")
    assert ms.get_context("backend") == "numpy"              # nothing changed
    np.testing.assert_array_equal((x * 2).asnumpy(), [0.0, 2.0, 4.0])
    with pytest.raises(BackendUnavailableError, match="no CUDA device"):
        registry.spec("cupy").factory()


@without_gpu
def test_cli_lists_cupy_unavailable(capsys):
    if "cupy" not in get_registry().names():
        pytest.skip("mscore-cupy is not pip-installed: pip install -e plugins/cupy_backend")
    import json

    from mscore import cli
    assert cli.main(["backends", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["backends"]}
    # Listing runs the plugin's cheap check only: CuPy is not imported.
    assert rows["cupy"]["status"] == "unavailable: " + cupy_plugin.check()
    assert rows["numpy"]["status"] == "available"
    assert cli.main(["backends"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("cupy "))
    assert "unavailable: " in line and len(line) <= 120, line


@without_gpu
def test_the_probe_gives_the_full_reason_and_the_check_a_short_one():
    available, reason, _ = cupy_plugin.probe()
    assert not available and reason.startswith("no CUDA device:")
    if importlib.util.find_spec("cupy") is None:
        assert cupy_plugin.check() == "CuPy is not installed"


def _run_kit(*args):
    import subprocess
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
           "--pyargs", "mscore.conformance", "--mscore-no-matrix", "-rs", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).resolve().parents[3])


@without_gpu
def test_conformance_kit_fails_a_cupy_run_without_a_gpu_with_the_probe_reason():
    """No GPU, no pass: every test is skipped with the probe's reason and the run exits 2."""
    if "cupy" not in get_registry().names():
        pytest.skip("mscore-cupy is not pip-installed: pip install -e plugins/cupy_backend")
    done = _run_kit("--mscore-backend=cupy", "-k", "test_contract")
    out = done.stdout + done.stderr
    assert done.returncode == 2, out[-3000:]
    assert " passed" not in out and " failed" not in out and " skipped" in out
    assert "backend cupy cannot run here: no CUDA device:" in out
    assert "cupy on GPU did not run: backend cupy cannot run here: no CUDA device:" in out


def test_conformance_kit_passes_on_the_standin():
    """The whole kit against CupyBackend over numpy: every override must conform."""
    done = _run_kit("--mscore-plugin", "mscore_cupy.standin", "--mscore-backend=cupy_sim")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert " passed" in out and " failed" not in out and " error" not in out


# == device-independent logic, numpy standing in for CuPy ==========================================
@pytest.fixture
def sim():
    return CupyBackend(xp=np)


def test_standin_implements_every_primitive(sim):
    assert missing_primitives(sim) == []
    assert sim.name == "cupy" and sim.device == "GPU:0"
    assert sim.value_and_grad is None          # gradients come from mscore.autodiff


def test_set_device_validation(sim):
    sim.set_device("GPU", 0)
    sim.set_device("CPU", 0)                  # the context default: the backend's GPU
    assert sim.device == "GPU:0"
    with pytest.raises(ValueError, match="device_target: backend 'cupy' runs on 'GPU'"):
        sim.set_device("Ascend", 0)
    with pytest.raises(TypeError, match="device_target"):
        sim.set_device(0, 0)
    with pytest.raises(ValueError, match=r"device_id: expected 0 <= device_id < 1"):
        sim.set_device("GPU", 1)
    with pytest.raises(TypeError, match="device_id"):
        sim.set_device("GPU", True)


def _special_values(np_dtype):
    info = ml_dtypes.finfo(np_dtype)
    return np.array([info.max, -info.max, info.tiny, info.smallest_subnormal, 0.0, -0.0],
                    dtype=np_dtype)


EXPECTED_MASKS = {"float16": 0x7C00, "bfloat16": 0x7F80, "float32": 0x7F800000,
                  "float64": 0x7FF0000000000000}


@pytest.mark.parametrize("name", list(FLOATS))
def test_overflow_check_table_and_bit_test(sim, name):
    dt = FLOATS[name]
    rng = np.random.default_rng(7)
    base = rng.standard_normal((6, 10)).astype(dt)
    arrays = [base, _special_values(dt), np.arange(4), np.zeros(3, np.bool_),
              np.zeros((0, 3), dt), base[:, ::3], base.T, np.broadcast_to(base[:1], (5, 10))]
    table, keep = sim.finite_table(arrays)
    # One row per non-empty floating array; integers, bool and empty arrays need no check.
    assert table.shape == (5, 4)
    assert set(table[:, 2].tolist()) == {dt.itemsize}
    assert set(table[:, 3].tolist()) == {EXPECTED_MASKS[name]}
    assert table[:, 1].tolist() == [60, 6, 24, 60, 50]
    assert len(keep) == 5 and all(k.flags.c_contiguous or k.flags.f_contiguous for k in keep)
    assert sim.all_finite(arrays)                       # max, tiny, subnormal, -0 are finite
    assert sim.all_finite([]) and sim.all_finite([np.arange(3)])
    for bad in (np.inf, -np.inf, np.nan):
        for pos in ((0, 0), (5, 9), (2, 3)):
            spoilt = base.copy()
            spoilt[pos] = bad
            for view in (spoilt, spoilt[:, ::3], spoilt.T):
                expected = bool(np.isfinite(view.astype(np.float64)).all())
                assert sim.all_finite(arrays[:2] + [view]) == expected
                table, keep = sim.finite_table([view])
                assert _scan_table_on_host(table) == (not expected)


def test_scatter_accumulator_table():
    assert scatter_accumulator(np.float32) == np.float32
    assert scatter_accumulator(np.float64) == np.float64
    assert scatter_accumulator(np.int64) == np.int64
    assert scatter_accumulator(np.float16) == np.float32
    assert scatter_accumulator(BF16) == np.float32
    assert scatter_accumulator(np.int8) == np.int32
    assert scatter_accumulator(np.uint8) == np.int32
    assert scatter_accumulator(np.bool_) == np.int32


@pytest.mark.parametrize("np_dtype", [np.float16, BF16, np.float32, np.float64, np.int8,
                                      np.uint8, np.int32, np.int64, np.bool_])
def test_scatter_add_matches_numpy_add_at(sim, np_dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((5, 4)) * 40).astype(np_dtype)
    idx = np.array([1, 3, 1, 1, 0])
    upd = (rng.standard_normal((5, 2)) * 60).astype(np_dtype)
    index = (idx, slice(1, 3))
    before = a.copy()
    expected = a.astype(np.float64) if np_dtype in (np.float16, BF16) else a.copy()
    np.add.at(expected, index, upd.astype(expected.dtype))
    out = sim.scatter_add(a, index, upd)
    assert out.dtype == a.dtype and out is not a
    if np_dtype in (np.float16, BF16):   # one rounding instead of one per update
        np.testing.assert_allclose(out.astype(np.float64), expected,
                                   rtol=TOL[np.dtype(np_dtype).name], atol=0.5)
    else:
        np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(a, before)                 # the input is not modified


def test_random_stream_is_counter_based_and_deterministic(sim):
    s = sim.rng_state(42)
    assert s.dtype == np.int64 and s.tolist() == [42, 0]
    u1, s1 = sim.random_uniform(s, (3, 5), ms.float32)
    u1b, s1b = sim.random_uniform(s, (3, 5), ms.float32)
    np.testing.assert_array_equal(u1, u1b)
    assert s1.tolist() == [42, 1] and s.tolist() == [42, 0]   # the state is a value
    u2, _ = sim.random_uniform(s1, (3, 5), ms.float32)
    assert not np.array_equal(u1, u2)
    other, _ = sim.random_uniform(sim.rng_state(43), (3, 5), ms.float32)
    assert not np.array_equal(u1, other)
    # A prefix property: the first k values do not depend on how many are drawn.
    long, _ = sim.random_uniform(s, (40,), ms.float64)
    short, _ = sim.random_uniform(s, (7,), ms.float64)
    np.testing.assert_array_equal(long[:7], short)
    with pytest.raises(ValueError, match="seed"):
        sim.rng_state(-1)
    with pytest.raises(TypeError, match="random_uniform draws floating"):
        sim.random_uniform(s, (2,), ms.int32)
    with pytest.raises(ValueError, match="state: expected an int64 array of shape"):
        sim.random_normal(np.zeros(3, np.int64), (2,), ms.float32)
    big = sim.rng_state(2 ** 64 + 5)                         # reduced mod 2**63
    assert big.tolist() == [5, 0]


@pytest.mark.parametrize("name", list(FLOATS))
def test_random_distributions(sim, name):
    dtype = ms.common.dtype.get_dtype(name)
    u, _ = sim.random_uniform(sim.rng_state(1), (20000,), dtype)
    assert u.dtype == FLOATS[name]
    u64 = u.astype(np.float64)
    assert u64.min() >= 0.0 and u64.max() < 1.0
    assert abs(u64.mean() - 0.5) < 0.01 and abs(u64.var() - 1 / 12) < 0.005
    # The largest word maps to the largest value below 1, not to 1 after the cast.
    top = sim._unit(np.array([2 ** 64 - 1], dtype=np.uint64), ml_dtypes.finfo(
        FLOATS[name]).nmant + 1).astype(FLOATS[name])
    assert float(top[0]) < 1.0
    z, _ = sim.random_normal(sim.rng_state(2), (20000,), dtype)
    z64 = z.astype(np.float64)
    assert np.isfinite(z64).all()
    assert abs(z64.mean()) < 0.03 and abs(z64.std() - 1.0) < 0.03
    assert abs((np.abs(z64) < 1).mean() - 0.6827) < 0.015


# -- whole steps through the registry on the stand-in -------------------------------------------
@contextlib.contextmanager
def standin_backend():
    """The stand-in ``cupy_sim`` registered within the block (numpy active again after)."""
    from mscore_cupy import standin
    registry = get_registry()
    registry.register_plugin(standin, "cupy_sim_plugin")
    try:
        yield "cupy_sim"
    finally:
        ms.set_context(backend="numpy", device_target="CPU", device_id=0)
        registry.pm.unregister(standin)
        registry.specs.pop("cupy_sim", None)
        registry._built.pop("cupy_sim", None)


@pytest.fixture
def cupy_sim():
    with standin_backend() as name:
        yield name


def _init(seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x_mlp = rng.standard_normal((20, 8, 16))
    x_cnn = rng.standard_normal((20, 8, 1, 8, 8))
    return {
        "mlp": [rng.standard_normal((32, 16)) * 0.3, np.zeros(32), rng.standard_normal((10, 32))
                * 0.1, np.zeros(10)],
        "cnn": [rng.standard_normal((4, 1, 3, 3)) * 0.5, np.zeros(4),
                rng.standard_normal((10, 64)) * 0.1, np.zeros(10)],
        "x_mlp": x_mlp, "x_cnn": x_cnn,
        # Learnable labels: the argmax of a fixed projection of the inputs.
        "y_mlp": np.argmax(x_mlp @ rng.standard_normal((16, 10)), -1),
        "y_cnn": np.argmax(x_cnn.reshape(20, 8, 64) @ rng.standard_normal((64, 10)), -1),
    }


def _forward(kind, params, x, dropout=False):
    w1, b1, w2, b2 = params
    if kind == "mlp":
        h = ops.relu(ops.dense(x, w1, b1))
        if dropout:
            h = ops.dropout(h, p=0.25)
    else:
        h = ops.relu(ops.conv2d(x, w1, b1, pad_mode="pad", padding=1))
        h = ops.max_pool2d(h, 2)
        h = ops.reshape(h, (h.shape[0], -1))
    return ops.dense(h, w2, b2)


def train(kind, steps, dtype=np.float32, lr=0.05, dropout=False):
    """Losses of ``steps`` SGD steps on the active backend (same data on every backend)."""
    data = _init(0)
    params = [ms.Parameter(ms.Tensor(p.astype(dtype)), name=f"p{i}")
              for i, p in enumerate(data[kind])]

    def loss_fn(x, y):
        logits = _forward(kind, params, x, dropout)
        # The gather of the labels' logits exercises getitem and its VJP, scatter_add.
        picked = logits[ms.Tensor(np.arange(y.shape[0])), y]
        return ops.cross_entropy(logits, y) - 0.01 * ops.mean(picked)

    step = ms.value_and_grad(loss_fn, None, params)
    losses = []
    for i in range(steps):
        x = ms.Tensor(data["x_" + kind][i % 4].astype(dtype))
        y = ms.Tensor(data["y_" + kind][i % 4])
        loss, grads = step(x, y)
        for p, g in zip(params, grads):
            p.assign_value(p - g * lr)
        losses.append(float(loss.asnumpy()))
    return np.array(losses), [p.asnumpy() for p in params]


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_on_standin_matches_numpy(cupy_sim, kind):
    ms.set_seed(0)
    ref_losses, ref_params = train(kind, 8)
    ms.set_context(backend=cupy_sim)
    ms.set_seed(0)
    losses, params = train(kind, 8)
    assert ref_losses[-4:].mean() < ref_losses[:4].mean()   # it learns something
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-6)
    for p, r in zip(params, ref_params):
        np.testing.assert_allclose(p, r, rtol=1e-5, atol=1e-6)


def test_gradients_on_standin_match_finite_differences(cupy_sim):
    ms.set_context(backend=cupy_sim)
    rng = np.random.default_rng(5)
    w_np = rng.standard_normal((2, 3, 3, 3))
    x_np = rng.standard_normal((2, 3, 6, 6))
    idx = np.array([0, 1, 1, 1])           # repeated: the VJP must accumulate

    def f(w):
        y = ops.conv2d(ms.Tensor(x_np), w, stride=2, pad_mode="pad", padding=1)
        y = ops.avg_pool2d(ops.tanh(y), 2, 1)
        return ops.sum(ops.mul(y[:, :, ms.Tensor(idx)], y[:, :, ms.Tensor(idx)]))

    value, grad = ms.value_and_grad(f)(ms.Tensor(w_np))
    g = grad.asnumpy()
    eps = 1e-6
    fd = np.zeros_like(w_np)
    for i in np.ndindex(w_np.shape):
        plus, minus = w_np.copy(), w_np.copy()
        plus[i] += eps
        minus[i] -= eps
        fd[i] = (float(f(ms.Tensor(plus)).asnumpy()) - float(f(ms.Tensor(minus)).asnumpy())) \
            / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_dropout_draws_from_device_stream(cupy_sim):
    ms.set_context(backend=cupy_sim)
    ms.set_seed(11)
    x = ms.Tensor(np.ones((200, 50), np.float32))
    a = ops.dropout(x, p=0.3).asnumpy()
    b = ops.dropout(x, p=0.3).asnumpy()
    assert not np.array_equal(a, b)                          # the stream moved on
    assert set(np.unique(a).tolist()) <= {0.0, np.float32(1 / 0.7)}
    assert abs((a == 0).mean() - 0.3) < 0.02
    ms.set_seed(11)
    np.testing.assert_array_equal(ops.dropout(x, p=0.3).asnumpy(), a)   # reproducible
    losses, _ = train("mlp", 3, dropout=True)
    assert np.isfinite(losses).all()


# == on a CUDA device ==============================================================================
@pytest.fixture
def gpu():
    return get_registry().get("cupy")


def _ref():
    return get_registry().get("numpy")


def _cmp(actual, expected, name):
    assert_close(np.asarray(actual).astype(np.float64), np.asarray(expected).astype(np.float64),
                 name, tol={k: (v, v) for k, v in TOL.items()}, min_scale=1.0)


def _op_cases(rng):
    x = rng.standard_normal((3, 4, 5))
    y = rng.standard_normal((3, 4, 5))
    pos = np.abs(x) + 0.5
    img = rng.standard_normal((2, 4, 7, 6))
    w = rng.standard_normal((6, 2, 3, 2)) * 0.3
    wt = rng.standard_normal((4, 3, 3, 3)) * 0.3
    idx = np.array([2, 0, 2])
    return [
        ("neg", (x,), {}), ("abs", (x,), {}), ("exp", (x,), {}), ("log", (pos,), {}),
        ("sqrt", (pos,), {}), ("sin", (x,), {}), ("cos", (x,), {}), ("tanh", (x,), {}),
        ("erf", (x,), {}), ("sign", (x,), {}), ("floor", (x * 3,), {}), ("ceil", (x * 3,), {}),
        ("add", (x, y), {}), ("sub", (x, y), {}), ("mul", (x, y), {}), ("div", (x, pos), {}),
        ("pow", (pos, y), {}), ("maximum", (x, y), {}), ("minimum", (x, y), {}),
        ("sum", (x,), {"axis": (0, 2), "keepdims": True}), ("max", (x,), {"axis": (1,),
                                                                       "keepdims": False}),
        ("min", (x,), {"axis": None, "keepdims": False}),
        ("transpose", (x,), {"perm": (2, 0, 1)}), ("reshape", (x,), {"shape": (12, 5)}),
        ("broadcast_to", (x[:1],), {"shape": (4, 4, 5)}),
        ("pad", (x,), {"pad_width": ((0, 0), (1, 2), (2, 0)), "value": 1.5}),
        ("getitem", (x,), {"index": (slice(None), 1, slice(None, None, 2))}),
        ("matmul", (x, np.swapaxes(y, 1, 2)), {}),
        ("conv", (img, w), {"stride": (2, 1), "padding": ((1, 1), (0, 2)), "dilation": (1, 2),
                            "groups": 2}),
        ("conv_transpose", (img, wt), {"stride": (2, 2), "padding": ((1, 1), (0, 1)),
                                       "output_padding": (1, 0), "dilation": (1, 1),
                                       "groups": 1}),
        ("max_pool", (img,), {"kernel": (3, 2), "stride": (2, 2), "padding": ((1, 1), (0, 0))}),
        ("avg_pool", (img,), {"kernel": (3, 3), "stride": (1, 2), "padding": ((1, 1), (1, 1)),
                              "count_include_pad": False}),
        ("scatter_add", (x, (slice(None), idx), y[:, :3]), {}),
        ("where", (x > 0, x, y), {}),
    ]


@needs_gpu
@pytest.mark.parametrize("name", list(FLOATS))
def test_primitives_match_numpy_reference(gpu, name):
    if name not in get_registry().spec("cupy").dtypes:
        pytest.skip(f"{name} not declared by cupy")
    dtype = ms.common.dtype.get_dtype(name)
    ref = _ref()
    def native(backend, a, wide):
        """``a`` rounded to the tested dtype, on ``backend`` (in float64 when ``wide``)."""
        if isinstance(a, tuple):
            return tuple(native(backend, i, wide) for i in a)
        if not isinstance(a, np.ndarray):
            return a
        if a.dtype.kind == "f":
            a = a.astype(FLOATS[name])
            a = a.astype(np.float64) if wide else a
        return backend.from_numpy(a)

    for op, args, attrs in _op_cases(np.random.default_rng(0)):
        out = getattr(gpu, op)(*[native(gpu, a, False) for a in args], **attrs)
        # The reference computes in float64 from the same rounded inputs.
        expected = getattr(ref, op)(*[native(ref, a, True) for a in args], **attrs)
        got = gpu.to_numpy(out)
        assert got.dtype == FLOATS[name], op
        try:
            _cmp(got, ref.to_numpy(expected), name)
        except AssertionError as exc:
            raise AssertionError(f"op {op} at {name}: {exc}") from None
    # Integer and bool results are exact.
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(FLOATS[name])
    gx = gpu.from_numpy(x)
    np.testing.assert_array_equal(gpu.to_numpy(gpu.argmax(gx, 1)), np.argmax(x, 1))
    np.testing.assert_array_equal(gpu.to_numpy(gpu.less(gx, gpu.full((), 0.0, dtype))), x < 0)
    assert gpu.dtype(gx) is dtype


@needs_gpu
def test_scatter_add_on_device_matches_numpy(gpu):
    sim = CupyBackend(xp=np)
    rng = np.random.default_rng(4)
    idx = np.array([1, 3, 1, 1, 0, 3])
    for d in get_registry().spec("cupy").dtypes:
        np_dtype = ms.common.dtype.get_dtype(d).np_dtype
        a = (rng.standard_normal((5, 4)) * 40).astype(np_dtype)
        upd = (rng.standard_normal((6, 2)) * 60).astype(np_dtype)
        index = (idx, slice(1, 3))
        got = gpu.to_numpy(gpu.scatter_add(gpu.from_numpy(a), (gpu.from_numpy(idx),
                                                               slice(1, 3)), gpu.from_numpy(upd)))
        expected = sim.scatter_add(a, index, upd)   # same accumulation plan, numpy add.at
        assert got.dtype == a.dtype, d
        if d in TOL:
            _cmp(got, expected, d)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=d)


@needs_gpu
def test_transfer_roundtrip_and_dtypes(gpu):
    for d in get_registry().spec("cupy").dtypes:
        dtype = ms.common.dtype.get_dtype(d)
        host = (np.arange(-3, 9) % 7).astype(dtype.np_dtype).reshape(3, 4)
        dev = gpu.from_numpy(host)
        assert gpu.dtype(dev) is dtype and gpu.shape(dev) == (3, 4)
        back = gpu.to_numpy(dev)
        assert isinstance(back, np.ndarray) and back.dtype == host.dtype
        np.testing.assert_array_equal(back, host)
    assert gpu.to_numpy(gpu.arange(0, 5, 2, ms.int32)).tolist() == [0, 2, 4]


@needs_gpu
def test_fused_overflow_check_on_device(gpu):
    import cupy
    rng = np.random.default_rng(0)
    dtypes = [d for d in ("float16", "bfloat16", "float32", "float64")
              if d in get_registry().spec("cupy").dtypes]
    big = rng.standard_normal(3_000_001).astype(np.float32)   # more than one grid pass
    arrays = [gpu.from_numpy(big)] + [gpu.from_numpy(rng.standard_normal((17, 5)).astype(
        FLOATS[d])) for d in dtypes] + [gpu.from_numpy(np.arange(10))]
    arrays.append(arrays[1][:, ::2])                           # strided: checked via a copy
    arrays += [gpu.from_numpy(_special_values(FLOATS[d])) for d in dtypes]
    assert gpu.all_finite(arrays) is True
    assert gpu.all_finite([]) is True
    for k, pos in ((0, -1), (0, 1_234_567), (1, 0), (len(dtypes), 84)):
        for bad in (np.inf, np.nan):
            spoilt = list(arrays)
            a = spoilt[k].copy()
            a.reshape(-1)[pos] = bad
            spoilt[k] = a
            assert gpu.all_finite(spoilt) is False, (k, pos, bad)
    # The check sees work queued on a non-default stream just before it (same stream).
    with cupy.cuda.Stream(non_blocking=True):
        x = gpu.from_numpy(np.full((1000,), 60000.0, np.float16))
        y = gpu.mul(x, x)                                      # overflows float16
        assert gpu.all_finite([x]) and not gpu.all_finite([y])
        assert np.isinf(gpu.to_numpy(y)).all()
    # Many arrays: still one launch (the table grows, the kernel loops over its rows).
    many = [gpu.from_numpy(np.ones(3, np.float32)) for _ in range(300)]
    assert gpu.all_finite(many)
    many[-1] = gpu.from_numpy(np.array([1.0, np.nan, 2.0], np.float32))
    assert not gpu.all_finite(many)


@needs_gpu
def test_random_stream_on_device_matches_standin(gpu):
    sim = CupyBackend(xp=np)
    for d in get_registry().spec("cupy").dtypes:
        dtype = ms.common.dtype.get_dtype(d)
        if not dtype.is_floating:
            continue
        state = gpu.rng_state(123)
        u, nxt = gpu.random_uniform(state, (5, 7), dtype)
        su, snxt = sim.random_uniform(sim.rng_state(123), (5, 7), dtype)
        np.testing.assert_array_equal(gpu.to_numpy(u), su)        # bit for bit
        assert gpu.to_numpy(nxt).tolist() == snxt.tolist() == [123, 1]
        z, _ = gpu.random_normal(nxt, (4000,), dtype)
        sz, _ = sim.random_normal(snxt, (4000,), dtype)
        _cmp(gpu.to_numpy(z), sz, d)


@needs_gpu
def test_device_selection_sync_and_memory(gpu):
    import cupy
    gpu.set_device("GPU", 0)
    assert gpu.device == "GPU:0" and cupy.cuda.Device().id == 0
    count = cupy.cuda.runtime.getDeviceCount()
    with pytest.raises(ValueError, match=f"device_id: expected 0 <= device_id < {count}"):
        gpu.set_device("GPU", count)
    a = gpu.from_numpy(np.ones((256, 256), np.float32))
    b = gpu.matmul(a, a)
    gpu.synchronize()
    stats = gpu.memory_stats()
    assert stats["bytes_in_use"] >= 2 * 256 * 256 * 4
    assert stats["bytes_reserved"] >= stats["bytes_in_use"]
    assert 0 < stats["bytes_free"] <= stats["bytes_limit"]
    assert float(gpu.to_numpy(b)[0, 0]) == 256.0


@needs_gpu
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_on_gpu_matches_numpy(kind):
    ms.set_seed(0)
    ref_losses, ref_params = train(kind, 20)
    ms.set_context(backend="cupy", device_target="GPU", device_id=0)
    ms.set_seed(0)
    losses, params = train(kind, 20)
    assert ref_losses[-4:].mean() < ref_losses[:4].mean()   # it learns something
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-4, atol=1e-5)
    for p, r in zip(params, ref_params):
        np.testing.assert_allclose(p, r, rtol=1e-3, atol=1e-4)


@needs_gpu
def test_gradients_on_gpu_match_numpy_float64():
    rng = np.random.default_rng(9)
    w_np = rng.standard_normal((3, 2, 3, 3))
    x_np = rng.standard_normal((2, 2, 7, 7))
    idx = np.array([1, 1, 2, 0])

    def run():
        def f(w):
            y = ops.conv2d(ms.Tensor(x_np), w, stride=2, pad_mode="pad", padding=1)
            y = ops.max_pool2d(ops.tanh(y), 2, 1)
            return ops.sum(ops.mul(y[:, :, ms.Tensor(idx)], y[:, :, ms.Tensor(idx)]))
        value, grad = ms.value_and_grad(f)(ms.Tensor(w_np))
        return float(value.asnumpy()), grad.asnumpy()

    ref_value, ref_grad = run()
    ms.set_context(backend="cupy", device_target="GPU")
    value, grad = run()
    assert value == pytest.approx(ref_value, rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-10, atol=1e-12)
