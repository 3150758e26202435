"""Comparison helpers of the conformance kit: tolerances, reference runs, readable failures.

The reference is the built-in ``numpy`` backend computing in float64 from the *same* inputs
the backend under test sees (inputs are rounded to the tested dtype first, so only the
backend's own arithmetic is measured). A result passes when every element satisfies

    |actual - expected| <= atol * scale + rtol * |expected|

where ``scale`` is the largest ``|expected|`` of the array (1 when all are zero) and
``(rtol, atol)`` come from :data:`TOLERANCES` for the tested dtype, times a per-check factor
for computations that accumulate rounding (gradients, training runs). Integer and boolean
results must match exactly; NaN and infinities must sit at the same places.
"""
from __future__ import annotations

import contextlib
import math
import zlib
from dataclasses import dataclass

import numpy as np

import mscore as ms
from mscore import ops
from mscore.common import dtype as mdt

SUITE_VERSION = "1.0.0"
#: examples per generated test in a default run (each example loops over the small spaces);
#: here, not in :mod:`mscore.conformance.strategies`, because the pytest plugin reads them and
#: loads in every pytest session, with or without hypothesis installed
DEFAULT_EXAMPLES = 3
#: examples per generated test with ``--thorough``
THOROUGH_EXAMPLES = 120


@dataclass(frozen=True)
class Tolerance:
    """Relative tolerance ``rtol`` and magnitude-relative absolute tolerance ``atol``."""

    rtol: float
    atol: float

    def scaled(self, factor):
        """This tolerance times ``factor`` (for computations that accumulate rounding)."""
        if not isinstance(factor, (int, float)) or factor <= 0:
            raise ValueError(f"factor: expected a positive number, got {factor!r}")
        return Tolerance(self.rtol * factor, self.atol * factor)


# One rounding of the result costs half an ulp (fp16 4.9e-4, bf16 3.9e-3, fp32 6e-8); the
# margins leave room for a few roundings and for different but correct summation orders.
TOLERANCES = {
    "float64": Tolerance(rtol=1e-10, atol=1e-12),
    "float32": Tolerance(rtol=2e-5, atol=2e-6),
    "float16": Tolerance(rtol=3e-3, atol=1.5e-3),
    "bfloat16": Tolerance(rtol=2e-2, atol=1e-2),
}
EXACT = Tolerance(rtol=0.0, atol=0.0)

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
SHORT = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
         "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
         "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool"}


def dtype_name(dtype):
    """The canonical name ("float16", ...) of a DType, a numpy dtype or a name."""
    if dtype is None:
        return None
    return mdt.as_dtype(dtype).name


def tolerance(dtype, factor=1.0):
    """The :class:`Tolerance` for results of ``dtype`` (exact for integers and bool)."""
    name = dtype_name(dtype)
    tol = TOLERANCES.get(name, EXACT)
    return tol if factor == 1.0 or tol is EXACT else tol.scaled(factor)


def stable_seed(*parts):
    """A seed derived from ``parts`` that is the same in every process and on every backend."""
    return zlib.crc32("/".join(str(p) for p in parts).encode()) & 0x7FFFFFFF


def quantize(array, dtype):
    """``array`` rounded to ``dtype`` (the values the backend under test will see), as numpy
    in that dtype."""
    return np.asarray(array).astype(mdt.as_dtype(dtype).np_dtype)


def to_float64(array):
    """A float64 numpy copy of a float array; other dtypes are returned unchanged."""
    a = np.asarray(array)
    if a.dtype.kind == "f" or a.dtype == mdt.bfloat16.np_dtype:
        return a.astype(np.float64)
    return a


class ConformanceFailure(AssertionError):
    """A result differs from the reference beyond the tolerance (message says where)."""


@dataclass
class Comparison:
    """The outcome of comparing one result with the reference."""

    what: str
    max_abs_err: float
    max_rel_err: float
    tolerance: Tolerance
    ok: bool
    message: str = ""
    ratio: float = 0.0      # max over elements of error / allowed error (> 1 fails)
    worst_err: float = 0.0      # the error of the element with that largest ratio
    worst_allowed: float = 0.0  # and the error allowed there


def compare(actual, expected, dtype, what="result", factor=1.0, tol=None, min_scale=0.0):
    """Compare numpy ``actual`` with float64 ``expected`` for a result of ``dtype``.

    Returns a :class:`Comparison` (never raises); ``tol`` overrides the dtype's tolerance;
    ``min_scale`` is the least ``scale`` of the absolute tolerance (for results computed from
    inputs of about that magnitude, whose error is relative to the inputs even where the
    result is small: a sum that cancels, gelu far left of 0).
    """
    tol = tol or tolerance(dtype, factor)
    a = np.asarray(actual)
    e = np.asarray(expected)
    if a.shape != e.shape:
        return Comparison(what, math.inf, math.inf, tol, False,
                          f"{what}: shape {a.shape}, expected {e.shape}", math.inf)
    if e.dtype.kind in "biu" and a.dtype.kind in "biuf" and tol is EXACT:
        diff = a.astype(np.float64) - e.astype(np.float64)
        # Integers compare as integers: int64/uint64 values apart by less than their float64
        # spacing (above 2**53) are equal as floats.
        bad = (a != e) if a.dtype.kind in "biu" else diff != 0
        max_abs = float(np.abs(diff).max()) if diff.size else 0.0
        max_abs = max(max_abs, 1.0) if bad.any() else max_abs
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return Comparison(what, max_abs, math.inf, tol, False,
                              f"{what}: {int(bad.sum())} of {a.size} elements differ (exact "
                              f"match required); first at index {idx}: got {a[idx]!r}, "
                              f"expected {e[idx]!r}", math.inf)
        return Comparison(what, 0.0, 0.0, tol, True)
    a = to_float64(a).astype(np.float64)
    e = to_float64(e).astype(np.float64)
    if a.size == 0:
        return Comparison(what, 0.0, 0.0, tol, True)
    misplaced = _non_finite_misplaced(a, e, what, tol)
    if misplaced is not None:
        return misplaced
    finite = np.isfinite(e) & np.isfinite(a)
    af, ef = a[finite], e[finite]
    if ef.size == 0:
        return Comparison(what, 0.0, 0.0, tol, True)
    scale = max(float(np.abs(ef).max()), min_scale) or 1.0
    err = np.abs(af - ef)
    allowed = tol.atol * scale + tol.rtol * np.abs(ef)
    rel = err / np.maximum(np.abs(ef), 1e-3 * scale)
    max_abs, max_rel = float(err.max()), float(rel.max())
    ratio = tolerance_ratio(err, allowed)
    worst = worst_element(err, allowed)
    bad = err > allowed
    if not bad.any():
        return Comparison(what, max_abs, max_rel, tol, True, ratio=ratio,
                          worst_err=float(err[worst]), worst_allowed=float(allowed[worst]))
    positions = np.argwhere(finite)
    at = int(np.argmax(np.where(bad, err - allowed, -np.inf)))
    idx = tuple(int(i) for i in positions[at])
    return Comparison(what, max_abs, max_rel, tol, False,
                      f"{what}: {int(bad.sum())} of {a.size} elements differ beyond "
                      f"rtol={tol.rtol:g}, atol={tol.atol:g}*{scale:.3g}; worst at index "
                      f"{idx}: got {a[idx]!r}, expected {e[idx]!r} (max abs err "
                      f"{max_abs:.3g}, max rel err {max_rel:.3g})", ratio,
                      float(err[worst]), float(allowed[worst]))


def _non_finite_misplaced(a, e, what, tol):
    """A failed :class:`Comparison` when float64 arrays ``a`` and ``e`` hold NaN or
    infinities at different places (or infinities of different signs), else None."""
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    place = (nan_a != nan_e) | ((np.isinf(a) | np.isinf(e)) & (a != e) & ~nan_a & ~nan_e)
    if not place.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(place)[0])
    return Comparison(what, math.inf, math.inf, tol, False,
                      f"{what}: non-finite values differ: {int(place.sum())} of {a.size} "
                      f"elements; first at index {idx}: got {a[idx]!r}, expected "
                      f"{e[idx]!r}", math.inf)


def worst_element(err, allowed):
    """The flat index of the element with the largest ``err / allowed`` (0 for none)."""
    err = np.asarray(err, dtype=np.float64).reshape(-1)
    allowed = np.asarray(allowed, dtype=np.float64).reshape(-1)
    if err.size == 0:
        return 0
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(err == 0, 0.0, err / allowed)
    return int(np.argmax(r))


def compare_within(actual, expected, allowed, what="result"):
    """Compare numpy ``actual`` with ``expected`` where each element may differ by the
    absolute ``allowed`` (an array broadcasting to them, or a number): the bound a check
    derives from its inputs (a sum's condition, the reference's own rounding error).
    NaN and infinities must sit at the same places. Returns a :class:`Comparison`."""
    a = to_float64(np.asarray(actual)).astype(np.float64)
    e = to_float64(np.asarray(expected)).astype(np.float64)
    if a.shape != e.shape:
        return Comparison(what, math.inf, math.inf, EXACT, False,
                          f"{what}: shape {a.shape}, expected {e.shape}", math.inf)
    allowed = np.broadcast_to(np.asarray(allowed, dtype=np.float64), e.shape)
    tol = Tolerance(0.0, float(allowed.max()) if allowed.size else 0.0)
    misplaced = _non_finite_misplaced(a, e, what, tol)
    if misplaced is not None:
        return misplaced
    finite = np.isfinite(e)
    with np.errstate(invalid="ignore"):
        err = np.abs(a - e)[finite]
    bound = allowed[finite]
    if err.size == 0:
        return Comparison(what, 0.0, 0.0, tol, True)
    rel = err / np.maximum(np.abs(e[finite]), np.finfo(np.float64).tiny)
    ratio = tolerance_ratio(err, bound)
    worst = worst_element(err, bound)
    comparison = Comparison(what, float(err.max()), float(rel.max()), tol, ratio <= 1.0,
                            ratio=ratio, worst_err=float(err[worst]),
                            worst_allowed=float(bound[worst]))
    if not comparison.ok:
        idx = tuple(int(i) for i in np.argwhere(finite)[worst])
        comparison.message = (f"{what}: {int((err > bound).sum())} of {a.size} elements "
                              f"differ beyond the allowed error; worst at index {idx}: got "
                              f"{a[idx]!r}, expected {e[idx]!r}, error {err[worst]:.3g}, "
                              f"allowed {bound[worst]:.3g}")
    return comparison


def tolerance_ratio(err, allowed):
    """The largest ``err / allowed`` of two arrays (0 where both are 0, inf where only the
    allowance is): how much of its tolerance a comparison used."""
    err = np.asarray(err, dtype=np.float64)
    allowed = np.asarray(allowed, dtype=np.float64)
    if err.size == 0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(err == 0, 0.0, err / allowed)
    return float(np.max(r))


def bit_pattern(array):
    """The bits of a numpy array as unsigned integers of its item size (NaN payloads and
    the sign of zero included), for bit-identity checks."""
    a = np.ascontiguousarray(array)
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.itemsize in (1, 2, 4, 8) \
        else a


def flatten(value):
    """Leaves of nested tuples/lists/dicts, in order."""
    if isinstance(value, dict):
        out = []
        for k in sorted(value):
            out.extend(flatten(value[k]))
        return out
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(flatten(v))
        return out
    return [value]


@contextlib.contextmanager
def without_fused(backend, name):
    """Within the block ``backend`` has no fused op ``name`` (the core composite runs)."""
    missing = object()
    saved = backend.__dict__.get(name, missing)
    setattr(backend, name, None)
    try:
        yield
    finally:
        if saved is missing:
            del backend.__dict__[name]
        else:
            setattr(backend, name, saved)


def value_and_grads(fn, positions, case_key, dtype):
    """A function of the inputs returning ``{"value", "grads"}``: ``ms.value_and_grad`` at
    ``positions`` of ``sum(fn(*xs) * C)``, with a fixed random cotangent ``C`` (values in
    +-[0.5, 1.5], representable in ``dtype``) drawn from ``case_key``."""

    def loss(*xs):
        out = fn(*xs)
        rng = np.random.default_rng(stable_seed(case_key, "cotangent"))
        cot = quantize(rng.uniform(0.5, 1.5, size=out.shape) *
                       rng.choice([-1.0, 1.0], size=out.shape), dtype)
        return ops.sum(out * ms.Tensor(cot, dtype=out.dtype))

    def run(*xs):
        value, grads = ms.value_and_grad(loss, grad_position=positions)(*xs)
        return {"value": value, "grads": list(grads)}
    return run


@dataclass
class GradCase:
    """A case of the gradient levels: ``make(kit)`` gives numpy inputs (the floating ones
    are differentiated), ``fn`` computes on mscore Tensors, ``factor`` widens the
    tolerance."""

    name: str
    make: object
    fn: object
    factor: float = 4.0

    def __repr__(self):
        return self.name


def normal_inputs(*shapes, scale=1.0):
    """``make`` of a :class:`GradCase`: one normal array per shape."""
    return lambda kit: [kit.normal(s, scale) for s in shapes]
