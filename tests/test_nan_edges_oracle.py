"""Where NaN meets an op's edge, every backend gives MindSpore 2.10's recorded answer
(``tests/data/nan_edges_oracle.json``, made by ``tests/data/make_nan_edges_oracle.py`` with
the real MindSpore): ``ops.sign`` is +0 for NaN (either sign bit) and for either zero, bit for
bit; rounding toward zero (``div`` 'trunc', ``truncate_div``, ``trunc``) keeps the sign of a
zero result; the 'mean' cross entropy and nll loss with every target ignored are NaN with
gradients 0 (logits and class weight). The conformance kit states the same sign rule in its
edge level and its generated unary cases."""
import numpy as np
import pytest
from _helpers import available_backends, use_backend
from _oracle import load

import mscore as ms
from mscore import ops

ORACLE = load("nan_edges_oracle.json")
# the mean over no counted target is 0 / 0: numpy warns on the way to MindSpore's NaN
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in divide")
BACKENDS = available_backends()


def _from_bits(patterns, dtype):
    udt = np.dtype(f"u{np.dtype(dtype).itemsize}")
    return np.array([int(p, 16) for p in patterns], dtype=udt).view(dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", sorted(ORACLE["sign"]))
def test_sign_of_nan_and_zeros(backend, dtype):
    use_backend(backend)
    case = ORACLE["sign"][dtype]
    x = _from_bits(case["input"], dtype)
    got = ops.sign(ms.Tensor(x)).asnumpy()
    assert got.dtype == np.dtype(dtype)
    want = _from_bits(case["sign"], dtype)
    udt = np.dtype(f"u{want.itemsize}")
    assert got.view(udt).tolist() == want.view(udt).tolist(), (got, np.signbit(got))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_mean_with_every_target_ignored(backend, loss):
    use_backend(backend)
    record = ORACLE["ignored_mean"]
    t = ms.Tensor(np.array(record["targets"], np.int32))

    def fn(x, w):
        if loss == "cross_entropy":
            return ops.cross_entropy(x, t, w, reduction="mean")
        return ops.nll_loss(ops.log_softmax(x, 1), t, w, reduction="mean")

    x = ms.Tensor(np.array(record["logits"], np.float32))
    w = ms.Tensor(np.array(record["weight"], np.float32))
    value, (gx, gw) = ms.value_and_grad(fn, grad_position=(0, 1))(x, w)
    want = record[loss]
    assert np.isnan(want["value"]) and np.isnan(value.asnumpy())
    np.testing.assert_array_equal(gx.asnumpy(), np.array(want["grad_logits"], np.float32))
    np.testing.assert_array_equal(gw.asnumpy(), np.array(want["grad_weight"], np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_unweighted_cross_entropy_with_every_target_ignored(backend):
    """Without a class weight (a backend's fused cross entropy takes this one)."""
    use_backend(backend)
    record = ORACLE["ignored_mean"]
    t = ms.Tensor(np.array(record["targets"], np.int32))
    x = ms.Tensor(np.array(record["logits"], np.float32))
    value, gx = ms.value_and_grad(lambda x: ops.cross_entropy(x, t, reduction="mean"))(x)
    want = record["cross_entropy_unweighted"]
    assert np.isnan(want["value"]) and np.isnan(value.asnumpy())
    np.testing.assert_array_equal(gx.asnumpy(), np.array(want["grad_logits"], np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", sorted(ORACLE["trunc"]))
def test_rounding_toward_zero_keeps_the_sign_of_a_zero(backend, dtype):
    use_backend(backend)
    case = ORACLE["trunc"][dtype]
    x = ms.Tensor(_from_bits(case["x"], dtype))
    y = ms.Tensor(_from_bits(case["y"], dtype))
    udt = np.dtype(f"u{np.dtype(dtype).itemsize}")
    for name, got in (("div_trunc", ops.div(x, y, rounding_mode="trunc")),
                      ("truncate_div", ops.truncate_div(x, y)),
                      ("trunc_of_x_over_7", ops.trunc(x / 7.0))):
        want = _from_bits(case[name], dtype)
        assert got.asnumpy().view(udt).tolist() == want.view(udt).tolist(), \
            (name, got.asnumpy(), np.signbit(got.asnumpy()))
