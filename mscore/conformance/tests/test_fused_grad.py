"""Level 2 (gradients) of the fused ops: ``ms.value_and_grad`` of ``sum(f(x) * c)`` for the
composites that training spends its time in (softmax cross-entropy in its sparse, weighted,
N-d and probability forms with ``ignore_index`` and label smoothing, layer norm, batch norm
in training and inference, dense and convolution with bias, relu, gelu, attention) on a
backend without native autodiff — the reference autodiff's fused VJP rules over its
primitives — against the composite's own gradient: the numpy reference in float64 with the
fused rules turned off (``mscore.autodiff.fused.composite_gradients``), so every op is
differentiated primitive by primitive there."""
from __future__ import annotations

import numpy as np
import pytest

from mscore import ops
from mscore.autodiff.fused import composite_gradients
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.conformance.harness import GradCase, normal_inputs, value_and_grads

LEVEL = "grad"
DTYPES = ("float32", "float64")


_n = normal_inputs


def _sparse(n, c, extra=(), ignore=None, weight=False):
    def make(kit):
        t = kit.rng.integers(0, c, size=(n,) + extra).astype(np.int64)
        if ignore is not None:
            t.reshape(-1)[1] = ignore
        inputs = [kit.normal((n, c) + extra, 2.0), t]
        return inputs + [kit.uniform((c,), 0.5, 2.0)] if weight else inputs
    return make


def _soft(n, c, weight=False):
    def make(kit):
        p = kit.uniform((n, c), 0.1, 1.0)
        inputs = [kit.normal((n, c), 2.0), p / p.sum(axis=1, keepdims=True)]
        return inputs + [kit.uniform((c,), 0.5, 2.0)] if weight else inputs
    return make


def _away_from_zero(shape):
    return lambda kit: [kit.uniform(shape, 0.3, 2.0) * kit.rng.choice([-1.0, 1.0], size=shape)]


def _bn_train(x, w, b):
    c = x.shape[1]
    rm = Parameter(ops.zeros((c,), x.dtype), name="rm", requires_grad=False)
    rv = Parameter(ops.ones((c,), x.dtype), name="rv", requires_grad=False)
    return ops.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)


def _bn_eval_inputs(kit):
    return [kit.normal((4, 3, 2, 2)), kit.normal((3,)), kit.normal((3,)), kit.normal((3,)),
            kit.uniform((3,), 0.5, 2.0)]


def _attn_bool_mask(kit):
    m = kit.rng.random((3, 5)) > 0.3
    m[:, 0] = True
    return [kit.normal((2, 2, 3, 4)), kit.normal((2, 2, 5, 4)), kit.normal((2, 2, 5, 3)), m]


CASES = [
    GradCase("relu", _away_from_zero((3, 4)), ops.relu),
    GradCase("gelu_erf", _n((3, 4), scale=2.0), lambda x: ops.gelu(x, "none")),
    GradCase("gelu_tanh", _n((3, 4), scale=2.0), lambda x: ops.gelu(x, "tanh")),
    GradCase("dense_bias", _n((2, 3, 4), (5, 4), (5,)), ops.dense),
    GradCase("softmax_axis1", _n((2, 5, 3), scale=2.0), lambda x: ops.softmax(x, 1)),
    GradCase("log_softmax", _n((4, 6), scale=2.0), lambda x: ops.log_softmax(x, -1)),
    GradCase("cross_entropy_ignore_index", _sparse(6, 5, ignore=-100),
                  lambda x, t: ops.cross_entropy(x, t)),
    GradCase("cross_entropy_smoothing_sum", _sparse(6, 5, ignore=2),
                  lambda x, t: ops.cross_entropy(x, t, ignore_index=2, reduction="sum",
                                                 label_smoothing=0.2)),
    GradCase("cross_entropy_weighted_nd", _sparse(3, 4, extra=(2,), ignore=-100,
                                                       weight=True),
                  lambda x, t, w: ops.cross_entropy(x, t, w, label_smoothing=0.1)),
    GradCase("cross_entropy_probabilities", _soft(6, 5, weight=True),
                  lambda x, t, w: ops.cross_entropy(x, t, w, reduction="none",
                                                    label_smoothing=0.1)),
    GradCase("layer_norm_affine", _n((3, 4, 6), (6,), (6,)),
                  lambda x, w, b: ops.layer_norm(x, (6,), w, b, 1e-5)),
    GradCase("batch_norm_train", _n((4, 3, 2, 2), (3,), (3,)), _bn_train),
    GradCase("batch_norm_eval", _bn_eval_inputs,
                  lambda x, w, b, m, v: ops.batch_norm(x, m, v, w, b, training=False,
                                                       eps=1e-5)),
    GradCase("conv2d_bias", _n((2, 4, 5, 5), (6, 2, 3, 3), (6,)),
                  lambda x, w, b: ops.conv2d(x, w, b, stride=(2, 1), pad_mode="pad",
                                             padding=1, groups=2)),
    GradCase("attention_causal", _n((2, 2, 4, 3), (2, 2, 4, 3), (2, 2, 4, 2)),
                  lambda q, k, v: ops.scaled_dot_product_attention(q, k, v, is_causal=True)),
    GradCase("attention_bool_mask", _attn_bool_mask,
                  lambda q, k, v, m: ops.scaled_dot_product_attention(q, k, v, attn_mask=m)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_grad(kit, case, dtype):
    """Value and gradients match the composite's gradient in float64 on the reference."""
    if kit.has("native_autodiff"):
        pytest.skip(f"{kit.name} differentiates with its own autodiff (checked by the grad "
                    f"level); the reference autodiff's fused rules are not used by it")
    inputs = case.make(kit)
    positions = tuple(i for i, x in enumerate(inputs) if x.dtype.kind == "f")
    fn = value_and_grads(case.fn, positions, kit.case_key, dtype)
    with composite_gradients():
        expected = kit.reference(fn, *inputs, dtype=dtype)
    actual = kit.run(fn, *inputs, dtype=dtype)
    kit.assert_tree_close(actual, expected, dtype, f"grad of {case.name} (fused)", case.factor)


def _bn_half_input(half, around):
    """Training batch norm of ``x`` rounded to ``half`` with float32 gamma/beta: directly on
    the half-precision input (the fast path amp O2 takes: the op normalises in float32 and
    rounds once) or, with ``around``, as MindSpore's O2 writes it: cast to float32, batch
    norm in float32, cast back."""
    def fn(x, w, b):
        xh = ops.cast(x, half)
        c = x.shape[1]
        rm = Parameter(ops.zeros((c,), mdt.float32), name="rm", requires_grad=False)
        rv = Parameter(ops.ones((c,), mdt.float32), name="rv", requires_grad=False)
        if around:
            out = ops.cast(ops.batch_norm(ops.cast(xh, mdt.float32), rm, rv, w, b,
                                          training=True, momentum=0.1, eps=1e-5), half)
        else:
            out = ops.batch_norm(xh, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)
        return ops.cast(out, mdt.float32)
    return fn


@pytest.mark.parametrize("half", ("float16", "bfloat16"))
def test_batch_norm_half_input_float32_parameters(kit, half):
    """Value and gradients of batch norm on a half-precision input with float32 parameters
    are those of the composite with float32 casts around it (MindSpore's O2 BatchNorm), on
    the backend's own path (fused kernel or not, native autodiff or not)."""
    if not kit.has_dtype(half):
        pytest.skip(f"{kit.name} does not declare {half}")
    inputs = [kit.normal((4, 3, 2, 2), 2.0), kit.uniform((3,), 0.5, 2.0), kit.normal((3,))]
    positions = (0, 1, 2)
    fast = kit.run(value_and_grads(_bn_half_input(half, False), positions, kit.case_key,
                                   half), *inputs, dtype="float32")
    composite = kit.run(value_and_grads(_bn_half_input(half, True), positions, kit.case_key,
                                        half), *inputs, dtype="float32")
    kit.assert_tree_close(fast, composite, half, "batch norm, half input (fast path vs "
                          "float32 casts around it)", 2.0)
