"""Level 1, generated: the primitive ops on inputs hypothesis draws (see
:mod:`mscore.conformance.strategies`) against the numpy reference.

Shapes run from 0-d to rank 5 with empty and broadcasting axes; values mix ordinary numbers
with each dtype's edges (signed zeros, subnormals, the largest finite values, NaN and the
infinities; integers at MIN, MAX, -1, 0, 1 and every power of two, so that add, mul and pow
overflow). Inside every example a test loops over the spaces where a one-in-many bug would
hide from a few draws: every subset of axes with keepdims both ways for the reductions, every
axis of argmax/argmin, every 0-d power-of-two divisor (and 0, -1, MIN) of a floor division.
Floating results compare with the float64 reference rounded once to the tested dtype;
integers and booleans exactly. Casts to half precision meet exact rounding ties (to even, with
either sign, subnormal and above the largest finite value). The fused ops and the gradients
are in ``test_generated_fused.py``.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.conformance import harness
from mscore.conformance import strategies as gen

LEVEL = "ops"
FLOATS = harness.FLOAT_DTYPES
INTS = harness.INT_DTYPES


def _is_float(dtype):
    return mdt.get_dtype(dtype).is_floating


def _pair(kit, x, dtype):
    """Native arrays of ``x`` for the backend (rounded to ``dtype``) and for the reference
    (float64 of the same rounded values); the rounded numpy values."""
    q = harness.quantize(x, dtype) if _is_float(dtype) else x
    return kit.backend.from_numpy(q), kit.ref.from_numpy(harness.to_float64(q)), q


def _expected(kit, native, dtype):
    """The reference's result as numpy, rounded once to ``dtype`` when floating (overflow
    gives the dtype's infinity there too)."""
    e = kit.ref.to_numpy(native)
    if _is_float(dtype) and e.dtype.kind == "f":
        with np.errstate(over="ignore"):
            return harness.to_float64(harness.quantize(e, dtype))
    return e


def _subnormal(a, dtype):
    a = harness.to_float64(np.asarray(a))
    return a.dtype.kind == "f" and bool(
        ((a != 0) & (np.abs(a) < float(gen.finfo(dtype).smallest_normal))).any())


def _flush(a, dtype):
    """``a`` (float64) with its subnormals of ``dtype`` flushed to zero of their sign."""
    a = harness.to_float64(np.asarray(a)).astype(np.float64)
    return np.where(np.abs(a) < float(gen.finfo(dtype).smallest_normal), np.copysign(0.0, a), a)


def _assert_value(kit, dtype, actual, inputs, reference, check):
    """``check(actual, reference(inputs))``. A backend may flush subnormal inputs and
    results to zero (XLA on the CPU does): when the check fails where an input, the result
    or the reference's result holds a subnormal, it passes if it holds with those flushed to
    zero on both sides (the reference recomputed from flushed inputs); otherwise the first
    failure stands."""
    expected = reference(inputs)
    try:
        check(actual, expected)
    except harness.ConformanceFailure as exc:
        if not _is_float(dtype) or not any(_subnormal(a, dtype)
                                           for a in (*inputs, actual, expected)):
            raise
        failed = kit.record.comparisons.pop()
        try:
            check(_flush(actual, dtype),
                  _flush(reference([_flush(a, dtype) for a in inputs]), dtype))
        except harness.ConformanceFailure:
            kit.record.comparisons[-1] = failed
            raise exc from None


def _ref(kit, q):
    """A native array of the reference holding the float64 of ``q``."""
    return kit.ref.from_numpy(harness.to_float64(np.asarray(q)))


def _call(kit, dtype, what, fn, *natives):
    try:
        with np.errstate(all="ignore"):   # numpy-like backends warn of what the edges mean
            return fn(*natives)
    except Exception as exc:
        raise harness.ConformanceFailure(
            f"{what}: {kit.declarer} declares {dtype}, but the op raised "
            f"{type(exc).__name__}: {exc}") from exc


# -- reductions --------------------------------------------------------------------------------
# case -> the ops it checks (one test per case and dtype, every op inside each example)
REDUCTIONS = [("sum", ("sum",), d) for d in FLOATS + INTS] + \
    [("max_min", ("max", "min"), d) for d in FLOATS + INTS] + [("all_any", ("all", "any"), "bool")]


def _reduce_bound(q, axis, keepdims, dtype):
    """The error a sum may carry: a few roundings of the result plus the accumulation's,
    both relative to the sum of magnitudes (the condition of the sum)."""
    mag = np.sum(np.abs(harness.to_float64(q)), axis=axis, keepdims=keepdims)
    return harness.tolerance(dtype, 2.0).rtol * mag


@pytest.mark.parametrize("case,names,dtype", [pytest.param(c, n, d, id=f"{c}-{d}")
                                              for c, n, d in REDUCTIONS])
def test_reduction_every_axis_subset(kit, case, names, dtype):
    """``sum``, ``max``/``min``, ``all``/``any`` over every non-empty subset of axes and over
    all axes, keepdims both ways, of arrays of rank 0 to 5 (empty axes for sum/all/any)."""
    empty_ok = case != "max_min"
    strategy = gen.shapes(min_side=0 if empty_ok else 1).flatmap(
        lambda s: gen.arrays_of(dtype, s, largest=case != "sum"))

    def check(x):
        native, ref_native, q = _pair(kit, x, dtype)
        for name in names:
            for axis in gen.axis_subsets(x.ndim):
                if axis == ():
                    continue   # the core passes None for "all axes", never an empty tuple
                for keep in (False, True):
                    _check_reduction(kit, name, dtype, native, ref_native, q, axis, keep)
    gen.run_examples(kit, strategy, check)


def _check_reduction(kit, name, dtype, native, ref_native, q, axis, keep):
    what = f"{name}(axis={axis}, keepdims={keep}) of shape {q.shape}"
    got = _call(kit, dtype, what, lambda a: getattr(kit.backend, name)(a, axis, keep), native)
    kit.assert_dtype(got, dtype, what)

    def reference(inputs):
        with np.errstate(all="ignore"):
            return _expected(kit, getattr(kit.ref, name)(_ref(kit, inputs[0]), axis, keep),
                             dtype)

    def check(actual, want):
        if name == "sum" and _is_float(dtype):
            kit.assert_within(actual, want, np.abs(want) * harness.tolerance(dtype).rtol +
                              _reduce_bound(q, axis, keep, dtype), dtype, what)
        else:
            kit.assert_close(actual, want, dtype, what, tol=harness.EXACT)
    _assert_value(kit, dtype, kit.numpy(got), [q], reference, check)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_argmax_argmin_every_axis(kit, dtype):
    """``argmax``/``argmin`` along every axis of arrays of rank 1 to 5 holding ties and
    edge values (the first maximum; the first NaN)."""
    strategy = gen.shapes(min_rank=1, min_side=1).flatmap(lambda s: gen.arrays_of(dtype, s))

    def check(x):
        native, _, q = _pair(kit, x, dtype)
        for name in ("argmax", "argmin"):
            for axis in range(x.ndim):
                what = f"{name}(axis={axis}) of shape {x.shape}"
                got = _call(kit, dtype, what,
                            lambda a, name=name, axis=axis: getattr(kit.backend, name)(a, axis),
                            native)
                kit.assert_dtype(got, mdt.int64, what)

                def reference(inputs, name=name, axis=axis):
                    return kit.ref.to_numpy(getattr(kit.ref, name)(_ref(kit, inputs[0]), axis))

                def same_indices(actual, expected, what=what):
                    kit.assert_close(np.asarray(actual).astype(np.int64), expected, mdt.int64,
                                     what)
                # a backend that flushes subnormals to zero sees ties where they were not
                _assert_value(kit, dtype, kit.numpy(got), [q], reference, same_indices)
    gen.run_examples(kit, strategy, check)


# -- elementwise -------------------------------------------------------------------------------
# case -> (ops, dtypes, exact); a test per case and dtype checks every op of the case
UNARY = {
    "neg_abs_sign_floor_ceil_isfinite": (("neg", "abs", "sign", "floor", "ceil", "isfinite"),
                                         FLOATS, True),
    "neg_abs_sign": (("neg", "abs", "sign"), INTS, True),
    "exp_log_sqrt": (("exp", "log", "sqrt"), FLOATS, False),
    "sin_cos_tanh_erf": (("sin", "cos", "tanh", "erf"), FLOATS, False),
    "logical_not": (("logical_not",), ("bool",), True),
}
# exact ops whose zero results keep the sign IEEE 754 gives them
SIGNED_ZERO = ("neg", "abs", "floor", "ceil")


@pytest.mark.parametrize("case,dtype", [pytest.param(c, d, id=f"{c}-{d}")
                                        for c, (_, dts, _) in UNARY.items() for d in dts])
def test_unary(kit, case, dtype):
    """The elementwise unary ops on arrays of rank 0 to 5 with every edge value."""
    names, _, exact = UNARY[case]
    # Periodic functions: arguments a float32 argument reduction handles exactly.
    kw = {"largest": False, "low": -50.0, "high": 50.0} if "sin" in names else {}
    strategy = gen.shapes().flatmap(lambda s: gen.arrays_of(dtype, s, **kw))

    def check(x):
        native, _, q = _pair(kit, x, dtype)
        for name in names:
            what = f"{name} of shape {x.shape}"
            got = _call(kit, dtype, what, getattr(kit.backend, name), native)
            out_dtype = mdt.bool_ if name == "isfinite" else mdt.get_dtype(dtype)
            kit.assert_dtype(got, out_dtype, what)
            _assert_value(kit, dtype, kit.numpy(got), [q],
                          _unary_reference(kit, name, dtype),
                          _unary_check(kit, name, dtype, out_dtype, exact, q, what))
    gen.run_examples(kit, strategy, check)


def _unary_reference(kit, name, dtype):
    def reference(inputs):
        with np.errstate(all="ignore"):
            return _expected(kit, getattr(kit.ref, name)(_ref(kit, inputs[0])), dtype)
    return reference


def _unary_check(kit, name, dtype, out_dtype, exact, q, what):
    def check(actual, want):
        sign_of_float = name == "sign" and _is_float(dtype)
        if sign_of_float:
            # MindSpore's sign: +0 for NaN and for either zero (numpy and jax give NaN)
            q64 = harness.to_float64(np.asarray(q))
            want = np.where(np.isnan(q64) | (q64 == 0), 0.0, harness.to_float64(want))
        if exact:
            kit.assert_close(actual, want, out_dtype, what, tol=harness.EXACT)
            if (name in SIGNED_ZERO or sign_of_float) and _is_float(dtype):
                _assert_zero_signs(actual, want, what)
        else:
            kit.assert_close(actual, want, dtype, what, factor=2.0)
    return check


def _assert_zero_signs(actual, expected, what):
    a = harness.to_float64(actual)
    zero = (expected == 0) & (a == 0)
    bad = zero & (np.signbit(a) != np.signbit(expected))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise harness.ConformanceFailure(f"{what}: the sign of zero differs at index {idx}: "
                                         f"got {a[idx]!r}, expected {expected[idx]!r}")


COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
# case -> ops; a test per case and dtype checks every op of the case
BINARY = {"add_sub_mul": ("add", "sub", "mul"), "div": ("div",), "pow": ("pow",),
          "maximum_minimum_comparisons": ("maximum", "minimum") + COMPARISONS}
BINARY_PARAMS = [(c, d) for c in BINARY for d in FLOATS + INTS] + [("logical", "bool")]
BINARY["logical"] = ("logical_and", "logical_or", "equal", "not_equal")
#: exponents of the integer pow edge grid: 0, 1, small, and where each width overflows
INT_EXPONENTS = (0, 1, 2, 3, 5, 7, 8, 15, 16, 31, 32, 40, 63, 64, 65)


def _binary_operands(case, dtype, shapes):
    x_shape, y_shape = shapes
    if case == "pow" and _is_float(dtype):
        base = gen.float_arrays(dtype, x_shape, 0.1, 3.0, nonfinite=False, largest=False)
        return st.tuples(base.map(np.abs), gen.float_arrays(
            dtype, y_shape, -3.0, 3.0, nonfinite=False, largest=False).map(
                lambda e: np.where(np.abs(e) > 1e-3, e, 2.0)))
    if case == "pow":   # non-negative integer exponents (numpy has no negative ones)
        return st.tuples(gen.int_arrays(dtype, x_shape), gen.hnp.arrays(
            mdt.get_dtype(dtype).np_dtype, y_shape, elements=st.sampled_from(INT_EXPONENTS)))
    return st.tuples(gen.arrays_of(dtype, x_shape), gen.arrays_of(dtype, y_shape))


def _edge_grid(case, dtype):
    """Every pair of integer edge values (pow: edge bases by :data:`INT_EXPONENTS`), as an
    (N, 1) by (1, M) broadcast."""
    edges = np.asarray(gen.int_edges(dtype), dtype=mdt.get_dtype(dtype).np_dtype)
    other = np.asarray(INT_EXPONENTS, dtype=edges.dtype) if case == "pow" else edges
    return edges.reshape(-1, 1), other.reshape(1, -1)


@pytest.mark.parametrize("case,dtype", [pytest.param(c, d, id=f"{c}-{d}")
                                        for c, d in BINARY_PARAMS])
def test_binary_broadcasting(kit, case, dtype):
    """The elementwise binary ops on pairs of shapes that broadcast (rank 0 to 5, empty and
    unit axes), with every edge value; integers also on the grid of every pair of edge
    values (overflow of add, mul and pow wraps, exactly, in every width)."""

    def compare(x, y, what):
        native_x, _, qx = _pair(kit, x, dtype)
        native_y, _, qy = _pair(kit, y, dtype)
        for name in BINARY[case]:
            _check_binary(kit, name, dtype, native_x, native_y, qx, qy, f"{name} of {what}")

    if not _is_float(dtype) and dtype != "bool":
        x, y = _edge_grid(case, dtype)
        compare(x, y, f"every pair of {dtype} edge values")
    strategy = gen.broadcast_shapes().flatmap(lambda s: _binary_operands(case, dtype, s))
    gen.run_examples(kit, strategy,
                     lambda xy: compare(xy[0], xy[1], f"shapes {xy[0].shape} and "
                                                      f"{xy[1].shape}"))


def _check_binary(kit, name, dtype, native_x, native_y, qx, qy, what):
    out_bool = name in COMPARISONS or name.startswith("logical")
    out_dtype = mdt.bool_ if out_bool else mdt.get_dtype(dtype)
    got = _call(kit, dtype, what, getattr(kit.backend, name), native_x, native_y)
    kit.assert_dtype(got, out_dtype, what)

    def reference(inputs):
        with np.errstate(all="ignore"):
            return _expected(kit, getattr(kit.ref, name)(*[_ref(kit, a) for a in inputs]),
                             dtype)

    def check(actual, want):
        if out_bool or not _is_float(dtype) or name in ("maximum", "minimum"):
            kit.assert_close(actual, want, out_dtype, what, tol=harness.EXACT)
        else:
            kit.assert_close(actual, want, dtype, what, factor=2.0 if name == "pow" else 1.0)
    _assert_value(kit, dtype, kit.numpy(got), [qx, qy], reference, check)


# -- integer floor division --------------------------------------------------------------------
def _floor_exact(dtype):
    info = np.iinfo(mdt.get_dtype(dtype).np_dtype)
    lo, hi = int(info.min), int(info.max)

    def floor(a, b):   # the contract, in Python's exact integers
        a, b = int(a), int(b)
        if b == 0:
            return hi if a > 0 else lo if a < 0 else 0
        return (a // b - lo) % (hi - lo + 1) + lo   # wraps: MIN // -1 == MIN
    return np.frompyfunc(floor, 2, 1)


def _divisor_shape(x_shape):
    """Shapes of every rank up to ``x_shape``'s that broadcast against it."""
    rank = len(x_shape)
    return st.integers(0, rank).flatmap(lambda r: st.tuples(*[
        st.sampled_from((1, side)) for side in x_shape[rank - r:]]))


@pytest.mark.parametrize("dtype", INTS)
def test_floor_divide_power_of_two_divisors(kit, dtype):
    """Integer floor division (the backend's ``int_floor_divide`` when it binds one, and the
    core's composite through ``ops.floor_divide``) of arrays of rank 0 to 5 by every 0-d
    power of two of either sign, 0, -1 and MIN, and by drawn divisor arrays of every rank:
    exact, ``x // 0`` is MAX, MIN or 0 by the sign of x, ``MIN // -1`` wraps to MIN."""
    np_dtype = mdt.get_dtype(dtype).np_dtype
    exact = _floor_exact(dtype)
    fused = kit.fused("int_floor_divide")
    paths = (["fused"] if fused is not None else []) + ["composite"]
    divisor_elements = st.sampled_from(gen.power_of_two_divisors(dtype) + [3, 7]) | \
        st.integers(int(np.iinfo(np_dtype).min), int(np.iinfo(np_dtype).max))
    strategy = gen.shapes().flatmap(lambda s: st.tuples(
        gen.int_arrays(dtype, s),
        _divisor_shape(s).flatmap(lambda d: gen.hnp.arrays(np_dtype, d,
                                                           elements=divisor_elements))))

    def divide(path, a, b):
        if path == "fused":
            return kit.backend.int_floor_divide(a, b)
        with harness.without_fused(kit.backend, "int_floor_divide"):
            return ops.floor_divide(Tensor._wrap(a), Tensor._wrap(b))._data

    def check(xy):
        x, drawn = xy
        divisors = [np.asarray(b, dtype=np_dtype) for b in gen.power_of_two_divisors(dtype)]
        for y in divisors + [drawn]:
            want = np.asarray(exact(*np.broadcast_arrays(x, y))).astype(np_dtype) if x.size else \
                np.broadcast_to(x, np.broadcast_shapes(x.shape, y.shape)).copy()
            for path in paths:
                what = (f"floor division ({path}) of shape {x.shape} by "
                        f"{'a 0-d ' + str(y) if y.ndim == 0 else 'shape ' + str(y.shape)}")
                got = _call(kit, dtype, what, lambda p, q, path=path: divide(path, p, q),
                            kit.backend.from_numpy(x), kit.backend.from_numpy(y))
                kit.assert_dtype(got, dtype, what)
                kit.assert_close(kit.numpy(got), want, dtype, what)
    gen.run_examples(kit, strategy, check)


# -- shape ops ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ("float32", "bfloat16", "int8", "uint64", "bool"))
def test_transpose_every_permutation_rank(kit, dtype):
    """``transpose`` by drawn permutations and ``broadcast_to`` to drawn larger shapes, of
    arrays of rank 0 to 5 (empty axes included): the values move exactly."""
    strategy = gen.shapes().flatmap(lambda s: st.tuples(
        gen.arrays_of(dtype, s), gen.permutations(len(s)),
        st.tuples(*[st.sampled_from((side, 2) if side == 1 else (side,)) for side in s])))

    def check(example):
        x, perm, target = example
        native, ref_native, _ = _pair(kit, x, dtype)
        what = f"transpose{perm} of shape {x.shape}"
        got = _call(kit, dtype, what, lambda a: kit.backend.transpose(a, perm), native)
        kit.assert_close(kit.numpy(got), kit.ref.to_numpy(kit.ref.transpose(ref_native, perm)),
                         dtype, what, tol=harness.EXACT)
        what = f"broadcast_to{target} of shape {x.shape}"
        got = _call(kit, dtype, what, lambda a: kit.backend.broadcast_to(a, target), native)
        kit.assert_close(kit.numpy(got),
                         kit.ref.to_numpy(kit.ref.broadcast_to(ref_native, target)), dtype,
                         what, tol=harness.EXACT)
    gen.run_examples(kit, strategy, check)


# -- casts: rounding ties ----------------------------------------------------------------------
TIE_CASTS = [(s, d) for s in ("float32", "float64") for d in ("float16", "bfloat16")]


@pytest.mark.parametrize("src,dst", [pytest.param(s, d, id=f"{s}_to_{d}")
                                     for s, d in TIE_CASTS])
def test_cast_rounding_ties_to_even(kit, src, dst):
    """A cast to half precision (``cast`` and the backend's ``float_caster``) rounds values
    exactly halfway between two neighbours to the even one, with either sign: subnormal
    ties, the tie above the largest finite value (to infinity), ties at 1.0 and drawn ones;
    and values off the ties to nearest."""
    kit.require_dtype(src, dst)
    np_src = mdt.get_dtype(src).np_dtype
    bits = np.dtype(f"u{mdt.get_dtype(dst).np_dtype.itemsize}")
    target = mdt.get_dtype(dst)
    casters = [("cast", lambda a: kit.backend.cast(a, target))]
    if getattr(kit.backend, "float_caster", None) is not None:
        casters.append(("float_caster", kit.backend.float_caster(target)))

    def check(patterns):
        ties, want = gen.rounding_ties(dst, patterns)
        # Off the ties: a quarter of a step above and below round to the nearer neighbour.
        lows = np.asarray(patterns, dtype=bits).view(target.np_dtype).astype(np.float64)
        near = np.concatenate([ties, ties * 0.75 + lows[:len(ties)] * 0.25 *
                               np.where(np.arange(len(ties)) % 2 == 1, -1, 1)])
        values = near.astype(np_src)
        with np.errstate(over="ignore"):
            expected = np.concatenate([want, values[len(ties):].astype(np.float32).astype(
                target.np_dtype).view(bits)])
        native = kit.backend.from_numpy(values)
        for name, caster in casters:
            what = f"{name} {src} -> {dst} of rounding ties and values off them"
            got = _call(kit, dst, what, caster, native)
            kit.assert_dtype(got, target, what)
            actual = np.ascontiguousarray(kit.numpy(got)).view(bits)
            # A backend may flush subnormals to zero (XLA on the CPU does): a zero of the
            # right sign for a value below the smallest normal of the target passes.
            sign = np.array(1 << (8 * bits.itemsize - 1), dtype=bits)
            flushed = ((actual & ~sign) == 0) & ((actual & sign) == (expected & sign)) & \
                (np.abs(values.astype(np.float64)) < float(gen.finfo(dst).smallest_normal))
            bad = (actual != expected) & ~flushed
            if bad.any():
                i = int(np.argmax(bad))
                raise harness.ConformanceFailure(
                    f"{what}: {int(bad.sum())} of {bad.size} values rounded wrongly; first "
                    f"{values[i]!r} gave {actual[i:i + 1].view(target.np_dtype)[0]!r} (bits "
                    f"{int(actual[i]):#x}), expected {expected[i:i + 1].view(target.np_dtype)[0]!r}"
                    f" (bits {int(expected[i]):#x}; round to nearest, ties to even)")
    gen.run_examples(kit, gen.tie_patterns(dst), check)


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_half_to_even(kit, dtype):
    """``ops.round`` (the core's composite of the backend's floor, remainder, comparisons and
    where) rounds the exact halves ``k + 0.5`` to the even neighbour, with either sign, and
    drawn values and edges to the nearest integer."""
    halves = np.arange(-8, 8) + 0.5
    strategy = gen.shapes(max_rank=2, max_side=4).flatmap(
        lambda s: gen.float_arrays(dtype, s, -100.0, 100.0))

    def check(x):
        values = np.concatenate([halves, np.ravel(x)])
        what = f"round of the halves -7.5..7.5 and {x.size} drawn values"
        with np.errstate(invalid="ignore"):   # inf - floor(inf) on the way
            expected = kit.reference(ops.round, values, dtype=dtype)
            actual = kit.run(ops.round, values, dtype=dtype)
        kit.assert_close(actual, expected, dtype, what, tol=harness.EXACT)
    gen.run_examples(kit, strategy, check)
