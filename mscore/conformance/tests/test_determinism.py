"""Level 0 (capabilities): a backend that declares ``deterministic`` gives bit-identical
results when the same program runs twice, in every floating dtype it declares.

The programs of each dtype are every primitive-op case of ``test_ops.py`` (an op without a
case in that dtype runs in the first dtype it has one for), the random streams, every fused
op the backend provides (``test_fused.py``'s cases) and 3 training steps of the MLP and the
CNN of ``test_training.py`` with the network in that dtype, once through the backend's fused
ops and once through the core's composites, and reductions and matrix products of more than
64k elements (large enough for a library's multi-block, multi-thread paths, where summation
order can vary from run to run). The check also proves that these programs reach every
primitive and fused op the backend provides: one they never call would have its determinism
unchecked, and fails the test by name.

A ``--quick`` run checks a quarter of the op and fused-op programs in each dtype (a
different quarter per dtype, so that the four float dtypes together cover them all), one of
the four training programs and every large program; the reach check needs the full run.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import mscore as ms
from mscore import nn
from mscore.common import dtype as mdt
from mscore.conformance import harness
from mscore.conformance.tests import test_fused, test_ops
from mscore.conformance.tests.test_training import CNN, MLP, _batches
from mscore.plugin.backend import FUSED_OPS, OPTIONAL_METHODS

LEVEL = "capabilities"
CAPABILITY = "deterministic"
STEPS = 3
QUICK_SHARE = 4     # a --quick run keeps one op program in this many per dtype
LARGE = (256, 512)  # 131072 elements: past every library's single-block reduction
# Transfer, metadata, device hooks, the optional methods beyond the fused ops and the
# layout compute nothing of their own (float_caster is a cast; test_optional proves each).
NOT_COMPUTING = frozenset({"from_numpy", "to_numpy", "shape", "dtype", "synchronize",
                           "memory_stats", "shard", *OPTIONAL_METHODS})


def _in_dtype(kit, cases, key, dtype):
    """``(case, dtype)`` for the cases in ``dtype``, and for each op (``key(case)``) without
    a case in ``dtype``, its cases in the first dtype the backend declares for it."""
    in_dtype = {key(c) for c in cases if dtype in c.dtypes}
    for c in cases:
        if any(not kit.has_dtype(n) for n in getattr(c, "needs", ())):
            continue
        if dtype in c.dtypes:
            yield c, dtype
        elif key(c) not in in_dtype:
            other = next((d for d in c.dtypes if kit.has_dtype(d)), None)
            if other is not None:
                yield c, other


def _label(name, d, dtype):
    return name if d == dtype else f"{name} ({d})"


def _primitive_programs(kit, dtype):
    """(name, program) for every primitive-op case of ``test_ops.py`` in ``dtype``."""
    b = kit.backend
    for c, d in _in_dtype(kit, test_ops.CASES, lambda c: c.name, dtype):
        inputs = c.make(kit.rng, d)
        natives = test_ops._natives(b, inputs, d if mdt.get_dtype(d).is_floating else None)

        def program(c=c, d=d, natives=natives):
            test_ops._DT["d"] = mdt.get_dtype(d)
            out = c.call(b, *natives)
            return [b.to_numpy(o) for o in test_ops._leaves(out)]
        yield _label(c.id, d, dtype), program


def _stream_programs(kit, dtype):
    b = kit.backend
    d = mdt.get_dtype(dtype)
    x = kit.native(kit.normal((5, 4)), dtype)
    yield "random_uniform", lambda: [b.to_numpy(b.random_uniform(b.rng_state(11), (64,),
                                                                  d)[0])]
    yield "random_normal", lambda: [b.to_numpy(b.random_normal(b.rng_state(12), (64,), d)[0])]
    yield "stop_gradient", lambda: [b.to_numpy(b.stop_gradient(x))]
    yield "all_finite", lambda: [np.asarray(bool(b.all_finite([x])))]


def _fused_programs(kit, dtype):
    """(name, program) for every case of ``test_fused.py`` whose fused op the backend
    provides, in ``dtype``."""
    provided = [c for c in test_fused.CASES if kit.fused(c.fused) is not None]
    for case, d in _in_dtype(kit, provided, lambda c: c.fused, dtype):
        inputs = case.make(kit)
        yield _label(f"{case.id} (fused)", d, dtype), (
            lambda case=case, d=d, inputs=inputs: harness.flatten(
                kit.run(case.fn, *inputs, dtype=d)))


def _training_program(model, dtype, composite, kit):
    """3 steps of ``model`` with its parameters and inputs in ``dtype``."""
    d = mdt.get_dtype(dtype)

    def program():
        ms.set_seed(0)
        net = {"mlp": MLP, "cnn": CNN}[model]()
        for p in net.get_parameters():
            p.set_data(p.astype(d))
        train = nn.TrainOneStepCell(
            nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                  reduction="mean")),
            nn.Momentum(net.trainable_params(), 0.05, 0.9))
        train.set_train(True)
        xs, ys = _batches(model)
        kit.activate()
        with _composites(kit.backend) if composite else contextlib.nullcontext():
            losses = [train(ms.Tensor(xs[i]).astype(d), ms.Tensor(ys[i])).asnumpy()
                      for i in range(STEPS)]
        return [np.stack(losses)] + [p.asnumpy() for p in net.get_parameters()]
    return program


@contextlib.contextmanager
def _composites(backend):
    """Within the block the backend has no fused op at all (the core's composites run)."""
    with contextlib.ExitStack() as stack:
        for name in FUSED_OPS:
            if getattr(backend, name, None) is not None:
                stack.enter_context(harness.without_fused(backend, name))
        yield


def _training_programs(kit, dtype):
    for model in ("mlp", "cnn"):
        for composite in (False, True):
            name = f"{STEPS} training steps of the {model.upper()} " \
                   f"({'composites' if composite else 'fused ops'})"
            yield name, _training_program(model, dtype, composite, kit)


def _large_programs(kit, dtype):
    """Sums over every axis choice and a matrix product, each of more than 64k elements,
    in ``dtype`` (values in [-1, 1): no overflow in half precision)."""
    b = kit.backend
    x = kit.native(kit.uniform(LARGE), dtype)
    for axis, name in ((None, "all axes"), ((0,), "axis 0"), ((1,), "axis 1")):
        yield (f"sum of {LARGE[0] * LARGE[1]} elements over {name}",
               lambda axis=axis: [b.to_numpy(b.sum(x, axis, False))])
    left = kit.native(kit.uniform((128, 512)), dtype)
    right = kit.native(kit.uniform((512, 128)), dtype)
    yield "matmul of (128, 512) by (512, 128)", lambda: [b.to_numpy(b.matmul(left, right))]


def _sampled(programs, dtype, share):
    """Every ``share``-th program, starting at the dtype's own offset."""
    offset = harness.FLOAT_DTYPES.index(dtype) % share
    return [p for i, p in enumerate(programs) if i % share == offset]


def _assert_bit_identical(kit, what, first, second):
    if len(first) != len(second):
        raise kit.broken_declaration(repr(CAPABILITY), f"two runs of {what} gave "
                                     f"{len(first)} and {len(second)} results")
    for f, s in zip(first, second):
        f, s = np.asarray(f), np.asarray(s)
        if f.shape != s.shape or f.dtype != s.dtype:
            raise kit.broken_declaration(repr(CAPABILITY), f"two runs of {what} gave "
                                         f"{f.shape} {f.dtype} and {s.shape} {s.dtype}")
        differ = harness.bit_pattern(f) != harness.bit_pattern(s)
        if differ.any():
            diff = np.abs(f.astype(np.float64) - s.astype(np.float64))
            raise kit.broken_declaration(
                repr(CAPABILITY),
                f"two runs of {what} in {f.dtype} gave different bits in "
                f"{int(differ.sum())} of {f.size} elements (max abs difference "
                f"{float(np.nanmax(diff)):.3g})")


@contextlib.contextmanager
def _deterministic_switched_on():
    """``ms.set_deterministic(True)`` for the block (what the capability promises to honour),
    then the flag as it was."""
    before = ms.get_context("deterministic") == "ON"
    ms.set_deterministic(True)
    try:
        yield
    finally:
        ms.set_deterministic(before)


@pytest.mark.mscore_needs(CAPABILITY)
@pytest.mark.parametrize("dtype", harness.FLOAT_DTYPES)
def test_deterministic(kit, dtype):
    """Every op, fused op and 3 training steps, run twice in ``dtype``, give identical bits
    under ``ms.set_deterministic(True)``; together they call every primitive and fused op the
    backend provides."""
    ops = [*_primitive_programs(kit, dtype), *_stream_programs(kit, dtype),
           *_fused_programs(kit, dtype)]
    training = list(_training_programs(kit, dtype))
    if kit.quick:
        ops = _sampled(ops, dtype, QUICK_SHARE)
        training = _sampled(training, dtype, len(training))
    programs = [*ops, *training, *_large_programs(kit, dtype)]
    with _deterministic_switched_on(), kit.calls.recording() as called:
        for what, program in programs:
            first = program()
            second = program()
            _assert_bit_identical(kit, what, first, second)
    if kit.quick:
        return
    unreached = [n for n in kit.calls.provided if n not in called and n not in NOT_COMPUTING]
    if unreached:
        raise harness.ConformanceFailure(
            f"the determinism programs in {dtype} never called {', '.join(unreached)} of "
            f"{kit.name}: their determinism is unchecked")
