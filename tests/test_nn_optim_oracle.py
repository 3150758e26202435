"""Optimizers, the Optimizer base, wrapper cells and learning-rate lists against MindSpore
2.10's recorded behaviour, on every backend.

``tests/data/optim_oracle.json`` was made by ``tests/data/make_optim_oracle.py`` with the real
MindSpore (``/tmp/ms/bin/python tests/data/make_optim_oracle.py``): three updates of three
parameters per case (and state names, argument errors, wrapper cells, rate lists); here the
same snippet runs with mscore's names bound. Cases marked ``differs`` are checked against
numpy below. numpy runs every case; torch every fourth, jax a few (every case with
MSCORE_SLOW_TESTS=1).
"""
import os

import _optim_reference as ref
import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test, use_backend
from _oracle import check_case, load, run

import mscore as ms
from mscore import nn, ops

ORACLE = load("optim_oracle.json")
CASES = ORACLE["cases"]
NAMES = {"ms": ms, "nn": nn, "ops": ops, "T": ms.Tensor, "np": np}
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
SAME = sorted(name for name, spec in CASES.items() if not spec["differs"])
JAX_SUBSET = ["adagrad_dynamic_lr", "base_get_lr_does_not_advance"]


_numpy_context = numpy_context_each_test()


@pytest.mark.parametrize("name", SAME)
def test_same_as_mindspore(name):
    check_case(ORACLE, name, NAMES)


@pytest.mark.parametrize("backend", available_backends(exclude=("numpy",)))
def test_same_as_mindspore_on_other_backends(backend):
    use_backend(backend)
    names = SAME if SLOW else (JAX_SUBSET if backend == "jax" else SAME[::4])
    for name in names:
        check_case(ORACLE, name, NAMES)


# -- what MindSpore's CPU build cannot run, or where mscore follows the documentation ---------
SHAPES = [(3, 2), (2,), (2,)]


def _arr(shape, seed):
    n = int(np.prod(shape))
    return np.sin(np.arange(n) * 1.7 + seed).reshape(shape).astype(np.float32)


def _prelude_run(update, steps=3, decays=(0.0, 0.0, 0.0), lr=0.1, whole=None):
    """The prelude's ``train``: parameters and gradients from its formulas, in float64."""
    values = [_arr(s, i + 1).astype(np.float64) for i, s in enumerate(SHAPES)]
    states = [None] * 3
    for s in range(steps):
        for i, shape in enumerate(SHAPES):
            g = _arr(shape, 10 + 3 * s + i).astype(np.float64)
            fn = update if whole is None else whole(i)
            values[i], states[i] = fn(values[i], g + decays[i] * values[i], states[i],
                                      float(np.float32(lr)), s + 1)
    return values


def _check(name, want):
    got = run(ORACLE, CASES[name]["code"], NAMES)["result"]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6, err_msg=name)
    assert float(got[-1][0]) == 3.0       # global_step


def test_ftrl_l1_follows_the_documented_formula():
    _check("ftrl_l1", _prelude_run(ref.make_ftrl(0.1, -0.5, l1=0.05, l2=0.01)))


def test_adagrad_update_slots_false_keeps_accum():
    _check("adagrad_no_update_slots", _prelude_run(ref.make_adagrad(0.5, update_slots=False),
                                                   lr=0.001))


def test_lamb_without_a_mindspore_cpu_kernel():
    decayed, plain = ref.make_lamb(weight_decay=0.1), ref.make_lamb()
    _check("lamb_update", _prelude_run(None, lr=0.01,
                                       whole=lambda i: plain if i == 1 else decayed))


def test_lars_without_a_mindspore_cpu_kernel():
    # LARS(Momentum(ps, 0.1, 0.9, weight_decay=0.1), coefficient=0.1) over w, gamma, b: every
    # name passes the default filter; 'gamma' gets no weight decay.
    mom = ref.make_momentum(float(np.float32(0.9)))

    def for_parameter(i):
        wd = 0.0 if i == 1 else 0.1

        def update(p, g, v, lr, t):
            return mom(p, ref.lars_gradient(p, g, wd, 0.1, 1e-5), v, lr, t)
        return update
    _check("lars_update", _prelude_run(None, lr=0.1, whole=for_parameter))


def test_lars_needs_an_optimizer():
    with pytest.raises(TypeError, match="optimizer"):
        run(ORACLE, CASES["lars_not_optimizer"]["code"], NAMES)


def test_every_differing_case_has_its_own_test():
    covered = {"ftrl_l1", "adagrad_no_update_slots", "lamb_update", "lars_update",
               "lars_not_optimizer"}
    assert {n for n, spec in CASES.items() if spec["differs"]} == covered


# -- import paths MindSpore code uses --------------------------------------------------------
def test_submodule_paths():
    import importlib
    for module, name in [("rmsprop", "RMSProp"), ("ada_grad", "Adagrad"), ("adadelta", "Adadelta"),
                         ("adamax", "AdaMax"), ("asgd", "ASGD"), ("ftrl", "FTRL"), ("lamb", "Lamb"),
                         ("lars", "LARS"), ("lazyadam", "LazyAdam"), ("rprop", "Rprop"),
                         ("proximal_ada_grad", "ProximalAdagrad"), ("sgd", "SGD"),
                         ("momentum", "Momentum"), ("adam", "Adam"), ("adam", "AdamOffload"),
                         ("optimizer", "Optimizer")]:
        mod = importlib.import_module(f"mscore.nn.optim.{module}")
        assert getattr(mod, name) is getattr(nn, name), module
    from mscore.nn.wrap.cell_wrapper import ForwardValueAndGrad, WithGradCell
    assert ForwardValueAndGrad is nn.ForwardValueAndGrad and WithGradCell is nn.WithGradCell
    from mscore.nn.grad import Vjp
    assert Vjp is nn.Vjp
    from mscore.nn.dynamic_lr import natural_exp_decay_lr
    assert natural_exp_decay_lr is nn.natural_exp_decay_lr
    from mscore.nn.grad import Jvp
    assert Jvp is nn.Jvp


# -- nn.Jvp against central differences, on every backend --------------------------------------
@pytest.mark.parametrize("backend", available_backends())
def test_jvp_matches_central_differences(backend):
    use_backend(backend)
    rng = np.random.default_rng(0)
    x, y, vx, vy = (rng.standard_normal((2, 3)) for _ in range(4))

    def f(a, b):
        return ops.tanh(a) * b + a * a, (a * b).sum()

    out, tangent = nn.Jvp(f)(ms.Tensor(x, ms.float64), ms.Tensor(y, ms.float64),
                             (ms.Tensor(vx, ms.float64), ms.Tensor(vy, ms.float64)))

    def f_np(a, b):
        return np.tanh(a) * b + a * a, (a * b).sum()

    eps = 1e-6
    hi, lo = f_np(x + eps * vx, y + eps * vy), f_np(x - eps * vx, y - eps * vy)
    for got_out, got_t, want_out, h, low in zip(out, tangent, f_np(x, y), hi, lo):
        np.testing.assert_allclose(got_out.asnumpy(), want_out, rtol=1e-10)
        np.testing.assert_allclose(got_t.asnumpy(), (np.asarray(h) - np.asarray(low)) / (2 * eps),
                                   rtol=1e-6, atol=1e-8)


def test_jvp_checks_the_tangents():
    x = ms.Tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="shape"):
        nn.Jvp(lambda a: a * a)(x, ms.Tensor(np.ones((3, 2), np.float32)))
    with pytest.raises(TypeError, match="'v'"):
        nn.Jvp(lambda a, b: a * b)(x, x, (x,))
