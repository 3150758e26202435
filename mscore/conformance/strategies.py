"""Generated cases of the conformance kit: hypothesis strategies and the example runner.

A generated test draws its inputs from the strategies here (shapes of rank 0 to 5 with empty
and broadcasting axes, permutations, values that mix ordinary numbers with each dtype's edge
values) and runs a check on each example through :func:`run_examples`. The examples come from
one seed per run (``mscore conformance NAME --seed N`` replays a run; the seed is printed at
the start and end of every run), mixed with the test's name so that each test draws its own
examples; ``--thorough`` raises the number of examples per test from
:data:`DEFAULT_EXAMPLES` to :data:`THOROUGH_EXAMPLES`. A failing example is shrunk by
hypothesis and printed with the command that replays it.

Where a space is small and a one-in-many bug would hide from a few random draws (the axis
subsets of a reduction, the 0-d divisors of a floor division, the rounding ties of a cast),
the tests loop over all of it inside every example; hypothesis draws the rest.
"""
from __future__ import annotations

import math
import os
import tempfile
import time

import numpy as np

from mscore.common import dtype as mdt
from mscore.conformance import harness
from mscore.conformance.harness import DEFAULT_EXAMPLES, THOROUGH_EXAMPLES

try:
    import hypothesis
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as exc:   # the kit's extra installs it; say which one when it is missing
    raise ImportError('the conformance kit\'s generated cases need hypothesis; install it '
                      'with: pip install "mscore[conformance]"') from exc



def _keep_hypothesis_files_out_of_the_current_folder():
    """Hypothesis keeps files (the constants it collects from the code under test, cached
    per module) in ``./.hypothesis`` unless told otherwise; the kit must not write into the
    folder it runs from. They go to one folder in the temporary directory instead (kept:
    later runs reuse the cache), unless ``HYPOTHESIS_STORAGE_DIRECTORY`` says where."""
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        from hypothesis.configuration import set_hypothesis_home_dir
        user = getattr(os, "getuid", lambda: "user")()
        set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(),
                                             f"mscore-conformance-hypothesis-{user}"))


_keep_hypothesis_files_out_of_the_current_folder()

#: shrinking stops after this many seconds or candidate examples past the first failure
SHRINK_SECONDS = 5.0
SHRINK_CALLS = 60
MAX_RANK = 5
MAX_SIDE = 3


# -- the runner --------------------------------------------------------------------------------
def example_budget(thorough, scale=1.0):
    """The number of examples a generated test runs (``scale`` for costly checks)."""
    base = THOROUGH_EXAMPLES if thorough else DEFAULT_EXAMPLES
    return max(1, int(round(base * scale)))


def run_examples(kit, strategy, check, scale=1.0):
    """Run ``check(example)`` on examples drawn from ``strategy`` with the kit's run seed;
    raise a :class:`~mscore.conformance.harness.ConformanceFailure` naming the shrunk failing
    example and the command that replays it. Shrinking stops :data:`SHRINK_SECONDS` or
    :data:`SHRINK_CALLS` candidates after the first failure (the smallest failing example
    found by then is reported)."""
    failure = {"calls": 0}

    def checked(example):
        started = failure.get("at")
        if started is not None:
            failure["calls"] += 1
            if failure["calls"] > SHRINK_CALLS or \
                    time.monotonic() - started > SHRINK_SECONDS:
                return   # enough shrinking: new candidates pass, the best failure stands
        try:
            check(example)
        except Exception as exc:
            failure.setdefault("at", time.monotonic())
            failure["example"], failure["error"] = example, exc
            raise

    @hypothesis.settings(max_examples=example_budget(kit.thorough, scale), deadline=None,
                         database=None, print_blob=False, report_multiple_bugs=False,
                         suppress_health_check=list(hypothesis.HealthCheck),
                         phases=(hypothesis.Phase.explicit, hypothesis.Phase.generate,
                                 hypothesis.Phase.shrink))
    @hypothesis.seed(harness.stable_seed(kit.seed, kit.case_key))
    @hypothesis.given(strategy)
    def examples(example):
        checked(example)

    try:
        examples()
    except Exception as exc:
        error = failure.get("error", exc)   # the smallest failing example's own failure
        first = str(error).strip() or type(error).__name__
        raise harness.ConformanceFailure(
            f"{first}\n  shrunk failing example: {describe(failure.get('example'))}\n"
            f"  replay: {kit.replay_command()}") from error


def describe(example):
    """A short readable form of an example (arrays with dtype and shape, small ones in
    full)."""
    if isinstance(example, dict):
        return "{" + ", ".join(f"{k}: {describe(v)}" for k, v in example.items()) + "}"
    if isinstance(example, (list, tuple)):
        inner = ", ".join(describe(v) for v in example)
        return f"[{inner}]" if isinstance(example, list) else f"({inner})"
    if isinstance(example, np.ndarray):
        body = np.array2string(example, threshold=40, precision=17, separator=", ")
        return f"array({body}, dtype={example.dtype}, shape={example.shape})"
    return repr(example)


# -- shapes and axes ---------------------------------------------------------------------------
def shapes(min_rank=0, max_rank=MAX_RANK, min_side=0, max_side=MAX_SIDE):
    """Array shapes of rank ``min_rank..max_rank`` (0-d included) with sides
    ``min_side..max_side`` (0: empty arrays)."""
    return hnp.array_shapes(min_dims=min_rank, max_dims=max_rank, min_side=min_side,
                            max_side=max_side)


def broadcast_shapes(count=2, min_side=0, max_side=MAX_SIDE):
    """``count`` shapes of rank 0..5 that broadcast together (sides of 1 and missing
    leading axes), as a tuple."""
    return hnp.mutually_broadcastable_shapes(num_shapes=count, min_dims=0, max_dims=MAX_RANK,
                                             min_side=min_side, max_side=max_side
                                             ).map(lambda s: tuple(s.input_shapes))


def axis_subsets(rank):
    """Every subset of the axes of a rank-``rank`` array as a sorted tuple (the empty one
    included), then None (all axes)."""
    out = []
    for mask in range(1 << rank):
        out.append(tuple(a for a in range(rank) if mask >> a & 1))
    return out + [None]


def permutations(rank):
    """Permutations of ``range(rank)``."""
    return st.permutations(list(range(rank))).map(tuple)


# -- values ------------------------------------------------------------------------------------
def finfo(dtype):
    """numpy's (or ml_dtypes') finfo of a floating mscore dtype."""
    d = mdt.get_dtype(dtype)
    if d.name == "bfloat16":
        import ml_dtypes
        return ml_dtypes.finfo(d.np_dtype)
    return np.finfo(d.np_dtype)


def float_edges(dtype, *, nonfinite=True, largest=True):
    """The edge values of a floating dtype: signed zeros, the smallest subnormal and normal,
    the largest finite values, NaN and the infinities (as float64)."""
    info = finfo(dtype)
    tiny = float(info.smallest_subnormal)
    edges = [0.0, -0.0, tiny, -tiny, float(info.smallest_normal), -float(info.smallest_normal),
             1.0, -1.0]
    if largest:
        edges += [float(info.max), -float(info.max)]
    if nonfinite:
        edges += [math.nan, math.inf, -math.inf]
    return edges


def float_arrays(dtype, shape, low=-3.0, high=3.0, **edge_kinds):
    """Float64 arrays of ``shape`` whose values mix uniform numbers in ``[low, high]`` with
    the edge values of ``dtype`` (:func:`float_edges`, ``edge_kinds`` chooses them); the kit
    rounds them to ``dtype``."""
    elements = st.one_of(st.sampled_from(float_edges(dtype, **edge_kinds)),
                         st.floats(low, high, allow_nan=False, allow_subnormal=False))
    return hnp.arrays(np.float64, shape, elements=elements)


def int_edges(dtype):
    """MIN, MIN + 1, -1, 0, 1, MAX - 1, MAX and the powers of two of an integer dtype."""
    info = np.iinfo(mdt.get_dtype(dtype).np_dtype)
    lo, hi = int(info.min), int(info.max)
    powers = [1 << k for k in range(info.bits - (1 if lo else 0))]
    edges = {lo, lo + 1, 0, 1, hi - 1, hi} | set(powers)
    if lo:
        edges |= {-1} | {-p for p in powers}
    return sorted(edges)


def int_arrays(dtype, shape):
    """Integer arrays of ``shape`` over the whole range of ``dtype``, edges mixed in."""
    np_dtype = mdt.get_dtype(dtype).np_dtype
    info = np.iinfo(np_dtype)
    elements = st.one_of(st.sampled_from(int_edges(dtype)),
                         st.integers(int(info.min), int(info.max)))
    return hnp.arrays(np_dtype, shape, elements=elements)


def bool_arrays(shape):
    """Boolean arrays of ``shape``."""
    return hnp.arrays(np.bool_, shape)


def arrays_of(dtype, shape, **float_kw):
    """Arrays of ``shape`` for any mscore dtype (:func:`float_arrays`, :func:`int_arrays`,
    :func:`bool_arrays`)."""
    d = mdt.get_dtype(dtype)
    if d.is_floating:
        return float_arrays(dtype, shape, **float_kw)
    if d.is_bool:
        return bool_arrays(shape)
    return int_arrays(dtype, shape)


def power_of_two_divisors(dtype):
    """0, the powers of two of an integer dtype and, signed, their negatives and -1."""
    info = np.iinfo(mdt.get_dtype(dtype).np_dtype)
    powers = [1 << k for k in range(info.bits - (1 if info.min else 0))]
    out = [0] + powers
    if info.min:
        out += [-p for p in powers] + [int(info.min)]
    return out


# -- rounding ties -----------------------------------------------------------------------------
def _bits_dtype(dtype):
    return np.dtype(f"u{mdt.get_dtype(dtype).np_dtype.itemsize}")


def rounding_ties(dst, patterns):
    """Values exactly halfway between two neighbours of the half-precision dtype ``dst``:
    for each magnitude bit pattern ``p`` of ``patterns`` (below the pattern of infinity) the
    midpoint of patterns ``p`` and ``p + 1``, with either sign. Returns ``(ties, want)``:
    float64 ties (exact in float32) and the bit patterns a cast rounding to nearest, ties to
    even, gives (of ``p`` and ``p + 1`` the even one: the tie above the largest finite value
    rounds to infinity)."""
    np_dst = mdt.get_dtype(dst).np_dtype
    udt = _bits_dtype(dst)
    sign = np.array(1 << (8 * udt.itemsize - 1), dtype=udt)
    low = np.asarray(patterns, dtype=udt)
    high = low + np.array(1, dtype=udt)
    a = low.view(np_dst).astype(np.float64)
    b = high.view(np_dst).astype(np.float64)
    b = np.where(np.isinf(b), a + (a - (low - np.array(1, udt)).view(np_dst).astype(np.float64)),
                 b)
    ties = (a + b) / 2
    want = np.where(low % 2 == 0, low, high)
    negative = np.arange(len(ties)) % 2 == 1
    ties = np.where(negative, -ties, ties)
    want = np.where(negative, want | sign, want)
    return ties, want.astype(udt)


def tie_patterns(dst, count=24):
    """Magnitude bit patterns for :func:`rounding_ties`: always the smallest subnormal, the
    largest subnormal, the smallest normal, 1.0 (even) and its neighbour (odd) and the
    largest finite value, plus ``count`` drawn ones."""
    np_dst = mdt.get_dtype(dst).np_dtype
    udt = _bits_dtype(dst)
    inf_pattern = int(np.array(np.inf, dtype=np_dst).view(udt))
    one = int(np.array(1.0, dtype=np_dst).view(udt))
    smallest_normal = int(np.array(finfo(dst).smallest_normal, dtype=np_dst).view(udt))
    fixed = [0, 1, smallest_normal - 1, smallest_normal, one, one + 1, inf_pattern - 1]
    drawn = st.lists(st.integers(0, inf_pattern - 1), min_size=count, max_size=count)
    return drawn.map(lambda extra: fixed + extra)
