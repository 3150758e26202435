"""Level 0: the backend honours the contract itself (spec, op set, transfer, random, checks)."""
import math

import numpy as np
import pytest

from mscore.common import dtype as mdt
from mscore.conformance.harness import EXACT, ConformanceFailure
from mscore.plugin.backend import (
    FUSED_OPS,
    KNOWN_CAPABILITIES,
    PRIMITIVE_OPS,
    misnamed_parameters,
    missing_primitives,
)

ALL = tuple(d.name for d in mdt.ALL_DTYPES)
FLOATS = ("float16", "bfloat16", "float32", "float64")


def test_spec(kit):
    """The BackendSpec is well formed: known dtypes, devices and capabilities."""
    spec = kit.spec
    assert isinstance(spec.version, str) and spec.version, "BackendSpec.version is empty"
    unknown = [d for d in spec.dtypes if d not in ALL]
    assert not unknown, f"BackendSpec.dtypes has unknown names {unknown}; known: {ALL}"
    unknown = [d for d in spec.undeclared_dtypes if d not in ALL]
    assert not unknown, (f"BackendSpec.undeclared_dtypes has unknown names {unknown}; "
                         f"known: {ALL}")
    assert spec.devices, "BackendSpec.devices is empty"
    bad = [d for d in spec.devices if d.split(":")[0].upper() not in ("CPU", "GPU", "CUDA",
                                                                      "ASCEND")]
    assert not bad, f"BackendSpec.devices has unknown device targets {bad}"
    unknown = sorted(set(spec.capabilities) - KNOWN_CAPABILITIES)
    assert not unknown, (f"BackendSpec.capabilities has unknown names {unknown}; known: "
                         f"{sorted(KNOWN_CAPABILITIES)}")
    assert kit.backend.name == spec.name, (
        f"the built backend is named {kit.backend.name!r}, its spec {spec.name!r}")


def test_primitive_set_complete(kit):
    """Every primitive op of PRIMITIVE_OPS is implemented, and the methods the backend's
    class writes take the declared parameter names (the core passes op attributes by
    keyword)."""
    missing = missing_primitives(kit.backend)
    assert not missing, f"{kit.name} does not implement the primitive ops {missing}"
    not_callable = [n for n in PRIMITIVE_OPS if not callable(getattr(kit.backend, n, None))]
    assert not not_callable, f"not callable: {not_callable}"
    misnamed = misnamed_parameters(kit.backend)
    assert not misnamed, f"{kit.name} names the parameters of its methods otherwise than " \
        "the contract (docs/backend-contract.md): " + "; ".join(
            f"{name}({', '.join(written)}), declared {name}({', '.join(declared)})"
            for name, (declared, written) in misnamed.items())


def test_optional_hooks_match_capabilities(kit):
    """Declared native autodiff / compile come with the callables; fused ops are callables."""
    b = kit.backend
    if kit.has("native_autodiff"):
        assert callable(b.value_and_grad), (f"{kit.declarer} declares 'native_autodiff' but "
                                            f"value_and_grad is {b.value_and_grad!r}")
    if kit.has("compile"):
        assert callable(b.compile), (f"{kit.declarer} declares 'compile' but compile is "
                                     f"{b.compile!r}")
    for name in FUSED_OPS:
        op = getattr(b, name, None)
        assert op is None or callable(op), f"fused op {name} is neither None nor callable"


@pytest.mark.parametrize("dtype", ALL)
def test_transfer_round_trip(kit, dtype):
    """from_numpy -> to_numpy is exact for every declared dtype, and dtype() reports it."""
    np_dtype = mdt.get_dtype(dtype).np_dtype
    if dtype == "bool":
        x = kit.rng.random((3, 4)) > 0.5
    elif dtype in FLOATS:
        x = kit.normal((3, 4), 3.0).astype(np_dtype)
    else:
        info = np.iinfo(np_dtype)
        x = kit.rng.integers(info.min, info.max, size=(3, 4), endpoint=True, dtype=np_dtype)
    a = kit.backend.from_numpy(x)
    kit.assert_dtype(a, dtype, "from_numpy")
    assert kit.backend.shape(a) == (3, 4), f"shape() gave {kit.backend.shape(a)}"
    back = kit.backend.to_numpy(a)
    assert isinstance(back, np.ndarray), f"to_numpy returned {type(back).__name__}"
    assert back.dtype == np_dtype, f"to_numpy gave numpy dtype {back.dtype}, expected {np_dtype}"
    kit.assert_close(back, x, dtype, "to_numpy(from_numpy(x))", tol=_exact())
    # from_numpy copies: writing into the numpy source afterwards leaves the array alone.
    source = x.copy()
    held = kit.backend.from_numpy(source)
    source[...] = source[::-1, ::-1] if dtype == "bool" else source * 0 + source.flat[0]
    kit.assert_close(kit.backend.to_numpy(held), x, dtype,
                     "from_numpy(x) after x was overwritten (from_numpy must copy)",
                     tol=_exact())
    # from_numpy with a dtype casts; a 0-d array keeps its shape.
    c = kit.backend.from_numpy(np.asarray(1.0), mdt.get_dtype(dtype))
    kit.assert_dtype(c, dtype, "from_numpy(1.0, dtype)")
    assert kit.backend.shape(c) == (), f"0-d array got shape {kit.backend.shape(c)}"


def _exact():
    return EXACT


@pytest.mark.parametrize("dtype", FLOATS)
def test_all_finite(kit, dtype):
    """all_finite is True for finite arrays and False once one element is inf or nan."""
    b = kit.backend
    d = mdt.get_dtype(dtype)
    arrays = [np.asarray(kit.normal(s)) for s in ((4, 5), (7,), ())]
    natives = [b.from_numpy(a, d) for a in arrays]
    assert _bool(b.all_finite(natives)) is True, "all_finite gave False for finite arrays"
    assert _bool(b.all_finite([])) is True, "all_finite([]) must be True"
    for bad in (math.inf, -math.inf, math.nan):
        for which in range(len(arrays)):
            broken = [a.copy() for a in arrays]
            broken[which][(-1,) * broken[which].ndim] = bad
            natives = [b.from_numpy(a, d) for a in broken]
            got = _bool(b.all_finite(natives))
            assert got is False, (f"all_finite missed {bad} in array {which} of "
                                  f"{len(arrays)} ({dtype})")


def _bool(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ConformanceFailure(f"all_finite must return a Python bool, got "
                             f"{type(value).__name__}")


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_random_streams(kit, dtype):
    """Random states: the same seed gives the same values, the next state new values;
    uniform lies in [0, 1), normal has mean 0 and variance 1."""
    b = kit.backend
    d = mdt.get_dtype(dtype)
    s0 = b.rng_state(1234)
    u1, s1 = b.random_uniform(s0, (4096,), d)
    u1b, _ = b.random_uniform(b.rng_state(1234), (4096,), d)
    u2, _ = b.random_uniform(s1, (4096,), d)
    kit.assert_dtype(u1, dtype, "random_uniform")
    a1, a1b, a2 = b.to_numpy(u1), b.to_numpy(u1b), b.to_numpy(u2)
    assert a1.shape == (4096,)
    assert np.array_equal(a1, a1b), "the same seed gave different uniform values"
    assert not np.array_equal(a1, a2), "the next state repeated the previous values"
    assert a1.min() >= 0.0 and a1.max() < 1.0, f"uniform outside [0, 1): {a1.min()}, {a1.max()}"
    assert abs(a1.mean() - 0.5) < 0.03, f"uniform mean {a1.mean():.4f} is not ~0.5"
    n, _ = b.random_normal(b.rng_state(7), (4096,), d)
    kit.assert_dtype(n, dtype, "random_normal")
    an = b.to_numpy(n).astype(np.float64)
    assert abs(an.mean()) < 0.06, f"normal mean {an.mean():.4f} is not ~0"
    assert abs(an.std() - 1.0) < 0.06, f"normal std {an.std():.4f} is not ~1"
    other, _ = b.random_uniform(b.rng_state(1235), (4096,), d)
    assert not np.array_equal(b.to_numpy(other), a1), "different seeds gave the same values"


def test_device_hooks(kit):
    """synchronize() returns, memory_stats() is a dict."""
    b = kit.backend
    result = b.synchronize()
    assert result is None, f"synchronize() returned {result!r}, expected None"
    stats = b.memory_stats()
    assert isinstance(stats, dict), f"memory_stats returned {type(stats).__name__}"


@pytest.mark.parametrize("dtype", FLOATS)
def test_stop_gradient(kit, dtype):
    """stop_gradient keeps the values."""
    x = kit.normal((3, 3))
    out = kit.backend.stop_gradient(kit.native(x, dtype))
    kit.assert_close(kit.backend.to_numpy(out), x.astype(mdt.get_dtype(dtype).np_dtype), dtype,
                     "stop_gradient", tol=_exact())
