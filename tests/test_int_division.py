"""Integer floor division, remainders and truncating division on every backend: exact in the
operands' dtype at every integer dtype's extremes (int64/uint64 above 2**53, where a float64
detour loses bits), against Python's integer arithmetic, and against MindSpore 2.10's recorded
answers (``tests/data/int_division_oracle.json``, made by
``cd /tmp && /tmp/ms/bin/python tests/data/make_int_division_oracle.py``; the cases are in
``tests/data/int_division_cases.py``). Where MindSpore's CPU kernel is plainly wrong (listed
in ``MINDSPORE_DIFFERS`` with the reason) mscore gives the exact value instead.
Integer division has no gradient, so none is checked."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from _helpers import each_backend, saturated_by_zero, trunc_div, trunc_mod, wrap_int
from _oracle import load

import mscore as ms
import mscore.numpy as mnp
from mscore import mint, ops
from mscore.plugin.registry import get_registry

sys.path.insert(0, str(Path(__file__).parent / "data"))
from int_division_cases import CASES, FUNCTIONS, SIGNED, UNSIGNED, inputs, operands

ORACLE = load("int_division_oracle.json")
EXPRESSIONS = dict(CASES)
backend = each_backend(scope="module")


# Each function of the per-dtype cases in exact integer arithmetic: (x, y, dtype) -> result.
def _floor_div(a, b, d):
    return saturated_by_zero(a, d) if b == 0 else wrap_int(a // b, d)


def _trunc_div(a, b, d):
    return 0 if b == 0 else wrap_int(trunc_div(a, b), d)


def _remainder(a, b, d):
    return a if b == 0 else a % b


def _floor_mod(a, b, d):
    return 0 if b == 0 else a % b


def _fmod(a, b, d):
    return a if b == 0 else a - trunc_div(a, b) * b


EXACT = {"floor_divide": _floor_div, "div_floor": _floor_div, "op_floordiv": _floor_div,
         "mnp_floor_divide": _floor_div, "div_trunc": _trunc_div, "method_div_trunc": _trunc_div,
         "remainder": _remainder, "method_remainder": _remainder, "floor_mod": _floor_mod,
         "op_mod": _floor_mod, "mnp_remainder": _floor_mod, "fmod": _fmod,
         "mnp_fmod": trunc_mod}
assert set(EXACT) == {suffix for suffix, _ in FUNCTIONS}
PER_DTYPE = [(dtype, suffix) for dtype in SIGNED + UNSIGNED for suffix, _ in FUNCTIONS]
# Names that reach the same core computation as another: their routing is the same on every
# backend, so only the numpy run covers them unless MSCORE_SLOW_TESTS=1 (jax compiles each
# op of each case).
ALIASES = {"div_floor": "floor_divide", "op_floordiv": "floor_divide",
           "mnp_floor_divide": "floor_divide", "method_div_trunc": "div_trunc",
           "method_remainder": "remainder", "op_mod": "floor_mod", "mnp_remainder": "floor_mod"}
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"

_FLOAT_DETOUR = ("MindSpore's CPU kernel divides through float64 (some 32-bit ones through "
                 "float32) and loses the low bits of large values")
_MIN_BY_ZERO = "MindSpore's CPU kernel gives MIN for x / 0 (its float quotient cast to int)"
_NO_UINT_FLOOR_MOD = "MindSpore's CPU FloorMod refuses uint16/32/64; mscore computes them"
# Cases where MindSpore 2.10 (CPU) is not the exact answer, with the reason; mscore gives the
# exact one (docs/differences.md). The test checks that each still differs.
MINDSPORE_DIFFERS = {
    **{f"{d}_{s}": _FLOAT_DETOUR for d in ("int64", "uint64")
       for s in ("floor_divide", "div_floor", "op_floordiv", "mnp_floor_divide", "remainder",
                 "method_remainder", "mnp_remainder", "fmod", "mnp_fmod", "div_trunc",
                 "method_div_trunc", "floor_mod", "op_mod")},
    **{f"uint32_{s}": _FLOAT_DETOUR for s in ("div_trunc", "method_div_trunc", "fmod",
                                              "mnp_remainder", "mnp_fmod")},
    **{f"int32_{s}": _FLOAT_DETOUR for s in ("fmod", "mnp_remainder", "mnp_fmod")},
    **{f"{d}_{s}": _MIN_BY_ZERO for d in ("int32",)
       for s in ("div_trunc", "method_div_trunc", "floor_mod", "op_mod")},
    **{f"{d}_{s}": _NO_UINT_FLOOR_MOD for d in ("uint16", "uint32", "uint64")
       for s in ("floor_mod", "op_mod")},
}


def _names(backend):
    """The cases' names, with the per-dtype operands of the dtypes ``backend`` declares."""
    declared = get_registry().spec(backend).dtypes
    return dict(inputs(ms, tuple(d for d in SIGNED + UNSIGNED if d in declared)), ms=ms,
                ops=ops, mnp=mnp, mint=mint, np=np)


def _declared(backend, *dtypes):
    spec = get_registry().spec(backend)
    for dtype in dtypes:
        if dtype not in spec.dtypes:
            pytest.skip(f"{dtype} not declared by {backend}: {spec.undeclared_reason(dtype)}")


def _exact(dtype, suffix):
    x, y = operands(dtype)
    return [EXACT[suffix](a, b, dtype) for a, b in zip(x, y)]


@pytest.mark.parametrize("dtype,suffix", PER_DTYPE, ids=[f"{d}-{s}" for d, s in PER_DTYPE])
def test_exact_at_the_extremes(backend, dtype, suffix):
    """Every integer dtype, every division function: Python's exact integer answer, in the
    operands' dtype."""
    if suffix in ALIASES and backend != "numpy" and not SLOW:
        pytest.skip(f"{suffix} computes as {ALIASES[suffix]} (checked here on numpy; on every "
                    f"backend with MSCORE_SLOW_TESTS=1)")
    _declared(backend, dtype)
    out = eval(EXPRESSIONS[f"{dtype}_{suffix}"], _names(backend))
    assert out.dtype.name == dtype
    assert out.asnumpy().tolist() == _exact(dtype, suffix)


@pytest.mark.parametrize("dtype,suffix", PER_DTYPE, ids=[f"{d}-{s}" for d, s in PER_DTYPE])
def test_mindspore_agrees_except_where_listed(dtype, suffix):
    """The recorded MindSpore answer is the exact one, except the listed cases where its CPU
    kernel is wrong (which must still be wrong, or the list is stale)."""
    name = f"{dtype}_{suffix}"
    rec = ORACLE["cases"][name]
    exact = _exact(dtype, suffix)
    agrees = rec["kind"] == "tensor" and rec["dtype"] == dtype and rec["values"] == exact
    assert agrees != (name in MINDSPORE_DIFFERS), (name, rec, exact)


# The other cases are compared with MindSpore's record as they are, except these.
OTHER_DIFFERS = {
    "i64_u64_floor_divide": "mscore promotes uint64 with int64 to int64 (MindSpore refuses)",
    "i64_int_floordiv": _FLOAT_DETOUR, "i64_neg_int_floordiv": _FLOAT_DETOUR,
    "i64_neg_int_mod": _FLOAT_DETOUR, "i64_neg_int_remainder": _FLOAT_DETOUR,
    "bcast_i64_floor_divide": _FLOAT_DETOUR,
    "mint_floor_divide": _FLOAT_DETOUR, "mint_remainder": _FLOAT_DETOUR,
    "mint_fmod": _FLOAT_DETOUR, "mint_div_trunc": _FLOAT_DETOUR, "mint_div_floor": _FLOAT_DETOUR,
    "method_floor_divide": _FLOAT_DETOUR, "method_fmod": _FLOAT_DETOUR,
    "method_div_floor": _FLOAT_DETOUR,
    "bool_div_trunc": "x / 0 is False (the contract's x / 0 == 0); MindSpore: True",
    "bcast_div_trunc": _MIN_BY_ZERO,
}
OTHER = [name for name, _ in CASES if name not in EXPRESSIONS or
         not name.startswith(tuple(f"{d}_" for d in SIGNED + UNSIGNED))]
PROMOTED = {"i8_u8_floor_divide", "i8_u8_remainder", "i8_u8_div_trunc"}


def _quick_on_numpy_and_torch(backend):
    """These cases check the core's routing and promotion, the same on every backend; jax
    compiles each op of each case, so it runs them with MSCORE_SLOW_TESTS=1 (its exactness
    at the extremes runs by default)."""
    if backend == "jax" and not SLOW:
        pytest.skip("the core's routing and promotion, checked on numpy and torch; jax with "
                    "MSCORE_SLOW_TESTS=1")


def _value(a):
    return a.asnumpy().tolist() if isinstance(a, ms.Tensor) else a


# the mixed integer/float cases divide by zero on purpose: numpy warns of the inf and NaN
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("name", OTHER)
def test_as_mindspore(backend, name):
    """Mixed dtypes, Python numbers, floats, bool, broadcasting, mint and the Tensor methods:
    MindSpore's dtype and values (floats within 1e-6) or its exception type."""
    _quick_on_numpy_and_torch(backend)
    rec = ORACLE["cases"][name]
    if rec["kind"] == "error" and name not in OTHER_DIFFERS:
        with pytest.raises(Exception) as info:
            eval(EXPRESSIONS[name], _names(backend))
        assert type(info.value).__name__ == rec["type"], (name, info.value)
        assert str(info.value)
        return
    if "u64" in EXPRESSIONS[name]:
        _declared(backend, "uint64")
    out = eval(EXPRESSIONS[name], _names(backend))
    if name in OTHER_DIFFERS:
        return   # checked exactly by test_differences_are_exact
    assert out.dtype.name == rec["dtype"], (name, out.dtype, rec["dtype"])
    assert list(out.shape) == rec["shape"]
    if rec["dtype"].startswith("float"):
        np.testing.assert_allclose(out.asnumpy(), np.array(rec["values"], np.float64),
                                   rtol=1e-6, equal_nan=True)
    else:
        assert _value(out) == rec["values"], (name, _value(out), rec["values"])
    assert name not in PROMOTED or rec["dtype"] == "int16"


# Exact answers of OTHER_DIFFERS (Python integers; the inputs are in int_division_cases).
_I64 = [2 ** 62 + 1, -(2 ** 62 + 1), 2 ** 63 - 1, -7]
_U64 = [3, 3, 2 ** 63, 2]
_X64, _Y64 = operands("int64")


def _each(fn, xs, ys, dtype="int64"):
    return [fn(a, b, dtype) for a, b in zip(xs, ys)]


DIFFERENCE_ANSWERS = {
    "i64_u64_floor_divide": ("int64", _each(_floor_div, _I64,
                                            [wrap_int(v, "int64") for v in _U64])),
    "i64_int_floordiv": ("int64", _each(_floor_div, _I64, [3] * 4)),
    "i64_neg_int_floordiv": ("int64", _each(_floor_div, _I64, [-3] * 4)),
    "i64_neg_int_mod": ("int64", _each(_floor_mod, _I64, [-3] * 4)),
    "i64_neg_int_remainder": ("int64", _each(_remainder, _I64, [-3] * 4)),
    "bcast_i64_floor_divide": ("int64", [_each(_floor_div, [a] * 3, [3, -3, 2 ** 40])
                                         for a in (2 ** 62 + 1, -(2 ** 62) - 1)]),
    "mint_floor_divide": ("int64", _each(_floor_div, _X64, _Y64)),
    "mint_remainder": ("int64", _each(_remainder, _X64, _Y64)),
    "mint_fmod": ("int64", _each(_fmod, _X64, _Y64)),
    "mint_div_trunc": ("int64", _each(_trunc_div, _X64, _Y64)),
    "mint_div_floor": ("int64", _each(_floor_div, _X64, _Y64)),
    "method_floor_divide": ("int64", _each(_floor_div, _X64, _Y64)),
    "method_fmod": ("int64", _each(_fmod, _X64, _Y64)),
    "method_div_floor": ("int64", _each(_floor_div, _X64, _Y64)),
    "bool_div_trunc": ("bool", [True, False, False, False]),
    "bcast_div_trunc": ("int32", [_each(_trunc_div, [a] * 4, [2, -2, 3, 0], "int32")
                                  for a in (7, -7, 0)]),
}
assert set(DIFFERENCE_ANSWERS) == set(OTHER_DIFFERS)


@pytest.mark.parametrize("name", sorted(OTHER_DIFFERS))
def test_differences_are_exact(backend, name):
    """Where MindSpore's record is not the exact answer, mscore gives the exact one (and the
    record still differs from it)."""
    _quick_on_numpy_and_torch(backend)
    if "u64" in EXPRESSIONS[name]:
        _declared(backend, "uint64")
    dtype, want = DIFFERENCE_ANSWERS[name]
    rec = ORACLE["cases"][name]
    assert rec["kind"] == "error" or rec["values"] != want, name
    out = eval(EXPRESSIONS[name], _names(backend))
    assert out.dtype.name == dtype
    assert _value(out) == want


def test_quotient_and_remainder_agree_above_2_53(backend):
    """``(x // y) * y + x % y == x`` for int64 values above 2**53 and every sign pairing."""
    xs = [2 ** 62 + 1, -(2 ** 62 + 1), 2 ** 63 - 1, -2 ** 63 + 1, 2 ** 53 + 1]
    ys = [3, -3, 7, -1000003, 2 ** 31 + 11]
    x = ms.Tensor(np.array([[a] for a in xs], np.int64))
    y = ms.Tensor(np.array(ys, np.int64))
    q, r = (x // y).asnumpy().tolist(), (x % y).asnumpy().tolist()
    for i, a in enumerate(xs):
        for j, b in enumerate(ys):
            assert (q[i][j], r[i][j]) == (a // b, a % b)


@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")  # x / 0 on purpose
def test_floats_keep_their_path(backend):
    """Float operands still divide in their float dtype (floor of the true quotient)."""
    x = ms.Tensor(np.array([7.5, -7.5, 1.0, -1.0], np.float32))
    y = ms.Tensor(np.array([2.0, 2.0, 0.0, 0.0], np.float32))
    np.testing.assert_array_equal(ops.floor_divide(x, y).asnumpy(),
                                  np.array([3.0, -4.0, np.inf, -np.inf], np.float32))
    np.testing.assert_allclose(ops.remainder(x, ms.Tensor(np.float32(2.0))).asnumpy(),
                               np.array([1.5, 0.5, 1.0, 1.0], np.float32))
    assert ops.floor_divide(x, y).dtype == ms.float32
