"""GRAPH_MODE on jax: one jax.jit per signature, donated state buffers (shared arrays
protected, read-only state aliased, small state not donated), the threaded random stream,
clear errors, and a graph cell inside value_and_grad."""
from __future__ import annotations

import numpy as np
import pytest
from _jax_compare import jax, leaked_tracers

import mscore as ms
from mscore import nn, ops
from mscore.compile import graph
from mscore.plugin.registry import get_registry
from mscore_jax.backend import is_tracer


# -- GRAPH_MODE --------------------------------------------------------------------------------
class Affine(nn.Cell):
    """y = x @ w (+ dropout when p > 0); one trainable weight, one step counter buffer."""

    def __init__(self, p=0.0):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.eye(3, dtype=np.float32)), name="w")
        self.calls = ms.Parameter(ms.Tensor(np.zeros((), np.float32)), name="calls",
                                  requires_grad=False)
        self.p = p

    def construct(self, x, scale=1.0):
        self.calls.assign_value(self.calls + 1.0)
        y = ops.matmul(x, self.w) * scale
        return ops.dropout(y, self.p) if self.p else y


def _x(n=2):
    return ms.Tensor(np.arange(3 * n, dtype=np.float32).reshape(n, 3))


def test_graph_traces_once_per_signature():
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    net = Affine()
    start = graph.trace_count
    for _ in range(4):
        out = net(_x())
    assert graph.trace_count - start == 1
    assert float(net.calls.asnumpy()) == 4.0           # the buffer update came back each time
    np.testing.assert_allclose(out.asnumpy(), _x().asnumpy())
    net(_x(5))                                          # a new batch shape: one more trace
    net(_x(5))
    net(_x())                                           # the first shape is still compiled
    assert graph.trace_count - start == 2
    net(_x(), 2.0)                                      # a Python scalar is part of the key
    net(_x(), 2.0)
    assert graph.trace_count - start == 3
    net.set_train(True)                                 # the training flag too
    net(_x())
    assert graph.trace_count - start == 4
    assert graph.cache_size(net) == 4
    graph.clear_cache(net)
    assert graph.cache_size(net) == 0
    net(_x())
    assert graph.trace_count - start == 5
    assert leaked_tracers(net.get_parameters()) == []


def _donate_every_size(monkeypatch):
    from mscore_jax import compile as jax_compile
    monkeypatch.setattr(jax_compile, "DONATE_MIN_SIZE", 0)


def test_graph_donates_state_but_protects_shared_arrays(monkeypatch):
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    _donate_every_size(monkeypatch)   # the mechanics, on small arrays
    net = Affine()
    net(_x())
    net(_x())
    # Steady state: only the Parameter holds its array, so it is donated and XLA writes the
    # updated value into the same buffer.
    ptr = net.calls._data.unsafe_buffer_pointer()
    w_ptr = net.w._data.unsafe_buffer_pointer()
    net(_x())
    assert net.calls._data.unsafe_buffer_pointer() == ptr
    # A Parameter the step only reads (w) comes back as its own input buffer: the state
    # outputs are ordered like the inputs, so donation pairs each with itself.
    assert net.w._data.unsafe_buffer_pointer() == w_ptr
    # A Tensor sharing the buffer (param.value()) keeps it: the step copies, never donates.
    held = net.calls.value()
    before = held.asnumpy().copy()
    ptr = held._data.unsafe_buffer_pointer()
    net(_x())
    assert not held._data.is_deleted()
    np.testing.assert_array_equal(held.asnumpy(), before)
    assert net.calls._data.unsafe_buffer_pointer() != ptr
    assert float(net.calls.asnumpy()) == before + 1
    # Two Parameters sharing one array must not be donated twice.
    shared = ms.Tensor(np.ones((3, 3), np.float32))

    class Two(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = ms.Parameter(shared, name="a")
            self.b = ms.Parameter(shared, name="b")

        def construct(self, x):
            self.a.assign_value(self.a + 1.0)
            return ops.matmul(x, self.a) + ops.matmul(x, self.b)

    two = Two()
    assert two.a._data is two.b._data
    out = two(_x())
    np.testing.assert_allclose(out.asnumpy(), _x().asnumpy() @ np.full((3, 3), 3.0))
    np.testing.assert_array_equal(two.b.asnumpy(), np.ones((3, 3)))
    np.testing.assert_array_equal(shared.asnumpy(), np.ones((3, 3)))


def test_donation_can_be_switched_off(monkeypatch):
    backend = get_registry().get("jax")
    seen = {}
    real_jit = jax.jit

    def spy(fn, donate_argnums=()):
        seen["donate"] = donate_argnums
        return real_jit(fn, donate_argnums=donate_argnums)

    monkeypatch.setattr(jax, "jit", spy)
    monkeypatch.delenv("MSCORE_JAX_DONATE", raising=False)
    backend.compile(lambda a: a, donate_argnums=(0,))
    assert seen["donate"] == (0,)
    monkeypatch.setenv("MSCORE_JAX_DONATE", "never")
    backend.compile(lambda a: a, donate_argnums=(0,))
    assert seen["donate"] == ()
    monkeypatch.setenv("MSCORE_JAX_DONATE", "sometimes")
    with pytest.raises(ValueError, match="MSCORE_JAX_DONATE"):
        backend.compile(lambda a: a, donate_argnums=(0,))


def test_graph_threads_the_random_stream():
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    ms.set_seed(11)
    net = Affine(p=0.5)
    x = ms.Tensor(np.ones((4, 3), np.float32))
    start = graph.trace_count
    graph_masks = [net(x).asnumpy() != 0 for _ in range(3)]
    assert graph.trace_count - start == 1
    assert not np.array_equal(graph_masks[0], graph_masks[1])   # a new mask every step
    ms.set_seed(11)                                             # restart the stream
    again = net(x).asnumpy() != 0
    assert np.array_equal(again, graph_masks[0])
    # PYNATIVE on jax draws from the same stream in the same order.
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(11)
    eager = [net(x).asnumpy() != 0 for _ in range(3)]
    for a, b in zip(eager, graph_masks):
        assert np.array_equal(a, b)


def test_graph_errors_are_clear():
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    net = Affine()
    # keyword arguments are part of the program (MindSpore's GRAPH_MODE takes them too)
    np.testing.assert_allclose(net(_x(), scale=2.0).asnumpy(), _x().asnumpy() * 2.0)
    with pytest.raises(TypeError, match="argument 1"):
        net(_x(), {"scale": 2.0})

    class Branchy(nn.Cell):
        def construct(self, x):
            if ops.sum(x) > 0:           # Python control flow on a traced value
                return x
            return -x

    with pytest.raises(Exception) as info:
        Branchy()(_x())
    assert "GRAPH_MODE" in "\n".join(getattr(info.value, "__notes__", []))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert Branchy()(_x()).shape == (2, 3)                  # fine eagerly
    ms.set_context(mode=ms.GRAPH_MODE)
    eager_cell = Branchy()
    eager_cell.jit_disabled = True
    assert eager_cell(_x()).shape == (2, 3)                 # opted out of compilation
    outsider = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="outsider")

    class Sneaky(nn.Cell):
        def construct(self, x):
            outsider.assign_value(ops.sum(x, 0))
            return x

    with pytest.raises(RuntimeError, match="outsider"):
        Sneaky()(_x())
    assert not is_tracer(outsider._data)


def test_graph_cell_inside_value_and_grad():
    """A GRAPH_MODE cell called under ms.value_and_grad (jax tracers as inputs): gradients
    flow through the compiled program and the buffer update comes back concrete."""
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    net = Affine()
    x = _x()
    loss_fn = lambda x: ops.sum(net(x) ** 2)  # noqa: E731
    value, grads = ms.value_and_grad(loss_fn, None, [net.w])(x)
    xn = x.asnumpy()
    np.testing.assert_allclose(value.asnumpy(), np.sum(xn ** 2), rtol=1e-6)
    np.testing.assert_allclose(grads[0].asnumpy(), 2 * xn.T @ xn, rtol=1e-6)
    assert float(net.calls.asnumpy()) == 1.0
    assert leaked_tracers(net.get_parameters()) == []


def test_graph_read_only_state_is_aliased_not_copied(monkeypatch):
    """A scalar state the step only reads (a learning rate) keeps its buffer even when the
    step also returns a scalar (the loss): state outputs pair with their own inputs."""
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    _donate_every_size(monkeypatch)

    class Step(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lr = ms.Parameter(ms.Tensor(np.float32(0.5)), name="lr", requires_grad=False)
            self.w = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="w")

        def construct(self, x):
            loss = ops.sum(x * self.w)
            self.w.assign_value(self.w - self.lr * x)
            return loss

    step = Step()
    x = ms.Tensor(np.ones(3, np.float32))
    step(x)
    lr_ptr = step.lr._data.unsafe_buffer_pointer()
    loss = step(x)
    assert step.lr._data.unsafe_buffer_pointer() == lr_ptr
    assert float(loss.asnumpy()) == 1.5 and float(step.lr.asnumpy()) == 0.5


def test_graph_donates_large_state_only():
    """By default only state arrays of at least DONATE_MIN_SIZE elements are donated: a
    scalar counter's old buffer stays readable, a 64-element weight's is reused."""
    from mscore_jax.backend import DONATE_MIN_SIZE
    ms.set_context(backend="jax", mode=ms.GRAPH_MODE)
    side = int(np.sqrt(DONATE_MIN_SIZE))

    class Step(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.ones((side, side), np.float32)), name="w")
            self.calls = ms.Parameter(ms.Tensor(np.float32(0)), name="calls",
                                      requires_grad=False)

        def construct(self, x):
            self.calls.assign_value(self.calls + 1.0)
            self.w.assign_value(self.w * 0.5)
            return ops.sum(ops.matmul(x, self.w))

    step = Step()
    x = ms.Tensor(np.ones((2, side), np.float32))
    step(x)
    w_ptr = step.w._data.unsafe_buffer_pointer()
    calls_before = step.calls._data
    step(x)
    assert step.w._data.unsafe_buffer_pointer() == w_ptr           # donated, written in place
    assert not calls_before.is_deleted() and float(calls_before) == 1.0   # kept
    assert float(step.calls.asnumpy()) == 2.0
    np.testing.assert_array_equal(step.w.asnumpy(), np.full((side, side), 0.25, np.float32))
