"""Level 1 and 2, generated: the fused ops of the contract on shapes and options hypothesis
draws (see :mod:`mscore.conformance.strategies`), through the backend's fused op when it
provides one and through the core's composite, forward in every float dtype and, in float32
and float64, with ``ms.value_and_grad`` (native autodiff or the reference autodiff's fused
rules) against the numpy reference in float64.

Hypothesis draws the structure (rank, sides, the axis, how many trailing axes a layer norm
normalises, causal or not, the reduction, label smoothing, stride, padding, dilation,
groups) and a seed for the values (normal numbers), so a failure shrinks to the smallest
structure that shows it. The integer floor division is in ``test_generated.py``.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import strategies as st

from mscore import ops
from mscore.common.parameter import Parameter
from mscore.conformance import harness
from mscore.conformance import strategies as gen
from mscore.conformance.harness import value_and_grads

LEVEL = "ops"
GRAD_DTYPES = ("float32", "float64")
SIDE = st.integers(1, 4)
#: the inputs are normal numbers: an error of a few roundings of 1 is allowed wherever a
#: drawn structure leaves a result far smaller (one element, a loss that cancels)
INPUT_SCALE = 1.0


@dataclass
class GeneratedFused:
    """``draw`` is a strategy of ``(shapes, options)``; ``build(rng, shapes, options)``
    gives ``(numpy inputs, fn)``; ``fused`` names the Backend attribute."""

    op: str
    fused: str
    draw: object
    build: object
    factor: float = 4.0

    def __repr__(self):
        return self.op


def _normal(rng, *shapes, scale=1.0):
    return [np.asarray(rng.standard_normal(s) * scale) for s in shapes]


def _axis_case():
    return gen.shapes(min_rank=1, max_rank=4, min_side=1, max_side=4).flatmap(
        lambda s: st.tuples(st.just(s), st.integers(-len(s), len(s) - 1)))


def _softmax(name):
    def build(rng, shape, axis):
        return _normal(rng, shape, scale=2.0), lambda x: getattr(ops, name)(x, axis)
    return build


def _layer_norm_case():
    """Shapes and how many trailing axes to normalise: at least 3 elements (over 1 or 2 the
    normalised values are constants, 0 or +-1, and the input's gradient is rounding noise)."""
    return gen.shapes(min_rank=1, max_rank=4, min_side=1, max_side=4).flatmap(
        lambda s: st.tuples(st.just(s), st.tuples(st.integers(1, len(s)), st.booleans()))
    ).filter(lambda c: np.prod(c[0][len(c[0]) - c[1][0]:]) >= 3)


def _layer_norm(rng, shape, options):
    k, affine = options
    trailing = tuple(shape[len(shape) - k:])
    if not affine:
        return _normal(rng, shape), lambda x: ops.layer_norm(x, trailing, None, None, 1e-5)
    return _normal(rng, shape, trailing, trailing), \
        lambda x, w, b: ops.layer_norm(x, trailing, w, b, 1e-5)


def _cross_entropy_case():
    return st.tuples(st.tuples(SIDE, st.integers(2, 5), st.lists(SIDE, max_size=2)),
                     st.tuples(st.sampled_from(("mean", "sum", "none")),
                               st.sampled_from((0.0, 0.1)), st.booleans(), st.booleans()))


def _cross_entropy(rng, shape, options):
    n, c, extra = shape
    reduction, smoothing, weighted, ignored = options
    target = rng.integers(0, c, size=(n,) + tuple(extra)).astype(np.int64)
    if ignored:
        target.reshape(-1)[0] = -100
    inputs = _normal(rng, (n, c) + tuple(extra), scale=2.0) + [target]
    if weighted:
        inputs.append(rng.uniform(0.5, 2.0, size=(c,)))
        return inputs, lambda x, t, w: ops.cross_entropy(
            x, t, w, reduction=reduction, label_smoothing=smoothing)
    return inputs, lambda x, t: ops.cross_entropy(x, t, reduction=reduction,
                                                  label_smoothing=smoothing)


def _batch_norm_case():
    """Shapes with at least 3 elements per channel (see :func:`_layer_norm_case`)."""
    return st.tuples(gen.shapes(min_rank=2, max_rank=5, min_side=1, max_side=3).filter(
        lambda s: np.prod(s) >= 3 * s[1]), st.booleans())


def _batch_norm(rng, shape, training):
    c = shape[1]
    if training:
        def fn(x, w, b):
            rm = Parameter(ops.zeros((c,), x.dtype), name="rm", requires_grad=False)
            rv = Parameter(ops.ones((c,), x.dtype), name="rv", requires_grad=False)
            out = ops.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)
            return {"out": out, "running_mean": rm, "running_var": rv}
        return _normal(rng, shape, (c,), (c,)), fn
    inputs = _normal(rng, shape, (c,), (c,), (c,)) + [rng.uniform(0.5, 2.0, size=(c,))]
    return inputs, lambda x, w, b, m, v: ops.batch_norm(x, m, v, w, b, training=False,
                                                        eps=1e-5)


def _attention_case():
    return st.tuples(st.tuples(st.integers(1, 2), st.integers(1, 2), SIDE, SIDE, SIDE, SIDE),
                     st.booleans())


def _attention(rng, dims, causal):
    b, h, lq, lk, d, dv = dims
    return _normal(rng, (b, h, lq, d), (b, h, lk, d), (b, h, lk, dv)), \
        lambda q, k, v: ops.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _elementwise_case():
    return st.tuples(gen.shapes(max_rank=4, max_side=4), st.sampled_from(("none", "tanh")))


def _gelu(rng, shape, approximate):
    return _normal(rng, shape, scale=2.0), lambda x: ops.gelu(x, approximate)


def _relu(rng, shape, _):
    x = rng.uniform(0.2, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return [np.asarray(x)], ops.relu   # away from 0, where the gradient is a convention


def _dense_case():
    return st.tuples(st.tuples(gen.shapes(max_rank=2, min_side=1, max_side=3), SIDE, SIDE),
                     st.booleans())


def _dense(rng, shapes, bias):
    lead, n_in, n_out = shapes
    if bias:
        return _normal(rng, tuple(lead) + (n_in,), (n_out, n_in), (n_out,)), ops.dense
    return _normal(rng, tuple(lead) + (n_in,), (n_out, n_in)), ops.dense


def _addcmul(rng, shapes, value):
    return _normal(rng, *shapes), lambda a, b, c: ops.addcmul(a, b, c, value=value)


def _conv_case():
    """conv1d/conv2d with drawn batch, groups, channels per group, kernel, stride, padding
    (before and after) and dilation, the input large enough for one output."""
    def spatial(nd):
        one = st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(0, 2),
                        st.integers(0, 2), st.integers(1, 2))
        return st.lists(one, min_size=nd, max_size=nd)
    return st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2),
                     st.integers(1, 2), st.integers(1, 2)).flatmap(
        lambda head: st.tuples(st.just(head), spatial(head[4])))


def _conv(rng, head, dims):
    n, groups, cin_g, cout_g, nd = head
    sizes, strides, pads, dilations = [], [], [], []
    for k, stride, lo, hi, dil in dims:
        span = dil * (k - 1) + 1
        sizes.append(max(span - lo - hi, 1) + 1)
        strides.append(stride)
        pads += [lo, hi]
        dilations.append(dil)
    kernel = tuple(k for k, *_ in dims)
    x, w, b = _normal(rng, (n, groups * cin_g) + tuple(sizes),
                      (groups * cout_g, cin_g) + kernel, (groups * cout_g,))
    conv = ops.conv1d if nd == 1 else ops.conv2d
    padding = tuple(pads)
    return [x, w, b], lambda x, w, b: conv(x, w, b, stride=tuple(strides), pad_mode="pad",
                                           padding=padding, dilation=tuple(dilations),
                                           groups=groups)


CASES = [
    GeneratedFused("softmax", "softmax", _axis_case(), _softmax("softmax")),
    GeneratedFused("log_softmax", "log_softmax", _axis_case(), _softmax("log_softmax")),
    GeneratedFused("layer_norm", "layer_norm", _layer_norm_case(), _layer_norm),
    GeneratedFused("cross_entropy", "cross_entropy", _cross_entropy_case(), _cross_entropy),
    GeneratedFused("batch_norm", "batch_norm", _batch_norm_case(), _batch_norm),
    GeneratedFused("attention", "attention", _attention_case(), _attention),
    GeneratedFused("gelu", "gelu", _elementwise_case(), _gelu),
    GeneratedFused("relu", "relu", _elementwise_case(), _relu),
    GeneratedFused("dense", "dense", _dense_case(), _dense),
    GeneratedFused("addcmul", "addcmul", st.tuples(gen.broadcast_shapes(3, max_side=3),
                                                   st.sampled_from((1, -0.5))), _addcmul),
    GeneratedFused("conv_bias", "conv_bias", _conv_case(), _conv),
]


def _first_output(fn):
    """``fn`` differentiated through its output (a dict's ``out``: batch norm's running
    statistics are not differentiated)."""
    def out(*xs):
        result = fn(*xs)
        return result["out"] if isinstance(result, dict) else result
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.op for c in CASES])
@pytest.mark.parametrize("dtype", harness.FLOAT_DTYPES)
def test_fused_generated(kit, case, dtype):
    """The fused op on drawn shapes and options matches the reference through the backend's
    fused op and the core composite; in float32/float64 its gradients too."""
    paths = (["fused"] if kit.fused(case.fused) is not None else []) + ["composite"]
    strategy = st.tuples(case.draw, st.integers(0, 2 ** 32 - 1))

    def check(example):
        (shapes, options), seed = example
        inputs, fn = case.build(np.random.default_rng(seed), shapes, options)
        positions = tuple(i for i, x in enumerate(inputs) if x.dtype.kind == "f")
        for path in paths:
            what = f"{case.op} ({path}) of {shapes}, {options}"
            with kit.declaring(dtype, what), harness.without_fused(kit.backend, case.fused) \
                    if path == "composite" else contextlib.nullcontext():
                kit.check(fn, *inputs, dtype=dtype, what=what, factor=case.factor,
                          min_scale=INPUT_SCALE)
                if dtype in GRAD_DTYPES:
                    kit.check(value_and_grads(_first_output(fn), positions, kit.case_key,
                                              dtype), *inputs, dtype=dtype,
                              what=f"grad of {what}", factor=case.factor,
                              min_scale=INPUT_SCALE)
    gen.run_examples(kit, strategy, check)


# -- gradients of the primitives on drawn shapes -----------------------------------------------
def _broadcast_arithmetic(rng, shapes, _):
    x, y = _normal(rng, *shapes)
    y = np.where(np.abs(y) < 0.3, 0.3 + np.abs(y), y)   # divisors away from 0
    return [x, y], lambda a, b: ops.div(ops.mul(ops.sub(ops.add(a, b), b), a), b)


def _axes_case():
    """A shape of rank 1 to 5 and a non-empty axis subset written with negative axes where
    drawn, keepdims either way."""
    return gen.shapes(min_rank=1, max_rank=5, min_side=1, max_side=3).flatmap(
        lambda s: st.tuples(st.just(s), st.tuples(
            st.lists(st.integers(0, len(s) - 1), min_size=1, max_size=len(s), unique=True),
            st.lists(st.booleans(), min_size=len(s), max_size=len(s)), st.booleans())))


def _reductions(rng, shape, options):
    axes, negative, keep = options
    axis = tuple(sorted(a - len(shape) if negative[a] else a for a in axes))
    # distinct values: amax's gradient at ties is a convention
    x = rng.permutation(np.prod(shape)).reshape(shape) / max(np.prod(shape), 1) + \
        rng.standard_normal(shape) * 1e-3
    return [np.asarray(x)], lambda a: ops.add(ops.add(ops.sum(a, axis, keepdim=keep),
                                                      ops.mean(a, axis, keep_dims=keep)),
                                              ops.amax(a, axis, keep))


def _transpose_case():
    return gen.shapes(min_rank=1, max_rank=5, min_side=1, max_side=3).flatmap(
        lambda s: st.tuples(st.just(s), gen.permutations(len(s))))


def _transpose(rng, shape, perm):
    return _normal(rng, shape), lambda a: ops.transpose(ops.exp(ops.tanh(a)), perm)


GRAD_CASES = [
    GeneratedFused("broadcast_arithmetic", "", st.tuples(gen.broadcast_shapes(min_side=1),
                                                         st.just(None)),
                   _broadcast_arithmetic),
    GeneratedFused("sum_mean_amax_axes", "", _axes_case(), _reductions),
    GeneratedFused("transpose_exp_tanh", "", _transpose_case(), _transpose),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c.op for c in GRAD_CASES])
@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_primitive_grad_generated(kit, case, dtype):
    """Gradients of the primitives (broadcasting arithmetic, reductions over drawn axis
    subsets written with negative axes and keepdims either way, transposes by drawn
    permutations) match the reference."""
    strategy = st.tuples(case.draw, st.integers(0, 2 ** 32 - 1))

    def check(example):
        (shapes, options), seed = example
        inputs, fn = case.build(np.random.default_rng(seed), shapes, options)
        kit.check(value_and_grads(fn, tuple(range(len(inputs))), kit.case_key, dtype),
                  *inputs, dtype=dtype, what=f"grad of {case.op} of {shapes}, {options}",
                  factor=case.factor, min_scale=INPUT_SCALE)
    gen.run_examples(kit, strategy, check)
