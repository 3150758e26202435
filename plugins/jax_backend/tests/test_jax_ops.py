"""The jax backend's primitives and fused ops against the numpy reference at per-dtype
tolerances (the fused ones against the core's composites on numpy)."""
from __future__ import annotations

import numpy as np
import pytest
from _jax_compare import JB, RNG, assert_close, both, compare_functional, rand

import mscore as ms
from mscore import ops
from mscore.common import dtype as mdt

# -- primitive ops against numpy ---------------------------------------------------------------
UNARY = ["neg", "abs", "exp", "tanh", "sin", "cos", "erf", "sign", "floor", "ceil", "isfinite"]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", UNARY + ["log", "sqrt"])
def test_unary(op, dtype):
    x = rand(3, 5, dtype=dtype, positive=op in ("log", "sqrt"))
    both(op, (x,), dtype)


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", BINARY + ["pow"])
def test_binary_broadcasting(op, dtype):
    a = rand(2, 3, 4, dtype=dtype, positive=op == "pow")
    b = rand(3, 1, dtype=dtype)
    both(op, (a, b), dtype)


def test_integer_and_bool_ops():
    a = np.array([7, -7, 9, -9, 0], np.int32)
    b = np.array([2, 2, -4, 4, 3], np.int32)
    assert list(both("div", (a, b))) == [3, -3, -2, -2, 0]  # truncation toward zero
    both("div", (a.reshape(1, 5), b[:1].reshape(1, 1)))    # broadcasting
    both("add", (a, b))
    both("maximum", (a, b))
    p = np.array([True, False, True])
    q = np.array([True, True, False])
    both("logical_and", (p, q))
    both("logical_or", (p, q))
    both("logical_not", (p,))
    both("where", (p, np.arange(3, dtype=np.float32), np.zeros(3, np.float32)))


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), ((1,), True), ((0, 2), False)])
def test_reductions(op, axis, keepdims):
    both(op, (rand(3, 4, 5),), axis=axis, keepdims=keepdims)


def test_reductions_bool_and_arg():
    m = RNG.normal(size=(4, 5)) > 0
    for op in ("all", "any"):
        both(op, (m,), axis=(1,), keepdims=False)
        both(op, (m,), axis=None, keepdims=True)
    x = rand(4, 5)
    x[1, 2] = x[1, 4] = x.max() + 1  # ties: the first index wins
    for op in ("argmax", "argmin"):
        both(op, (x,), axis=1)
    assert JB.dtype(JB.argmax(JB.from_numpy(x), axis=0)) in (mdt.int64, mdt.int32)


def test_shape_ops_and_creation():
    x = rand(2, 3, 4)
    both("reshape", (x, (4, 6)))
    both("transpose", (x, (2, 0, 1)))
    both("broadcast_to", (rand(3, 1), (2, 3, 5)))
    both("concat", ([rand(2, 3), rand(4, 3)],), axis=0)
    both("pad", (x, ((0, 0), (1, 2), (3, 0)), 1.5))
    both("full", ((2, 3), 2.5, mdt.float32))
    both("arange", (0.5, 3.0, 0.25, mdt.float32))
    both("arange", (2, 11, 3, mdt.int32))
    both("cast", (np.array([1.7, -1.7, 2.5], np.float32), mdt.int32))
    both("cast", (x, mdt.bfloat16), "bfloat16")
    assert JB.shape(JB.from_numpy(x)) == (2, 3, 4)
    for d in (mdt.float16, mdt.bfloat16, mdt.float32, mdt.int8, mdt.int16, mdt.int32,
              mdt.uint8, mdt.bool_):
        arr = JB.full((2,), 1, d)
        assert JB.dtype(arr) is d
        assert JB.to_numpy(arr).dtype == d.np_dtype


def test_getitem_and_scatter_add():
    x = rand(5, 4)
    idx = np.array([0, 3, 3, 1])
    both("getitem", (x, (slice(1, 4), None, Ellipsis, 2)))
    both("getitem", (x, (idx,)))
    both("getitem", (x, (Ellipsis, idx[:2])))
    upd = rand(4, 4)
    out = both("scatter_add", (x, (idx,), upd))  # repeated index 3 accumulates
    assert np.allclose(out[3], x[3] + upd[1] + upd[2], rtol=1e-6)
    both("scatter_add", (x, (slice(0, 2), 1), rand(2)))
    with pytest.raises(IndexError):
        JB.getitem(JB.from_numpy(x), (7,))
    with pytest.raises(IndexError):
        JB.getitem(JB.from_numpy(x), (Ellipsis, -5))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_matmul(dtype):
    both("matmul", (rand(2, 3, 4, dtype=dtype), rand(4, 5, dtype=dtype)), dtype,
          factor=4.0)


CONV_CASES = [
    # x shape, w shape, stride, padding, dilation, groups
    ((2, 3, 9), (4, 3, 3), (2,), ((1, 1),), (1,), 1),
    ((2, 4, 8, 7), (6, 2, 3, 2), (1, 2), ((1, 0), (0, 1)), (2, 1), 2),
    ((1, 2, 5, 6, 4), (2, 2, 2, 3, 1), (1, 1, 2), ((0, 1), (1, 1), (0, 0)), (1, 1, 1), 1),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv(case):
    xs, ws, stride, padding, dilation, groups = case
    both("conv", (rand(*xs), rand(*ws)), factor=4.0, stride=stride, padding=padding,
          dilation=dilation, groups=groups)


@pytest.mark.parametrize("case", [
    ((2, 4, 5), (4, 3, 3), (2,), ((1, 1),), (1,), (1,), 1),
    ((1, 4, 4, 3), (4, 2, 3, 2), (2, 1), ((1, 0), (0, 1)), (1, 0), (1, 2), 2),
    ((1, 2, 3, 3, 2), (2, 1, 2, 2, 2), (2, 2, 1), ((0, 0), (1, 0), (0, 1)), (0, 1, 0),
     (1, 1, 1), 1),
])
def test_conv_transpose(case):
    xs, ws, stride, padding, out_pad, dilation, groups = case
    both("conv_transpose", (rand(*xs), rand(*ws)), factor=4.0, stride=stride,
          padding=padding, output_padding=out_pad, dilation=dilation, groups=groups)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_pooling(nd):
    x = rand(2, 3, *([6] * nd))
    kernel, stride, padding = (3,) * nd, (2,) * nd, ((1, 1),) * nd
    both("max_pool", (x,), kernel=kernel, stride=stride, padding=padding)
    for cip in (True, False):
        both("avg_pool", (x,), kernel=kernel, stride=stride, padding=padding,
              count_include_pad=cip)
    h = x.astype(np.float16)
    both("avg_pool", (h,), "float16", kernel=kernel, stride=stride, padding=padding,
          count_include_pad=False)
    xi = (x * 10).astype(np.int32)
    both("max_pool", (xi,), kernel=kernel, stride=stride, padding=padding)

# -- fused ops against the core composite (on numpy) -------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fused_softmax_layer_norm(dtype):
    x = rand(3, 4, 6, dtype=dtype)
    compare_functional(lambda t: ops.softmax(t, 1), x, dtype=dtype)
    compare_functional(lambda t: ops.log_softmax(t, -1), x, dtype=dtype, factor=2)
    w, b = rand(4, 6, dtype=dtype), rand(4, 6, dtype=dtype)
    compare_functional(lambda t, w, b: ops.layer_norm(t, (4, 6), w, b, 1e-5), x, w, b,
                     dtype=dtype, factor=4)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_fused_cross_entropy(reduction, smoothing):
    logits = rand(6, 5)
    target = np.array([0, 4, 2, -100, 1, 3], np.int32)
    compare_functional(lambda x, t: ops.cross_entropy(x, t, ignore_index=-100,
                                                    reduction=reduction,
                                                    label_smoothing=smoothing),
                     logits, target)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask_kind", [None, "bool", "float"])
def test_fused_attention(causal, mask_kind):
    q, k, v = rand(2, 3, 4, 8), rand(2, 3, 5, 8), rand(2, 3, 5, 8)
    mask = None
    if mask_kind == "bool":
        mask = RNG.normal(size=(4, 5)) > -0.5
        mask[:, 0] = True
    elif mask_kind == "float":
        mask = rand(4, 5)
    inputs = (q, k, v) + ((mask,) if mask is not None else ())
    compare_functional(lambda q, k, v, *m: ops.scaled_dot_product_attention(
        q, k, v, attn_mask=m[0] if m else None, is_causal=causal), *inputs, factor=2)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fused_batch_norm_and_addcmul(training, dtype):
    x = rand(4, 3, 5, 2, dtype=dtype)
    rm, rv = rand(3), rand(3, positive=True)
    w, b = rand(3, dtype=dtype), rand(3, dtype=dtype)
    results = []
    for name in ("numpy", "jax"):
        ms.set_context(backend=name)
        mean = ms.Parameter(ms.Tensor(rm), name="m", requires_grad=False)
        var = ms.Parameter(ms.Tensor(rv), name="v", requires_grad=False)
        out = ops.batch_norm(ms.Tensor(x), mean, var, ms.Tensor(w), ms.Tensor(b),
                             training=training, momentum=0.2, eps=1e-3)
        results.append((out.asnumpy(), mean.asnumpy(), var.asnumpy()))
    (o_ref, m_ref, v_ref), (o, m, v) = results
    assert o.dtype == o_ref.dtype
    assert_close(o, o_ref, dtype, factor=4)
    assert_close(m, m_ref, dtype, factor=4)  # statistics of half data: half tolerance
    assert_close(v, v_ref, dtype, factor=4)
    assert training or np.array_equal(m, rm)
    compare_functional(lambda a, b, c: ops.addcmul(a, b, c, value=-0.5),
                     rand(3, 1, 4, dtype=dtype), rand(2, 4, dtype=dtype),
                     rand(4, dtype=dtype), dtype=dtype, factor=2)
