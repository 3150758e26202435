"""The fixed cost of a train step: backend calls, host synchronisations, weight casts and the
multi-tensor optimizer updates, counted with bench/count_calls.py's counting wrapper; and the
results those shortcuts must not change (compared with the long way round)."""
from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends, load_script, use_backend

import mscore as ms
from mscore import _state, amp, nn, ops
from mscore.common.parameter import Parameter

ROOT = Path(__file__).resolve().parent.parent


COUNT = load_script("bench", "count_calls")


def _mlp():
    ms.set_seed(0)
    return nn.SequentialCell([nn.Dense(12, 16), nn.ReLU(), nn.Dense(16, 5)])


def _batch():
    rng = np.random.default_rng(0)
    return (ms.Tensor(rng.standard_normal((8, 12)).astype(np.float32)),
            ms.Tensor(rng.integers(0, 5, 8).astype(np.int32)))


# jax PYNATIVE compiles every op (seconds per test): its GRAPH_MODE step is one program,
# covered by the kit and the benches.
QUICK = available_backends(exclude=("jax",))


@pytest.mark.parametrize("backend", QUICK)
def test_o2_step_synchronises_the_host_once(backend):
    """A PYNATIVE O2 step with a dynamic loss scale reads the device twice, the overflow check
    and cross entropy's label range check (the labels read once, PYNATIVE only), and still
    skips the update on overflow."""
    use_backend(backend)
    net = _mlp()
    step = COUNT.train_step(net, "O2")
    x, y = _batch()
    summary, counts = COUNT.count_step(step, (x, y), steps=2)
    assert summary["host_syncs"] == 2, counts
    assert counts["all_finite"] + counts["unscale_check"] == 1   # one overflow check
    before = [p.asnumpy().copy() for p in net.trainable_params()]
    step.scale_sense.set_data(ms.Tensor(np.float32(np.inf)))   # every gradient overflows
    with np.errstate(invalid="ignore", over="ignore"):
        loss, overflow, _ = step(x, y)
    assert bool(overflow.asnumpy())
    for b, p in zip(before, net.trainable_params()):
        np.testing.assert_array_equal(b, p.asnumpy())
    assert step.consecutive_overflows == 1


@pytest.mark.parametrize("backend", QUICK)
def test_o2_eval_reuses_the_weight_casts_until_the_weights_change(backend):
    """An O2 network casts each float32 master weight once per value: a second forward
    pass casts only its input; after the optimizer step (new values) they are cast again,
    and the results equal a freshly built network's."""
    use_backend(backend)
    net = amp.auto_mixed_precision(_mlp(), "O2", ms.float16)
    x, y = _batch()
    with COUNT.counting() as first:
        out1 = net(x)
    with COUNT.counting() as second:
        out2 = net(x)
    np.testing.assert_array_equal(out1.asnumpy(), out2.asnumpy())
    assert second.counts["cast"] == first.counts["cast"] - 4   # 2 weights + 2 biases
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
    train(x, y)
    with COUNT.counting() as third:
        out3 = net(x)
    assert third.counts["cast"] == first.counts["cast"]
    fresh = amp.auto_mixed_precision(_mlp(), "O2", ms.float16)
    for p, q in zip(fresh.trainable_params(), net.trainable_params()):
        p.set_data(ms.Tensor(q.asnumpy()))
    np.testing.assert_array_equal(fresh(x).asnumpy(), out3.asnumpy())
    assert not np.array_equal(out1.asnumpy(), out3.asnumpy())


@pytest.mark.parametrize("backend", QUICK)
def test_eager_weight_casts_are_dropped_with_their_parameters_and_by_reset(backend):
    """The eager copies an O2 forward pass keeps go with their network, and ``_state.reset``
    forgets them: the next pass casts every weight anew."""
    use_backend(backend)
    net = amp.auto_mixed_precision(_mlp(), "O2", ms.float16)
    x, _ = _batch()
    net(x)
    ids = {id(p) for p in net.trainable_params()}
    assert ids <= set(_state.process.cast_copies)   # 2 weights + 2 biases
    del net
    gc.collect()
    assert not ids & set(_state.process.cast_copies)
    net = amp.auto_mixed_precision(_mlp(), "O2", ms.float16)
    net(x)
    assert _state.process.cast_copies
    _state.reset()
    assert _state.process.cast_copies == {}
    use_backend(backend)
    with COUNT.counting() as again:
        out = net(x)
    assert again.counts["cast"] >= 4   # every weight cast anew, not taken from a stale copy
    want = amp.auto_mixed_precision(_mlp(), "O2", ms.float16)(x)
    np.testing.assert_array_equal(out.asnumpy(), want.asnumpy())


class _Tied(nn.Cell):
    """One float32 weight used twice in a float16 cell: x @ w.T @ w."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(ms.Tensor(np.random.default_rng(1).standard_normal((3, 4))
                                     .astype(np.float32)), name="w")

    def construct(self, x):
        w = self.cast_param(self.w)
        return ops.matmul(ops.matmul(x, ops.transpose(w, (1, 0))), self.cast_param(self.w))


@pytest.mark.parametrize("backend", QUICK)
def test_a_weight_used_twice_is_cast_once_and_gets_both_gradients(backend):
    use_backend(backend)
    cell = _Tied().to_float(ms.float16)
    x = ms.Tensor(np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32))
    grad_fn = ms.value_and_grad(lambda v: ops.sum(ops.cast(cell(v), ms.float32)), None,
                                cell.trainable_params())
    with COUNT.counting() as counter:
        _, (g,) = grad_fn(x)
    w = cell.w.asnumpy().astype(np.float16).astype(np.float64)
    xv = x.asnumpy().astype(np.float16).astype(np.float64)
    # d/dw sum(x w^T w) = w (1 x^T)^T ... : (x w^T)^T 1 + w x^T 1 contributions
    ones = np.ones((2, 4))
    want = (xv @ w.T).T @ ones + (w @ ones.T @ xv)
    np.testing.assert_allclose(g.asnumpy(), want, rtol=2e-2, atol=2e-2)
    forward_casts = counter.counts["cast"]
    cell.to_float(ms.float32)
    with COUNT.counting() as plain:
        grad_fn(x)
    assert plain.counts["cast"] < forward_casts   # the float16 run cast w (and x) once


@pytest.mark.parametrize("backend", QUICK)
def test_o2_batchnorm_reads_half_inputs_without_casting(backend):
    """At O2 a BatchNorm nothing observes normalises the float16 activations in float32 with
    no casts around it; the result equals the cast path (taken when a hook is registered)."""
    use_backend(backend)
    rng = np.random.default_rng(3)
    x = ms.Tensor(rng.standard_normal((4, 3, 5, 5)).astype(np.float32))

    def build():
        ms.set_seed(0)
        bn = nn.BatchNorm2d(4)
        net = nn.SequentialCell([nn.Conv2d(3, 4, 3), bn, nn.ReLU()])
        net.set_train()
        return bn, amp.auto_mixed_precision(net, "O2", ms.float16)

    bn, fast = build()
    with COUNT.counting() as quick:
        out_fast = fast(x)
    bn2, slow = build()
    seen = []
    bn2.register_forward_hook(lambda cell, inputs, out: seen.append(inputs[0].dtype))
    with COUNT.counting() as hooked:
        out_slow = slow(x)
    assert seen == [ms.float32]
    # A fused batch_norm reads float16 itself; the composite casts inside instead.
    saved = 2 if ms.context.current_backend().batch_norm is not None else 0
    assert hooked.counts["cast"] - quick.counts["cast"] == saved
    assert out_fast.dtype == out_slow.dtype == ms.float32
    np.testing.assert_allclose(out_fast.asnumpy(), out_slow.asnumpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), bn2.moving_mean.asnumpy(),
                               rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("backend", QUICK)
def test_momentum_update_matches_the_formula(backend, nesterov):
    """The backend's multi-tensor update (or the core's loop) is momentum SGD, for
    nn.Momentum and nn.SGD alike, with two learning-rate groups."""
    use_backend(backend)
    rng = np.random.default_rng(4)
    values = [rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (4,), (2, 2))]
    grads = [rng.standard_normal(v.shape).astype(np.float32) for v in values]
    for make in (lambda ps: nn.Momentum(ps, 0.1, 0.9, use_nesterov=nesterov),
                 lambda ps: nn.SGD(ps, 0.1, momentum=0.9, nesterov=nesterov)):
        params = [Parameter(ms.Tensor(v.copy()), name=f"p{i}") for i, v in enumerate(values)]
        groups = [{"params": params[:2]}, {"params": params[2:], "lr": 0.05}]
        opt = make(groups)
        vel = [np.zeros_like(v) for v in values]
        want = [v.copy() for v in values]
        for _ in range(3):
            opt(tuple(ms.Tensor(g) for g in grads))
            for i, g in enumerate(grads):
                lr = 0.1 if i < 2 else 0.05
                vel[i] = 0.9 * vel[i] + g
                want[i] = want[i] - lr * ((g + 0.9 * vel[i]) if nesterov else vel[i])
        for p, w in zip(params, want):
            np.testing.assert_allclose(p.asnumpy(), w, rtol=1e-5, atol=1e-6)


def test_fused_gradients_cut_the_reference_calls():
    """The reference autodiff's fused rules take the MLP step to at most 52 array ops, under
    two thirds of the same step with every composite differentiated primitive by primitive
    (47 against 78 when written; 137 before this work, when the optimizer also looped; 52
    since the mean cross entropy's gradient is 0, not NaN, when every target is ignored:
    an ``equal`` and a ``where`` on its denominator)."""
    from mscore.autodiff.fused import composite_gradients
    use_backend("numpy")
    x, y = _batch()
    fused, _ = COUNT.count_step(COUNT.train_step(_mlp(), "O0"), (x, y), steps=1)
    with composite_gradients():
        composite, _ = COUNT.count_step(COUNT.train_step(_mlp(), "O0"), (x, y), steps=1)
    assert fused["array_ops"] <= 52, fused
    assert fused["array_ops"] < 0.65 * composite["array_ops"], (fused, composite)


@pytest.mark.skipif(os.environ.get("MSCORE_SLOW_TESTS") != "1",
                    reason="the benchmark scripts: set MSCORE_SLOW_TESTS=1")
def test_realistic_benches_run(capsys):
    """bench/resnet.py and bench/gpt.py run end to end at toy sizes (torch only, in this
    process: quick)."""
    pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        for script, extra in (("resnet", ["--width", "4", "--batch", "4"]),
                              ("gpt", ["--width", "16", "--seq", "8", "--batch", "2", "--vocab",
                                       "32", "--layers", "1", "--heads", "2"])):
            status = load_script("bench", script).main(["--backend", "torch", "--levels", "O0,bf16",
                                          "--rounds", "1", "--steps", "1", "--warmup", "0",
                                          "--threads", "0"] + extra)
            out = capsys.readouterr().out
            assert status == 0, out
            assert out.count("ratio mscore/native") == 2, out
            assert "speedup bf16 over O0" in out
    finally:
        sys.path.remove(str(ROOT / "bench"))
        ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("backend", QUICK)
def test_adam_weight_decay_groups_match_the_formula(backend):
    """nn.AdamWeightDecay through the multi-tensor adam_update: decayed and undecayed
    parameters (names with 'gamma' are not decayed) in one step, three times."""
    use_backend(backend)
    rng = np.random.default_rng(6)
    values = [rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (4,))]
    grads = [rng.standard_normal(v.shape).astype(np.float32) for v in values]
    params = [Parameter(ms.Tensor(values[0].copy()), name="w"),
              Parameter(ms.Tensor(values[1].copy()), name="bn.gamma")]
    opt = nn.AdamWeightDecay(params, 0.01, weight_decay=0.1)
    m = [np.zeros_like(v) for v in values]
    v2 = [np.zeros_like(v) for v in values]
    want = [v.copy() for v in values]
    for _ in range(3):
        opt(tuple(ms.Tensor(g) for g in grads))
        for i, g in enumerate(grads):
            m[i] = 0.9 * m[i] + 0.1 * g
            v2[i] = 0.999 * v2[i] + 0.001 * g * g
            update = m[i] / (np.sqrt(v2[i]) + 1e-6) + (0.1 * want[i] if i == 0 else 0.0)
            want[i] = want[i] - 0.01 * update
    for p, w in zip(params, want):
        np.testing.assert_allclose(p.asnumpy(), w, rtol=1e-5, atol=1e-6)
