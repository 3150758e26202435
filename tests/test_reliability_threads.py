"""Two models trained in two threads at once give exactly the results of training them one
after the other: the parameter-mutation scopes, the autocast policy and
the autodiff/compile depths are per thread (``contextvars``); the backend stays
process-wide."""
import os
import sys
import threading

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore import amp, nn

STEPS = 12
# jax compiles every new op shape on first use (seconds on a busy CPU): the default run trains
# a smaller pair there; MSCORE_SLOW_TESTS=1 trains the full pair on every backend.
SLOW = bool(os.environ.get("MSCORE_SLOW_TESTS"))


def _data(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((16, 6)).astype(np.float32)
    y = rng.integers(0, 3, 16).astype(np.int32)
    return ms.Tensor(x), ms.Tensor(y)


def _model(seed, level, light=False):
    """A Dense-BatchNorm-ReLU-Dense classifier (BatchNorm statistics are buffers updated
    inside the gradient's mutation scope) and its train step; ``level`` 'auto' runs the
    network inside an autocast region. ``light``: without BatchNorm (and one Dense layer
    for seed 1, so the two steps take different times and overlap unevenly)."""
    ms.set_seed(seed)
    if light:
        net = nn.Dense(6, 3) if seed == 1 else nn.SequentialCell(
            nn.Dense(6, 16), nn.ReLU(), nn.Dense(16, 3))
    else:
        net = nn.SequentialCell(nn.Dense(6, 16), nn.BatchNorm1d(16), nn.ReLU(),
                                nn.Dense(16, 3))
    if level == "auto":
        net = amp.auto_mixed_precision(net, "auto")
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
    step.set_train()
    return step


def _train(step, data, barrier=None, steps=STEPS):
    losses = []
    for _ in range(steps):
        if barrier is not None:
            barrier.wait()
        losses.append(step(*data).asnumpy().copy())
    return losses


def _state(step):
    return {p.name: p.asnumpy().copy() for p in step.get_parameters()}


def _pair(light=False):
    return [(_model(1, "O0", light), _data(10)), (_model(2, "auto", light), _data(20))]


def _concurrently(pairs, steps=STEPS):
    barrier = threading.Barrier(len(pairs))
    results, errors = [None] * len(pairs), []

    def work(i):
        try:
            results[i] = _train(pairs[i][0], pairs[i][1], barrier, steps)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            barrier.abort()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)  # switch threads between nearly every op
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(pairs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        sys.setswitchinterval(old)
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize("mode", ["PYNATIVE", "GRAPH"])
@pytest.mark.parametrize("backend", available_backends())
def test_two_models_in_two_threads_train_as_one_after_the_other(backend, mode):
    spec = use_backend(backend)
    if mode == "GRAPH" and "compile" not in spec.capabilities:
        pytest.skip(f"backend {backend!r} does not compile: GRAPH_MODE runs as PYNATIVE")
    light = backend == "jax" and not SLOW
    steps = STEPS
    ms.set_context(mode=ms.GRAPH_MODE if mode == "GRAPH" else ms.PYNATIVE_MODE)
    try:
        sequential = _pair(light)
        expected = [(_train(step, data, steps=steps), _state(step)) for step, data in sequential]
        concurrent = _pair(light)
        losses = _concurrently(concurrent, steps)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for (want_losses, want_state), got_losses, (step, _) in zip(expected, losses, concurrent):
        np.testing.assert_array_equal(np.array(got_losses), np.array(want_losses))
        got_state = _state(step)
        assert got_state.keys() == want_state.keys()
        for name, want in want_state.items():
            np.testing.assert_array_equal(got_state[name], want, err_msg=name)


@pytest.mark.parametrize("backend", available_backends())
def test_autocast_region_is_per_thread(backend):
    # One thread holds an autocast region open; a matmul in another thread stays float32.
    use_backend(backend)
    from mscore import ops
    inside, outside = threading.Event(), threading.Event()
    got = {}

    def region():
        with amp.autocast(ms.float16):
            got["inside"] = ops.matmul(ms.Tensor(np.ones((2, 2), np.float32)),
                                       ms.Tensor(np.ones((2, 2), np.float32))).dtype
            inside.set()
            outside.wait(30)

    t = threading.Thread(target=region)
    t.start()
    assert inside.wait(30)
    got["outside"] = ops.matmul(ms.Tensor(np.ones((2, 2), np.float32)),
                                ms.Tensor(np.ones((2, 2), np.float32))).dtype
    outside.set()
    t.join(30)
    assert got == {"inside": ms.float16, "outside": ms.float32}


def test_mutation_scope_of_one_thread_does_not_undo_another_threads_update():
    ms.set_context(backend="numpy")
    from mscore.common.parameter import MutationScope, Parameter
    p = Parameter(ms.Tensor(np.zeros(2, np.float32)), name="p")
    opened, assigned = threading.Event(), threading.Event()

    def scope_holder():
        with MutationScope() as scope:
            opened.set()
            assigned.wait(30)
            scope.restore()

    t = threading.Thread(target=scope_holder)
    t.start()
    assert opened.wait(30)
    p.set_data(ms.Tensor(np.ones(2, np.float32)))  # this thread's update, outside any scope
    assigned.set()
    t.join(30)
    np.testing.assert_array_equal(p.asnumpy(), np.ones(2, np.float32))


def test_two_torch_compiled_programs_in_two_threads(monkeypatch):
    """torch.compile (dynamo, no code generation) traces the per-thread state: two threads
    each trace and run their own program, with the sequential results."""
    if "torch" not in available_backends():
        pytest.skip("torch backend unavailable")
    if not SLOW:
        pytest.skip("four dynamo traces take about a minute on CPU: MSCORE_SLOW_TESTS=1")
    use_backend("torch")
    backend = ms.context.current_backend()
    monkeypatch.setattr(backend, "_compile_policy", "always")
    monkeypatch.setattr(backend, "_compile_backend", lambda gm, example_inputs: gm.forward)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        sequential = _pair()
        expected = [(_train(step, data), _state(step)) for step, data in sequential]
        concurrent = _pair()
        losses = _concurrently(concurrent)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for (want_losses, want_state), got_losses, (step, _) in zip(expected, losses, concurrent):
        np.testing.assert_array_equal(np.array(got_losses), np.array(want_losses))
        for name, want in want_state.items():
            np.testing.assert_array_equal(_state(step)[name], want, err_msg=name)
