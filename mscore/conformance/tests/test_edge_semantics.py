"""Level 1 (edge cases): the answers the contract pins where libraries disagree.

Each case states the expected values outright (not from the reference backend), for every
dtype the backend declares:

- integer overflow wraps around (two's complement): ``MAX + 1 == MIN``, ``-MIN == MIN``,
  ``abs(MIN) == MIN``, ``-1 == MAX`` unsigned, and sums and matrix products wrap the same way;
- integer division truncates toward zero, exactly over the whole range (int64/uint64 far
  above 2**53, large divisors, an unsigned MAX divisor), ``x / 0 == 0`` and ``MIN / -1 == MIN``;
- integer floor division (``ops.floor_divide``), through the backend's ``int_floor_divide``
  when it binds one and through the core's composite from ``div``, rounds toward -inf exactly,
  gives MAX, MIN or 0 for ``x // 0`` by the sign of ``x`` and wraps ``MIN // -1`` to MIN;
- ``sign`` gives +0 for NaN (either sign bit) and for either zero (MindSpore's), -1 and 1
  for the infinities;
- NaN propagates through ``max``/``min``/``maximum``/``minimum``, and ``argmax``/``argmin``
  give the index of the first NaN (numpy's rule);
- a float to integer cast truncates toward zero, saturates at the integer range (infinities
  included) and maps NaN to 0 (a negative float to an unsigned type gives 0); integer to
  narrower integer wraps, and so does a cast between signed and unsigned (``-1`` to uint32
  is ``2**32 - 1``, uint64 ``2**64 - 1`` to int64 is ``-1``); an unsigned integer to a float
  rounds to nearest (uint64 ``2**64 - 1`` to float32 is ``2**64``); anything nonzero (NaN
  included) casts to True.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.conformance import harness

LEVEL = "ops"
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")


@dataclass
class EdgeCase:
    """``check(kit, dtype)`` runs the backend and compares with values it states itself."""

    name: str
    dtypes: tuple
    check: object

    def __repr__(self):
        return self.name


def _info(dtype):
    return np.iinfo(mdt.get_dtype(dtype).np_dtype)


def _run(kit, dtype, what, fn, *arrays):
    """``fn(backend, *natives)``; an exception is a failure that names the declaration."""
    natives = [kit.backend.from_numpy(np.asarray(a)) for a in arrays]
    try:
        out = fn(kit.backend, *natives)
    except Exception as exc:
        raise harness.ConformanceFailure(
            f"{what}: {kit.declarer} declares {dtype}, but the op raised {type(exc).__name__}: "
            f"{exc}") from exc
    return out


def _expect(kit, dtype, what, out, expected, out_dtype=None):
    want = mdt.get_dtype(out_dtype or dtype)
    kit.assert_dtype(out, want, what)
    kit.assert_close(kit.numpy(out), np.asarray(expected, dtype=want.np_dtype), want, what,
                     tol=harness.EXACT)


def _overflow_wraps(kit, dtype):
    i = _info(dtype)
    d = i.dtype.type
    lo, hi = d(i.min), d(i.max)
    wrap2 = d(-2) if i.min else d(i.max - 1)          # MAX * 2 mod 2**bits
    cases = [
        ("add(MAX, 1)", lambda b, x, y: b.add(x, y), [hi], [d(1)], [lo]),
        ("sub(MIN, 1)", lambda b, x, y: b.sub(x, y), [lo], [d(1)], [hi]),
        ("mul(MAX, 2)", lambda b, x, y: b.mul(x, y), [hi], [d(2)], [wrap2]),
        ("sum([MAX, 1])", lambda b, x, y: b.sum(b.concat([x, y], 0), None, False), [hi],
         [d(1)], lo),
        ("matmul([[MAX, 1]], [[1], [1]])",
         lambda b, x, y: b.matmul(b.reshape(b.concat([x, y], 0), (1, 2)),
                                  b.full((2, 1), 1, mdt.get_dtype(dtype))),
         [hi], [d(1)], [[lo]]),
    ]
    if i.min:
        cases += [("neg(MIN)", lambda b, x, y: b.neg(x), [lo], [d(0)], [lo]),
                  ("abs(MIN)", lambda b, x, y: b.abs(x), [lo], [d(0)], [lo])]
    else:
        cases += [("neg(1)", lambda b, x, y: b.neg(x), [d(1)], [d(0)], [hi])]
    for what, fn, x, y, want in cases:
        out = _run(kit, dtype, what, fn, np.array(x, d), np.array(y, d))
        _expect(kit, dtype, what, out, want)


def _toward_zero(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _division(kit, dtype):
    i = _info(dtype)
    d = i.dtype.type
    lo, hi = int(i.min), int(i.max)
    if lo:
        x, y = [7, -7, 7, -7, 0, 9, lo, lo], [2, 2, -2, -2, 0, 0, -1, 1]
        want = [3, -3, -3, 3, 0, 0, lo, lo]
    else:   # MAX / 1 and MAX / 2: the whole unsigned range, not a signed reading of it
        x, y = [7, 9, 0, 255, hi, hi], [2, 0, 0, 4, 1, 2]
        want = [3, 0, 0, 63, hi, hi // 2]
    # Exact over the whole range (int64/uint64: far above 2**53, where a float quotient loses
    # the low bits), with large divisors too; an unsigned MAX divisor is no -1.
    big = hi // 2 + 1
    x += [hi, hi, hi - 1, big, big, hi - 1, hi - hi % 3 - 1]
    y += [3, 7, hi, 3, hi, 1, 3]
    if lo:
        x += [lo + 1, lo, -big, lo + 2]
        y += [-3, 7, 3, -hi]
    want += [_toward_zero(a, b) for a, b in zip(x[len(want):], y[len(want):])]
    out = _run(kit, dtype, "div", lambda b, a, c: b.div(a, c), np.array(x, d), np.array(y, d))
    _expect(kit, dtype, "div (truncating, exact; x / 0 == 0; MIN / -1 == MIN)", out, want)


def _floor_cases(dtype):
    """``(x, y, want)`` triples of integer floor division stated outright: arrays of one
    length, then 0-d divisors (broadcasting) of 0 and, for signed dtypes, -1."""
    i = _info(dtype)
    lo, hi = int(i.min), int(i.max)
    big = hi // 2 + 1
    x = [7, 9, 0, hi, hi, hi - 1, big, hi, hi - hi % 3 - 1]
    y = [2, 0, 0, 1, 2, hi, 3, 3, 3]
    if lo:
        x += [-7, 7, -7, 5, -5, lo, lo, hi, lo + 1, -big, lo, -hi]
        y += [2, -2, -2, 0, 0, -1, 1, -1, -3, 3, 7, -hi]

    def floor(a, b):   # the contract, in Python's exact integers
        if b == 0:
            return hi if a > 0 else lo if a < 0 else 0
        return (a // b - lo) % (hi - lo + 1) + lo   # wraps: MIN // -1 == MIN

    divisors = [0, -1] if lo else [0]
    return [(x, y, [floor(a, b) for a, b in zip(x, y)])] + \
        [(x, b, [floor(a, b) for a in x]) for b in divisors]


def _floor_division(kit, dtype):
    d = _info(dtype).dtype.type
    fused = kit.fused("int_floor_divide")
    for x, y, want in _floor_cases(dtype):
        xs, ys = np.array(x, d), np.array(y, d)
        what = f"floor division by {'a 0-d ' + str(y) if np.ndim(y) == 0 else 'an array'} " \
               f"(exact; x // 0 is MAX, MIN or 0 by the sign of x; MIN // -1 == MIN)"
        if fused is not None:
            out = _run(kit, dtype, f"int_floor_divide: {what}",
                       lambda b, p, q: b.int_floor_divide(p, q), xs, ys)
            _expect(kit, dtype, f"int_floor_divide: {what}", out, want)
        with harness.without_fused(kit.backend, "int_floor_divide"):
            out = _run(kit, dtype, f"the core's composite: {what}",
                       lambda b, p, q: ops.floor_divide(Tensor._wrap(p), Tensor._wrap(q))._data,
                       xs, ys)
        _expect(kit, dtype, f"the core's composite: {what}", out, want)


def _nan_reductions(kit, dtype):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 0.5, -1.0, 4.0]])
    y = np.array([[5.0, 5.0, np.nan, 1.0], [1.0, 1.0, 1.0, 1.0]])
    xd, yd = harness.quantize(x, dtype), harness.quantize(y, dtype)
    nan = np.nan
    for what, fn, args, want, out_dtype in (
            ("max(axis=1)", lambda b, a: b.max(a, (1,), False), (xd,), [nan, 4.0], None),
            ("min(axis=1)", lambda b, a: b.min(a, (1,), False), (xd,), [nan, -1.0], None),
            ("max(all)", lambda b, a: b.max(a, None, False), (xd,), nan, None),
            ("argmax(axis=1)", lambda b, a: b.argmax(a, 1), (xd,), [1, 3], "int64"),
            ("argmin(axis=1)", lambda b, a: b.argmin(a, 1), (xd,), [1, 2], "int64"),
            ("maximum", lambda b, a, c: b.maximum(a, c), (xd, yd),
             [[5.0, nan, nan, nan], [2.0, 1.0, 1.0, 4.0]], None),
            ("minimum", lambda b, a, c: b.minimum(a, c), (xd, yd),
             [[1.0, nan, nan, nan], [1.0, 0.5, -1.0, 1.0]], None)):
        out = _run(kit, dtype, what, fn, *args)
        _expect(kit, dtype, f"{what} with NaN", out, want, out_dtype)


_CAST_SOURCE = [1e10, -1e10, np.nan, np.inf, -np.inf, 2.7, -2.7, 300.0, -5.0, -0.5, 0.0,
                70000.0, 4294967296.0]


def _float_to_int_saturates(kit, dtype):
    with np.errstate(over="ignore"):   # 1e10 is inf in float16, on purpose
        x = harness.quantize(np.array(_CAST_SOURCE), dtype)
    targets = [t for t in harness.INT_DTYPES if kit.has_dtype(t)]
    if not targets:
        pytest.skip(f"no integer dtype declared by {kit.name}")
    for target in targets:
        i = _info(target)
        want = []
        for v in np.trunc(x.astype(np.float64)):
            if np.isnan(v):
                want.append(0)
            elif v >= float(i.max) + 1:
                want.append(i.max)
            elif v < float(i.min):
                want.append(i.min)
            else:
                want.append(int(v))
        what = f"cast {dtype} -> {target} (saturating, NaN -> 0)"
        out = _run(kit, dtype, what, lambda b, a, to=target: b.cast(a, mdt.get_dtype(to)), x)
        _expect(kit, dtype, what, out, want, target)


def _float_to_bool(kit, dtype):
    x = harness.quantize(np.array([0.0, -0.0, np.nan, 0.5, np.inf, -3.0]), dtype)
    out = _run(kit, dtype, "cast to bool", lambda b, a: b.cast(a, mdt.bool_), x)
    _expect(kit, dtype, "cast to bool (nonzero and NaN -> True)", out,
            [False, False, True, True, True, True], "bool")


def _int_narrowing_wraps(kit, dtype):
    i = _info(dtype)
    sources = [s for s in ("int64", "int32") if kit.has_dtype(s) and
               _info(s).bits > i.bits]
    if not sources:
        pytest.skip(f"no integer dtype wider than {dtype} declared by {kit.name}")
    values = [300, -129, 2 ** 20 + 5, -1, 127]
    bits = 1 << i.bits
    want = [((v - int(i.min)) % bits) + int(i.min) for v in values]
    for source in sources:
        what = f"cast {source} -> {dtype} (wraps)"
        out = _run(kit, dtype, what, lambda b, a: b.cast(a, mdt.get_dtype(dtype)),
                   np.array(values, dtype=mdt.get_dtype(source).np_dtype))
        _expect(kit, dtype, what, out, want)


def _sign_change_wraps(kit, dtype):
    """Signed to unsigned ``dtype`` and back wraps modulo ``2**bits`` (two's complement)."""
    i = _info(dtype)
    bits = 1 << i.bits
    values = {"int8": [-1, -128, 5, 127], "int64": [-1, -300, 5, -2 ** 31]}
    checked = False
    for source, vals in values.items():
        if not kit.has_dtype(source):
            continue
        what = f"cast {source} -> {dtype} (wraps)"
        out = _run(kit, dtype, what, lambda b, a: b.cast(a, mdt.get_dtype(dtype)),
                   np.array(vals, dtype=mdt.get_dtype(source).np_dtype))
        _expect(kit, dtype, what, out, [v % bits for v in vals])
        checked = True
    back = [int(i.max), int(i.max) // 2 + 1, 7, 0]     # MAX, 2**(bits-1), small
    for target in SIGNED:
        t = _info(target)
        if not kit.has_dtype(target) or t.bits < i.bits:
            continue
        tbits = 1 << t.bits
        want = [v - tbits if v > t.max else v for v in back]
        what = f"cast {dtype} -> {target} (wraps)"
        out = _run(kit, dtype, what, lambda b, a, to=target: b.cast(a, mdt.get_dtype(to)),
                   np.array(back, dtype=i.dtype))
        _expect(kit, dtype, what, out, want, target)
        checked = True
    if not checked:
        pytest.skip(f"no signed integer dtype declared by {kit.name} beside {dtype}")


def _unsigned_to_float_rounds(kit, dtype):
    """The whole unsigned range converts to floats (rounded to nearest), not a signed
    reading of the top half."""
    i = _info(dtype)
    values = [int(i.max), int(i.max) // 2 + 2, 7, 0]
    targets = [t for t in harness.FLOAT_DTYPES if kit.has_dtype(t)]
    if not targets:
        pytest.skip(f"no floating dtype declared by {kit.name}")
    for target in targets:
        with np.errstate(over="ignore"):   # beyond float16's range: inf, on purpose
            # Through float64: exact below 2**53, and the uint64 values (2**64 - 1, 2**63 + 1)
            # round there to powers of two, which every narrower float holds or overflows.
            want = harness.quantize(np.array([float(v) for v in values]), target)
        what = f"cast {dtype} -> {target} (rounds to nearest)"
        out = _run(kit, dtype, what, lambda b, a, to=target: b.cast(a, mdt.get_dtype(to)),
                   np.array(values, dtype=i.dtype))
        _expect(kit, dtype, what, out, want, target)


def _sign_of_nan_and_zeros(kit, dtype):
    x = harness.quantize(np.array([np.nan, -np.nan, -0.0, 0.0, 1.5, -2.0, np.inf, -np.inf]),
                         dtype)
    what = "sign of [nan, -nan, -0.0, 0.0, 1.5, -2.0, inf, -inf] (NaN and zeros give +0)"
    out = _run(kit, dtype, what, lambda b, a: b.sign(a), x)
    want = harness.quantize(np.array([0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 1.0, -1.0]), dtype)
    kit.assert_dtype(out, mdt.get_dtype(dtype), what)
    got = np.asarray(kit.numpy(out))
    if not np.array_equal(harness.bit_pattern(got), harness.bit_pattern(want)):
        raise harness.ConformanceFailure(f"{what}: got {got.tolist()} (sign bits "
                                         f"{np.signbit(got).tolist()})")


CASES = [EdgeCase("int_overflow_wraps", harness.INT_DTYPES, _overflow_wraps),
         EdgeCase("int_division_by_zero_and_min", harness.INT_DTYPES, _division),
         EdgeCase("int_floor_division", harness.INT_DTYPES, _floor_division),
         EdgeCase("int_narrowing_cast_wraps", ("int8", "int16", "int32", "uint8", "uint16",
                                               "uint32"), _int_narrowing_wraps),
         EdgeCase("signed_unsigned_cast_wraps", UNSIGNED, _sign_change_wraps),
         EdgeCase("unsigned_to_float_cast_rounds", UNSIGNED, _unsigned_to_float_rounds),
         EdgeCase("sign_of_nan_and_zeros", harness.FLOAT_DTYPES, _sign_of_nan_and_zeros),
         EdgeCase("nan_in_max_min_argmax", harness.FLOAT_DTYPES, _nan_reductions),
         EdgeCase("float_to_int_cast_saturates", harness.FLOAT_DTYPES,
                  _float_to_int_saturates),
         EdgeCase("float_to_bool_cast", harness.FLOAT_DTYPES, _float_to_bool)]
PARAMS = [pytest.param(c, d, id=f"{c.name}-{d}") for c in CASES for d in c.dtypes]


@pytest.mark.parametrize("case,dtype", PARAMS)
def test_edge_case(kit, case, dtype):
    """The backend gives the contract's pinned answer."""
    case.check(kit, dtype)
