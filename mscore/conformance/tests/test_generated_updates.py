"""Level 1, generated: the multi-tensor updates of the contract (``momentum_update``,
``adam_update``, ``foreach_div``, ``unscale_check``) on lists hypothesis draws, through the
backend's op when it binds one and through the core's composite, in every float dtype the
backend declares.

Hypothesis draws the lists (one to six arrays per call, mostly three or more, each of rank
0 to 3 with empty and odd sides; under ``--thorough`` now and then a list of a hundred arrays
or an array past 65536 elements, where multi-tensor kernels split their work into several
launches or blocks), the hyperparameters (learning rate 0 to 2, momentum and betas 0 to 1,
eps down to 1e-8, weight decay or none, Nesterov on and off, a first step from zero
moments), a seed for the values and, for the divisions, the scale and where an inf or NaN
sits. Each example runs both ``inplace`` settings, and a second in-place step on the first
one's results.

The reference is the core's composite (:mod:`mscore.ops.multi_tensor` with the backend's op
unbound) on the numpy backend in float64, from the inputs rounded to the tested dtype. The
hyperparameters are values of the tested dtype, so a backend that applies them as Python
floats and one that rounds them first see the same numbers. Each result may differ from the
reference by the error a computation in the tested dtype carries: the dtype's tolerance
(:func:`~mscore.conformance.harness.tolerance`, a few roundings) of the magnitudes the
result is computed from (``|mu v| + |g|`` for ``mu v + g``, and so on through the update, a
quotient's bound from its operands' bounds), plus the smallest normal number per rounding (a
subnormal intermediate may be flushed to zero). In-place semantics: with ``inplace=False``
no argument changes; with ``inplace=True`` only the parameters and moments may (the
gradients, the learning rate and the other scalars never); and the second step, writing into
the first step's results, leaves the first step's inputs as they were and its own gradients
too (results that share memory with each other or with an argument show there).
"""
from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import strategies as st

from mscore.conformance import harness
from mscore.conformance import strategies as gen
from mscore.ops import multi_tensor

LEVEL = "ops"
FLOATS = harness.FLOAT_DTYPES
#: the contract's multi-tensor ops; all of them unbound on the reference (its composite)
LIST_OPS = ("foreach_div", "unscale_check", "momentum_update", "adam_update")
#: the dtype tolerance's multiple each rounding step may use (the bounds below add one
#: rounding per operation; a backend computing in a wider type, or fusing, is closer)
FACTOR = 2.0
#: several arrays per call; under --thorough now and then enough for several launches of a
#: multi-tensor kernel (torch's CUDA kernels take at most 110 arrays or 65536 elements a block)
MAX_ARRAYS = 6
MANY_ARRAYS = 110
LARGE_SHAPES = ((65537,), (3, 21846))
LRS = (0.0, 1e-3, 0.1, 1.0, 2.0)
MOMENTA = (0.0, 0.5, 0.9, 0.99, 1.0)
BETAS = (0.0, 0.5, 0.9, 0.99, 0.999, 1.0)
EPSILONS = (1e-8, 1e-6, 1e-3, 0.1, 1.0)
DECAYS = (None, 0.0, 1e-2, 0.1)
SCALES = (1.0, 2.0, 3.0, 1024.0, 65536.0, 1e5)


# -- drawing -----------------------------------------------------------------------------------
def _array_shapes(thorough):
    """The shapes of one call's arrays: 0-d, empty and odd sides; with ``thorough`` one
    example in twenty a long list or a large array."""
    small = gen.shapes(min_rank=0, max_rank=3, min_side=0, max_side=5)
    # Mostly three or more (a bug at one position of the list shows from the simplest
    # example on), one or two in one example of six.
    few = st.integers(0, 5).flatmap(lambda k: st.lists(
        small, min_size=1 if k == 5 else 3, max_size=2 if k == 5 else MAX_ARRAYS))
    if not thorough:
        return few
    many = st.lists(st.just(()) | small, min_size=MANY_ARRAYS - 3, max_size=MANY_ARRAYS + 3)
    large = st.tuples(st.sampled_from(LARGE_SHAPES), few).map(lambda t: [t[0]] + t[1])
    return st.integers(0, 19).flatmap(
        lambda k: many if k == 0 else large if k == 1 else few)


def _value(dtype, value):
    """``value`` as the nearest number of ``dtype`` (a Python float)."""
    return float(harness.to_float64(harness.quantize(np.float64(value), dtype)))


def _eps(dtype, value):
    """``value`` in ``dtype``, at least ``4 sqrt(smallest normal)`` (float16: 2**-5): below
    that, a second moment that underflows (correctly rounded or flushed) moves
    ``sqrt(v) + eps`` by more than a quarter of itself."""
    floor = 2.0 ** math.ceil(math.log2(4 * math.sqrt(float(gen.finfo(dtype).smallest_normal))))
    return max(_value(dtype, value), floor)


def _shapes_text(shapes):
    """How many arrays of which shapes (the first few of a long list)."""
    shown = ", ".join(map(str, shapes[:6])) + (", ..." if len(shapes) > 6 else "")
    return f"{len(shapes)} arrays [{shown}]"


def _normal(rng, shapes, dtype, scale=1.0):
    return [harness.quantize(rng.standard_normal(s) * scale, dtype) for s in shapes]


# -- error bounds ------------------------------------------------------------------------------
def _unit(dtype):
    """``(r, t)``: the dtype's tolerance per rounding step and its smallest normal number."""
    return harness.tolerance(dtype, FACTOR).rtol, float(gen.finfo(dtype).smallest_normal)


def _momentum_bounds(dtype, p, v, g, lr, mu, nesterov):
    """Allowed errors of ``(new params, new moments)`` (float64 arrays of the rounded
    inputs): every rounding costs ``r`` of the magnitude it rounds, plus ``t``."""
    r, t = _unit(dtype)
    mag_v = abs(mu) * np.abs(v) + np.abs(g)
    err_v = r * mag_v + t
    mag_step = abs(mu) * mag_v + np.abs(g) if nesterov else mag_v
    err_step = (abs(mu) * err_v + r * mag_step + t) if nesterov else err_v
    err_p = abs(lr) * err_step + r * (np.abs(p) + abs(lr) * mag_step) + t
    return err_p, err_v


def _adam_bounds(dtype, p, m, v, g, lr, b1, b2, eps, nesterov, wd):
    """Allowed errors of ``(new params, new m, new v)``: ``n / (sqrt(v) + eps)`` from the
    bounds of ``n`` and ``v`` (the square root over the interval ``v +- err``), the rest as
    in :func:`_momentum_bounds`."""
    r, t = _unit(dtype)
    mag_m = b1 * np.abs(m) + (1 - b1) * np.abs(g)
    err_m = r * mag_m + t
    new_v = b2 * v + (1 - b2) * g * g                     # no cancellation: v, g*g >= 0
    err_v = r * new_v + 2 * t
    mag_n = b1 * mag_m + (1 - b1) * np.abs(g) if nesterov else mag_m
    err_n = b1 * err_m + r * mag_n + t if nesterov else err_m
    root = np.sqrt(new_v)
    err_root = np.maximum(np.sqrt(new_v + err_v) - root,
                          root - np.sqrt(np.maximum(new_v - err_v, 0.0))) + r * root + t
    d = root + eps
    err_d = err_root + r * d + t
    with np.errstate(divide="ignore", invalid="ignore"):
        err_q = np.where(d > err_d, (err_n + mag_n / d * err_d) / (d - err_d), np.inf) + \
            r * mag_n / d + t
    mag_u = mag_n / d + (abs(wd) * np.abs(p) if wd is not None else 0.0)
    err_u = err_q + (r * mag_u + t if wd is not None else 0.0)
    err_p = abs(lr) * err_u + r * (np.abs(p) + abs(lr) * mag_u) + t
    return err_p, err_m, err_v


def _division_bound(dtype, expected):
    """A quotient rounded once (or through a reciprocal: twice)."""
    r, t = _unit(dtype)
    return r * np.abs(expected) + t


# -- running -----------------------------------------------------------------------------------
def _paths(kit, name):
    return (["fused"] if kit.fused(name) is not None else []) + ["composite"]


@contextlib.contextmanager
def _path(kit, name, path):
    """The backend under test, active, with its op ``name`` (fused) or without (composite)."""
    kit.activate()
    with harness.without_fused(kit.backend, name) if path == "composite" else \
            contextlib.nullcontext():
        yield


def _reference(kit, fn, *groups):
    """``fn(*lists of natives)`` on the numpy reference in float64 with every multi-tensor
    op unbound (the core's composite), from float64 copies of the numpy ``groups`` (lists
    of arrays, or single arrays); its results as float64 numpy."""
    with kit.on_reference() as ref, contextlib.ExitStack() as stack, \
            np.errstate(all="ignore"):
        for name in LIST_OPS:
            if getattr(ref, name, None) is not None:
                stack.enter_context(harness.without_fused(ref, name))

        def native(a):
            return ref.from_numpy(harness.to_float64(np.asarray(a)))
        args = [[native(a) for a in g] if isinstance(g, list) else native(g) for g in groups]
        return _tree(ref.to_numpy, fn(*args))


def _tree(to_numpy, value):
    if isinstance(value, (list, tuple)):
        return [_tree(to_numpy, v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return np.bool_(value)
    return harness.to_float64(np.array(to_numpy(value)))


def _natives(kit, arrays):
    return [kit.backend.from_numpy(a) for a in arrays]


def _snapshot(kit, natives):
    return [np.array(kit.numpy(n)) for n in natives]


def _call(what, fn, *args):
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    except Exception as exc:
        raise harness.ConformanceFailure(
            f"{what}: the call raised {type(exc).__name__}: {exc}") from exc


def _assert_results(kit, dtype, what, natives, expected, allowed, label):
    """Each native result has ``dtype`` and is within ``allowed`` of ``expected``."""
    if len(natives) != len(expected):
        raise harness.ConformanceFailure(f"{what}: {len(natives)} {label}, expected "
                                         f"{len(expected)}")
    for i, (n, e, a) in enumerate(zip(natives, expected, allowed)):
        kit.assert_dtype(n, dtype, f"{what}: {label}[{i}]")
        kit.assert_within(kit.numpy(n), e, a, dtype, f"{what}: {label}[{i}]")


def _assert_kept(kit, natives, originals, what, names):
    """The arrays the update may not write still hold their values."""
    for group, (ns, os_) in zip(names, zip(natives, originals)):
        try:
            kit.assert_unchanged(ns, os_, what)
        except harness.ConformanceFailure as exc:
            raise harness.ConformanceFailure(f"{exc} (its {group})") from None


# -- momentum ----------------------------------------------------------------------------------
def _momentum_case(thorough):
    return st.tuples(_array_shapes(thorough), st.sampled_from(LRS), st.sampled_from(MOMENTA),
                     st.booleans(), st.booleans(), st.integers(0, 2 ** 32 - 1))


def _momentum_step(kit, dtype, what, state, grads, lr, mu, nesterov, inplace):
    """One update on the backend (already on its path): ``(params, moments)`` natives."""
    p, v = state
    new_p, new_v = _call(what, multi_tensor.momentum_update, p, v, grads, lr, mu,
                         nesterov, inplace)
    return list(new_p), list(new_v)


def _check_momentum_step(kit, dtype, what, inputs, results, lr, mu, nesterov):
    """``results`` (natives) against the reference step from numpy ``inputs``."""
    p, v, g = inputs
    lr64, mu64 = float(harness.to_float64(lr)), float(harness.to_float64(mu))
    exp_p, exp_v = _reference(
        kit, lambda ps, vs, gs, a, b: multi_tensor.momentum_update(ps, vs, gs, a, b, nesterov),
        p, v, g, lr, mu)
    bounds = [_momentum_bounds(dtype, *map(harness.to_float64, x), lr64, mu64, nesterov)
              for x in zip(p, v, g)]
    _assert_results(kit, dtype, what, results[0], exp_p, [b[0] for b in bounds], "params")
    _assert_results(kit, dtype, what, results[1], exp_v, [b[1] for b in bounds], "moments")


@pytest.mark.parametrize("dtype", FLOATS)
def test_momentum_update_generated(kit, dtype):
    """``momentum_update`` over drawn lists, rates, momenta, Nesterov on and off, both
    ``inplace`` settings and a second in-place step, against the composite."""
    kit.require_dtype(dtype)

    def check(example):
        shapes, lr, mu, nesterov, first_step, seed = example
        rng = np.random.default_rng(seed)
        p, g = _normal(rng, shapes, dtype), _normal(rng, shapes, dtype)
        v = [np.zeros_like(a) for a in p] if first_step else _normal(rng, shapes, dtype)
        lr_q, mu_q = (harness.quantize(np.float64(x), dtype) for x in (lr, mu))
        for path in _paths(kit, "momentum_update"):
            for inplace in (False, True):
                what = (f"momentum_update ({path}) of {_shapes_text(shapes)}, lr={lr}, "
                        f"momentum={mu}, nesterov={nesterov}, inplace={inplace}")
                with kit.declaring(dtype, f"momentum_update ({path})"), \
                        _path(kit, "momentum_update", path):
                    _momentum_twice(kit, dtype, what, (p, v, g), lr_q, mu_q, nesterov,
                                    inplace)
    gen.run_examples(kit, _momentum_case(kit.thorough), check)


def _momentum_twice(kit, dtype, what, inputs, lr_q, mu_q, nesterov, inplace):
    """The first step with ``inplace``, then an in-place step on its results."""
    p, v, g = inputs
    np_, nv, ng = _natives(kit, p), _natives(kit, v), _natives(kit, g)
    lr, mu = kit.backend.from_numpy(lr_q), kit.backend.from_numpy(mu_q)
    step1 = _momentum_step(kit, dtype, what, (np_, nv), ng, lr, mu, nesterov, inplace)
    kept = [ng, [lr, mu]] + ([] if inplace else [np_, nv])
    names = ["gradients", "learning rate or momentum", "params", "moments"]
    _assert_kept(kit, kept, [g, [lr_q, mu_q], p, v], what, names)
    _check_momentum_step(kit, dtype, what, (p, v, g), step1, lr_q, mu_q, nesterov)
    again = [_snapshot(kit, x) for x in step1]
    step2 = _momentum_step(kit, dtype, what + ", then in place", step1, ng, lr, mu, nesterov,
                           True)
    _assert_kept(kit, kept, [g, [lr_q, mu_q], p, v], what + ", then in place", names)
    _check_momentum_step(kit, dtype, what + ", then in place", (*again, g), step2, lr_q, mu_q,
                         nesterov)


# -- adam --------------------------------------------------------------------------------------
def _adam_case(thorough):
    hyper = st.tuples(st.sampled_from(LRS[:4]), st.sampled_from(BETAS),
                      st.sampled_from(BETAS), st.sampled_from(EPSILONS),
                      st.sampled_from(DECAYS), st.booleans())
    return st.tuples(_array_shapes(thorough), hyper, st.booleans(),
                     st.integers(0, 2 ** 32 - 1))


def _adam_step(kit, dtype, what, state, grads, hyper, inplace):
    p, m, v = state
    lr, b1, b2, eps, nesterov, wd = hyper
    out = _call(what, multi_tensor.adam_update, p, m, v, grads, lr, b1, b2, eps,
                nesterov, wd, inplace)
    return [list(o) for o in out]


def _check_adam_step(kit, dtype, what, inputs, results, hyper64):
    p, m, v, g = inputs
    lr, b1, b2, eps, nesterov, wd = hyper64

    def composite(ps, ms, vs, gs, lr_n, wd_n):
        return multi_tensor.adam_update(ps, ms, vs, gs, lr_n, b1, b2, eps, nesterov,
                                        wd_n if wd is not None else None)
    expected = _reference(kit, composite, p, m, v, g, np.float64(lr),
                          np.float64(0.0 if wd is None else wd))
    bounds = [_adam_bounds(dtype, *map(harness.to_float64, x), lr, b1, b2, eps, nesterov, wd)
              for x in zip(p, m, v, g)]
    for k, label in enumerate(("params", "m", "v")):
        _assert_results(kit, dtype, what, results[k], expected[k], [b[k] for b in bounds],
                        label)


@pytest.mark.parametrize("dtype", FLOATS)
def test_adam_update_generated(kit, dtype):
    """``adam_update`` over drawn lists, rates, betas, eps, weight decay or none, Nesterov
    on and off, first steps from zero moments, both ``inplace`` settings and a second
    in-place step, against the composite."""
    kit.require_dtype(dtype)

    def check(example):
        shapes, (lr, b1, b2, eps, wd, nesterov), first_step, seed = example
        rng = np.random.default_rng(seed)
        p, g = _normal(rng, shapes, dtype), _normal(rng, shapes, dtype)
        if first_step:
            m = [np.zeros_like(a) for a in p]
            v = [np.zeros_like(a) for a in p]
        else:
            m = _normal(rng, shapes, dtype)
            v = [harness.quantize(np.square(a), dtype) for a in _normal(rng, shapes,
                                                                         "float64")]
        hyper64 = (_value(dtype, lr), _value(dtype, b1), _value(dtype, b2), _eps(dtype, eps),
                   nesterov, None if wd is None else _value(dtype, wd))
        for path in _paths(kit, "adam_update"):
            for inplace in (False, True):
                what = (f"adam_update ({path}) of {_shapes_text(shapes)}, lr, beta1, "
                        f"beta2, eps = {hyper64[:4]}, nesterov={nesterov}, weight_decay="
                        f"{hyper64[5]}, inplace={inplace}")
                with kit.declaring(dtype, f"adam_update ({path})"), \
                        _path(kit, "adam_update", path):
                    _adam_twice(kit, dtype, what, (p, m, v, g), hyper64, inplace)
    gen.run_examples(kit, _adam_case(kit.thorough), check)


def _adam_twice(kit, dtype, what, inputs, hyper64, inplace):
    p, m, v, g = inputs
    lr, b1, b2, eps, nesterov, wd = hyper64
    lr_q = harness.quantize(np.float64(lr), dtype)
    wd_q = None if wd is None else harness.quantize(np.float64(wd), dtype)
    state = (_natives(kit, p), _natives(kit, m), _natives(kit, v))
    ng = _natives(kit, g)
    scalars = [kit.backend.from_numpy(lr_q)] + \
        ([] if wd_q is None else [kit.backend.from_numpy(wd_q)])
    hyper = (scalars[0], b1, b2, eps, nesterov, scalars[1] if wd_q is not None else None)
    scalar_values = [lr_q] + ([] if wd_q is None else [wd_q])
    step1 = _adam_step(kit, dtype, what, state, ng, hyper, inplace)
    kept = [ng, scalars] + ([] if inplace else list(state))
    originals = [g, scalar_values, p, m, v]
    names = ["gradients", "learning rate or weight decay", "params", "m", "v"]
    _assert_kept(kit, kept, originals, what, names)
    _check_adam_step(kit, dtype, what, (p, m, v, g), step1, hyper64)
    again = [_snapshot(kit, x) for x in step1]
    what2 = what + ", then in place"
    step2 = _adam_step(kit, dtype, what2, step1, ng, hyper, True)
    _assert_kept(kit, kept, originals, what2, names)
    _check_adam_step(kit, dtype, what2, (*again, g), step2, hyper64)


# -- divisions ---------------------------------------------------------------------------------
def _division_case(thorough):
    """Shapes, the scale, the scale's dtype (the arrays' or float32), float32 arrays mixed
    in or not, where a non-finite value sits (a flat position over every array, or none)
    and which (inf, -inf, NaN), and a seed."""
    return st.tuples(_array_shapes(thorough), st.sampled_from(SCALES), st.booleans(),
                     st.booleans(), st.none() | st.integers(0, 10 ** 6),
                     st.sampled_from((math.inf, -math.inf, math.nan)),
                     st.integers(0, 2 ** 32 - 1))


def _division_inputs(kit, dtype, example):
    """``(arrays, dtypes, scale)`` as numpy; the arrays in ``dtype``, every other one in
    float32 when mixing; one value non-finite where drawn."""
    shapes, scale, scale_own_dtype, mixed, bad_at, bad, seed = example
    rng = np.random.default_rng(seed)
    mixed = mixed and dtype != "float32" and kit.has_dtype("float32")
    dtypes = ["float32" if mixed and i % 2 else dtype for i in range(len(shapes))]
    arrays = [_normal(rng, [s], d, scale=4.0)[0] for s, d in zip(shapes, dtypes)]
    total = sum(a.size for a in arrays)
    if bad_at is not None and total:
        at = bad_at % total
        for a in arrays:
            if at < a.size:
                a.reshape(-1)[at] = bad
                break
            at -= a.size
    scale_dtype = dtype if scale_own_dtype or not kit.has_dtype("float32") else "float32"
    return arrays, dtypes, harness.quantize(np.float64(scale), scale_dtype)


def _division_expected(kit, arrays, scale, name):
    def composite(natives, s):
        if name == "unscale_check":
            out, finite = multi_tensor.unscale_and_check(natives, s)
            return [out, finite]
        return [multi_tensor.divide_all(natives, s)]
    return _reference(kit, composite, list(arrays), scale)


@pytest.mark.parametrize("name", ("foreach_div", "unscale_check"))
@pytest.mark.parametrize("dtype", FLOATS)
def test_list_division_generated(kit, dtype, name):
    """``foreach_div`` (``divide_all``) and ``unscale_check`` (``unscale_and_check``) over
    drawn lists (float32 arrays mixed in), scales and a non-finite value or none: each
    result keeps its array's dtype; ``unscale_check`` says whether all results are finite
    and may write into the arrays, never into the scale; ``foreach_div`` writes nothing."""
    kit.require_dtype(dtype)

    def check(example):
        arrays, dtypes, scale = _division_inputs(kit, dtype, example)
        expected = _division_expected(kit, arrays, scale, name)
        for path in _paths(kit, name):
            mixed = " (every other one float32)" if dtypes.count(dtype) < len(dtypes) else ""
            what = (f"{name} ({path}) of {_shapes_text([a.shape for a in arrays])} in "
                    f"{dtype}{mixed} by {scale!r}")
            with kit.declaring(dtype, f"{name} ({path})"), _path(kit, name, path):
                natives = _natives(kit, arrays)
                s = kit.backend.from_numpy(scale)
                if name == "unscale_check":
                    out, finite = _call(what, multi_tensor.unscale_and_check,
                                        natives, s)
                    kept = [[s]], [[scale]]
                else:
                    out = _call(what, multi_tensor.divide_all, natives, s)
                    kept = [natives, [s]], [arrays, [scale]]
                _assert_kept(kit, *kept, what, ["arrays", "scale"][-len(kept[0]):])
                for i, (n, e, d) in enumerate(zip(out, expected[0], dtypes)):
                    kit.assert_dtype(n, d, f"{what}: result[{i}]")
                    kit.assert_within(kit.numpy(n), e, _division_bound(d, e), d,
                                      f"{what}: result[{i}]")
                if len(out) != len(arrays):
                    raise harness.ConformanceFailure(f"{what}: {len(out)} results, expected "
                                                     f"{len(arrays)}")
                if name == "unscale_check" and bool(finite) != bool(expected[1]):
                    raise harness.ConformanceFailure(
                        f"{what}: finite={bool(finite)}, expected {bool(expected[1])}")
    gen.run_examples(kit, _division_case(kit.thorough), check)
