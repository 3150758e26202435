"""Optimizers against hand-computed numpy updates, learning-rate schedules, parameter groups,
weight decay and loss scale, and argument validation."""
import math

import _optim_reference as ref
import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import nn

STEPS = ref.STEPS


_numpy_context = numpy_context_each_test(seed=0)


def T(a):
    return ms.Tensor(np.asarray(a))


def _params(names=("w", "gamma", "bias"), dtype=np.float64):
    rng = np.random.default_rng(0)
    shapes = [(3, 2), (2,), (2,)]
    return [ms.Parameter(T(rng.standard_normal(s).astype(dtype)), name=n)
            for n, s in zip(names, shapes)]


def _decays(params, wd):
    return [0.0 if ("beta" in p.name or "gamma" in p.name) else wd for p in params]


def _reference(params, update, steps=STEPS, lrs=None, lr=0.1, wd=0.0, state_init=0.0):
    """Run ``update(p, g, state, lr, t) -> (p, state)`` in numpy for each parameter."""
    values = [p.asnumpy().astype(np.float64) for p in params]
    states = [None] * len(values)
    decays = _decays(params, wd)
    for s in range(steps):
        grads = ref.step_gradients(s, params)
        step_lr = lr if lrs is None else lrs[min(s, len(lrs) - 1)]
        for i, (v, g) in enumerate(zip(values, grads)):
            values[i], states[i] = update(v, g, states[i], step_lr, s + 1, decays[i])
    return values


def _momentum(mom, nesterov=False):
    def update(p, g, v, lr, t, wd):
        g = g + wd * p
        v = (0 if v is None else v) * mom + g
        step = g + mom * v if nesterov else v
        return p - lr * step, v
    return update


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("wd,loss_scale", [(0.0, 1.0), (0.01, 1.0), (0.01, 128.0)])
def test_momentum_three_steps(nesterov, wd, loss_scale):
    params = _params()
    want = _reference(params, _momentum(0.9, nesterov), wd=wd)
    opt = nn.Momentum(params, 0.1, 0.9, weight_decay=wd, loss_scale=loss_scale,
                      use_nesterov=nesterov)
    got = ref.run_steps(opt, params, scale=loss_scale)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    assert [m.name for m in opt.moments] == ["moments.w", "moments.gamma", "moments.bias"]
    # weight decay skips parameters named like normalisation scales/shifts ('gamma', 'beta')
    if wd:
        assert opt.decay_flags == (True, False, True)
    assert int(opt.global_step.asnumpy()[0]) == STEPS  # every step counts (MindSpore 2.x)


def _sgd(mom, damp, nesterov):
    def update(p, g, a, lr, t, wd):
        g = g + wd * p
        if mom == 0:
            return p - lr * g, None
        a = g if a is None else mom * a + (1 - damp) * g
        step = g + mom * a if nesterov else a
        return p - lr * step, a
    return update


@pytest.mark.parametrize("mom,damp,nesterov,wd", [
    (0.0, 0.0, False, 0.0), (0.0, 0.0, False, 0.05), (0.9, 0.0, False, 0.0),
    (0.9, 0.3, False, 0.01), (0.8, 0.0, True, 0.0)])
def test_sgd_three_steps(mom, damp, nesterov, wd):
    params = _params()
    want = _reference(params, _sgd(mom, damp, nesterov), wd=wd)
    opt = nn.SGD(params, 0.1, momentum=mom, dampening=damp, weight_decay=wd, nesterov=nesterov)
    for g, w in zip(ref.run_steps(opt, params), want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    assert [s.name for s in opt.stat] == ["stat.w", "stat.gamma", "stat.bias"]


def _adam(b1, b2, eps, nesterov=False):
    def update(p, g, st, lr, t, wd):
        g = g + wd * p
        m, v = (0.0, 0.0) if st is None else st
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        num = m * b1 + (1 - b1) * g if nesterov else m
        return p - lr_t * num / (np.sqrt(v) + eps), (m, v)
    return update


@pytest.mark.parametrize("nesterov,wd", [(False, 0.0), (True, 0.0), (False, 0.02)])
def test_adam_three_steps(nesterov, wd):
    params = _params()
    want = _reference(params, _adam(0.9, 0.99, 1e-8, nesterov), lr=0.01, wd=wd)
    opt = nn.Adam(params, 0.01, beta2=0.99, use_nesterov=nesterov, weight_decay=wd)
    for g, w in zip(ref.run_steps(opt, params), want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(opt.beta1_power.asnumpy(), [0.9 ** STEPS], rtol=1e-6)
    assert [m.name for m in opt.moment2][0] == "moment2.w"


def _adamw(b1, b2, eps):
    def update(p, g, st, lr, t, wd):
        m, v = (0.0, 0.0) if st is None else st
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        u = m / (np.sqrt(v) + eps) + wd * p
        return p - lr * u, (m, v)
    return update


def test_adam_weight_decay_three_steps_decoupled():
    params = _params()
    want = _reference(params, _adamw(0.9, 0.999, 1e-6), lr=0.01, wd=0.1)
    opt = nn.AdamWeightDecay(params, 0.01, weight_decay=0.1)
    for g, w in zip(ref.run_steps(opt, params), want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    assert [m.name for m in opt.moments1][0] == "adam_m.w"


def test_float32_parameters_update_in_float32():
    params = _params(dtype=np.float32)
    want = _reference(params, _momentum(0.9), wd=0.0)
    opt = nn.Momentum(params, 0.1, 0.9)
    for s in range(STEPS):
        opt(tuple(T(g) for g in ref.step_gradients(s, params, np.float32)))
    for p, w in zip(params, want):
        assert p.dtype is ms.float32
        np.testing.assert_allclose(p.asnumpy(), w, rtol=1e-5, atol=1e-6)


# -- learning rates -------------------------------------------------------------------------------
def test_list_and_tensor_learning_rates_follow_global_step():
    lrs = [0.1, 0.05, 0.01]
    for lr_arg in (lrs, T(np.array(lrs, np.float32))):
        params = _params()
        want = _reference(params, _momentum(0.0), steps=5, lrs=lrs)
        opt = nn.SGD(params, lr_arg)
        for g, w in zip(ref.run_steps(opt, params, steps=5), want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
        assert int(opt.global_step.asnumpy()[0]) == 5


def test_get_lr_reads_global_step_and_each_step_advances_it():
    params = _params()
    opt = nn.Momentum(params, [0.3, 0.2, 0.1], 0.9)
    got = []
    for s in range(4):
        got.append(float(opt.get_lr().asnumpy()))
        assert float(opt.get_lr().asnumpy()) == got[-1]   # reading changes nothing
        opt(tuple(T(g) for g in ref.step_gradients(s, params)))
    np.testing.assert_allclose(got, [0.3, 0.2, 0.1, 0.1], rtol=1e-6)
    assert int(opt.global_step.asnumpy()[0]) == 4
    fixed = nn.Momentum(_params(), 0.25, 0.9)
    assert float(fixed.get_lr().asnumpy()) == 0.25
    assert int(fixed.global_step.asnumpy()[0]) == 0


def _schedule_values(schedule, steps):
    return [float(schedule(T(np.array([s], np.int32))).asnumpy().reshape(())) for s in steps]


def test_learning_rate_schedules_match_formulas():
    steps = list(range(0, 12))
    np.testing.assert_allclose(
        _schedule_values(nn.ExponentialDecayLR(0.1, 0.9, 4), steps),
        [0.1 * 0.9 ** (s / 4) for s in steps], rtol=1e-5)
    np.testing.assert_allclose(
        _schedule_values(nn.ExponentialDecayLR(0.1, 0.9, 4, is_stair=True), steps),
        [0.1 * 0.9 ** (s // 4) for s in steps], rtol=1e-5)
    np.testing.assert_allclose(
        _schedule_values(nn.NaturalExpDecayLR(0.1, 0.5, 4), steps),
        [0.1 * math.exp(-0.5 * s / 4) for s in steps], rtol=1e-5)
    np.testing.assert_allclose(
        _schedule_values(nn.InverseDecayLR(0.1, 0.5, 4), steps),
        [0.1 / (1 + 0.5 * s / 4) for s in steps], rtol=1e-5)
    np.testing.assert_allclose(
        _schedule_values(nn.CosineDecayLR(0.01, 0.1, 8), steps),
        [0.01 + 0.045 * (1 + math.cos(math.pi * min(s, 8) / 8)) for s in steps], rtol=1e-5)
    np.testing.assert_allclose(
        _schedule_values(nn.PolynomialDecayLR(0.1, 0.01, 8, 2.0), steps),
        [0.09 * (1 - min(s, 8) / 8) ** 2 + 0.01 for s in steps], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        _schedule_values(nn.PolynomialDecayLR(0.1, 0.01, 4, 1.0, update_decay_steps=True),
                         steps),
        [0.09 * (1 - s / (4 * max(math.ceil(s / 4), 1))) + 0.01 for s in steps], rtol=1e-5,
        atol=1e-7)
    np.testing.assert_allclose(_schedule_values(nn.WarmUpLR(0.1, 5), steps),
                               [0.1 * min(s, 5) / 5 for s in steps], rtol=1e-5)


def test_optimizer_with_schedule_cell():
    params = _params()
    sched = nn.ExponentialDecayLR(0.1, 0.5, 1)
    want = _reference(params, _momentum(0.9), lrs=[0.1, 0.05, 0.025])
    opt = nn.Momentum(params, sched, 0.9)
    for g, w in zip(ref.run_steps(opt, params), want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    assert opt.dynamic_lr and int(opt.global_step.asnumpy()[0]) == 3


def test_dynamic_lr_list_helpers():
    assert nn.piecewise_constant_lr([2, 5, 6], [0.1, 0.05, 0.01]) == \
        [0.1, 0.1, 0.05, 0.05, 0.05, 0.01]
    np.testing.assert_allclose(nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1),
                               [0.1, 0.1, 0.09, 0.09, 0.081, 0.081])
    np.testing.assert_allclose(nn.exponential_decay_lr(0.1, 0.9, 6, 1, 2, is_stair=True),
                               [0.1, 0.1, 0.09, 0.09, 0.081, 0.081])
    np.testing.assert_allclose(nn.cosine_decay_lr(0.01, 0.1, 6, 1, 2),
                               [0.1, 0.055, 0.01, 0.01, 0.01, 0.01])
    np.testing.assert_allclose(nn.polynomial_decay_lr(0.1, 0.01, 4, 1, 2, 1.0),
                               [0.1, 0.055, 0.01, 0.01])
    np.testing.assert_allclose(nn.warmup_lr(0.1, 4, 1, 2), [0.0, 0.05, 0.1, 0.1])
    with pytest.raises(ValueError, match="milestone"):
        nn.piecewise_constant_lr([3, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="learning_rates"):
        nn.piecewise_constant_lr([3], [0.1, 0.2])
    with pytest.raises(ValueError, match="max_lr"):
        nn.cosine_decay_lr(0.2, 0.1, 4, 1, 2)


# -- parameter groups -----------------------------------------------------------------------------
def test_group_params_lr_weight_decay_and_order():
    w, gamma, bias = _params()
    groups = [{"params": [w], "lr": 0.05, "weight_decay": 0.1},
              {"params": [gamma, bias]},
              {"order_params": [bias, w, gamma]}]
    opt = nn.Momentum(groups, 0.1, 0.9, weight_decay=0.01)
    assert [p.name for p in opt.parameters] == ["bias", "w", "gamma"]
    assert opt.is_group_lr
    lrs = opt.get_lr()
    np.testing.assert_allclose([float(x.asnumpy()) for x in lrs], [0.1, 0.05, 0.1], rtol=1e-6)
    assert opt.get_lr_parameter(w) is opt.learning_rate[0]  # one entry per group
    assert opt.get_lr_parameter(gamma) is opt.learning_rate[1]
    # in a group, the decay applies to every parameter of the group (gamma too)
    assert opt.group_weight_decay == (0.01, 0.1, 0.01)
    init = {p.name: p.asnumpy().copy() for p in (w, gamma, bias)}
    ordered = list(opt.parameters)
    grads = ref.step_gradients(0, ordered)
    opt(tuple(T(g) for g in grads))
    for p, g, lr, wd in zip(ordered, grads, (0.1, 0.05, 0.1), (0.01, 0.1, 0.01)):
        np.testing.assert_allclose(p.asnumpy(), init[p.name] - lr * (g + wd * init[p.name]),
                                   rtol=1e-6, atol=1e-7)


def test_group_with_schedule_and_fixed_rates():
    w, gamma, bias = _params()
    opt = nn.SGD([{"params": [w], "lr": nn.WarmUpLR(0.1, 2)}, {"params": [gamma, bias]}], 0.3)
    assert opt.dynamic_lr
    first = opt.get_lr()
    opt(tuple(T(g) for g in ref.step_gradients(0, [w, gamma, bias])))
    second = opt.get_lr()
    np.testing.assert_allclose([float(x.asnumpy()) for x in first], [0.0, 0.3, 0.3], atol=1e-7)
    np.testing.assert_allclose([float(x.asnumpy()) for x in second], [0.05, 0.3, 0.3],
                               rtol=1e-6)


def test_optimizer_is_a_cell_holding_its_states():
    params = _params()
    opt = nn.Adam(params)
    names = [p.name for p in opt.get_parameters()]
    for expected in ("learning_rate", "global_step", "beta1_power", "moment1.w", "moment2.bias"):
        assert expected in names
    # only the parameters it updates are trainable; its states are buffers
    assert [p.name for p in opt.trainable_params()] == ["w", "gamma", "bias"]


def test_optimizer_validation():
    params = _params()
    with pytest.raises(TypeError, match="params"):
        nn.SGD(params[0])
    with pytest.raises(ValueError, match="params"):
        nn.SGD([])
    with pytest.raises(TypeError, match="Parameter"):
        nn.SGD([params[0], 3.0])
    with pytest.raises(ValueError, match="learning_rate"):
        nn.SGD(params, -0.1)
    with pytest.raises(ValueError, match="learning_rate"):   # MindSpore: not a float list
        nn.SGD(params, "0.1")
    with pytest.raises(ValueError, match="loss_scale"):
        nn.Momentum(params, 0.1, 0.9, loss_scale=0)
    with pytest.raises(ValueError, match="momentum"):
        nn.Momentum(params, 0.1, -0.9)
    with pytest.raises(ValueError, match="nesterov"):
        nn.SGD(params, nesterov=True)
    with pytest.raises(ValueError, match="beta1"):
        nn.Adam(params, beta1=1.0)
    with pytest.raises(ValueError, match="eps"):
        nn.AdamWeightDecay(params, eps=0.0)
    with pytest.raises(ValueError, match="weight_decay"):
        nn.SGD(params, weight_decay=-1.0)
    with pytest.raises(KeyError, match="group params"):
        nn.SGD([{"params": params, "momentum": 0.1}])
    with pytest.raises(ValueError, match="unique"):
        nn.SGD([ms.Parameter(T(np.zeros(2)), name="a"), ms.Parameter(T(np.zeros(2)), name="a")])
    opt = nn.SGD(params)
    with pytest.raises(ValueError, match="gradients"):
        opt((T(np.zeros((3, 2))),))
    with pytest.raises(TypeError, match="gradients"):
        opt(np.zeros(3))


def test_dynamic_weight_decay_cell_and_public_helpers():
    params = _params()
    wd = nn.ExponentialDecayLR(0.1, 0.5, 1)  # any schedule-like Cell: 0.1, 0.05, ...
    opt = nn.Momentum(params, 0.1, 0.0, weight_decay=wd, loss_scale=4.0)
    assert opt.dynamic_weight_decay and opt.decay_flags == (True, False, True)
    init = [p.asnumpy().copy() for p in params]
    for s, decay in enumerate((0.1, 0.05)):
        grads = ref.step_gradients(s, params)
        before = [p.asnumpy().copy() for p in params]
        opt(tuple(T(g * 4.0) for g in grads))
        for p, g, b, flag in zip(params, grads, before, opt.decay_flags):
            want = b - 0.1 * (g + (decay * b if flag else 0.0))
            np.testing.assert_allclose(p.asnumpy(), want, rtol=1e-6, atol=1e-7)
    assert int(opt.global_step.asnumpy()[0]) == 2
    assert not np.allclose(params[0].asnumpy(), init[0])
    # scale_grad / decay_weight, as MindSpore subclasses call them
    g = tuple(T(x) for x in ref.step_gradients(5, params))
    scaled = opt.scale_grad(g)
    np.testing.assert_allclose(scaled[0].asnumpy(), g[0].asnumpy() / 4.0, rtol=1e-12)
    fixed = nn.Momentum(params, 0.1, 0.9, weight_decay=0.5)
    decayed = fixed.decay_weight(g)
    np.testing.assert_allclose(decayed[0].asnumpy(),
                               g[0].asnumpy() + 0.5 * params[0].asnumpy(), rtol=1e-12)
    np.testing.assert_array_equal(decayed[1].asnumpy(), g[1].asnumpy())  # 'gamma': no decay
