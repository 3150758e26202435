"""Record MindSpore 2.10's initializer behaviour into ``initializer_oracle.json``.

Run with the real MindSpore (never imported by mscore or its tests):

    /tmp/ms/bin/python tests/data/make_initializer_fixtures.py

Like ``make_metrics_fixtures.py``: each case is a snippet that sets ``result``, run with ``I``
(``mindspore.common.initializer``), ``ms``, ``np`` and ``values(t)`` (a Tensor's numbers as
numpy) bound; the JSON keeps the snippet with its value or exception, and
``tests/test_initializer_oracle.py`` runs it with mscore. Random initializers are recorded as
summary statistics of a large draw (mean, std, min, max), compared with a tolerance.
``differs`` says why mscore deliberately does something else (see docs/differences.md).
"""
import inspect
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "initializer_oracle.json")
sys.path.insert(0, HERE)
from make_metrics_fixtures import encode  # noqa: E402

PRELUDE = """
def values(t):
    return t.init_data().asnumpy()

def stats(init, shape=(200, 300)):
    v = values(I.initializer(init, shape, ms.float32)).astype(np.float64)
    return [v.mean(), v.std(), v.min(), v.max()]
"""

CASES = {}


def case(name, code, differs=None):
    CASES[name] = {"code": code.strip("\n"), "differs": differs}


# -- names, signatures, aliases ---------------------------------------------------------------
case("all_names", "result = sorted(I.__all__)")
case("string_aliases", """
ok = []
for name in ['zeros', 'zero', 'ones', 'one', 'normal', 'uniform', 'truncatednormal',
             'TruncatedNormal', 'xavier_uniform', 'XavierUniform', 'xavier_normal',
             'he_uniform', 'HeUniform', 'he_normal', 'HeNormal', 'identity', 'Identity',
             'orthogonal', 'variancescaling', 'VarianceScaling']:
    ok.append([name, list(values(I.initializer(name, (4, 3))).shape)])
result = ok
""")
for name in ("constant", "glorot", "kaiming_uniform", "xavieruniform_", "he-uniform"):
    case(f"string_alias_unknown_{name}", f"I.initializer('{name}', (2, 2))")
case("string_sparse_needs_sparsity", "I.initializer('sparse', (2, 2))")
case("string_dirac", "result = values(I.initializer('dirac', (2, 2, 3)))")

# -- deterministic initializers ---------------------------------------------------------------
case("zero", "result = values(I.initializer(I.Zero(), (2, 3)))")
case("one_int32", "result = values(I.initializer(I.One(), (3,), ms.int32))")
case("ones_float16", "t = I.initializer('ones', [2, 2], ms.float16); result = [values(t), t.dtype == ms.float16]")
case("constant", "result = values(I.initializer(I.Constant(2.5), (2, 2)))")
case("number_is_constant", "result = values(I.initializer(-3, 4))")
case("bool_is_constant", "result = values(I.initializer(True, (2,)))")
case("constant_str", "values(I.initializer(I.Constant('a'), (2,)))")
case("identity_wide", "result = values(I.initializer(I.Identity(), (2, 4)))")
case("identity_tall", "result = values(I.initializer('identity', (4, 3)))")
case("identity_int", "result = values(I.initializer('Identity', (2, 3), ms.int32))")
case("identity_3d", "values(I.initializer(I.Identity(), (2, 3, 4)))")
case("identity_1d", "values(I.initializer(I.Identity(), (3,)))")
for shape, groups in (((4, 3, 3), 1), ((4, 3, 3), 2), ((6, 2, 3, 3), 3), ((2, 2, 3, 2, 5), 1),
                      ((2, 4, 3, 3), 1), ((4, 1, 2, 2), 2)):
    label = "x".join(map(str, shape))
    case(f"dirac_{label}_groups{groups}",
         f"result = values(I.initializer(I.Dirac({groups}), {shape}))")
case("dirac_2d", "values(I.initializer(I.Dirac(), (2, 2)))")
case("dirac_6d", "values(I.initializer(I.Dirac(), (2, 2, 1, 1, 1, 1)))")
case("dirac_groups_not_dividing", "values(I.initializer(I.Dirac(2), (3, 2, 3)))")
case("dirac_groups_zero", "values(I.initializer(I.Dirac(0), (2, 2, 3)))",
     differs="MindSpore divides by zero (ZeroDivisionError); mscore checks groups >= 1 "
             "(ValueError) when the Dirac is made")

# -- initializer() argument checks ------------------------------------------------------------
case("tensor_returned_as_is", """
t = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
r = I.initializer(t, (2, 3))
result = [r is t, r.asnumpy()]
""")
case("tensor_shape_mismatch", "I.initializer(ms.Tensor(np.ones(3, np.float32)), (4,))")
case("tensor_without_shape", "I.initializer(ms.Tensor(np.ones(3, np.float32)))",
     differs="MindSpore compares the Tensor's shape with [None] and raises ValueError; mscore "
             "returns the Tensor")
case("numpy_init", "I.initializer(np.ones(3), (3,))")
case("list_init", "I.initializer([1.0, 2.0], (2,))")
case("none_init", "I.initializer(None, (2,))")
case("class_init", "I.initializer(I.Zero, (2,))")
case("shape_zero", "I.initializer('zeros', (2, 0))")
case("shape_negative", "I.initializer('zeros', (2, -1))")
case("shape_float", "I.initializer('zeros', 2.5)")
case("shape_list", "result = list(I.initializer(2, [2, 3]).shape)")
case("shape_int", "result = list(I.initializer('ones', 5).shape)")
case("shape_none", "I.initializer('zeros', None)",
     differs="MindSpore fails with AttributeError ('Zero' object has no attribute 'shape'); "
             "mscore says the shape is missing (ValueError)")
case("shape_missing_initializer_object", "I.initializer(I.Normal())",
     differs="MindSpore fails with AttributeError; mscore raises ValueError")
case("base_initializer_not_overridden", "values(I.initializer(I.Initializer(), (2,)))")
case("custom_initializer_subclass", """
class Arange(I.Initializer):
    def _initialize(self, arr):
        arr[:] = np.arange(arr.size).reshape(arr.shape) * 0.5
result = values(I.initializer(Arange(), (2, 3)))
""")
case("initializer_call_fills_array", """
arr = np.zeros((2, 2), np.float32)
I.One()(arr)
I.Constant(7)(arr[:1])
result = arr
""")

# -- per-initializer argument checks ----------------------------------------------------------
case("normal_negative_sigma", "values(I.initializer(I.Normal(sigma=-1.0), (2, 2)))")
case("truncated_normal_negative_sigma", "values(I.initializer(I.TruncatedNormal(sigma=-1.0), (2, 2)))")
case("xavier_uniform_1d", "values(I.initializer(I.XavierUniform(), (3,)))")
case("xavier_normal_1d", "values(I.initializer('xavier_normal', (3,)))")
case("he_uniform_bad_mode", "values(I.initializer(I.HeUniform(mode='fan'), (2, 2)))")
case("he_normal_bad_nonlinearity", "values(I.initializer(I.HeNormal(nonlinearity='gelu'), (2, 2)))")
case("he_uniform_slope_str", "values(I.initializer(I.HeUniform(negative_slope='a'), (2, 2)))")
case("he_uniform_1d", "values(I.initializer(I.HeUniform(), (3,)))")
case("he_uniform_mode_upper", "result = list(values(I.initializer(I.HeUniform(mode='FAN_OUT'), (2, 2))).shape)")
case("orthogonal_1d", "values(I.initializer(I.Orthogonal(), (3,)))")
case("sparse_3d", "values(I.initializer(I.Sparse(0.5), (2, 2, 2)))")
case("variance_scaling_scale_zero", "I.VarianceScaling(scale=0.0)")
case("variance_scaling_bad_mode", "I.VarianceScaling(mode='fan_sum')")
case("variance_scaling_bad_distribution", "I.VarianceScaling(distribution='normal')")
case("variance_scaling_1d", "values(I.initializer(I.VarianceScaling(), (3,)))")
case("sparse_above_one", "result = values(I.initializer(I.Sparse(1.5), (3, 2)))",
     differs="MindSpore zeroes everything for a sparsity above 1 and keeps rows - 1 zeros for "
             "a negative one; mscore requires sparsity in [0, 1] (ValueError)")

# -- structure of random initializers --------------------------------------------------------
case("sparse_zero_count", """
v = values(I.initializer(I.Sparse(0.3, sigma=1.0), (10, 400)))
result = np.bincount((v == 0).sum(axis=0))
""")
case("orthogonal_rows", """
v = values(I.initializer(I.Orthogonal(gain=1.5), (5, 3, 2))).reshape(5, 6).astype(np.float64)
result = np.round(v @ v.T, 5)
""")
case("orthogonal_columns", """
v = values(I.initializer(I.Orthogonal(), (6, 4))).astype(np.float64)
result = np.round(v.T @ v, 5)
""")
case("seeded_repeatable", """
ms.set_seed(3)
a = values(I.initializer('normal', (50,)))
ms.set_seed(3)
b = values(I.initializer('normal', (50,)))
result = bool(np.array_equal(a, b))
""")

# -- distributions (summary statistics of 60000 draws) --------------------------------------
STATS = {
    "normal_default": "I.Normal()",
    "normal_mean_sigma": "I.Normal(sigma=0.5, mean=2.0)",
    "uniform_default": "I.Uniform()",
    "uniform_scale": "I.Uniform(scale=3.0)",
    "truncated_normal_default": "I.TruncatedNormal()",
    "truncated_normal_wide": "I.TruncatedNormal(sigma=1.0)",
    "truncated_normal_bounds": "I.TruncatedNormal(sigma=1.0, a=-0.5, b=0.5)",
    "truncated_normal_shifted": "I.TruncatedNormal(sigma=1.0, mean=3.0, a=2.5, b=3.5)",
    "truncated_normal_tail": "I.TruncatedNormal(sigma=1.0, mean=3.0, a=-0.5, b=0.5)",
    "xavier_uniform": "I.XavierUniform()",
    "xavier_uniform_gain": "I.XavierUniform(gain=2)",
    "xavier_normal": "I.XavierNormal(gain=0.5)",
    "he_uniform_default": "I.HeUniform()",
    "he_uniform_relu_fan_out": "I.HeUniform(mode='fan_out', nonlinearity='relu')",
    "he_uniform_leaky": "I.HeUniform(negative_slope=0.2)",
    "he_uniform_tanh": "I.HeUniform(nonlinearity='tanh')",
    "he_normal_default": "I.HeNormal()",
    "he_normal_sigmoid": "I.HeNormal(nonlinearity='sigmoid', mode='fan_out')",
    "orthogonal": "I.Orthogonal(gain=2.0)",
    "variance_scaling_untruncated": "I.VarianceScaling(scale=2.0, distribution='untruncated_normal')",
    "variance_scaling_uniform_fan_out": "I.VarianceScaling(mode='fan_out', distribution='uniform')",
    "variance_scaling_uniform_fan_avg": "I.VarianceScaling(scale=3.0, mode='fan_avg', distribution='uniform')",
    "sparse": "I.Sparse(0.5, sigma=0.2)",
}
for name, expr in STATS.items():
    case(f"stats_{name}", f"result = stats({expr})")
case("stats_variance_scaling_truncated_normal", "result = stats(I.VarianceScaling())",
     differs="MindSpore 2.10 compares the distribution with 'truncated_norm', so the default "
             "'truncated_normal' draws from the uniform branch; mscore draws the documented "
             "truncated normal (same variance)")
case("stats_4d_fans", "result = stats(I.HeNormal(mode='fan_out'), (16, 8, 3, 3))")


def signatures():
    import mindspore.common.initializer as I
    out = {}
    for name in sorted(I.__all__):
        try:
            out[name] = str(inspect.signature(getattr(I, name)))
        except (TypeError, ValueError):
            out[name] = None
    return out


def main():
    import mindspore as ms
    import mindspore.common.initializer as I
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(0)
    out = {"generator": "tests/data/make_initializer_fixtures.py", "mindspore": ms.__version__,
           "numpy": np.__version__, "prelude": PRELUDE.strip("\n"),
           "aliases": sorted(I._INITIALIZER_ALIAS), "signatures": signatures(), "cases": {}}
    for name, spec in CASES.items():
        ns = {"I": I, "ms": ms, "np": np}
        exec(PRELUDE, ns)
        entry = dict(spec)
        try:
            exec(spec["code"], ns)
            entry["result"] = encode(ns.get("result"))
        except Exception as exc:
            entry["error"] = {"type": type(exc).__name__, "message": str(exc)[:300]}
        out["cases"][name] = entry
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
