"""``mscore.jit``: a function or a Cell's ``construct`` compiled where the backend compiles,
eager elsewhere, with the same results either way."""
import warnings

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore import nn, ops
from mscore.compile import graph
from mscore.compile.api import jit as api_jit
from mscore.compile.api import reachable_state


def _data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return ms.Tensor(x), ms.Tensor(y)


def _net():
    ms.set_seed(3)
    return nn.Dense(3, 1)


def _train(decorate, steps=4):
    """Losses of ``steps`` SGD steps of the MindSpore 2.x functional training loop, with
    ``decorate`` applied to the step function."""
    net = _net()
    loss_fn = nn.MSELoss()
    opt = nn.SGD(net.trainable_params(), 0.1)

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    @decorate
    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    x, y = _data()
    return [float(train_step(x, y).asnumpy()) for _ in range(steps)], net


@pytest.mark.parametrize("backend", available_backends())
def test_jit_train_step_matches_eager(backend):
    spec = use_backend(backend)
    eager, net_e = _train(lambda f: f)
    before = graph.trace_count
    compiled, net_c = _train(ms.jit)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-6)
    assert compiled[-1] < compiled[0]  # it trains: the optimizer's updates persist
    np.testing.assert_allclose(net_c.weight.asnumpy(), net_e.weight.asnumpy(), rtol=1e-5,
                               atol=1e-6)
    traces = graph.trace_count - before
    if "compile" in spec.capabilities and backend == "jax":
        assert traces == 1  # one program for the four calls
    elif "compile" not in spec.capabilities:
        assert traces == 0  # nothing to compile with: eager


@pytest.mark.parametrize("backend", available_backends())
def test_jit_on_construct(backend):
    use_backend(backend)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3, 2)

        @ms.jit
        def construct(self, x):
            return ops.relu(self.dense(x)) * 2.0

    ms.set_seed(1)
    net = Net()
    x, _ = _data()
    w, b = net.dense.weight.asnumpy(), net.dense.bias.asnumpy()
    want = np.maximum(x.asnumpy() @ w.T + b, 0) * 2.0
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    # with the decorator's arguments, and through mindspore.common.api's path
    assert api_jit is ms.jit
    f = ms.jit(lambda a: a * 3.0, capture_mode="bytecode", jit_level="O1", dynamic=1,
               fullgraph=True, backend="ms_backend")
    np.testing.assert_allclose(f(x).asnumpy(), x.asnumpy() * 3.0, rtol=1e-6)


def test_jit_falls_back_to_eager_when_tracing_fails():
    if "jax" not in available_backends():
        pytest.skip("needs a backend that compiles by tracing (jax)")
    use_backend("jax")

    @ms.jit
    def branchy(x):
        if float(x.sum().asnumpy()) > 0:  # Python control flow on a value: untraceable
            return x * 2.0
        return x - 1.0

    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = branchy(x)
    np.testing.assert_allclose(out.asnumpy(), [2.0, 4.0])
    assert any("runs eagerly" in str(w.message) for w in caught)
    np.testing.assert_allclose(branchy(-x).asnumpy(), [-2.0, -3.0])  # eager from now on


def test_jit_keyword_arguments_and_other_objects_run_eagerly():
    use_backend("numpy")
    calls = []

    @ms.jit
    def f(x, scale=1.0, tag=None):
        calls.append(tag)
        return x * scale

    x = ms.Tensor(np.ones(2, np.float32))
    np.testing.assert_allclose(f(x, scale=2.0).asnumpy(), [2.0, 2.0])
    np.testing.assert_allclose(f(x, 3.0, {"a": 1}).asnumpy(), [3.0, 3.0])
    assert len(calls) == 2
    with pytest.raises(NotImplementedError, match="exec_order"):
        ms.jit(f, exec_order="x")
    with pytest.raises(TypeError, match="callable"):
        ms.jit(3)


def test_reachable_state_follows_closures_globals_and_attributes():
    use_backend("numpy")
    net = nn.Dense(2, 2)
    extra = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name="extra")

    class Holder:
        def __init__(self):
            self.params = [extra]

    holder = Holder()

    def inner(x):
        return net(x) + holder.params[0]

    def outer(x):
        return inner(x)

    cells, params = reachable_state((outer,))
    assert net in cells and any(p is extra for p in params)


def test_compiler_directives_change_nothing():
    use_backend("numpy")

    @ms.jit_class
    class Box:
        pass

    class Net(nn.Cell):
        @ms.lazy_inline
        def __init__(self):
            super().__init__()

        @ms.no_inline
        def helper(self, x):
            return x + 1

    assert Box.__name__ == "Box" and Net().helper(1) == 2
    assert ms.constexpr(lambda n: n * 2)(4) == 8
    t = ms.Tensor(np.ones(2, np.float32))
    assert ms.mutable(t) is t and ms.mutable((1, 2.0), True) == (1, 2.0)
    dense = nn.Dense(2, 2)
    np.testing.assert_allclose(ms.recompute(dense, t).asnumpy(), dense(t).asnumpy())
