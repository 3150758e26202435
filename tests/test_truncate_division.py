"""``ops.truncate_div`` / ``ops.truncate_mod`` and the ``TruncateDiv`` / ``TruncateMod``
Primitives on every backend: integers exact in their dtype at every integer dtype's extremes
(against Python's integer arithmetic), floats against numpy (``trunc(x / y)``, ``fmod``),
gradients against central differences, and everything against MindSpore 2.10's recorded
answers (``tests/data/truncate_division_oracle.json``, made by
``cd /tmp && /tmp/ms/bin/python tests/data/make_truncate_division_oracle.py``; the cases are
in ``tests/data/truncate_division_cases.py``). Where MindSpore's CPU kernel is not the exact
answer (``MINDSPORE_DIFFERS``, with the reason) mscore gives the exact one."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from _helpers import (
    central_differences,
    each_backend,
    saturated_by_zero,
    trunc_div,
    trunc_mod,
    wrap_int,
)
from _oracle import load

import mscore as ms
from mscore import ops
from mscore.plugin.registry import get_registry

sys.path.insert(0, str(Path(__file__).parent / "data"))
from int_division_cases import SIGNED, UNSIGNED, operands
from truncate_division_cases import CASES, FLOAT_X, FLOAT_Y, FLOATS, GRADIENT_CASES, inputs

ORACLE = load("truncate_division_oracle.json")["cases"]
EXPRESSIONS = dict(CASES)
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
backend = each_backend(scope="module")
# jax compiles each op: by default it checks the 64-bit dtypes (above 2**53, MIN / -1)
JAX_DTYPES = ("int64", "uint64")


def _exact_div(a, b, dtype):
    return saturated_by_zero(a, dtype) if b == 0 else wrap_int(trunc_div(a, b), dtype)


EXACT = {"truncate_div": _exact_div, "truncate_mod": trunc_mod}
INTEGER = [(d, f) for d in SIGNED + UNSIGNED for f in EXACT]

_FLOAT_DETOUR = ("MindSpore's CPU kernel divides through float64 and loses the low bits of "
                 "values above 2**53")
_TRAPS = "MindSpore's CPU kernel traps on MIN / -1 (SIGFPE kills the process); mscore wraps"
_CPU_TYPES = ("MindSpore's CPU TruncateMod takes only int8, int32 and uint8 integers; "
              "mscore computes every integer dtype")
MINDSPORE_DIFFERS = {
    "int32_truncate_div": _TRAPS, "int64_truncate_div": _TRAPS,
    "uint64_truncate_div": _FLOAT_DETOUR,
    **{f"{d}_truncate_mod": _CPU_TYPES for d in ("int16", "int64", "uint16", "uint32",
                                                 "uint64")},
}
# The other cases, compared with MindSpore's record as they are, except these.
OTHER_DIFFERS = {
    "bf16_div": "MindSpore's CPU kernel has no bfloat16; mscore computes it",
    "bf16_mod": "MindSpore's CPU kernel has no bfloat16; mscore computes it",
}


def _declared(backend, dtype):
    spec = get_registry().spec(backend)
    if dtype not in spec.dtypes:
        pytest.skip(f"{dtype} not declared by {backend}: {spec.undeclared_reason(dtype)}")


def _names(backend):
    """The cases' names, with the per-dtype operands of the dtypes ``backend`` declares."""
    return dict(inputs(ms, get_registry().spec(backend).dtypes), ms=ms, ops=ops, np=np)


def _exact(dtype, fn):
    x, y = operands(dtype)
    return [EXACT[fn](a, b, dtype) for a, b in zip(x, y)]


@pytest.mark.parametrize("dtype,fn", INTEGER, ids=[f"{d}-{f}" for d, f in INTEGER])
def test_integers_exact_at_the_extremes(backend, dtype, fn):
    """Python's exact integer answer in the operands' dtype: ``x / 0`` saturated (0 for
    ``0 / 0``; ``x % 0`` is 0), ``MIN / -1`` wrapped to MIN, 64-bit values above 2**53."""
    if backend == "jax" and dtype not in JAX_DTYPES and not SLOW:
        pytest.skip(f"jax checks {JAX_DTYPES} by default (every dtype with "
                    f"MSCORE_SLOW_TESTS=1)")
    _declared(backend, dtype)
    x, y = operands(dtype)
    out = getattr(ops, fn)(ms.Tensor(np.array(x, dtype)), ms.Tensor(np.array(y, dtype)))
    assert out.dtype.name == dtype
    assert out.asnumpy().tolist() == _exact(dtype, fn)


@pytest.mark.parametrize("dtype,fn", INTEGER, ids=[f"{d}-{f}" for d, f in INTEGER])
def test_mindspore_agrees_except_where_listed(dtype, fn):
    """The recorded MindSpore answer is the exact one, except the listed cases (which must
    still differ, or the list is stale)."""
    name = f"{dtype}_{fn}"
    rec = ORACLE[name]
    agrees = rec["kind"] == "tensor" and rec["dtype"] == dtype and \
        rec["values"] == _exact(dtype, fn)
    assert agrees != (name in MINDSPORE_DIFFERS), (name, rec)


def _float_reference(dtype, fn):
    x, y = np.array(FLOAT_X, dtype), np.array(FLOAT_Y, dtype)
    with np.errstate(all="ignore"):
        return np.trunc(x / y) if fn == "truncate_div" else np.fmod(x, y)


# x / 0 on purpose: numpy warns of the infinities and NaNs it makes
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", sorted(EXACT))
def test_floats(backend, dtype, fn):
    """``trunc(x / y)`` and C's ``fmod`` (numpy's) in the operands' dtype, with infinities,
    nan and zero divisors, as MindSpore's record."""
    if backend == "jax" and dtype != "float32" and not SLOW:
        pytest.skip("jax checks float32 by default (every dtype with MSCORE_SLOW_TESTS=1)")
    _declared(backend, dtype)
    out = getattr(ops, fn)(ms.Tensor(np.array(FLOAT_X, dtype)),
                           ms.Tensor(np.array(FLOAT_Y, dtype)))
    assert out.dtype.name == dtype
    want = _float_reference(dtype, fn)
    np.testing.assert_array_equal(out.asnumpy(), want)
    rec = ORACLE[f"{dtype}_{fn}"]
    assert rec["dtype"] == dtype
    np.testing.assert_array_equal(want.astype(np.float64), np.array(rec["values"], np.float64))


OTHER = [name for name, _ in CASES if not name.startswith(
    tuple(f"{d}_" for d in SIGNED + UNSIGNED + FLOATS))]


@pytest.mark.parametrize("name", OTHER)
def test_as_mindspore(backend, name):
    """Primitives, mixed dtypes, Python numbers, broadcasting and bad arguments: MindSpore's
    dtype and values, or its exception type (with a message)."""
    if backend == "jax" and not SLOW:
        pytest.skip("the core's routing and promotion, the same on every backend: checked on "
                    "numpy and torch (jax with MSCORE_SLOW_TESTS=1)")
    rec = ORACLE[name]
    if name in OTHER_DIFFERS:
        assert rec["kind"] == "error", name   # still refused by MindSpore's CPU kernel
        _declared(backend, "bfloat16")
        out = eval(EXPRESSIONS[name], _names(backend))
        a, b = np.array([7.5, -7.5, 3.0], np.float32), np.array([2.0, 2.0, -2.0], np.float32)
        want = np.trunc(a / b) if name == "bf16_div" else np.fmod(a, b)
        assert out.dtype == ms.bfloat16
        np.testing.assert_array_equal(out.astype(ms.float32).asnumpy(), want)
        return
    if rec["kind"] == "error":
        with pytest.raises(Exception) as info:
            eval(EXPRESSIONS[name], _names(backend))
        assert type(info.value).__name__ == rec["type"], (name, info.value)
        assert str(info.value)
        return
    out = eval(EXPRESSIONS[name], _names(backend))
    assert out.dtype.name == rec["dtype"], (name, out.dtype)
    assert list(out.shape) == rec["shape"]
    np.testing.assert_array_equal(out.asnumpy().astype(np.float64),
                                  np.array(rec["values"], np.float64), err_msg=name)


@pytest.mark.parametrize("case,fn", GRADIENT_CASES)
def test_gradients(backend, case, fn):
    """d/dx and d/dy of ``sum(f(x, y))``: central differences away from the steps of
    ``trunc`` (0 for ``truncate_div``; 1 and ``-trunc(x / y)`` for ``truncate_mod``), and
    MindSpore's record."""
    if backend == "jax" and fn == "truncate_div" and not SLOW:
        pytest.skip("jax checks truncate_mod's gradient by default (both with "
                    "MSCORE_SLOW_TESTS=1)")
    names = _names(backend)
    gx, gy = names["gx"], names["gy"]
    grads = ms.grad(lambda a, b: getattr(ops, fn)(a, b).sum(), grad_position=(0, 1))(gx, gy)
    x, y = gx.asnumpy().astype(np.float64), gy.asnumpy().astype(np.float64)
    f = (lambda a, b: np.trunc(a / b)) if fn == "truncate_div" else np.fmod
    want = (central_differences(lambda v: f(v, y).sum(), x, eps=1e-4),
            central_differences(lambda v: f(x, v).sum(), y, eps=1e-4))
    rec = ORACLE[case]["items"]
    for got, fd, r in zip(grads, want, rec):
        np.testing.assert_allclose(got.asnumpy(), fd, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got.asnumpy(), np.array(r["values"]), rtol=1e-6)
