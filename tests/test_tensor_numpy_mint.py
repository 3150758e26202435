"""Tensor methods, ``mscore.numpy`` and ``mscore.mint`` against MindSpore 2.10's recorded
results (``tests/data/tensor_numpy_mint_oracle.json``, made by
``tests/data/make_tensor_numpy_mint_oracle.py`` with the real MindSpore), on every installed
backend; in-place methods update the tensor and return it."""
import os
import sys

import numpy as np
import pytest
from _helpers import each_backend
from _oracle import compare, load

import mscore as ms
import mscore.numpy as mnp
from mscore import mint

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "data"))
from tensor_numpy_mint_cases import CASES, inputs  # noqa: E402

ORACLE = load("tensor_numpy_mint_oracle.json")["cases"]
# MindSpore's CPU build has no kernel for these (recorded as errors): they are checked
# against numpy references below instead.
NO_CPU_KERNEL = sorted(k for k, v in ORACLE.items() if v["kind"] == "error")


backend = each_backend()


@pytest.mark.parametrize("name,expr", [c for c in CASES if c[0] not in NO_CPU_KERNEL],
                         ids=[c[0] for c in CASES if c[0] not in NO_CPU_KERNEL])
def test_matches_mindspore(backend, name, expr):
    scope = dict(inputs(ms), ms=ms, mnp=mnp, mint=mint, np=np)
    compare(eval(expr, scope), ORACLE[name], name, rtol=1e-5, atol=1e-6)


def test_cases_without_a_mindspore_cpu_kernel_match_numpy(backend):
    x = np.array([[1.0, 5.0, 3.0], [4.0, -2.0, 6.5]], np.float32)
    t = ms.Tensor(x)
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    F = mint.nn.functional
    np.testing.assert_allclose(F.log_softmax(t, 1).asnumpy(), logp, rtol=1e-5, atol=1e-6)
    target = np.array([0, 2])
    want = -logp[np.arange(2), target].mean()
    np.testing.assert_allclose(F.cross_entropy(t, ms.Tensor(target, ms.int32)).asnumpy(),
                               want, rtol=1e-5)
    smooth = 0.9 * want + 0.1 * (-logp.mean(1)).mean()
    np.testing.assert_allclose(
        F.cross_entropy(t, ms.Tensor(target, ms.int32), label_smoothing=0.1).asnumpy(),
        smooth, rtol=1e-5)
    np.testing.assert_allclose(F.mse_loss(t, t * 0.5).asnumpy(), ((x * 0.5) ** 2).mean(),
                               rtol=1e-6)
    np.testing.assert_allclose(F.normalize(t).asnumpy(),
                               x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(F.one_hot(ms.Tensor([0, 2]), 3).asnumpy(),
                                  np.eye(3, dtype=np.int64)[[0, 2]])
    np.testing.assert_allclose(mint.stack([t, t]).asnumpy(), np.stack([x, x]))
    np.testing.assert_array_equal(mint.arange(0, 5, 2).asnumpy(), [0, 2, 4])
    values, idx = mint.topk(t, 1)
    np.testing.assert_array_equal(idx.asnumpy().ravel(), x.argmax(1))
    np.testing.assert_allclose(t.quantile(0.3, 1).asnumpy(), np.quantile(x, 0.3, axis=1),
                               rtol=1e-6)
    b = x > 2
    np.testing.assert_allclose(mint.where(ms.Tensor(b), t, 0.0).asnumpy(), np.where(b, x, 0))
    np.testing.assert_allclose(mint.nn.ZeroPad2d((1, 0, 0, 1))(t.reshape(1, 1, 2, 3))
                               .asnumpy()[0, 0], np.pad(x, ((0, 1), (1, 0))))
    np.testing.assert_allclose(mint.nn.ReflectionPad1d(1)(t.reshape(1, 2, 3)).asnumpy()[0],
                               np.pad(x, ((0, 0), (1, 1)), mode="reflect"))
    np.testing.assert_allclose(mint.atan2(t, t + 1).asnumpy(), np.arctan2(x, x + 1),
                               rtol=1e-6, atol=1e-6)
    # mnp.unique is NumPy's sorted unique (MindSpore documents it so; its PyNative CPU
    # kernel, which the docs exclude, returns first-occurrence order instead)
    values, inverse = mnp.unique(mnp.array([5, 5, 4, 1, 4]), return_inverse=True)
    np.testing.assert_array_equal(values.asnumpy(), [1, 4, 5])
    np.testing.assert_array_equal(inverse.asnumpy(), [2, 2, 1, 0, 1])
    std, mean = mint.std_mean(t, 1)
    np.testing.assert_allclose(std.asnumpy(), x.std(1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(mean.asnumpy(), x.mean(1), rtol=1e-6)


def test_in_place_methods_update_and_return_the_tensor(backend):
    t = ms.Tensor(np.array([1.0, -2.0, 3.0], np.float32))
    for call, want in ((lambda: t.add_(1, alpha=2), [3.0, 0.0, 5.0]),
                       (lambda: t.clamp_(0.5, 4.0), [3.0, 0.5, 4.0]),
                       (lambda: t.masked_fill_(ms.Tensor([True, False, False]), 9.0),
                        [9.0, 0.5, 4.0]),
                       (lambda: t.fill_(2), [2.0, 2.0, 2.0]),
                       (lambda: t.zero_(), [0.0, 0.0, 0.0])):
        assert call() is t
        np.testing.assert_allclose(t.asnumpy(), want)
    assert t.dtype == ms.float32
    i = ms.Tensor(np.array([1, 2], np.int32))
    assert i.add_(1.7) is i and i.dtype == ms.int32  # the tensor keeps its dtype


@pytest.mark.parametrize("name,fn,derivative", [
    ("atan", lambda t: t.atan(), lambda v: 1 / (1 + v ** 2)),
    ("asin", lambda t: t.asin(), lambda v: 1 / np.sqrt(1 - v ** 2)),
    ("acos", lambda t: t.acos(), lambda v: -1 / np.sqrt(1 - v ** 2)),
    ("asinh", lambda t: t.asinh(), lambda v: 1 / np.sqrt(v ** 2 + 1)),
    ("atanh", lambda t: t.atanh(), lambda v: 1 / (1 - v ** 2)),
])
def test_inverse_trigonometric_gradients(backend, name, fn, derivative):
    v = np.array([0.0, 0.5, -0.3, 0.9], np.float32)  # 0 included: the mirrored branch
    grad = ms.grad(lambda a: fn(a).sum())(ms.Tensor(v))
    np.testing.assert_allclose(grad.asnumpy(), derivative(v.astype(np.float64)), rtol=2e-5,
                               atol=1e-6, err_msg=name)


def test_arctan_is_accurate_to_float32(backend):
    v = np.linspace(-60, 60, 4001).astype(np.float32)
    np.testing.assert_allclose(ms.Tensor(v).atan().asnumpy(), np.arctan(v.astype(np.float64)),
                               rtol=0, atol=3e-7)


def test_in_place_method_is_differentiable_like_its_op(backend):
    w = ms.Tensor(np.array([1.0, 2.0], np.float32))

    def f(a):
        b = a * 1.0
        b.mul_(3.0)
        return (b * b).sum()
    grad = ms.grad(f)(w)
    np.testing.assert_allclose(grad.asnumpy(), 18.0 * w.asnumpy(), rtol=1e-6)


def test_sort_and_topk_pass_gradients_to_the_values(backend):
    if backend == "jax":
        pytest.skip("orders are computed on the host, which jax's tracing transforms "
                    "(jax.grad) cannot see into (docs/differences.md)")
    x = ms.Tensor(np.array([3.0, 1.0, 2.0], np.float32))
    grad = ms.grad(lambda a: (a.topk(2)[0] * ms.Tensor([1.0, 10.0])).sum())(x)
    np.testing.assert_allclose(grad.asnumpy(), [1.0, 0.0, 10.0])


def test_mint_training_step_with_adamw(backend):
    ms.set_seed(0)
    net = mint.nn.Linear(3, 2)
    opt = mint.optim.AdamW(net.trainable_params(), lr=0.1)
    x = ms.Tensor(np.ones((4, 3), np.float32))
    y = ms.Tensor(np.array([0, 1, 0, 1], np.int32))

    def loss_fn(data, label):
        return mint.nn.functional.cross_entropy(net(data), label)
    step = ms.value_and_grad(loss_fn, None, opt.parameters)
    first, grads = step(x, y)
    for _ in range(5):
        opt(grads)
        loss, grads = step(x, y)
    assert float(loss) < float(first)


@pytest.mark.parametrize("call,argument", [
    (lambda x: x.reshape(2.5, 2), "shape"),
    (lambda x: x.view(3, 2.0), "shape"),
    (lambda x: x.reshape(2, 3).permute(1.0, 0), "permute"),
    (lambda x: x.new_zeros((2.0, 3)), "size"),
    (lambda x: x.set_const_arg(1), "const_arg"),
])
def test_non_integer_sizes_and_a_non_bool_flag_are_type_errors(call, argument):
    # MindSpore 2.10 raises TypeError for each of these (checked with the oracle)
    x = ms.Tensor(np.zeros(6, np.float32))
    with pytest.raises(TypeError, match=argument):
        call(x)
