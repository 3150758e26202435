"""The short host paths of a train step on torch give the results of the long ones: leaves
marked in place, BatchNorm statistics updated in place, label checks deferred on a device."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import mscore as ms
from mscore import _state, dispatch, nn, ops
from mscore.common.parameter import Parameter

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def torch_backend():
    _state.reset()
    ms.set_context(backend="torch", device_target="CPU", mode=ms.PYNATIVE_MODE)
    yield
    _state.reset()


def _bn_reference(x, mean, var, gamma, beta, momentum, eps=1e-5):
    """numpy float64: (output, new running mean, new running var) of training BatchNorm."""
    axes = (0, 2, 3)
    m = x.mean(axes)
    v = x.var(axes)
    n = x.size // x.shape[1]
    out = (x - m[None, :, None, None]) / np.sqrt(v + eps)[None, :, None, None]
    out = out * gamma[None, :, None, None] + beta[None, :, None, None]
    new_var = (1 - momentum) * var + momentum * v * n / (n - 1)
    return out, (1 - momentum) * mean + momentum * m, new_var


def test_batch_norm_updates_running_statistics_in_place_with_the_same_values():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
    mean0, var0 = rng.standard_normal(3).astype(np.float32), rng.uniform(0.5, 2, 3).astype(
        np.float32)
    gamma, beta = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(
        np.float32)
    rm = Parameter(ms.Tensor(mean0), name="rm", requires_grad=False)
    rv = Parameter(ms.Tensor(var0), name="rv", requires_grad=False)
    storage_before = rm._data.data_ptr()
    out = ops.batch_norm(ms.Tensor(x), rm, rv, ms.Tensor(gamma), ms.Tensor(beta), training=True,
                         momentum=0.1)
    want_out, want_mean, want_var = _bn_reference(x.astype(np.float64), mean0, var0, gamma,
                                                  beta, 0.1)
    np.testing.assert_allclose(out.asnumpy(), want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rm.asnumpy(), want_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.asnumpy(), want_var, rtol=1e-5, atol=1e-6)
    assert rm._data.data_ptr() == storage_before   # written where it was: no copy


def test_batch_norm_leaves_a_held_value_of_the_statistics_alone():
    rm = Parameter(ms.Tensor(np.zeros(3, np.float32)), name="rm", requires_grad=False)
    rv = Parameter(ms.Tensor(np.ones(3, np.float32)), name="rv", requires_grad=False)
    held = rm.value()      # someone keeps the old value: it must not change under them
    x = ms.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3, 1, 1))
    ops.batch_norm(x, rm, rv, None, None, training=True, momentum=0.5)
    np.testing.assert_array_equal(held.asnumpy(), np.zeros(3, np.float32))
    np.testing.assert_allclose(rm.asnumpy(), 0.5 * np.array([4.5, 5.5, 6.5]), rtol=1e-6)


def test_a_scope_that_undoes_changes_sees_the_old_statistics_again():
    from mscore.common.parameter import MutationScope
    rm = Parameter(ms.Tensor(np.zeros(3, np.float32)), name="rm", requires_grad=False)
    rv = Parameter(ms.Tensor(np.ones(3, np.float32)), name="rv", requires_grad=False)
    x = ms.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3, 1, 1))
    with MutationScope() as scope:
        ops.batch_norm(x, rm, rv, None, None, training=True, momentum=0.5)
        scope.restore()
    np.testing.assert_array_equal(rm.asnumpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(rv.asnumpy(), np.ones(3, np.float32))


def _train_step():
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1), nn.BatchNorm2d(4),
                             nn.ReLU(), nn.Flatten(), nn.Dense(4 * 16, 5)])
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9))
    step.set_train()
    return net, step


def test_train_step_leaves_parameters_outside_autograd_and_frees_its_graph():
    net, step = _train_step()
    rng = np.random.default_rng(1)
    x = ms.Tensor(rng.standard_normal((2, 3, 4, 4)).astype(np.float32))
    y = ms.Tensor(np.array([1, 3], np.int32))
    before = {p.name: p.asnumpy() for p in net.trainable_params()}
    step(x, y)
    # Only the Parameter (and getrefcount's argument) hold each array: no autograd graph
    # outlives the step, so the next update may write in place.
    refs = {p.name: sys.getrefcount(p._data) for p in net.get_parameters()}
    assert refs == {name: 2 for name in refs}
    assert not any(p._data.requires_grad for p in net.get_parameters())
    gc.collect()
    changed = [n for n, p in ((p.name, p) for p in net.trainable_params())
               if not np.array_equal(p.asnumpy(), before[n])]
    assert changed, "the step updated nothing"


def test_same_tensor_behind_two_parameters_gets_two_gradients():
    data = ms.Tensor(np.array([1.0, 2.0], np.float32))._data
    a = Parameter(ms.Tensor._wrap(data), name="a")
    b = Parameter(ms.Tensor._wrap(data), name="b")

    def f():
        return (a * 2.0).sum() + (b * 3.0).sum()
    _, (ga, gb) = ms.value_and_grad(f, None, [a, b])()
    np.testing.assert_array_equal(ga.asnumpy(), [2.0, 2.0])
    np.testing.assert_array_equal(gb.asnumpy(), [3.0, 3.0])
    assert not data.requires_grad


def test_labels_on_a_device_are_checked_at_the_next_host_read(monkeypatch):
    backend = dispatch.backend()
    monkeypatch.setattr(backend, "device", "GPU:0")   # labels "in device memory"
    logits = ms.Tensor(np.zeros((3, 4), np.float32))
    loss = ops.cross_entropy(logits, ms.Tensor(np.array([0, 7, 1], np.int32)))
    assert _state.thread.deferred_checks          # no synchronisation at the loss
    with pytest.raises(ValueError, match=r"labels.*\[0, 4\).*got 7 at 1 of 3"):
        loss.asnumpy()
    assert not _state.thread.deferred_checks
    # good labels (and ignore_index) compute the same loss as on the host path
    labels = ms.Tensor(np.array([0, -100, 3], np.int32))
    got = float(ops.cross_entropy(logits, labels).asnumpy())
    np.testing.assert_allclose(got, np.log(4.0), rtol=1e-6)


def test_device_label_checks_raise_before_a_loss_scaled_update(monkeypatch):
    backend = dispatch.backend()
    monkeypatch.setattr(backend, "device", "GPU:0")
    ms.set_seed(0)
    net = nn.Dense(4, 3)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    step = ms.amp.build_train_network(net, opt, nn.CrossEntropyLoss(), level="O2")
    before = net.weight.asnumpy().copy()
    with pytest.raises(ValueError, match="labels"):
        step(ms.Tensor(np.ones((2, 4), np.float32)), ms.Tensor(np.array([1, 5], np.int32)))
    np.testing.assert_array_equal(net.weight.asnumpy(), before)


def test_loss_scale_update_on_the_host_follows_the_device_rule():
    from mscore.nn.wrap.loss_scale import DynamicLossScaleUpdateCell
    flags = [False, False, True, False, False, False, True, True, False, False, False]
    results = []
    for host in (False, True):
        cell = DynamicLossScaleUpdateCell(2.0 ** 3 + 1, 3.0, 2)   # factor 3: float32 rounding
        scale = Parameter(ms.Tensor(np.float32(2.0 ** 3 + 1)), name="scale",
                          requires_grad=False)
        seen = []
        for k, flag in enumerate(flags):
            if k == 5:   # a change behind the cell's back is picked up
                scale.set_data(ms.Tensor(np.float32(7.0)))
            overflow = ms.Tensor(flag)
            if host:
                cell.update_on_host(scale, flag)
            else:
                cell(scale, overflow)
            seen.append((scale.asnumpy().tobytes(), int(cell.current_iterator_step.asnumpy()),
                         int(cell.last_overflow_iterator_step.asnumpy())))
        results.append(seen)
    assert results[0] == results[1]
    assert results[0][-1][1] == len(flags) + 1


@pytest.mark.parametrize("low", ["float16", "bfloat16"])
def test_o2_normalisation_on_half_inputs_matches_the_cast_composite(monkeypatch, low):
    """amp O2 keeps LayerNorm/BatchNorm in float32 with casts around them; taking the
    half-precision input uncast (normalised in float32, rounded once) gives the same values
    and gradients. A float32 LayerNorm called on its own still returns float32."""
    from mscore import amp
    from mscore.nn.layer import normalization
    low_dt = getattr(ms, low)

    def run():
        ms.set_seed(0)
        net = nn.SequentialCell([nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1),
                                 nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                                 nn.Dense(64, 8), nn.LayerNorm((8,)), nn.Dense(8, 3)])
        net.set_train()
        net = amp.auto_mixed_precision(net, "O2", low_dt)
        x = ms.Tensor(np.random.default_rng(2).standard_normal((2, 3, 4, 4)).astype(
            np.float32))
        out, grads = ms.value_and_grad(lambda x: net(x).sum(), None,
                                       net.trainable_params())(x)
        return out.asnumpy(), [g.asnumpy().astype(np.float32) for g in grads]

    fast_out, fast_grads = run()
    monkeypatch.setattr(normalization, "_takes_half_uncast", lambda *a: False)
    slow_out, slow_grads = run()
    np.testing.assert_array_equal(fast_out, slow_out)
    for a, b in zip(fast_grads, slow_grads):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    ln = nn.LayerNorm((8,)).to_float(ms.float32)
    y = ln(ms.Tensor(np.ones((2, 8), np.float16)))
    assert y.dtype == ms.float32


def test_array_shared_with_a_parameter_not_differentiated_gets_no_gradient_through_it():
    data = ms.Tensor(np.array([1.0, 2.0], np.float32))._data
    a = Parameter(ms.Tensor._wrap(data), name="a")
    b = Parameter(ms.Tensor._wrap(data), name="b", requires_grad=False)

    def f():
        return (a * 2.0).sum() + (b * 3.0).sum()
    _, (ga,) = ms.value_and_grad(f, None, [a])()
    np.testing.assert_array_equal(ga.asnumpy(), [2.0, 2.0])   # b's use is not a's
    assert not data.requires_grad


def test_reshape_and_transpose_check_their_arguments_on_every_call():
    """Checked shapes and permutations are remembered: a remembered one gives the same
    result, and a bad one raises on every call (none is remembered)."""
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = ms.Tensor(data)
    cube = ms.Tensor(np.zeros((2, 3, 1), np.float32))
    for _ in range(2):
        np.testing.assert_array_equal(ops.reshape(x, (3, 2)).asnumpy(), data.reshape(3, 2))
        np.testing.assert_array_equal(ops.reshape(x, (-1,)).asnumpy(), data.reshape(-1))
        np.testing.assert_array_equal(ops.reshape(x, [1, -1]).asnumpy(), data.reshape(1, 6))
        assert ops.reshape(x, (2, 3)) is x and ops.reshape(x, (2, -1)) is x
        assert ops.reshape(cube, (3, 2)).shape == (3, 2)   # same asked shape, other input
        for bad in ((4, 2), (-1, -1), (-2, -3), (0, -1)):
            with pytest.raises(ValueError):
                ops.reshape(x, bad)
        with pytest.raises(TypeError):
            ops.reshape(x, "ab")
        for dims in ((1, 0), [1, 0], (-1, 0), (np.int64(1), 0)):
            np.testing.assert_array_equal(ops.transpose(x, dims).asnumpy(), data.T)
        assert ops.transpose(cube, (2, 0, 1)).shape == (1, 2, 3)
        for bad in ((0, 0), (0,), (1, 0, 2)):
            with pytest.raises(ValueError):
                ops.transpose(x, bad)
        with pytest.raises(ValueError):
            ops.transpose(cube, (1, 0))   # remembered for 2 axes, not for 3
        with pytest.raises(TypeError):
            ops.transpose(x, 1)


def test_dense_reports_a_wrong_input_width_as_mindspore_does():
    net = nn.Dense(3, 2)
    for _ in range(2):
        with pytest.raises(ValueError, match="the last axis of 'x' must be 3, got shape "
                                             r"\(2, 4\)"):
            net(ms.Tensor(np.ones((2, 4), np.float32)))
    w, b = net.weight.asnumpy(), net.bias.asnumpy()
    v = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(net(ms.Tensor(v)).asnumpy(), w @ v + b, rtol=1e-6)


def test_layer_norm_cell_checks_what_the_functional_op_checks():
    ln = nn.LayerNorm((3,), epsilon=1e-5)
    with pytest.raises(TypeError, match="floating-point"):
        ln(ms.Tensor(np.ones((2, 3), np.int32)))
    with pytest.raises(ValueError, match="normalized_shape"):
        ln(ms.Tensor(np.ones((2, 4), np.float32)))
    x = np.array([[1.0, 2.0, 4.0], [0.0, -1.0, 1.0]], np.float32)
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_fused_unscale_divides_arrays_that_share_storage_once_each():
    """The in-place unscale copies first when two arrays are one tensor, views of one buffer
    or not contiguous: each result is its input divided by the scale once."""
    fused = dispatch.fused("unscale_check")
    base = torch.arange(8, dtype=torch.float32) + 1.0
    same = base[:4].clone()
    strided = (torch.arange(8, dtype=torch.float32) + 1.0)[::2]
    for arrays in ([same, same], [base[:4], base[4:]], [strided, base.clone()]):
        want = [a.clone() / 4.0 for a in arrays]
        out, finite = fused(arrays, torch.tensor(4.0))
        assert bool(finite)
        for o, w in zip(out, want):
            torch.testing.assert_close(o, w, rtol=0, atol=0)
    out, finite = fused([torch.tensor([1.0, float("inf")]), base.clone()], torch.tensor(2.0))
    assert not bool(finite)


def test_momentum_updates_in_place_unless_someone_holds_the_value():
    net = nn.Dense(4, 3)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9))
    x = ms.Tensor(np.ones((2, 4), np.float32))
    y = ms.Tensor(np.array([0, 1], np.int32))
    step(x, y)
    array = weakref.ref(net.weight._data)      # no strong reference: the Parameter's alone
    step(x, y)
    assert net.weight._data is array()         # written where it was
    held = net.weight.value()
    before = held.asnumpy().copy()
    step(x, y)
    assert net.weight._data is not array()     # a new array: the held value stays as it was
    np.testing.assert_array_equal(held.asnumpy(), before)
    assert not np.array_equal(net.weight.asnumpy(), before)


@pytest.mark.skipif(os.environ.get("MSCORE_SLOW_TESTS") != "1",
                    reason="the benchmark scripts: set MSCORE_SLOW_TESTS=1")
def test_host_calls_bench_counts_both_sides():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "bench", "host_calls.py"),
                          "--model", "gpt", "--levels", "O0", "--steps", "1"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "gpt O0: Python calls/step mscore" in out.stdout and "ATen calls/step" in out.stdout


@pytest.mark.parametrize("grad_dtype", [np.float32, np.float16])
def test_momentum_over_two_dtypes_casts_the_rate_and_gradients_per_parameter(grad_dtype):
    # One rate, parameters of two dtypes (the one-rate shortcut does not apply), gradients of
    # the parameters' dtype or of another (cast, not the gradients-as-given shortcut).
    a = Parameter(ms.Tensor(np.array([1.0, -2.0], np.float32)), name="a")
    b = Parameter(ms.Tensor(np.array([0.5, 4.0], np.float64)), name="b")
    opt = nn.Momentum([a, b], 0.1, 0.9)
    ga, gb = np.array([0.25, 1.0]), np.array([-1.0, 2.0])
    opt((ms.Tensor(ga.astype(grad_dtype)), ms.Tensor(gb.astype(grad_dtype))))
    opt((ms.Tensor(ga.astype(grad_dtype)), ms.Tensor(gb.astype(grad_dtype))))
    for p, g, start in ((a, ga, [1.0, -2.0]), (b, gb, [0.5, 4.0])):
        v1 = g
        v2 = 0.9 * v1 + g
        want = np.array(start) - 0.1 * v1 - 0.1 * v2
        assert p.dtype == (ms.float32 if p is a else ms.float64)
        np.testing.assert_allclose(p.asnumpy(), want, rtol=1e-6)


def test_group_rates_apply_to_their_own_parameters():
    a = Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)), name="a")
    b = Parameter(ms.Tensor(np.array([3.0, 4.0], np.float32)), name="b")
    opt = nn.Momentum([{"params": [a], "lr": 0.5}, {"params": [b]}], 0.1, 0.0)
    g = np.array([1.0, -1.0], np.float32)
    opt((ms.Tensor(g), ms.Tensor(g)))
    np.testing.assert_allclose(a.asnumpy(), [0.5, 2.5], rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), [2.9, 4.1], rtol=1e-6)


def test_loss_scaled_step_unscales_its_gradients_in_place_with_the_divided_values():
    w = Parameter(ms.Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)), name="w")

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = w

        def construct(self, x):
            return (ops.matmul(x, self.w) ** 2).sum()

    seen = []

    class Record(nn.Optimizer):
        def __init__(self, params):
            super().__init__(0.1, params)

        def construct(self, gradients):
            seen.append(tuple(gradients))
            return True

    x = np.array([[1.0, -1.0]], np.float32)
    step = nn.TrainOneStepWithLossScaleCell(Net(), Record([w]), ms.Tensor(1024.0, ms.float32))
    _, overflow, _ = step(ms.Tensor(x))
    assert not bool(overflow.asnumpy())
    # d/dw sum((x @ w)^2) = 2 x^T (x @ w), unscaled from the 1024-scaled loss.
    want = 2 * x.T.astype(np.float64) @ (x.astype(np.float64) @ w.asnumpy().astype(np.float64))
    (grad,), = seen
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-6)


def test_wrap_all_makes_one_plain_tensor_around_each_array():
    arrays = [torch.tensor([1.0, 2.0]), torch.tensor([[3]], dtype=torch.int32)]
    out = ms.Tensor._wrap_all(arrays)
    assert [type(t) for t in out] == [ms.Tensor, ms.Tensor]
    assert all(t._data is a for t, a in zip(out, arrays))
    np.testing.assert_array_equal(out[0].asnumpy(), [1.0, 2.0])
    assert out[1].dtype == ms.int32 and out[1].shape == (1, 1)
    assert ms.Tensor._wrap_all([]) == []
