"""Layer norm and batch norm on float16 inputs follow MindSpore's half-precision rule on
every installed backend: normalise in float32, round the output once to the input's dtype.
The result is the same whether nothing is traced (the backend's fused op or the forward of
mscore.fused_reference) or the op runs under ``value_and_grad`` (a backend's native autodiff,
or the reference autodiff's fused node), and it matches MindSpore's (tests/data/
half_norm_oracle.json, recorded by tests/data/make_half_norm_oracle.py)."""
import json
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore import ops

ORACLE = json.loads((Path(__file__).parent / "data" / "half_norm_oracle.json").read_text())
CASES = ORACLE["cases"]
F16_ULP = 2.0 ** -10  # float16's relative spacing


def _t(values, dtype):
    return ms.Tensor(np.asarray(values, dtype=dtype))


def _layer_norm(case):
    pdt = np.float16 if case["weight_dtype"] == "float16" else np.float32
    x = _t(case["x"], np.float16)
    w, b = _t(case["weight"], pdt), _t(case["bias"], pdt)
    shape, eps = tuple(case["normalized_shape"]), case["eps"]
    return (lambda x, w, b: ops.layer_norm(x, shape, w, b, eps)), (x, w, b), None


def _batch_norm(case):
    pdt = np.float16 if case["param_dtype"] == "float16" else np.float32
    x = _t(case["x"], np.float16)
    w, b = _t(case["weight"], pdt), _t(case["bias"], pdt)
    stats = []

    def run(x, w, b):
        m = ms.Parameter(_t(case["running_mean"], pdt), name="m", requires_grad=False)
        v = ms.Parameter(_t(case["running_var"], pdt), name="v", requires_grad=False)
        out = ops.batch_norm(x, m, v, w, b, training=case["training"],
                             momentum=case["momentum"], eps=case["eps"])
        stats[:] = [m, v]
        return out
    return run, (x, w, b), stats


def _case(key):
    case = dict(CASES[key])
    if key.startswith("layer_norm"):
        case["weight_dtype"] = key.split("/")[1]
        return case, _layer_norm(case)
    return case, _batch_norm(case)


def _outputs(fn, args):
    """fn's output untraced, and under value_and_grad (its value)."""
    plain = fn(*args)

    def loss(*a):
        out = fn(*a)
        return ops.sum(ops.cast(out, ms.float32)), out
    (_, traced), _ = ms.value_and_grad(loss, (0, 1, 2), has_aux=True)(*args)
    return plain, traced


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("key", sorted(CASES))
def test_half_norm_same_traced_and_untraced_and_matches_mindspore(backend, key):
    use_backend(backend)
    case, (fn, args, stats) = _case(key)
    plain, traced = _outputs(fn, args)
    assert plain.dtype is ms.float16 and traced.dtype is ms.float16, (plain.dtype, traced.dtype)
    np.testing.assert_array_equal(plain.asnumpy(), traced.asnumpy(),
                                  err_msg=f"{backend} {key}: traced differs from untraced")
    want = np.asarray(case["out"], np.float64)
    got = plain.asnumpy().astype(np.float64)
    # MindSpore rounds a float32 result once: within one float16 ulp of it.
    np.testing.assert_allclose(got, want, rtol=2 * F16_ULP, atol=2 * F16_ULP,
                               err_msg=f"{backend} {key}: differs from MindSpore")
    if stats is not None and case["training"] and case["param_dtype"] == "float32":
        for param, name in zip(stats, ("new_running_mean", "new_running_var")):
            np.testing.assert_allclose(param.asnumpy(), case[name], rtol=1e-3, atol=1e-4,
                                       err_msg=f"{backend} {key}: {name}")
