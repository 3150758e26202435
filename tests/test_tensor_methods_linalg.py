"""The matrix, special-function, col2im and device Tensor methods against MindSpore 2.10's
recorded results (``tests/data/tensor_methods_linalg_oracle.json``, made by
``tests/data/make_tensor_methods_linalg_oracle.py`` with the real MindSpore) on every
installed backend; the methods MindSpore's CPU build has no kernel for (``ormqr``,
``triangular_solve``, ``angle``, ``erfinv_``) against numpy; gradients against finite
differences."""
import math
import os
import sys
import warnings

import numpy as np
import pytest
from _helpers import central_differences, each_backend
from _oracle import compare, load

import mscore as ms

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "data"))
from tensor_methods_linalg_cases import CASES, SAME_MESSAGE, inputs  # noqa: E402

ORACLE = load("tensor_methods_linalg_oracle.json")["cases"]

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
G = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 3.0], [2.0, -1.0, 0.5]])
B = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


backend = each_backend("module")


@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")  # numpy on the nan cases
@pytest.mark.parametrize("name,expr", CASES, ids=[c[0] for c in CASES])
def test_matches_mindspore(backend, name, expr):
    scope = dict(inputs(ms), ms=ms, np=np)
    want = ORACLE[name]
    if want["kind"] != "error":
        compare(eval(expr, scope), want, name, rtol=2e-5, atol=2e-5)
        return
    with pytest.raises(Exception) as info:
        eval(expr, scope)
    assert type(info.value).__name__ == want["type"], (name, info.value)
    if name in SAME_MESSAGE:
        assert str(info.value) == want["message"]


def _householder_q(y, tau):
    """Q = H_1 ... H_k from geqrf's packed output, in numpy."""
    m = y.shape[0]
    q = np.eye(m)
    for k in range(len(tau)):
        v = np.concatenate([np.zeros(k), [1.0], y[k + 1:, k]])
        q = q @ (np.eye(m) - tau[k] * np.outer(v, v))
    return q


def test_methods_without_a_mindspore_cpu_kernel_match_numpy(backend):
    b, g = ms.Tensor(B.astype(np.float32)), ms.Tensor(G.astype(np.float32))
    y, tau = b.geqrf()
    q = _householder_q(y.asnumpy().astype(np.float64), tau.asnumpy().astype(np.float64))
    column, row = ms.Tensor(G[:, :2].astype(np.float32)), ms.Tensor(G[:2].astype(np.float32))
    for operand, left, transpose, want in ((column, True, False, q @ G[:, :2]),
                                           (column, True, True, q.T @ G[:, :2]),
                                           (row, False, False, G[:2] @ q),
                                           (row, False, True, G[:2] @ q.T)):
        got = y.ormqr(tau, operand, left, transpose).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # the reduced Q of geqrf's reflectors is numpy's (LAPACK's) Q
    np.testing.assert_allclose(q[:, :2], np.linalg.qr(B)[0], rtol=1e-5, atol=1e-5)
    for upper in (True, False):
        for transpose in (True, False):
            for unit in (True, False):
                tri = np.triu(G) if upper else np.tril(G)
                tri = tri + 3 * np.eye(3)
                if unit:
                    tri = tri - np.diag(np.diag(tri)) + np.eye(3)
                x, a_out = b.triangular_solve(ms.Tensor(tri.astype(np.float32)), upper,
                                              transpose, unit)
                want = np.linalg.solve(tri.T if transpose else tri, B)
                np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-5, atol=1e-5)
                np.testing.assert_allclose(a_out.asnumpy(), tri, rtol=1e-6)
    r = np.array([-1.5, 0.0, 2.0, np.nan], np.float32)
    np.testing.assert_allclose(ms.Tensor(r).angle().asnumpy(), np.angle(r), rtol=1e-6)
    e = ms.Tensor(np.array([-0.9, 0.5, 1.0, -1.0, 1.5], np.float32))
    assert e.erfinv_() is e
    want = ORACLE["erfinv"]["values"]
    np.testing.assert_allclose(e.asnumpy()[:2], [want[0], want[3]], rtol=1e-5)
    np.testing.assert_array_equal(e.asnumpy()[2:], [np.inf, -np.inf, np.nan])
    with pytest.raises(TypeError, match="from_dlpack"):
        ms.Tensor.from_dlpack(3)
    with pytest.raises(RuntimeError, match="should be same with device target"):
        ms.Tensor([1.0]).move_to("GPU" if ms.Tensor([1.0]).device != "GPU" else "CPU")
    g.det()
    assert g.asnumpy().tolist() == G.astype(np.float32).tolist()  # inputs are not changed
    # a tensor hook outside a differentiated function would never run: an error says so
    with pytest.raises(RuntimeError, match="register the hook there"):
        b.register_hook(lambda grad: grad)


@pytest.mark.parametrize("name", ["lu", "cholesky", "erfinv", "i0", "fold"])
def test_gradients_match_finite_differences(backend, name):
    # the inputs have the shapes of the oracle cases (whose kernels a backend that compiles
    # per shape has built already); mscore runs in float32, the reference numpy in float64
    def weights(*shape):
        w = np.linspace(0.3, 1.1, int(np.prod(shape))).reshape(shape)
        return w, ms.Tensor(w.astype(np.float32))

    w3, tw3 = weights(3, 3)
    w5, tw5 = weights(5)
    wr, twr = weights(3)
    wf, twf = weights(1, 1, 4, 4)
    fns = {   # det, inverse and slogdet in one program: they share the factorisation
        "lu": (lambda t: t.det() + (t.inverse() * tw3).sum() + t.slogdet()[1],
               lambda v: np.linalg.det(v) + (np.linalg.inv(v) * w3).sum() +
               np.linalg.slogdet(v)[1], G),
        "cholesky": (lambda t: (t.cholesky() * tw3).sum(),
                     lambda v: (np.linalg.cholesky((v + v.T) / 2) * w3).sum(), A),
        "erfinv": (lambda t: (t.erfinv() * tw5).sum(),
                   lambda v: (np.vectorize(_erfinv64)(v) * w5).sum(),
                   np.array([-0.9, -0.3, 0.0, 0.5, 0.95])),
        "i0": (lambda t: (t.i0() * twr).sum(), lambda v: (np.i0(v) * wr).sum(),
               np.array([-4.5, 0.5, 6.0])),
        "fold": (lambda t: (t.fold(ms.Tensor([4, 4]), 2, 1, 0, 1) * twf).sum(),
                 lambda v: (_fold_2x2(v) * wf).sum(), np.linspace(-1, 1, 36).reshape(1, 4, 9)),
    }
    fn, ref, x0 = fns[name]
    grad = ms.grad(fn)(ms.Tensor(x0.astype(np.float32))).asnumpy().astype(np.float64)
    if name == "cholesky":   # a symmetric input: compare the symmetrised gradient
        grad = (grad + grad.T) / 2
    np.testing.assert_allclose(grad, central_differences(ref, x0.astype(np.float64)), rtol=1e-3,
                               atol=1e-4, err_msg=name)


def _fold_2x2(cols):
    """numpy fold of (1, 4, 9) columns (one channel, kernel 2 x 2, stride 1) into
    (1, 1, 4, 4)."""
    out = np.zeros((1, 1, 4, 4))
    for offset in range(4):
        i, j = divmod(offset, 2)
        for block in range(9):
            row, col = divmod(block, 3)
            out[0, 0, row + i, col + j] += cols[0, offset, block]
    return out


def _erfinv64(v):
    """erfinv by bisection on math.erf (float64 reference)."""
    lo, hi = -6.0, 6.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < v else (lo, mid)
    return (lo + hi) / 2


def test_matrix_functions_compile_into_one_program(backend):
    # no host round trip inside: a compiling backend traces them (jit falls back to eager,
    # with a RuntimeWarning, when tracing fails)
    a = ms.Tensor(A.astype(np.float32))
    fn = ms.jit(lambda t: (t.det(), t.cholesky(), t.svd(compute_uv=False)))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            det, chol, s = fn(a)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(det.asnumpy(), np.linalg.det(A), rtol=1e-5)
    np.testing.assert_allclose(chol.asnumpy(), np.linalg.cholesky(A), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s.asnumpy(), np.linalg.svd(A, compute_uv=False), rtol=1e-5)
