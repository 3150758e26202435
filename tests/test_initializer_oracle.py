"""``mscore.common.initializer`` against MindSpore 2.10's recorded behaviour and against the
distributions' own formulas.

``tests/data/initializer_oracle.json`` was made by ``tests/data/make_initializer_fixtures.py``
with the real MindSpore (``/tmp/ms/bin/python tests/data/make_initializer_fixtures.py``).
Random initializers are compared by summary statistics: mscore's and MindSpore's draws must
both agree with the mean, standard deviation and bounds computed here from the definitions
(tolerances from the sample size), on every installed backend.
"""
import inspect
import math

import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test, use_backend
from _oracle import check_case, load, run

import mscore as ms
from mscore.common import initializer as I

ORACLE = load("initializer_oracle.json")
CASES = ORACLE["cases"]
NAMES = {"I": I, "ms": ms, "np": np}


_numpy_context = numpy_context_each_test()


SAME = sorted(n for n, spec in CASES.items()
              if not spec["differs"] and not n.startswith("stats_"))


@pytest.mark.parametrize("name", SAME)
def test_same_as_mindspore(name):
    check_case(ORACLE, name, NAMES)


def test_names_aliases_and_signatures_as_mindspore():
    assert sorted(I.__all__) == sorted(ORACLE["signatures"])
    assert sorted(I._ALIASES) == ORACLE["aliases"]
    for name, want in ORACLE["signatures"].items():
        got = str(inspect.signature(getattr(I, name)))
        if name == "initializer":  # the dtype default prints differently
            got, want = got.split("dtype=")[0], want.split("dtype=")[0]
        assert got == want, name


# -- distributions ----------------------------------------------------------------------------
def _truncnorm(mean, sigma, low, high):
    """Mean and std of N(mean, sigma^2) truncated to [low, high] (scipy's formulas)."""
    from scipy.stats import truncnorm
    dist = truncnorm((low - mean) / sigma, (high - mean) / sigma, loc=mean, scale=sigma)
    return float(dist.mean()), float(dist.std())


def _uniform(bound):
    return 0.0, bound / math.sqrt(3), -bound, bound


FAN_IN, FAN_OUT = 300, 200   # of the (200, 300) draws
_VS_STD = math.sqrt(1.0 / FAN_IN)

# name -> (mean, std, lower bound or None, upper bound or None), from the definitions
THEORY = {
    "normal_default": (0.0, 0.01, None, None),
    "normal_mean_sigma": (2.0, 0.5, None, None),
    "uniform_default": _uniform(0.07),
    "uniform_scale": _uniform(3.0),
    # the default bounds [-2, 2] are 200 sigma away: no visible truncation
    "truncated_normal_default": (0.0, 0.01, None, None),
    "truncated_normal_wide": (*_truncnorm(0.0, 1.0, -2.0, 2.0), -2.0, 2.0),
    "truncated_normal_bounds": (*_truncnorm(0.0, 1.0, -0.5, 0.5), -0.5, 0.5),
    "truncated_normal_shifted": (*_truncnorm(3.0, 1.0, 2.5, 3.5), 2.5, 3.5),
    "truncated_normal_tail": (*_truncnorm(3.0, 1.0, -0.5, 0.5), -0.5, 0.5),
    "xavier_uniform": _uniform(math.sqrt(6.0 / (FAN_IN + FAN_OUT))),
    "xavier_uniform_gain": _uniform(2 * math.sqrt(6.0 / (FAN_IN + FAN_OUT))),
    "xavier_normal": (0.0, 0.5 * math.sqrt(2.0 / (FAN_IN + FAN_OUT)), None, None),
    "he_uniform_default": _uniform(math.sqrt(3.0) * math.sqrt(2.0) / math.sqrt(FAN_IN)),
    "he_uniform_relu_fan_out": _uniform(math.sqrt(3.0) * math.sqrt(2.0) / math.sqrt(FAN_OUT)),
    "he_uniform_leaky": _uniform(math.sqrt(3.0) * math.sqrt(2.0 / 1.04) / math.sqrt(FAN_IN)),
    "he_uniform_tanh": _uniform(math.sqrt(3.0) * (5.0 / 3) / math.sqrt(FAN_IN)),
    "he_normal_default": (0.0, math.sqrt(2.0) / math.sqrt(FAN_IN), None, None),
    "he_normal_sigmoid": (0.0, 1.0 / math.sqrt(FAN_OUT), None, None),
    # rows orthonormal (200 < 300): every row has norm gain, so E[x^2] = gain^2 / 300
    "orthogonal": (0.0, 2.0 / math.sqrt(FAN_IN), None, None),
    "variance_scaling_untruncated": (0.0, math.sqrt(2.0 / FAN_IN), None, None),
    "variance_scaling_uniform_fan_out": _uniform(math.sqrt(3.0 / FAN_OUT)),
    "variance_scaling_uniform_fan_avg": _uniform(math.sqrt(3.0 * 3.0 / 250)),
    "variance_scaling_truncated_normal": (0.0, _VS_STD, -2 * _VS_STD / 0.8796256610342398,
                                          2 * _VS_STD / 0.8796256610342398),
    # half the entries are 0, the rest N(0, 0.2^2)
    "sparse": (0.0, 0.2 * math.sqrt(0.5), None, None),
    # HeNormal fan_out of (16, 8, 3, 3): 16 * 9
    "4d_fans": (0.0, math.sqrt(2.0) / 12.0, None, None),
}


def _assert_stats(name, stats, size, source):
    mean, std, low, high = THEORY[name]
    got_mean, got_std, got_min, got_max = stats
    assert abs(got_mean - mean) <= 5 * std / math.sqrt(size) + 1e-9, (source, name, "mean")
    assert abs(got_std / std - 1) <= 5 / math.sqrt(2 * size), (source, name, "std")
    if low is not None:  # bounded: inside the bounds and reaching close to them
        slack = 1e-6 * max(1.0, abs(low), abs(high))
        assert low - slack <= got_min <= low + 0.01 * (high - low), (source, name, "min")
        assert high - 0.01 * (high - low) <= got_max <= high + slack, (source, name, "max")


def _size(name):
    return 16 * 8 * 9 if name == "4d_fans" else 200 * 300


def _mscore_stats(name):
    return run(ORACLE, CASES[f"stats_{name}"]["code"], NAMES)["result"]


@pytest.mark.parametrize("name", sorted(THEORY))
def test_mindspore_draws_follow_the_formulas(name):
    """The formulas above are what MindSpore does (except where mscore differs on purpose)."""
    spec = CASES[f"stats_{name}"]
    if spec["differs"]:
        pytest.skip(f"mscore differs on purpose: {spec['differs']}")
    stats = [v["float"] for v in spec["result"]["list"]]
    _assert_stats(name, stats, _size(name), "MindSpore")


@pytest.mark.parametrize("backend", available_backends())
def test_mscore_draws_follow_the_formulas_on_every_backend(backend):
    use_backend(backend)
    ms.set_seed(11)
    for name in sorted(THEORY):
        _assert_stats(name, _mscore_stats(name), _size(name), backend)


@pytest.mark.parametrize("backend", available_backends(exclude=("numpy",)))
def test_same_seed_same_values_on_every_backend(backend):
    inits = [I.Normal(0.3), I.TruncatedNormal(1.0, a=-0.5, b=0.5), I.HeUniform(), I.Sparse(0.4),
             I.Orthogonal(), I.VarianceScaling(), I.Dirac(2), "identity", 0.5]
    shapes = [(6, 5), (40,), (4, 3, 2, 2), (7, 3), (3, 8), (5, 4), (4, 2, 3), (3, 5), (2, 2)]
    expected = []
    for init, shape in zip(inits, shapes):
        ms.set_seed(5)
        expected.append(I.initializer(init, shape, ms.float32).asnumpy())
    use_backend(backend)
    for init, shape, want in zip(inits, shapes, expected):
        ms.set_seed(5)
        tensor = I.initializer(init, shape, ms.float32)
        assert type(tensor._data).__module__.split(".")[0] != "numpy", backend
        np.testing.assert_array_equal(tensor.asnumpy(), want, err_msg=f"{backend} {init}")
        param = ms.Parameter(tensor, name="w")
        assert param.shape == shape


@pytest.mark.parametrize("backend", available_backends())
def test_structure_of_sparse_orthogonal_dirac_identity(backend):
    use_backend(backend)
    ms.set_seed(2)
    sparse = I.initializer(I.Sparse(0.3, sigma=1.0), (10, 400)).asnumpy()
    assert ((sparse == 0).sum(axis=0) == 3).all()          # ceil(0.3 * 10) zeros per column
    assert sparse[sparse != 0].std() == pytest.approx(1.0, rel=0.05)
    for shape, gain in (((5, 3, 2), 1.5), ((6, 4), 1.0), ((4, 4), 0.5)):
        q = I.initializer(I.Orthogonal(gain), shape).asnumpy().astype(np.float64)
        q = q.reshape(shape[0], -1)
        gram = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
        np.testing.assert_allclose(gram, gain ** 2 * np.eye(len(gram)), atol=1e-5)
    dirac = I.initializer(I.Dirac(2), (4, 3, 3, 3)).asnumpy()
    assert np.argwhere(dirac).tolist() == [[0, 0, 1, 1], [1, 1, 1, 1], [2, 0, 1, 1],
                                           [3, 1, 1, 1]]
    np.testing.assert_array_equal(I.initializer("identity", (3, 5), ms.int32).asnumpy(),
                                  np.eye(3, 5, dtype=np.int32))


# -- where mscore deliberately differs ---------------------------------------------------------
def _differs_dirac_groups_zero():
    with pytest.raises(ValueError, match="groups"):
        I.Dirac(0)
    with pytest.raises(TypeError, match="groups"):
        I.Dirac(2.0)


def _differs_tensor_without_shape():
    t = ms.Tensor(np.ones(3, np.float32))
    assert I.initializer(t) is t


def _differs_shape_missing():
    for init in ("zeros", I.Normal()):
        with pytest.raises(ValueError, match="shape"):
            I.initializer(init)


def _differs_sparse_range():
    for bad in (1.5, -0.5):
        with pytest.raises(ValueError, match="sparsity"):
            I.Sparse(bad)
    with pytest.raises(TypeError, match="sparsity"):
        I.Sparse("0.5")
    ms.set_seed(1)
    assert (I.initializer(I.Sparse(1.0), (3, 2)).asnumpy() == 0).all()


def _differs_variance_scaling_truncated():
    ms.set_seed(4)
    _assert_stats("variance_scaling_truncated_normal",
                  _mscore_stats("variance_scaling_truncated_normal"), 200 * 300, "mscore")


DIFFERS_CHECKS = {
    "dirac_groups_zero": _differs_dirac_groups_zero,
    "tensor_without_shape": _differs_tensor_without_shape,
    "shape_none": _differs_shape_missing,
    "shape_missing_initializer_object": _differs_shape_missing,
    "sparse_above_one": _differs_sparse_range,
    "stats_variance_scaling_truncated_normal": _differs_variance_scaling_truncated,
}


@pytest.mark.parametrize("name", sorted(n for n, spec in CASES.items() if spec["differs"]))
def test_deliberate_differences(name):
    assert name in DIFFERS_CHECKS, f"{name}: a 'differs' case without its own check"
    DIFFERS_CHECKS[name]()


def test_seed_property_and_own_generator():
    init = I.Normal(1.0)
    assert init.seed == ((ms.get_seed() or 0), 0)
    init.seed = 7
    assert init.seed == (8, 0)
    a = I.initializer(init, (20,)).asnumpy()
    b = I.initializer(init, (20,)).asnumpy()
    np.testing.assert_array_equal(a, b)       # its own generator, seeded each time
    with pytest.raises(TypeError, match="seed"):
        init.seed = 1.5


def test_truncated_normal_far_tail_stays_inside_bounds():
    ms.set_seed(3)
    v = I.initializer(I.TruncatedNormal(1.0, mean=0.0, a=8.0, b=9.0), (5000,)).asnumpy()
    assert v.min() >= 8.0 and v.max() <= 9.0
    mean, std = _truncnorm(0.0, 1.0, 8.0, 9.0)
    assert v.astype(np.float64).mean() == pytest.approx(mean, abs=5 * std / math.sqrt(5000))
