"""The functions ``mint`` offers beyond the Tensor methods — ``einsum``, the norms and
distances of ``mint.linalg`` and ``cdist``, ``conv_tbc``, the synchronised batch norm's
pieces, ``equal``, ``item``, ``unique``, ``addr_`` and the rest — against numpy and scipy
references, on every installed backend where the function dispatches ops."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.spatial.distance
from _helpers import central_differences, each_backend

import mscore as ms
from mscore import mint

T = ms.Tensor
RNG = np.random.default_rng(7)


backend = each_backend()


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("...j,jk", [(5, 2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(4,), (4,)]), ("i,j->ij", [(3,), (4,)]), ("ijk->kji", [(2, 3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("iij->j", [(3, 3, 2)]),
    ("...ii->...i", [(2, 3, 3)]), ("a...,...->a...", [(2, 3, 4), (4,)]), ("ij->", [(3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("i,i", [(0,), (0,)]), ("", [()]), (",->", [(), ()]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_CASES, ids=[c[0] or "scalar" for c in
                                                                 EINSUM_CASES])
def test_einsum_equals_numpy(backend, equation, shapes):
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    got = mint.einsum(equation, *[T(a) for a in arrays]).asnumpy()
    want = np.einsum(equation, *[a.astype(np.float64) for a in arrays])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_einsum_gradient_by_finite_differences():
    a = RNG.standard_normal((3, 4))
    b = RNG.standard_normal((4, 2))

    def loss(x):
        return float(np.sum(np.einsum("ij,jk->ik", x, b) ** 2) + np.einsum("ii->", x[:, :3]))
    grad = ms.grad(lambda x: ms.ops.sum(ms.ops.square(ms.ops.einsum("ij,jk->ik", x, T(b))))
                   + ms.ops.einsum("ii->", x[:, :3]))(T(a))
    np.testing.assert_allclose(grad.asnumpy(), central_differences(loss, a), rtol=1e-6,
                               atol=1e-7)


@pytest.mark.parametrize("equation, error, message", [
    ("ij,jk->ik", ValueError, "names 2 operands but 1 were given"),
    ("ijk->i", ValueError, "operand 0 has 2 dimensions"),
    ("ij->iz", ValueError, "the output subscript 'z' appears in no operand"),
    ("i1->i", ValueError, "must be letters"),
    ("ij->ii", ValueError, "repeat a letter"),
    (3, TypeError, "'equation' must be a str"),
])
def test_einsum_errors(equation, error, message):
    with pytest.raises(error, match=message):
        mint.einsum(equation, T(np.ones((2, 2), np.float32)))
    with pytest.raises(ValueError, match="sizes 2 and 3"):
        mint.einsum("ij,ij->i", T(np.ones((2, 2))), T(np.ones((2, 3))))


def test_norms_and_distances(backend):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    w = x.astype(np.float64)
    for ord in (2, 1, 3.5, 0, float("inf"), -float("inf")):
        got = mint.linalg.vector_norm(T(x), ord, dim=(0, 2)).asnumpy()
        flat = np.moveaxis(w, 1, 0).reshape(4, -1)
        np.testing.assert_allclose(got, np.linalg.norm(flat, ord, axis=1), rtol=1e-5,
                                   err_msg=str(ord))
    for ord in ("fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")):
        got = mint.linalg.matrix_norm(T(x), ord, keepdim=True).asnumpy()
        want = np.linalg.norm(w, ord, axis=(-2, -1), keepdims=True)
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=str(ord))
    np.testing.assert_allclose(mint.linalg.norm(T(x[0])).asnumpy(), np.linalg.norm(w[0]),
                               rtol=1e-6)
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3))
    for p in (2.0, 1.0, 0.5, float("inf")):
        got = mint.cdist(T(a.astype(np.float32)), T(b.astype(np.float32)), p).asnumpy()
        want = scipy.spatial.distance.cdist(a, b, "chebyshev") if p == float("inf") else \
            scipy.spatial.distance.cdist(a, b, "minkowski", p=p)
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=str(p))


def test_norm_errors_as_mindspore():
    # MindSpore 2.10's ops.vector_norm / matrix_norm / cdist messages (recorded by hand from
    # the oracle: /tmp/ms/bin/python, ops.vector_norm(x, 'fro'), ops.matrix_norm(x, 3),
    # ops.cdist(x, y, -1.0), ops.cdist of (2, 3) and (4, 2))
    x = T(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"For vector_norm, the ord mode must be in \[0, 2, "
                                         r"float\('inf'\), -float\('inf'\)\] or must be int "
                                         r"or float, but got fro."):
        ms.ops.vector_norm(x, "fro")
    with pytest.raises(ValueError, match=r"For matrix_norm, the ord mode must be in \[2, -2, "
                                         r"1, -1, float\('inf'\), float\('-inf'\), 'fro', "
                                         r"'nuc'\] but got 3."):
        ms.ops.matrix_norm(x, 3)
    with pytest.raises(ValueError, match="For Primitive\\[Cdist\\], p must be a non-negative "
                                         "value, but got -1.0"):
        ms.ops.cdist(x, x, -1.0)
    with pytest.raises(ValueError, match="the number of columns of 'x' must be the same as "
                                         "the number of 'y'"):
        ms.ops.cdist(T(np.ones((2, 3), np.float32)), T(np.ones((4, 2), np.float32)))


def test_conv_tbc_equals_a_direct_sum(backend):
    x = RNG.standard_normal((6, 2, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 4)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    for pad in (0, 2):
        xp = np.pad(x.astype(np.float64), ((pad, pad), (0, 0), (0, 0)))
        steps = xp.shape[0] - w.shape[0] + 1
        want = np.stack([np.einsum("kbc,kco->bo", xp[t:t + 3], w) for t in range(steps)]) + b
        got = mint.conv_tbc(T(x), T(w), T(b), pad).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_sync_batch_norm_pieces_equal_one_batch_norm(backend):
    """Statistics of two batches combined by their counts are those of the joined batch,
    and normalising with them equals a batch norm over the joined batch."""
    parts = [RNG.standard_normal((n, 3, 4)).astype(np.float32) * 2 + 1 for n in (2, 5)]
    whole = np.concatenate(parts).astype(np.float64)
    eps = 1e-5
    stats = [mint.batch_norm_stats(T(p), eps) for p in parts]
    mean = T(np.stack([m.asnumpy() for m, _ in stats]))
    invstd = T(np.stack([s.asnumpy() for _, s in stats]))
    counts = T(np.array([p.shape[0] * p.shape[2] for p in parts], np.float32))
    running_mean = T(np.zeros(3, np.float32))
    running_var = T(np.ones(3, np.float32))
    m, s = mint.batch_norm_gather_stats_with_counts(T(parts[0]), mean, invstd, running_mean,
                                                     running_var, 0.1, eps, counts)
    want_mean = whole.mean(axis=(0, 2))
    want_var = whole.var(axis=(0, 2))
    np.testing.assert_allclose(m.asnumpy(), want_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s.asnumpy(), 1 / np.sqrt(want_var + eps), rtol=1e-4)
    n = whole.size / 3
    np.testing.assert_allclose(running_mean.asnumpy(), 0.1 * want_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(running_var.asnumpy(), 0.9 + 0.1 * want_var * n / (n - 1),
                               rtol=1e-5)
    weight, bias = np.array([1.0, 2.0, 0.5], np.float32), np.array([0.0, 1.0, -1.0], np.float32)
    got = mint.batch_norm_elemt(T(parts[1]), T(weight), T(bias), m, s, eps).asnumpy()
    want = (parts[1] - want_mean[:, None]) / np.sqrt(want_var[:, None] + eps) \
        * weight[:, None] + bias[:, None]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_small_functions():
    x = T(np.array([[1.0, -2.5], [3.7, 4.0]], np.float32))
    assert mint.equal(x, x) is True
    assert mint.equal(x, T(np.array([[1.0, -2.5], [3.7, 4.5]], np.float32))) is False
    assert mint.equal(x, T(np.ones(2, np.float32))) is False
    assert mint.item(T(np.array([3.5], np.float32))) == 3.5
    np.testing.assert_array_equal(mint.fix(x).asnumpy(), [[1.0, -2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(mint.trunc(x).asnumpy(), np.trunc(x.asnumpy()))
    np.testing.assert_array_equal(mint.clip(x, -1.0, 3.0).asnumpy(), np.clip(x.asnumpy(), -1, 3))
    np.testing.assert_array_equal(mint.ge(x, 1.0).asnumpy(), x.asnumpy() >= 1.0)
    np.testing.assert_allclose(mint.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5))
    assert mint.linspace(0, 4, 5, dtype=ms.int32).dtype == ms.int32
    values, inverse, counts = mint.unique(T(np.array([3, 1, 2, 3, 1])), return_inverse=True,
                                          return_counts=True)
    np.testing.assert_array_equal(values.asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(inverse.asnumpy(), [2, 0, 1, 2, 0])
    np.testing.assert_array_equal(counts.asnumpy(), [2, 1, 2])
    ints = np.array([5, 12, -3], np.int32)
    np.testing.assert_array_equal(mint.bitwise_not(T(ints)).asnumpy(), ~ints)
    np.testing.assert_array_equal(mint.bitwise_xor(T(ints), T(ints[::-1].copy())).asnumpy(),
                                  ints ^ ints[::-1])
    a = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(mint.addcmul(T(a), T(a), T(a), value=0.5).asnumpy(),
                               a + 0.5 * a * a)
    np.testing.assert_allclose(mint.inverse(T(a)).asnumpy(), np.linalg.inv(a), rtol=1e-8)
    np.testing.assert_allclose(mint.linalg.inv(T(a)).asnumpy(), np.linalg.inv(a), rtol=1e-8)
    upper = np.triu(a) + 3 * np.eye(3)
    rhs = RNG.standard_normal((3, 2))
    solved, _ = mint.triangular_solve(T(rhs), T(upper))
    np.testing.assert_allclose(solved.asnumpy(), scipy.linalg.solve_triangular(upper, rhs))
    target = T(np.ones((2, 3)))
    assert mint.addr_(target, T(np.array([1.0, 2.0])), T(np.array([0.0, 1.0, 2.0])),
                      beta=2) is target
    np.testing.assert_allclose(target.asnumpy(), 2 + np.outer([1, 2], [0, 1, 2]))
    np.testing.assert_array_equal(mint.imag(x).asnumpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(mint.real(x).asnumpy(), x.asnumpy())


def test_special_and_linalg_names_are_the_ops():
    x = np.array([-1.5, -0.2, 0.0, 0.5, 2.5], np.float32)
    near = x[x < 1]   # ops.erfc is 1 - erf: its float32 tail (x > 1) loses digits
    np.testing.assert_allclose(mint.special.erfc(T(near)).asnumpy(),
                               scipy.special.erfc(near.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(mint.special.expm1(T(x)).asnumpy(), np.expm1(x), rtol=1e-6)
    np.testing.assert_allclose(mint.special.exp2(T(x)).asnumpy(), np.exp2(x), rtol=1e-6)
    np.testing.assert_array_equal(mint.special.round(T(x)).asnumpy(), np.round(x))
    np.testing.assert_allclose(mint.special.sinc(T(x)).asnumpy(), np.sinc(x), rtol=1e-6)
    np.testing.assert_allclose(mint.special.log1p(T(x + 2)).asnumpy(), np.log1p(x + 2),
                               rtol=1e-6)
    m = RNG.standard_normal((2, 3))
    shifted = m - m.max(axis=1, keepdims=True)
    np.testing.assert_allclose(mint.special.log_softmax(T(m), 1).asnumpy(),
                               shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True)))
    q, r = mint.linalg.qr(T(m.T))
    np.testing.assert_allclose((q.asnumpy() @ r.asnumpy()), m.T, atol=1e-12)


@pytest.mark.parametrize("call, error, message", [
    (lambda: mint.equal(np.ones(2), T(np.ones(2))), TypeError, "'input' must be a Tensor"),
    (lambda: mint.item(1.0), TypeError, "'input' must be a Tensor"),
    (lambda: mint.conv_tbc(T(np.ones((4, 2, 3))), T(np.ones((2, 2, 5))), T(np.ones(5))),
     ValueError, r"must be \(K, C_in, C_out\)"),
    (lambda: mint.batch_norm_stats(T(np.ones(3, np.float32)), 1e-5), ValueError,
     "at least 2 dimensions"),
    (lambda: mint.batch_norm_gather_stats_with_counts(
        T(np.ones((2, 3))), T(np.ones((2, 3))), T(np.ones((2, 3)))), TypeError,
     "'counts' must be a Tensor"),
])
def test_argument_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_fold_inverts_unfold_up_to_the_overlap_count(backend):
    """col2im of im2col is each pixel times the number of blocks that cover it."""
    F = mint.nn.functional
    x = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)
    args = dict(kernel_size=(2, 3), dilation=1, padding=1, stride=(1, 2))
    cols = F.unfold(T(x), **args)
    back = F.fold(cols, (5, 6), **args).asnumpy()
    covers = np.zeros((5 + 2, 6 + 2))
    for i in range(0, 5 + 2 - 2 + 1):                 # block origins in the padded image
        for j in range(0, 6 + 2 - 3 + 1, 2):
            covers[i:i + 2, j:j + 3] += 1
    np.testing.assert_allclose(back, x * covers[1:-1, 1:-1], rtol=1e-6)
    unbatched = mint.nn.Fold((5, 6), **args)(cols[0]).asnumpy()
    np.testing.assert_allclose(unbatched, back[0], rtol=1e-6)
