"""The torch backend plugin (plugins/torch_backend): registration, every primitive and fused op
against the numpy reference, torch autograd against finite differences and the reference
autodiff, random streams, the fused overflow check, devices, GRAPH_MODE, and 20-step MLP/CNN
training runs that must give the numpy backend's losses."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _backend_compare import assert_close as _assert_close  # noqa: E402

import mscore as ms  # noqa: E402
from mscore import ops  # noqa: E402
from mscore.dispatch import call  # noqa: E402
from mscore.plugin.registry import get_registry  # noqa: E402

if "torch" not in get_registry().names():
    pytest.skip("the torch plugin is not installed (pip install --no-deps -e "
                "plugins/torch_backend)", allow_module_level=True)

TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-6), "float16": (3e-3, 2e-3),
       "bfloat16": (2e-2, 1e-2)}
CUDA = torch.cuda.is_available()


def run_on(backend, fn, *arrays, dtypes=None, device="CPU"):
    """``fn(*Tensors)`` on ``backend``; the results (nested) as numpy arrays."""
    ms.set_context(backend=backend, device_target=device)
    tensors = [ms.Tensor(a) if dtypes is None else ms.Tensor(a, dtype=dtypes)
               for a in arrays]
    return _to_numpy(fn(*tensors))


def _to_numpy(out):
    if isinstance(out, (tuple, list)):
        return type(out)(_to_numpy(o) for o in out)
    if isinstance(out, ms.Tensor):
        return out.asnumpy()
    return out


def assert_close(actual, expected, dtype="float32", factor=1.0):
    """Per-dtype comparison (magnitude-relative atol, at least 1); ints and bools exactly."""
    _assert_close(actual, expected, dtype, factor, tol=TOL, min_scale=1.0, same_dtype=True)


def both(fn, *arrays, dtype="float32", factor=1.0, exact_dtype=True):
    """Run ``fn`` on numpy and torch from the same inputs and compare."""
    dt = getattr(ms, dtype) if dtype else None
    ref = run_on("numpy", fn, *arrays, dtypes=dt)
    got = run_on("torch", fn, *arrays, dtypes=dt)
    assert_close(got, ref, dtype or "float32", factor)
    return got


RNG = np.random.default_rng(1234)


def rnd(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape)


# -- registration -----------------------------------------------------------------------------
def test_entry_point_spec_and_probe():
    reg = get_registry()
    spec = reg.spec("torch")
    assert spec.plugin == "torch"
    assert spec.version.split("+")[0] == torch.__version__.split("+")[0]
    assert {"native_autodiff", "compile"} <= spec.capabilities
    assert set(spec.dtypes) >= {"float16", "bfloat16", "float32", "float64"}
    available, reason, devices = spec.probe()
    assert available and reason == ""
    assert devices[0] == "CPU"
    assert len(devices) == 1 + (torch.cuda.device_count() if CUDA else 0)
    desc = reg.describe("torch")
    assert desc["status"] == "available"


def test_importing_the_plugin_does_not_import_torch():
    code = ("import sys, mscore, mscore_torch.plugin as p; "
            "specs = p.mscore_register_backends(); "
            "assert specs[0].name == 'torch'; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_no_missing_primitives_and_direct_bindings():
    from mscore.plugin.backend import missing_primitives
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    assert missing_primitives(b) == []
    # Cheap dispatch: one-to-one ops call torch with no wrapper frame.
    assert b.add is torch.add and b.matmul is torch.matmul and b.where is torch.where


# -- creation, transfer, dtypes ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8",
                                   "int16", "int32", "int64", "uint8", "bool"])
def test_numpy_round_trip_every_dtype(dtype):
    ms.set_context(backend="torch")
    np_dtype = getattr(ms, dtype if dtype != "bool" else "bool_").np_dtype
    src = (RNG.uniform(-3, 3, (3, 4)) * 10).astype(np_dtype)
    t = ms.Tensor(src)
    assert t.dtype is getattr(ms, dtype if dtype != "bool" else "bool_")
    back = t.asnumpy()
    assert back.dtype == np_dtype
    np.testing.assert_array_equal(back.view(np.uint8), src.view(np.uint8))
    back[...] = 0  # a copy: the tensor keeps its values
    np.testing.assert_array_equal(t.asnumpy().view(np.uint8), src.view(np.uint8))


def test_bfloat16_bits_survive_and_cast_matches_numpy():
    ms.set_context(backend="torch")
    src = np.array([1.0, -2.5, 3.140625, 1e-3, 65504.0, np.inf], dtype=ml_dtypes.bfloat16)
    t = ms.Tensor(src)
    assert t._data.dtype == torch.bfloat16
    np.testing.assert_array_equal(t.asnumpy().view(np.uint16), src.view(np.uint16))
    x = rnd(50)
    both(lambda a: ops.cast(a, ms.bfloat16), x, dtype="float32")
    both(lambda a: ops.cast(a, ms.float16), x, dtype="float64")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "int64", "bool"])
def test_zero_dim_round_trip(dtype):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    dt = getattr(ms, dtype if dtype != "bool" else "bool_")
    t = b.from_numpy(np.asarray(1.0), dt)
    assert tuple(t.shape) == () and b.dtype(t) is dt
    back = b.to_numpy(t)
    assert back.shape == () and back.dtype == dt.np_dtype and back.astype(np.float64) == 1.0


def test_creation_ops():
    both(lambda: (ops.zeros((2, 3)), ops.ones((2,), ms.int32), ops.full((2, 2), 1.5),
                  ops.arange(0, 5), ops.arange(0.0, 1.0, 0.25), ops.eye(3, 4),
                  ops.arange(5, dtype=ms.float16)), dtype=None)


def test_nonstandard_input_arrays_are_copied():
    ms.set_context(backend="torch")
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = src[:, ::2]                      # not contiguous
    ro = src.copy()
    ro.setflags(write=False)                # read-only
    np.testing.assert_array_equal(ms.Tensor(view).asnumpy(), view)
    np.testing.assert_array_equal(ms.Tensor(ro).asnumpy(), ro)
    t = ms.Tensor(src)
    src[0, 0] = 100
    assert t.asnumpy()[0, 0] == 0


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


# -- fused ops against the core's composites on numpy ----------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_softmax_family(dtype):
    x = rnd(3, 4, 5) * 3
    both(lambda a: (ops.softmax(a, 1), ops.log_softmax(a, -1), ops.softmax(a, 0)), x,
         dtype=dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_layer_norm(dtype):
    x, w, b = rnd(4, 3, 6), rnd(3, 6), rnd(3, 6)
    both(lambda a, g, c: (ops.layer_norm(a, (6,), None, None, 1e-5),
                          ops.layer_norm(a, (3, 6), g, c, 1e-3)), x, w, b, dtype=dtype)


def test_layer_norm_half_input_float32_params():
    x, w, b = rnd(4, 6), rnd(6), rnd(6)

    def fn(a, g, c):
        return ops.layer_norm(ops.cast(a, ms.float16), (6,), g, c)
    both(fn, x, w, b, dtype="float32", factor=100.0)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_batch_norm_updates_running_statistics(training, dtype):
    x, g, b = rnd(4, 3, 5, 5), rnd(3), rnd(3)
    rm, rv = rnd(3), rnd(3, low=0.5, high=2.0)

    def fn(a, gamma, beta, mean0, var0):
        mean = ms.Parameter(mean0, name="mean", requires_grad=False)
        var = ms.Parameter(var0, name="var", requires_grad=False)
        out = ops.batch_norm(a, mean, var, gamma, beta, training, 0.1, 1e-5)
        return out, mean.value(), var.value()
    both(fn, x, g, b, rm, rv, dtype=dtype, factor=5.0)


def test_batch_norm_gradients_and_half_input():
    x, g, b = rnd(4, 3, 2, 2), rnd(3), rnd(3)

    def fn(a, gamma, beta):
        mean = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), requires_grad=False)
        var = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), requires_grad=False)
        loss = lambda a, gamma, beta: ops.sum(ops.mul(ops.batch_norm(  # noqa: E731
            a, mean, var, gamma, beta, True), ops.arange(48, dtype=ms.float32).reshape(
            4, 3, 2, 2)))
        return ms.grad(loss, (0, 1, 2))(a, gamma, beta)
    both(fn, x, g, b, dtype="float32", factor=20.0)

    def half(a, gamma, beta):
        mean = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), requires_grad=False)
        var = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), requires_grad=False)
        out = ops.batch_norm(ops.cast(a, ms.float16), mean, var, gamma, beta, True)
        return ops.cast(out, ms.float32), mean.value(), var.value()
    both(half, x, g, b, dtype="float32", factor=300.0)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy(reduction, smoothing):
    x = rnd(6, 5) * 2
    t = np.array([0, 4, -100, 2, 2, 1])

    def fn(a):
        return ops.cross_entropy(a, ms.Tensor(t), ignore_index=-100, reduction=reduction,
                                 label_smoothing=smoothing)
    both(fn, x, dtype="float64")
    both(fn, x, dtype="float32")
    both(fn, x, dtype="float16", factor=2.0)


def test_cross_entropy_int32_targets_and_gradient():
    x = rnd(4, 3)
    t = np.array([0, 2, 1, 1], dtype=np.int32)
    both(lambda a: ms.grad(lambda z: ops.cross_entropy(z, ms.Tensor(t)))(a), x,
         dtype="float64")


@pytest.mark.parametrize("variant", ["plain", "causal", "bool_mask", "float_mask",
                                     "causal_and_mask", "scale"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_attention(variant, dtype):
    q, k, v = rnd(2, 2, 4, 8), rnd(2, 2, 6, 8), rnd(2, 2, 6, 8)
    mask_bool = RNG.uniform(size=(4, 6)) > 0.3
    mask_bool[:, 0] = True  # every row keeps at least one key
    mask_float = rnd(4, 6)

    def fn(a, b, c):
        kw = {}
        if variant in ("bool_mask", "causal_and_mask"):
            kw["attn_mask"] = ms.Tensor(mask_bool)
        if variant == "float_mask":
            kw["attn_mask"] = ms.Tensor(mask_float, dtype=a.dtype)
        if variant in ("causal", "causal_and_mask"):
            kw["is_causal"] = True
        if variant == "scale":
            kw["scale"] = 0.3
        return ops.scaled_dot_product_attention(a, b, c, **kw)
    both(fn, q, k, v, dtype=dtype, factor=2.0)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_fused_relu_dense_addcmul_values_and_gradients(dtype):
    """The hot-path fused ops (relu, dense, addcmul) give the composites' values, and relu's
    gradient is 0 at exactly 0 as in MindSpore."""
    x = rnd(4, 5)
    x[0, :2] = 0.0
    w, b, c = rnd(3, 5), rnd(3), rnd(4, 5)

    def fn(a, weight, bias, other):
        relu = ops.relu(a)
        lin = ops.dense(a, weight, bias)
        lin1 = ops.dense(a[0], weight)                   # 1-d input, no bias
        acm = ops.addcmul(a, other, a, value=0.5)
        cell = ms.nn.ReLU()(a)
        grads = ms.grad(lambda p, q, r: ops.sum(ops.relu(ops.dense(p, q, r)) * 1.5)
                        + ops.sum(ops.relu(p)), (0, 1, 2))(a, weight, bias)
        return relu, lin, lin1, acm, cell, grads
    ms.set_context(backend="torch")
    b_ = ms.context.current_backend()
    assert b_.relu is torch.relu and b_.addcmul is torch.addcmul
    both(fn, x, w, b, c, dtype=dtype, factor=2.0)
    g = ms.grad(lambda p: ops.sum(ops.relu(p)))(ms.Tensor(x, dtype=getattr(ms, dtype)))
    np.testing.assert_array_equal(g.asnumpy().astype(np.float64), (x > 0).astype(np.float64))


def test_nn_dense_and_relu_cells_use_the_fused_ops(monkeypatch):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    seen = []
    monkeypatch.setattr(b, "dense", lambda x, w, bias: seen.append("dense") or
                        torch.nn.functional.linear(x, w, bias))
    monkeypatch.setattr(b, "relu", lambda x: seen.append("relu") or torch.relu(x))
    ms.set_seed(0)
    net = ms.nn.SequentialCell([ms.nn.Dense(4, 3), ms.nn.ReLU()])
    out = net(ms.Tensor(np.ones((2, 4), np.float32)))
    assert seen == ["dense", "relu"]
    w, bias = (p.asnumpy() for p in net.trainable_params())
    np.testing.assert_allclose(out.asnumpy(), np.maximum(np.ones((2, 4)) @ w.T + bias, 0),
                               rtol=1e-6)


# -- autodiff -------------------------------------------------------------------------------
def _mlp_loss(x, w1, w2, y):
    h = ops.tanh(ops.matmul(x, w1))
    h = ops.gelu(h)
    logits = ops.matmul(h, w2)
    return ops.cross_entropy(logits, y) + ops.mean(ops.square(w1)) * 0.1


def test_value_and_grad_matches_reference_autodiff():
    x, w1, w2 = rnd(5, 4), rnd(4, 6), rnd(6, 3)
    y = np.array([0, 2, 1, 1, 0])

    def fn(a, b, c):
        return ms.value_and_grad(lambda a, b, c: _mlp_loss(a, b, c, ms.Tensor(y)),
                                 (0, 1, 2))(a, b, c)
    both(fn, x, w1, w2, dtype="float64")


def test_gradients_against_central_differences_float64():
    ms.set_context(backend="torch")
    x0, w0 = rnd(1, 2, 6), rnd(3, 2, 3)

    def loss(x, w):
        z = ops.conv1d(x, w, None, 1, "pad", 1)                       # (1, 3, 6)
        pooled = ops.max_pool(x, 2, 1, 0, nd=1)
        return (ops.sum(ops.sin(z) * ops.softmax(z, -1)) + ops.sum(pooled * pooled)
                + ops.sum(x[:, :, ::-1] * z[:, :2, :]) + ops.sum(ops.layer_norm(z, (6,))[0, 0]))

    grads = ms.grad(loss, (0, 1))(ms.Tensor(x0), ms.Tensor(w0))
    eps = 1e-6
    for k, base in enumerate((x0, w0)):
        numeric = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            plus, minus = base.copy(), base.copy()
            plus[i] += eps
            minus[i] -= eps
            args_p = [ms.Tensor(plus if j == k else b) for j, b in enumerate((x0, w0))]
            args_m = [ms.Tensor(minus if j == k else b) for j, b in enumerate((x0, w0))]
            numeric[i] = (loss(*args_p).item() - loss(*args_m).item()) / (2 * eps)
        np.testing.assert_allclose(grads[k].asnumpy(), numeric, rtol=1e-6, atol=1e-8)


def test_value_and_grad_unused_and_integer_primals_get_zeros():
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    unused = torch.tensor([3.0], dtype=torch.float64)
    idx = torch.tensor([1, 0])

    def fn(a, u, i):
        return (a[i] * a).sum(), [a * 2]

    (value, aux), grads = b.value_and_grad(fn, [x, unused, idx], True)
    assert value.item() == pytest.approx(4.0)
    assert not value.requires_grad and not aux[0].requires_grad
    np.testing.assert_allclose(grads[0].numpy(), [4.0, 2.0])  # f = 2 a0 a1
    np.testing.assert_array_equal(grads[1].numpy(), [0.0])
    np.testing.assert_array_equal(grads[2].numpy(), [0, 0])
    assert not x.requires_grad  # the caller's arrays are untouched


def test_stop_gradient_is_detach():
    def fn(a):
        return ms.grad(lambda z: ops.sum(z * ops.stop_gradient(z)))(a)
    got = both(fn, rnd(4), dtype="float64")
    x = run_on("numpy", lambda a: a, rnd(4))
    assert got.shape == x.shape


# -- random streams ----------------------------------------------------------------------------
def test_random_streams_are_counter_based_and_deterministic():
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    s0 = b.rng_state(7)
    assert s0.dtype == torch.int64 and s0.tolist() == [7, 0]
    u1, s1 = b.random_uniform(s0, (1000,), ms.float32)
    u2, s2 = b.random_uniform(s0, (1000,), ms.float32)
    assert s1.tolist() == [7, 1] and torch.equal(u1, u2)
    u3, _ = b.random_uniform(s1, (1000,), ms.float32)
    assert not torch.equal(u1, u3)
    other, _ = b.random_uniform(b.rng_state(8), (1000,), ms.float32)
    assert not torch.equal(u1, other)
    # The first n values of a longer draw are the same: values depend on (seed, counter, i).
    longer, _ = b.random_uniform(s0, (2000,), ms.float32)
    assert torch.equal(longer[:1000], u1)
    assert s0.tolist() == [7, 0]  # states are values, never mutated


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_random_distributions(dtype):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    dt = getattr(ms, dtype)
    u, s = b.random_uniform(b.rng_state(3), (200, 100), dt)
    n, _ = b.random_normal(s, (200, 100), dt)
    assert u.dtype == b.native_dtype(dt) and tuple(u.shape) == (200, 100)
    uf, nf = u.double(), n.double()
    assert 0.0 <= uf.min().item() and uf.max().item() < 1.0
    # 20000 draws: the standard errors are 0.002 (mean of U) and 0.007 (mean of N).
    assert abs(uf.mean().item() - 0.5) < 0.01
    assert abs(uf.var().item() - 1 / 12) < 0.005
    assert abs(nf.mean().item()) < 0.03 and abs(nf.std().item() - 1) < 0.03
    assert abs(((nf.abs() < 1).double().mean().item()) - 0.6827) < 0.02
    hist = torch.histc(uf.float(), bins=10, min=0, max=1) / uf.numel()
    assert torch.all((hist - 0.1).abs() < 0.012)


def test_dropout_and_global_stream_through_ops():
    ms.set_context(backend="torch")
    ms.set_seed(11)
    a = ops.dropout(ops.ones((4000,)), p=0.25).asnumpy()
    ms.set_seed(11)
    b = ops.dropout(ops.ones((4000,)), p=0.25).asnumpy()
    c = ops.dropout(ops.ones((4000,)), p=0.25).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)
    assert abs((a == 0).mean() - 0.25) < 0.03
    np.testing.assert_allclose(a[a != 0], 1 / 0.75, rtol=1e-6)


# -- overflow check --------------------------------------------------------------------------
def test_all_finite_one_pass_one_sync(monkeypatch):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    arrays = [torch.randn(5, 3), torch.randn(7).half(), torch.randn(2, 2).bfloat16(),
              torch.arange(4), torch.randn(3).double()]
    assert b.all_finite(arrays) is True
    assert b.all_finite([]) is True
    syncs = []
    original = torch.Tensor.item

    def counting_item(self):
        syncs.append(1)
        return original(self)
    monkeypatch.setattr(torch.Tensor, "item", counting_item)
    for k, bad in enumerate((math.inf, -math.inf, math.nan)):
        broken = [a.clone() for a in arrays]
        broken[k + 1 if k < 2 else 4].view(-1)[0] = bad
        syncs.clear()
        assert b.all_finite(broken) is False
        assert len(syncs) == 1
    monkeypatch.undo()
    # 65504 is finite in float16; the check must not overflow on large finite values.
    assert b.all_finite([torch.full((3,), 65504.0, dtype=torch.float16)]) is True


# -- devices ----------------------------------------------------------------------------------
@pytest.mark.skipif(CUDA, reason="checks the error on a machine without CUDA")
def test_gpu_without_cuda_is_a_clear_error():
    ms.set_context(backend="torch")
    with pytest.raises(ValueError, match="device_target"):
        ms.set_context(device_target="GPU")
    assert ms.context.current_backend().device == "CPU"
    with pytest.raises(ValueError, match="device_target"):
        ms.set_context(device_target="Ascend")


def test_cpu_device_stats_and_sync():
    ms.set_context(backend="torch", device_target="CPU")
    b = ms.context.current_backend()
    assert b.memory_stats() == {}
    b.synchronize()
    assert ms.Tensor(np.ones(2))._data.device.type == "cpu"


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
def test_cuda_placement_matches_cpu():
    x, w = rnd(4, 3, 6, 6), rnd(5, 3, 3, 3)

    def fn(a, b):
        out = ops.relu(ops.conv2d(a, b, pad_mode="same"))
        return ms.value_and_grad(lambda p, q: ops.sum(ops.softmax(ops.conv2d(
            p, q, pad_mode="same"), 1) * ops.arange(5, dtype=ms.float32).reshape(
            1, 5, 1, 1)), (0, 1))(a, b), out
    ref = run_on("torch", fn, x, w, dtypes=ms.float32, device="CPU")
    got = run_on("torch", fn, x, w, dtypes=ms.float32, device="GPU")
    b = ms.context.current_backend()
    assert b.device == "GPU:0"
    assert ms.Tensor(np.ones(2))._data.device.type == "cuda"
    assert b.memory_stats()["bytes_in_use"] > 0
    assert_close(got, ref, "float32", factor=50.0)
    u_cpu = run_on("torch", lambda: ops.uniform((100,), seed=5), device="CPU")
    u_gpu = run_on("torch", lambda: ops.uniform((100,), seed=5), device="GPU")
    np.testing.assert_array_equal(u_cpu, u_gpu)  # counter-based: same stream on every device


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
@pytest.mark.parametrize("spread", ["small", "full_range"])
def test_exact_int_matmul_wraps_around_like_numpy(dtype, spread, monkeypatch):
    """The integer matmul CUDA lacks, on the CPU: exact, wrapping in the dtype, batched
    with broadcasting; the float64 path (small values) and the blocked int64 path (over
    several blocks here)."""
    from mscore_torch import ops as tb
    monkeypatch.setattr(tb, "_INT_MATMUL_CHUNK", 64)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    low, high = (info.min, info.max) if spread == "full_range" else (max(info.min, -5), 6)
    a = rng.integers(low, high, size=(2, 1, 3, 40), endpoint=True, dtype=dtype)
    b = rng.integers(low, high, size=(4, 40, 5), endpoint=True, dtype=dtype)
    got = tb.exact_int_matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    expected = np.matmul(a, b)          # numpy's integer loop wraps in the dtype
    assert got.dtype == expected.dtype and got.shape == (2, 4, 3, 5)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_matmul_on_cuda_matches_the_cpu(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(4)
    a = rng.integers(info.min, info.max, size=(3, 16), endpoint=True, dtype=dtype)
    b = rng.integers(info.min, info.max, size=(16, 2), endpoint=True, dtype=dtype)
    ms.set_context(backend="torch", device_target="GPU")
    try:
        got = ms.ops.matmul(ms.Tensor(a), ms.Tensor(b)).asnumpy()
    finally:
        ms.set_context(device_target="CPU")
    np.testing.assert_array_equal(got, np.matmul(a, b))


# -- 20-step training runs: torch must reproduce the numpy losses -------------------------------
def _init(shape, rng):
    fan_in = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def _train(backend, kind, steps=20, mode=ms.PYNATIVE_MODE):
    """Losses of ``steps`` SGD-with-momentum steps from fixed weights and batches."""
    ms.set_context(backend=backend, mode=mode)
    rng = np.random.default_rng(0)
    if kind == "mlp":
        shapes = [(32, 20), (32,), (16, 32), (16,), (5, 16), (5,)]
        data = [rng.standard_normal((16, 20)).astype(np.float32) for _ in range(steps)]
    else:
        shapes = [(4, 1, 3, 3), (4,), (6, 4, 3, 3), (6,), (5, 6 * 2 * 2), (5,)]
        data = [rng.standard_normal((8, 1, 8, 8)).astype(np.float32) for _ in range(steps)]
    teacher = rng.standard_normal((int(np.prod(data[0].shape[1:])), 5))
    labels = [np.argmax(x.reshape(len(x), -1) @ teacher, 1) for x in data]  # learnable
    params = [ms.Parameter(ms.Tensor(_init(s, rng) if len(s) > 1 else
                                     np.full(s, 0.01, np.float32)), name=f"p{i}")
              for i, s in enumerate(shapes)]
    moments = [ms.Parameter(ms.Tensor(np.zeros(s, np.float32)), name=f"m{i}",
                            requires_grad=False) for i, s in enumerate(shapes)]

    def forward(x, y):
        if kind == "mlp":
            h = ops.relu(ops.dense(x, params[0], params[1]))
            h = ops.tanh(ops.dense(h, params[2], params[3]))
            logits = ops.dense(h, params[4], params[5])
        else:
            h = ops.relu(ops.conv2d(x, params[0], params[1], pad_mode="same"))
            h = ops.max_pool2d(h, 2, 2)
            h = ops.relu(ops.conv2d(h, params[2], params[3], pad_mode="pad", padding=1,
                                    stride=1))
            h = ops.avg_pool2d(h, 2, 2)
            logits = ops.dense(ops.flatten(h), params[4], params[5])
        return ops.cross_entropy(logits, y)

    step = ms.value_and_grad(forward, None, params)
    losses = []
    for x, y in zip(data, labels):
        loss, grads = step(ms.Tensor(x), ms.Tensor(y))
        for p, m, g in zip(params, moments, grads):
            m.assign_value(m * 0.9 + g)
            p.assign_value(p - m * 0.05)
        losses.append(loss.item())
    return np.array(losses), [p.asnumpy() for p in params]


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_twenty_training_steps_match_numpy(kind):
    ref_losses, ref_params = _train("numpy", kind)
    losses, params = _train("torch", kind)
    assert ref_losses[-1] < ref_losses[0]  # it learns
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-4, atol=1e-5)
    for p, r in zip(params, ref_params):
        np.testing.assert_allclose(p, r, rtol=1e-3, atol=1e-4)


# -- GRAPH_MODE -------------------------------------------------------------------------------
class _Affine(ms.nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.linspace(-1, 1, 12, dtype=np.float32)
                                        .reshape(4, 3)), name="w")
        self.count = ms.Parameter(ms.Tensor(np.zeros((), np.float32)), name="count",
                                  requires_grad=False)

    def construct(self, x):
        self.count._assign(call("add", self.count._data,
                                call("full", (), 1.0, ms.float32)))
        return ops.tanh(ops.matmul(x, self.w)), ops.sum(x)


def test_graph_mode_on_cpu_runs_eagerly_with_the_same_results():
    x = rnd(2, 4).astype(np.float32)
    ms.set_context(backend="torch", mode=ms.PYNATIVE_MODE)
    ref_net = _Affine()
    ref = [_to_numpy(ref_net(ms.Tensor(x))) for _ in range(2)]
    ms.set_context(mode=ms.GRAPH_MODE)
    net = _Affine()
    b = ms.context.current_backend()
    fn = lambda *a: a  # noqa: E731
    assert b.compile(fn) is fn  # policy "auto" on CPU: eager
    got = [_to_numpy(net(ms.Tensor(x))) for _ in range(2)]
    assert_close(got, ref)
    assert net.count.asnumpy() == 2.0


def test_compile_through_torch_compile_and_fallback(monkeypatch):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    monkeypatch.setattr(b, "_compile_policy", "always")
    graphs = []

    def counting_compiler(gm, example_inputs):  # dynamo only, no codegen: quick on CPU
        graphs.append(gm)
        return gm.forward
    monkeypatch.setattr(b, "_compile_backend", counting_compiler)

    def step(values, raw):
        return [torch.tanh(raw[0] @ values[0])], [values[0] * 2]

    compiled = b.compile(step, donate_argnums=(0,))
    assert compiled is not step
    w, x = torch.randn(3, 2), torch.randn(4, 3)
    for _ in range(3):
        (out,), (new_w,) = compiled([w], [x])
    torch.testing.assert_close(out, torch.tanh(x @ w))
    torch.testing.assert_close(new_w, w * 2)
    assert len(graphs) == 1  # traced once, then the compiled program runs

    def broken(values, raw):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):  # the program's own error surfaces
        b.compile(broken)([w], [x])

    def failing_compiler(gm, example_inputs):
        raise RuntimeError("codegen failed")
    monkeypatch.setattr(b, "_compile_backend", failing_compiler)
    fn = b.compile(step)
    with pytest.warns(RuntimeWarning, match="torch.compile failed"):
        (out,), _ = fn([w], [x])
    torch.testing.assert_close(out, torch.tanh(x @ w))
    monkeypatch.setattr(b, "_compile_backend", "no_such_compiler_backend")
    with pytest.warns(RuntimeWarning, match="torch.compile failed"):
        fn = b.compile(step)
    assert fn is step


def test_graph_mode_train_step_is_one_torch_compile_graph(monkeypatch):
    """With compilation forced, a whole TrainOneStepCell step (forward, torch.func gradients,
    optimizer) becomes one dynamo graph, traced once, with PYNATIVE's losses."""
    from mscore import nn
    from mscore.compile import graph

    def losses(mode):
        ms.set_context(backend="torch", mode=mode)
        ms.set_seed(0)
        net = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3)])
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
        step.set_train()
        rng = np.random.default_rng(0)
        x = ms.Tensor(rng.standard_normal((5, 6)).astype(np.float32))
        y = ms.Tensor(np.array([0, 2, 1, 1, 0]))
        return [float(step(x, y).asnumpy()) for _ in range(4)]

    ref = losses(ms.PYNATIVE_MODE)
    b = ms.context.current_backend()
    graphs = []

    def counting_compiler(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    monkeypatch.setattr(b, "_compile_policy", "always")
    monkeypatch.setattr(b, "_compile_backend", counting_compiler)
    before = graph.trace_count
    got = losses(ms.GRAPH_MODE)
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    assert len(graphs) == 1            # no graph break, no recompilation
    assert graph.trace_count - before == 1
    assert ref[-1] < ref[0]


def test_compile_policy_env_is_validated(monkeypatch):
    from mscore_torch.backend import TorchBackend
    monkeypatch.setenv("MSCORE_TORCH_COMPILE", "sometimes")
    with pytest.raises(ValueError, match="MSCORE_TORCH_COMPILE"):
        TorchBackend()


@pytest.mark.skipif(os.environ.get("MSCORE_SLOW_TESTS") != "1",
                    reason="the benchmark scripts: set MSCORE_SLOW_TESTS=1")
def test_bench_scripts_run_quickly():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for script, args in (("torch_vs_native.py", ["--steps", "2", "--repeats", "1",
                                                 "--batch", "8", "--skip-amp"]),
                         ("dispatch_overhead.py", ["--number", "20", "--repeats", "1"])):
        path = os.path.join(root, "bench", script)
        if not os.path.exists(path):
            pytest.skip(f"{script} missing")
        out = subprocess.run([sys.executable, path] + args, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        assert "ratio" in out.stdout


def test_compile_policy_auto_compiles_on_cuda_only(monkeypatch):
    """``auto`` keeps GRAPH_MODE eager on CPU and compiles on CUDA, with CUDA graphs unless
    MSCORE_TORCH_CUDA_GRAPHS=0 (the device is only pretended here: nothing runs)."""
    from mscore_torch.backend import TorchBackend
    b = TorchBackend()
    assert b._compile_policy == "auto" and not b._compiles()
    assert "CUDA" in b.graph_mode_eager_reason()
    monkeypatch.setattr(b, "_device", torch.device("cuda", 0))
    assert b._compiles() and b.graph_mode_eager_reason() is None
    assert b._compile_mode() == "reduce-overhead"
    monkeypatch.setenv("MSCORE_TORCH_CUDA_GRAPHS", "0")
    plain = TorchBackend()
    monkeypatch.setattr(plain, "_device", torch.device("cuda", 0))
    assert plain._compiles() and plain._compile_mode() is None
    monkeypatch.setenv("MSCORE_TORCH_COMPILE", "never")
    never = TorchBackend()
    monkeypatch.setattr(never, "_device", torch.device("cuda", 0))
    assert not never._compiles() and "never" in never.graph_mode_eager_reason()


def test_compiled_o2_step_with_dynamic_loss_scale_matches_pynative(monkeypatch):
    """A compiled amp O2 step with a dynamic loss scale skips the same overflowing steps and
    moves the scale as PYNATIVE does; a new batch shape compiles a new program and gives
    PYNATIVE's numbers too. The compiler is ``aot_eager`` (dynamo's graph through AOT
    autograd's functionalisation, as inductor sees it, run eagerly: quick on a CPU)."""
    from mscore import amp, nn
    from mscore.compile import graph

    def run(mode):
        ms.set_context(backend="torch", mode=mode)
        ms.set_seed(0)
        net = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3)])
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
        manager = amp.DynamicLossScaleManager(2.0 ** 22, 2, 3)  # overflows first (float16)
        step = amp.build_train_network(net, opt, nn.CrossEntropyLoss(), level="O2",
                                       loss_scale_manager=manager)
        step.set_train()
        rng = np.random.default_rng(0)
        out = []
        for batch in (5,) * 9 + (3,) * 2:
            x = ms.Tensor(rng.standard_normal((batch, 6)).astype(np.float32))
            y = ms.Tensor(rng.integers(0, 3, batch).astype(np.int32))
            loss, overflow, scale = step(x, y)
            out.append((float(loss.asnumpy()), bool(overflow.asnumpy()),
                        float(scale.asnumpy())))
        return out, net.trainable_params()[0].asnumpy()

    ref, ref_w = run(ms.PYNATIVE_MODE)
    b = ms.context.current_backend()
    graphs = []

    aot_eager = torch._dynamo.lookup_backend("aot_eager")

    def counting_compiler(gm, example_inputs, **kwargs):
        graphs.append(gm)
        return aot_eager(gm, example_inputs)
    monkeypatch.setattr(b, "_compile_policy", "always")
    monkeypatch.setattr(b, "_compile_backend", counting_compiler)
    before = graph.trace_count
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # no fallback to eager
            got, got_w = run(ms.GRAPH_MODE)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert [o for _, o, _ in ref][:2] == [True, True] and not ref[-1][1]
    assert [s for _, _, s in got] == [s for _, _, s in ref]
    assert [o for _, o, _ in got] == [o for _, o, _ in ref]
    np.testing.assert_allclose([v for v, _, _ in got], [v for v, _, _ in ref], rtol=1e-3)
    np.testing.assert_allclose(got_w, ref_w, rtol=1e-3, atol=1e-5)
    assert graph.trace_count - before == 2     # one program per batch shape, no retrace
    assert len(graphs) == 2


def test_cuda_compile_hands_inductor_its_cuda_graph_settings(monkeypatch):
    """On CUDA the program goes to inductor with reduce-overhead's settings (CUDA graphs) and
    eager's low-precision rounding as config patches (inductor takes no ``mode`` argument),
    says so once, and copies the program's outputs out of the graph pool (the device is
    pretended and inductor replaced by a recorder: nothing is compiled here)."""
    from mscore_torch.backend import TorchBackend
    b = TorchBackend()
    monkeypatch.setattr(b, "_device", torch.device("cuda", 0))
    b.device = "GPU:0"
    seen = []

    def recorder(gm, example_inputs, **kwargs):
        seen.append(kwargs)
        return gm.forward
    monkeypatch.setattr(torch._dynamo, "lookup_backend", lambda name: recorder)

    def step(values, raw):
        return [values[0] * 2], [torch.tanh(raw[0])]

    with pytest.warns(RuntimeWarning, match="CUDA graphs"):
        compiled = b.compile(step)
    assert compiled.compile_mode == "reduce-overhead"
    w, x = torch.randn(3), torch.randn(4)
    (new_w,), (out,) = compiled([w], [x])
    torch.testing.assert_close(new_w, w * 2)
    torch.testing.assert_close(out, torch.tanh(x))
    assert seen == [{"config_patches": {"triton.cudagraphs": True,
                                        "emulate_precision_casts": True}}]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # said once per backend
        b.compile(step)
