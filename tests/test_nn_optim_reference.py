"""The optimizers against independent numpy implementations of their documented
formulas (``tests/_optim_reference.py``), three steps in float64, with the weight-decay
filter, loss scale and dynamic rates of the Optimizer base; LARS and Lamb (which MindSpore's
CPU build cannot run) only this way. One GRAPH_MODE train step per optimizer on jax (a
representative few by default, all with MSCORE_SLOW_TESTS=1)."""
import os

import _optim_reference as ref
import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test, use_backend

import mscore as ms
from mscore import nn

STEPS = ref.STEPS
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"


_numpy_context = numpy_context_each_test()


def T(a):
    return ms.Tensor(np.asarray(a))


def _params(dtype=np.float64):
    rng = np.random.default_rng(0)
    return [ms.Parameter(T(rng.standard_normal(s).astype(dtype)), name=n)
            for n, s in (("w", (3, 2)), ("gamma", (2,)), ("bias", (2,)))]


def _expected(params, update, lrs, decays, steps=STEPS, decay_in_grad=True):
    values = [p.asnumpy().astype(np.float64) for p in params]
    states = [None] * len(values)
    for s in range(steps):
        lr = _f32(lrs[min(s, len(lrs) - 1)])
        for i, g in enumerate(ref.step_gradients(s, params)):
            if decay_in_grad:
                g = g + decays[i] * values[i]
            values[i], states[i] = update(values[i], g, states[i], lr, s + 1)
    return values


def _f32(x):
    """A learning rate as the optimizer holds it (a float32 Parameter, as in MindSpore)."""
    return float(np.float32(x))


WD = 0.1
FILTERED = [WD, 0.0, WD]       # 'gamma' gets no weight decay without groups
CASES = {
    "adagrad": (lambda ps, lr: nn.Adagrad(ps, accum=0.2, learning_rate=lr, weight_decay=WD,
                                          loss_scale=4.0), ref.make_adagrad(0.2), 4.0),
    "adagrad_no_slots": (lambda ps, lr: nn.Adagrad(ps, learning_rate=lr, update_slots=False),
                         ref.make_adagrad(update_slots=False), 1.0),
    "adadelta": (lambda ps, lr: nn.Adadelta(ps, lr, rho=0.8, epsilon=1e-5, weight_decay=WD),
                 ref.make_adadelta(0.8, 1e-5), 1.0),
    "adamax": (lambda ps, lr: nn.AdaMax(ps, lr, 0.8, 0.95, 1e-6, weight_decay=WD,
                                        loss_scale=2.0), ref.make_adamax(0.8, 0.95, 1e-6), 2.0),
    "asgd": (lambda ps, lr: nn.ASGD(ps, lr, lambd=0.05, alpha=0.5, t0=1.0, weight_decay=WD),
             ref.make_asgd(0.05, 0.5, 1.0), 1.0),
    "proximal_adagrad": (lambda ps, lr: nn.ProximalAdagrad(ps, 0.3, lr, l1=0.05, l2=0.1,
                                                           weight_decay=WD),
                         ref.make_proximal_adagrad(0.3, 0.05, 0.1), 1.0),
    "rmsprop": (lambda ps, lr: nn.RMSProp(ps, lr, 0.8, 0.0, 1e-6, weight_decay=WD),
                ref.make_rmsprop(0.8, 0.0, 1e-6), 1.0),
    "rmsprop_centered": (lambda ps, lr: nn.RMSProp(ps, lr, 0.8, 0.5, 1e-6, centered=True,
                                                   loss_scale=8.0),
                         ref.make_rmsprop(0.8, 0.5, 1e-6, centered=True), 8.0),
    "rprop": (lambda ps, lr: nn.Rprop(ps, lr, etas=(0.4, 1.5), step_sizes=(1e-3, 0.3),
                                      weight_decay=WD), ref.make_rprop((0.4, 1.5), (1e-3, 0.3)),
              1.0),
    "lazyadam": (lambda ps, lr: nn.LazyAdam(ps, lr, use_nesterov=True, weight_decay=WD),
                 ref.make_adam(use_nesterov=True), 1.0),
    "adam_amsgrad": (lambda ps, lr: nn.Adam(ps, lr, use_amsgrad=True, weight_decay=WD),
                     ref.make_adam(use_amsgrad=True), 1.0),
}
NO_DECAY = ("adagrad_no_slots", "rmsprop_centered")


@pytest.mark.parametrize("dynamic", [False, True], ids=["fixed_lr", "lr_list"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_update_matches_numpy_formula(name, dynamic):
    make, update, scale = CASES[name]
    params = _params()
    lrs = [0.05, 0.02, 0.01] if dynamic else [0.05]
    decays = [0.0] * 3 if name in NO_DECAY else FILTERED
    want = _expected(params, update, lrs, decays)
    opt = make(params, lrs if dynamic else lrs[0])
    got = ref.run_steps(opt, params, scale=scale)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    assert int(opt.global_step.asnumpy()[0]) == STEPS


def test_ftrl_decays_every_parameter_and_keeps_l1_sign():
    params = _params()
    want = _expected(params, ref.make_ftrl(0.2, -0.5, l1=0.05, l2=0.1), [0.1], [WD] * 3)
    opt = nn.FTRL(params, 0.2, 0.1, l1=0.05, l2=0.1, weight_decay=WD)
    for g, w in zip(ref.run_steps(opt, params), want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    assert opt.decay_flags == (True, True, True)   # FTRL without groups decays 'gamma' too


@pytest.mark.parametrize("weight_decay", [0.0, WD])
def test_lamb_trust_ratio_update(weight_decay):
    params = _params()
    update = ref.make_lamb(0.8, 0.9, 1e-6, weight_decay)
    nodecay = ref.make_lamb(0.8, 0.9, 1e-6, 0.0)
    values = [p.asnumpy().copy() for p in params]
    states = [None] * 3
    for s in range(STEPS):
        for i, g in enumerate(ref.step_gradients(s, params)):
            fn = nodecay if params[i].name == "gamma" else update
            values[i], states[i] = fn(values[i], g, states[i], _f32(0.05), s + 1)
    opt = nn.Lamb(params, 0.05, 0.8, 0.9, 1e-6, weight_decay=weight_decay)
    for g, w in zip(ref.run_steps(opt, params), values):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    assert [m.name for m in opt.moments1] == ["lamb_m.w", "lamb_m.gamma", "lamb_m.bias"]


@pytest.mark.parametrize("use_clip", [False, True])
def test_lars_scales_the_wrapped_momentum(use_clip):
    params = _params()
    inner = nn.Momentum(params, 0.05, 0.9, weight_decay=WD, loss_scale=2.0)
    opt = nn.LARS(inner, epsilon=1e-5, coefficient=0.1, use_clip=use_clip)
    assert opt.lars_flag == (True, True, False)      # the default filter skips 'bias'
    values = [p.asnumpy().copy() for p in params]
    vel = [np.zeros_like(v) for v in values]
    for s in range(STEPS):
        for i, g in enumerate(ref.step_gradients(s, params)):
            if opt.lars_flag[i]:
                wd = WD if params[i].name != "gamma" else 0.0
                g = ref.lars_gradient(values[i], g, wd, 0.1, 1e-5, use_clip, _f32(0.05))
            vel[i] = float(np.float32(0.9)) * vel[i] + g     # Momentum keeps a float32 momentum
            values[i] = values[i] - _f32(0.05) * vel[i]
    for g, w in zip(ref.run_steps(opt, params, scale=2.0), values):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    assert int(opt.global_step.asnumpy()[0]) == STEPS


def test_group_rates_and_decay_reach_the_new_optimizers():
    w, gamma, bias = params = _params()
    groups = [{"params": [w], "lr": 0.02, "weight_decay": 0.3}, {"params": [gamma, bias]}]
    opt = nn.RMSProp(groups, 0.05, weight_decay=0.0)
    update = ref.make_rmsprop()
    values = [p.asnumpy().copy() for p in params]
    states = [None] * 3
    for s in range(STEPS):
        for i, g in enumerate(ref.step_gradients(s, params)):
            lr, wd = (_f32(0.02), 0.3) if i == 0 else (_f32(0.05), 0.0)
            values[i], states[i] = update(values[i], g + wd * values[i], states[i], lr, s + 1)
    for g, v in zip(ref.run_steps(opt, params), values):
        np.testing.assert_allclose(g, v, rtol=1e-9, atol=1e-12)


# -- GRAPH_MODE: the whole train step as one compiled program ---------------------------------
def _graph_step_matches_pynative(backend, make_opt):
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
    y = np.cos(np.arange(16, dtype=np.float32)).reshape(8, 2)

    def losses(mode):
        ms.set_context(mode=mode)
        net = nn.Dense(3, 2, weight_init=T(np.sin(np.arange(6, dtype=np.float32)).reshape(2, 3)),
                       bias_init="zeros")
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.HuberLoss()),
                                   make_opt(net.trainable_params()))
        out = [float(step(T(x), T(y)).asnumpy()) for _ in range(3)]
        return out, net.weight.asnumpy()

    use_backend("numpy")
    want, want_w = losses(ms.PYNATIVE_MODE)
    use_backend(backend)
    try:
        got, got_w = losses(ms.GRAPH_MODE)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got_w, want_w, rtol=2e-5, atol=1e-6)


GRAPH_OPTIMIZERS = {
    "adagrad": lambda ps: nn.Adagrad(ps, learning_rate=0.1),
    "rmsprop_centered": lambda ps: nn.RMSProp(ps, 0.05, momentum=0.5, centered=True),
    "rprop": lambda ps: nn.Rprop(ps, 0.05),
    "asgd": lambda ps: nn.ASGD(ps, [0.1, 0.05, 0.02], t0=1.0),
    "adadelta": lambda ps: nn.Adadelta(ps, 0.5),
    "adamax": lambda ps: nn.AdaMax(ps, 0.05),
    "ftrl": lambda ps: nn.FTRL(ps, learning_rate=0.1, l1=0.01),
    "lamb": lambda ps: nn.Lamb(ps, 0.05, weight_decay=0.01),
    "lars": lambda ps: nn.LARS(nn.Momentum(ps, 0.1, 0.9, weight_decay=0.01), coefficient=0.1),
    "lazyadam": lambda ps: nn.LazyAdam(ps, 0.05),
    "proximal_adagrad": lambda ps: nn.ProximalAdagrad(ps, learning_rate=0.1, l1=0.01),
    "adam_amsgrad": lambda ps: nn.Adam(ps, 0.05, use_amsgrad=True),
}
GRAPH_DEFAULT = ("lamb",)


GRAPH_BACKENDS = available_backends(exclude=("numpy",))


@pytest.mark.parametrize("name", sorted(GRAPH_OPTIMIZERS) if SLOW else GRAPH_DEFAULT)
@pytest.mark.parametrize("backend", GRAPH_BACKENDS)
def test_graph_mode_train_step(backend, name):
    spec = use_backend(backend)
    if "compile" not in spec.capabilities:
        pytest.skip(f"backend {backend!r} declares no compiled GRAPH_MODE step")
    _graph_step_matches_pynative(backend, GRAPH_OPTIMIZERS[name])


class _ManyLosses(nn.Cell):
    """A dense layer trained on the sum of several of the new losses (one compiled step;
    the CTC recursion, which unrolls over time, only with MSCORE_SLOW_TESTS=1)."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 4, weight_init=T(np.cos(np.arange(12, dtype=np.float32))
                                                  .reshape(4, 3)), bias_init="zeros")
        self.focal = nn.FocalLoss(gamma=1.5)
        self.margin = nn.MultiMarginLoss(p=2, margin=0.5)
        self.soft = nn.MultiLabelSoftMarginLoss()
        self.ctc = nn.CTCLoss()

    def construct(self, x, index, onehot):
        y = self.dense(x)                                     # (8, 4)
        loss = self.focal(y, ms.ops.expand_dims(index, 1)) + self.margin(y, index) + \
            self.soft(y, onehot)
        if not SLOW:
            return loss
        frames = ms.ops.log_softmax(ms.ops.reshape(y, (4, 2, 4)), 2)
        targets = ms.ops.cast(ms.ops.reshape(index[:4], (2, 2)) % 3 + 1, ms.int32)
        return loss + self.ctc(frames, targets, T(np.array([4, 3], np.int32)),
                               T(np.array([2, 1], np.int32)))


def test_graph_mode_step_with_many_losses():
    backends = [b for b in GRAPH_BACKENDS if "compile" in use_backend(b).capabilities]
    if not backends:
        pytest.skip("no backend here compiles a GRAPH_MODE step")
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
    index = np.array([0, 1, 2, 3, 1, 2, 0, 3], np.int64)
    onehot = np.eye(4, dtype=np.float32)[index]

    def losses(backend, mode):
        use_backend(backend)
        ms.set_context(mode=mode)
        net = _ManyLosses()
        step = nn.TrainOneStepCell(net, nn.RMSProp(net.trainable_params(), 0.05, momentum=0.5))
        return [float(step(T(x), T(index), T(onehot)).asnumpy()) for _ in range(3)]

    want = losses("numpy", ms.PYNATIVE_MODE)
    try:
        for backend in backends:
            np.testing.assert_allclose(losses(backend, ms.GRAPH_MODE), want, rtol=2e-5)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
