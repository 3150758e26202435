"""The torch backend's primitives against the numpy reference at per-dtype tolerances:
elementwise, reductions, shapes, indexing, linear algebra, convolution and pooling."""
from __future__ import annotations

import numpy as np
import pytest
from _torch_compare import RNG, both, rnd

import mscore as ms
from mscore import ops
from mscore.dispatch import call

# -- elementwise, reductions, shapes -----------------------------------------------------------
UNARY = ["neg", "abs", "exp", "sin", "cos", "tanh", "erf", "sign", "floor", "ceil"]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_ops(name, dtype):
    x = rnd(4, 5)
    both(lambda a: getattr(ops, name)(a), x, dtype=dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_log_sqrt_positive(dtype):
    x = rnd(4, 5, low=0.1, high=4.0)
    both(lambda a: (ops.log(a), ops.sqrt(a), ops.rsqrt(a)), x, dtype=dtype)


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_broadcast(name, dtype):
    a, b = rnd(3, 1, 4), rnd(5, 1)
    b[0, 0] = a[0, 0, 0]  # one tie for the comparisons
    both(lambda x, y: getattr(ops, name)(x, y), a, b, dtype=dtype)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_integer_arithmetic(dtype):
    a = RNG.integers(1, 13, (4, 6))
    b = RNG.integers(1, 7, (4, 6))
    fns = lambda x, y: (ops.add(x, y), ops.mul(x, y), ops.sub(x, y),  # noqa: E731
                        ops.floor_divide(x, y), ops.maximum(x, y), ops.less(x, y),
                        ops.sum(x, 1), ops.amax(x, 0), ops.abs(x), ops.pow(y, 2))
    both(fns, a, b, dtype=dtype)


def test_integer_division_truncates_toward_zero():
    a = np.array([7, -7, 7, -7, 0], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3], dtype=np.int32)
    ms.set_context(backend="torch")
    out = call("div", ms.Tensor(a)._data, ms.Tensor(b)._data)
    np.testing.assert_array_equal(out.numpy(), [3, -3, -3, 3, 0])


def test_pow_where_logical_isfinite():
    x = rnd(3, 4, low=0.5, high=2.0)
    y = rnd(3, 4)
    z = x.copy()
    z[0, 0], z[1, 1], z[2, 2] = np.inf, -np.inf, np.nan
    both(lambda a, b: (ops.pow(a, b), ops.where(ops.greater(b, 0.0), a, b),
                       ops.logical_and(ops.greater(a, 1.0), ops.less(b, 0.0)),
                       ops.logical_or(ops.greater(a, 1.0), ops.less(b, 0.0)),
                       ops.logical_not(ops.greater(a, 1.0))), x, y, dtype="float32")
    both(lambda a: (ops.isfinite(a), ops.isnan(a), ops.isinf(a)), z, dtype="float32")


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_reductions(dtype):
    x = rnd(3, 4, 5)
    both(lambda a: (ops.sum(a), ops.sum(a, (0, 2), True), ops.mean(a, 1), ops.amax(a, 2),
                    ops.amin(a, (0, 1), True), ops.amax(a), ops.argmax(a, 1),
                    ops.argmin(a, 0), ops.argmax(a), ops.var(a, 1), ops.logsumexp(a, 2),
                    ops.all(ops.greater(a, -1.0), 1), ops.any(ops.greater(a, 1.5), (0, 2)),
                    ops.sum(ops.greater(a, 0.0))), x, dtype=dtype)


def test_argmax_first_of_ties():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]], dtype=np.float32)
    got = both(lambda a: (ops.argmax(a, 1), ops.argmin(a, 1)), x)
    np.testing.assert_array_equal(got[0], [1, 0])


def test_shape_ops():
    x = rnd(2, 3, 4)
    y = rnd(2, 1, 4)
    both(lambda a, b: (ops.reshape(a, (6, 4)), ops.transpose(a, (2, 0, 1)),
                       ops.broadcast_to(b, (2, 3, 4)), ops.concat([a, b], 1),
                       ops.stack([a, a], 0), ops.split(a, 2, 2), ops.tile(b, (1, 2, 1)),
                       ops.pad(a, (1, 2, 0, 1), value=0.5), ops.squeeze(b, 1),
                       ops.expand_dims(b, 0), ops.flatten(a)), x, y)


def test_pad_integer_and_bool():
    ms.set_context(backend="torch")
    got = call("pad", ms.Tensor(np.ones((2, 2), np.bool_))._data, ((1, 0), (0, 2)), False)
    ref = np.pad(np.ones((2, 2), np.bool_), ((1, 0), (0, 2)))
    np.testing.assert_array_equal(got.numpy(), ref)


# -- indexing ---------------------------------------------------------------------------------
INDEXES = [
    (slice(None, None, -1),),
    (slice(None), slice(3, 0, -2)),
    (Ellipsis, slice(None, None, -3)),
    (1, None, slice(-1, None, -1)),
    (slice(1, 3), 2),
    (np.array([0, 2, 0]),),
    (slice(None), np.array([[1, 1], [0, 4]])),
    (np.array([1, 0]), slice(None), np.array([2, 2])),
    (slice(None, None, -1), np.array([3, 3, 1])),
]


@pytest.mark.parametrize("index", INDEXES, ids=[str(i) for i in range(len(INDEXES))])
def test_getitem_and_scatter_add_match_numpy(index):
    x = rnd(3, 5, 4) if len(index) > 2 else rnd(3, 5)
    ref_out = x[index]
    got = both(lambda a: a[index], x)
    np.testing.assert_allclose(got, ref_out.astype(np.float32), rtol=1e-6)
    # scatter_add: repeated indices accumulate (np.add.at semantics).
    upd = rnd(*ref_out.shape)
    expected = x.copy()
    np.add.at(expected, index, upd)
    ms.set_context(backend="torch")
    t_index = tuple(ms.Tensor(i)._data if isinstance(i, np.ndarray) else i for i in index)
    out = call("scatter_add", ms.Tensor(x)._data, t_index, ms.Tensor(upd)._data)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


def test_setitem_and_gather():
    x = rnd(4, 5)
    idx = np.array([3, 0, 3])

    def fn(a):
        b = ops.setitem(a, (slice(1, 3), slice(None, None, -2)), 7.0)
        return b, ops.gather(a, ms.Tensor(idx), 0), ops.gather(a, ms.Tensor(idx), 1)
    both(fn, x)


# -- linear algebra, convolution, pooling ------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_matmul_batched_and_vectors(dtype):
    a, b, v = rnd(2, 3, 4), rnd(4, 5), rnd(4)
    both(lambda x, y, z: (ops.matmul(x, y), ops.matmul(x, z), ops.matmul(z, y),
                          ops.bmm(x, ops.broadcast_to(y, (2, 4, 5)))), a, b, v,
         dtype=dtype, factor=2.0)


CONV_CASES = [
    # nd, in_shape, w_shape, stride, pad_mode, padding, dilation, groups
    (1, (2, 4, 9), (6, 2, 3), 2, "pad", (1, 2), 1, 2),
    (2, (2, 3, 7, 8), (4, 3, 3, 2), 1, "same", 0, 1, 1),
    (2, (1, 4, 9, 9), (4, 2, 3, 3), (2, 1), "pad", (0, 1, 2, 1), (1, 2), 2),
    (2, (2, 2, 6, 6), (3, 2, 2, 2), 2, "valid", 0, 1, 1),
    (3, (1, 2, 5, 6, 5), (2, 2, 2, 3, 2), (1, 2, 1), "pad", 1, 1, 1),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=[f"{c[0]}d-{i}" for i, c in
                                                  enumerate(CONV_CASES)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv_matches_numpy(case, dtype):
    nd, xs, wsh, stride, pad_mode, padding, dilation, groups = case
    x, w = rnd(*xs), rnd(*wsh)
    both(lambda a, b: ops.conv(a, b, None, stride, pad_mode, padding, dilation, groups), x, w,
         dtype=dtype, factor=2.0)


CONVT_CASES = [
    (1, (2, 4, 5), (4, 3, 3), 2, "valid", 0, 0, 1, 1),
    (2, (1, 4, 4, 5), (4, 2, 3, 3), 2, "pad", 1, 1, 1, 2),
    (2, (2, 2, 3, 3), (2, 3, 2, 3), (2, 3), "pad", (0, 1, 1, 0), (1, 2), 1, 1),
    (2, (1, 2, 4, 4), (2, 2, 3, 3), 2, "same", 0, 0, 1, 1),
    (2, (1, 2, 3, 3), (2, 2, 3, 3), 1, "pad", 0, 2, 2, 1),   # output_padding >= stride
    (3, (1, 2, 3, 3, 3), (2, 2, 2, 2, 2), 2, "pad", 1, 1, 1, 1),
]


@pytest.mark.parametrize("case", CONVT_CASES, ids=[f"{c[0]}d-{i}" for i, c in
                                                   enumerate(CONVT_CASES)])
def test_conv_transpose_matches_numpy(case):
    nd, xs, wsh, stride, pad_mode, padding, out_pad, dilation, groups = case
    x, w = rnd(*xs), rnd(*wsh)
    both(lambda a, b: ops.conv_transpose(a, b, None, stride, pad_mode, padding, out_pad,
                                         dilation, groups), x, w, dtype="float64")


def test_conv_half_precision():
    x, w = rnd(2, 3, 6, 6), rnd(4, 3, 3, 3)
    both(lambda a, b: ops.conv2d(a, b, pad_mode="same"), x, w, dtype="float16", factor=3.0)
    both(lambda a, b: ops.conv2d(a, b, pad_mode="same"), x, w, dtype="bfloat16", factor=2.0)


POOL_CASES = [
    (1, (2, 3, 9), 3, 2, 1),
    (2, (2, 3, 7, 8), (3, 2), (2, 1), (1, 0)),
    (2, (1, 2, 6, 6), 2, 2, 0),
    (2, (1, 2, 7, 7), 3, 2, (1, 0, 1, 1)),        # asymmetric padding
    (3, (1, 2, 5, 4, 6), 2, (1, 2, 2), 1),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=[f"{c[0]}d-{i}" for i, c in
                                                  enumerate(POOL_CASES)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_pooling_matches_numpy(case, dtype):
    nd, xs, k, s, p = case
    x = rnd(*xs)
    both(lambda a: (ops.max_pool(a, k, s, p, nd), ops.avg_pool(a, k, s, p, True, nd),
                    ops.avg_pool(a, k, s, p, False, nd)), x, dtype=dtype)


def test_integer_pooling():
    x = RNG.integers(-50, 50, (1, 2, 5, 5))
    both(lambda a: ops.max_pool(a, 3, 2, 1), x, dtype="int32")
    # Averaging integers is a TypeError, as in MindSpore (AvgPool takes float16/32/64 only).
    ms.set_context(backend="torch")   # the autouse fixture restores numpy
    with pytest.raises(TypeError, match="floating-point"):
        ops.avg_pool(ms.Tensor(x.astype(np.int32)), 2, 1, 0)
