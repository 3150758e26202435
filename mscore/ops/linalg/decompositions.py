"""Matrix functions of MindSpore 2.10 built from the primitive op set: determinants,
inverses, powers, Cholesky, LU and triangular solves, Householder QR (``geqrf``,
``orgqr``, ``ormqr``, ``qr``), least squares and the singular value decomposition (norms
are :mod:`mscore.ops.linalg.norms`).

The backend contract has no decomposition primitive, so each factorisation here is a loop
over the columns of the (small) matrix written in ``matmul``, ``where``, ``argmax`` and
elementwise ops. Every operand keeps its full shape (rows are selected with masks and
one-hot matrices, never with data-dependent slicing), so the same code runs eagerly, under
``jit`` and under every backend's autodiff; batches (``(..., m, n)``) go through at once.
Row pivots of the LU factorisation are one-hot permutation matrices built from ``argmax``:
a constant to the gradient, as the pivot choice is to LAPACK's.
"""
from __future__ import annotations

import numbers

import numpy as np

from mscore import ops
from mscore._state import thread as _thread
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor

__all__ = [
    "cholesky", "cholesky_inverse", "cholesky_solve", "det", "geqrf", "inverse",
    "log_matrix_determinant", "logdet", "lstsq", "lu_solve", "matrix_determinant", "matrix_power",
    "orgqr", "ormqr", "qr", "slogdet", "svd",
]


# -- argument checks ------------------------------------------------------------------------
# MindSpore's messages, per primitive, for an operand of rank < 2 ({rank}, {shape}) and for
# a non-square matrix ({rows}, {cols}); the default for the others.
_RANK_MESSAGES = {
    "Cholesky": "For Cholesky, the dimension of input x must be greater than or equal to 2, "
                "but got a {rank}-D Tensor.",
    "MatrixPower": "For primitive[MatrixPower], the x's rank must be greater than or equal to "
                   "2, but got {rank}.",
    "Geqrf": "For primitive[Geqrf], the rank of a must be greater than or equal to 2, but got "
             "{rank}.",
    "Svd": "For Svd, the rank of 'input' must be great equal than 2, but get shape: {shape}",
    "Qr": "The input matrix must be at least two dimensions",
}
_RANK_DEFAULT = ("For primitive[{prim}], the {name} rank must be greater than or equal to 2, "
                 "but got {rank}.")
_SQUARE_MESSAGES = {
    "MatrixDeterminant": "For primitive[MatrixDeterminant], the row size must be equal to "
                         "{rows}, but got {cols}.",
    "LogMatrixDeterminant": "For primitive[LogMatrixDeterminant], the row size must be equal "
                            "to {rows}, but got {cols}.",
    "MatrixInverse": "For primitive[MatrixInverse], the attribute[row size] must be equal to "
                     "{rows}, but got {cols}.",
    "MatrixPower": "For MatrixPower, dim[-1] and dim[-2] of x should be the same, but got "
                   "dim[-1]: {cols} and dim[-2]: {rows}.",
    "CholeskySolve": "For CholeskySolve, x2 should be square, but got {rows} x {cols} matrix.",
}
_SQUARE_DEFAULT = "For {prim}, input x must be batch squares, but got batch {rows} x {cols} " \
                  "matrices."


def _matrix(x, prim, name="x", floating=True):
    """``x`` as a (floating) Tensor of rank >= 2, else MindSpore's exception for ``prim``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{prim}', '{name}' must be a Tensor, but got {type(x).__name__}")
    if x.ndim < 2:
        shape = ", ".join(str(d) for d in x.shape)
        raise ValueError(_RANK_MESSAGES.get(prim, _RANK_DEFAULT).format(
            prim=prim, name=name, rank=x.ndim, shape=shape))
    if floating and not x.dtype.is_floating:
        raise TypeError(f"For '{prim}', the dtype of '{name}' must be float16, float32 or "
                        f"float64, but got {x.dtype}.")
    return x


def _square(x, prim, name="x", floating=True):
    """``x`` as a Tensor of square matrices, else MindSpore's exception for ``prim``."""
    x = _matrix(x, prim, name, floating)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(_SQUARE_MESSAGES.get(prim, _SQUARE_DEFAULT).format(
            prim=prim, rows=x.shape[-2], cols=x.shape[-1]))
    return x


def _int_arg(value, name, prim):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For '{prim}', the type of '{name}' should be 'int', but got type "
                        f"'{type(value).__name__}'.")
    return int(value)


def _bool_arg(value, name, prim):
    if not isinstance(value, bool):
        raise TypeError(f"For '{prim}', '{name}' must be a bool, but got "
                        f"{type(value).__name__}.")
    return value


# -- building blocks ------------------------------------------------------------------------
def _eye_like(x, n, m=None):
    """The n x m identity in ``x``'s dtype, broadcast over ``x``'s batch axes."""
    e = ops.eye(n, n if m is None else m, x.dtype)
    return ops.broadcast_to(e, tuple(x.shape[:-2]) + tuple(e.shape))


def _unit(n, k, dtype):
    """The k-th unit vector of length n."""
    return ops.cast(ops.equal(ops.arange(n), k), dtype)


def _mt(x):
    """The matrix transpose of the last two axes."""
    return ops.swapaxes(x, -1, -2)


def _outer(u, v):
    """Batched outer product of the vectors ``u`` (..., m) and ``v`` (..., n)."""
    return ops.mul(ops.expand_dims(u, -1), ops.expand_dims(v, -2))


def _swap_rows(k, onehot_p):
    """The permutation matrix exchanging row ``k`` with the row that ``onehot_p`` (..., n)
    marks: ``I - d d^T`` with ``d = e_k - onehot_p`` (the identity where they coincide)."""
    n = onehot_p.shape[-1]
    d = _unit(n, k, onehot_p.dtype) - onehot_p
    return ops.eye(n, n, onehot_p.dtype) - _outer(d, d)


def _diagonal(x):
    """The main diagonal of the last two axes, (..., min(m, n))."""
    return ops.stack([x[..., k, k] for k in range(min(x.shape[-2:]))], -1)


def _lu(a):
    """Partial-pivot LU of square ``a``: ``(perm, lower, upper, sign)`` with
    ``perm @ a == lower @ upper``, ``lower`` unit lower triangular and ``sign`` the
    permutation's determinant (..., )."""
    n = a.shape[-1]
    rows = ops.arange(n)
    upper, lower = a, ops.zeros_like(a)
    perm = _eye_like(a, n)
    sign = ops.ones(tuple(a.shape[:-2]), a.dtype)
    for k in range(n):
        below = ops.greater_equal(rows, k)
        score = ops.where(below, ops.abs(upper[..., k]), -1.0)
        pivot_row = ops.argmax(score, -1)
        onehot = ops.cast(ops.equal(rows, ops.expand_dims(pivot_row, -1)), a.dtype)
        swap = _swap_rows(k, onehot)
        upper, lower, perm = ops.matmul(swap, upper), ops.matmul(swap, lower), \
            ops.matmul(swap, perm)
        sign = ops.where(ops.equal(pivot_row, k), sign, -sign)
        factors = ops.where(ops.greater(rows, k),
                            upper[..., k] / ops.expand_dims(upper[..., k, k], -1), 0.0)
        e_k = _unit(n, k, a.dtype)
        lower = lower + _outer(factors, ops.broadcast_to(e_k, factors.shape))
        upper = upper - _outer(factors, upper[..., k, :])
    return perm, lower + _eye_like(a, n), ops.triu(upper), sign


def _tri_solve(a, b, lower, unit=False):
    """``x`` with ``a @ x == b`` for triangular ``a`` (..., n, n), ``b`` (..., n, k)."""
    n = a.shape[-1]
    order = range(n) if lower else range(n - 1, -1, -1)
    solved = {}
    for i in order:
        acc = b[..., i, :]
        for j, xj in solved.items():
            acc = acc - ops.expand_dims(a[..., i, j], -1) * xj
        solved[i] = acc if unit else acc / ops.expand_dims(a[..., i, i], -1)
    return ops.stack([solved[i] for i in range(n)], -2)


def _solve(a, b):
    """``x`` with ``a @ x == b`` for square ``a`` (LU with partial pivoting)."""
    perm, lower, upper, _ = _lu(a)
    return _tri_solve(upper, _tri_solve(lower, ops.matmul(perm, b), True, True), False)


# -- determinants and inverses --------------------------------------------------------------
def slogdet(input):
    """``(sign, log|det|)`` of the square matrices of ``input`` (..., n, n)."""
    a = _square(input, "LogMatrixDeterminant")
    _, _, upper, sign = _lu(a)
    diag = _diagonal(upper)
    sign = sign * ops.prod(ops.sign(diag), -1)
    return sign, ops.sum(ops.log(ops.abs(diag)), -1)


def log_matrix_determinant(input):
    """MindSpore's name for :func:`slogdet`: ``(sign, log|det|)``."""
    return slogdet(input)


def det(input):
    """The determinant of the square matrices of ``input`` (..., n, n)."""
    a = _square(input, "MatrixDeterminant")
    _, _, upper, sign = _lu(a)
    return sign * ops.prod(_diagonal(upper), -1)


def matrix_determinant(input):
    """MindSpore's older name for :func:`det`."""
    return det(input)


def logdet(input):
    """log(det): nan where the determinant is negative, -inf where it is 0."""
    sign, logabs = slogdet(_square(input, "MatrixDeterminant"))
    return ops.where(ops.less(sign, 0), float("nan"), logabs)


def inverse(input):
    """The inverse of the square matrices of ``input`` (..., n, n)."""
    a = _square(input, "MatrixInverse")
    return _solve(a, _eye_like(a, a.shape[-1]))


def matrix_power(input, n):
    """``input`` (..., m, m) multiplied by itself ``n`` times (the inverse's power when
    ``n < 0``, the identity when 0); integer matrices allowed for ``n >= 0``."""
    n = _int_arg(n, "n", "MatrixPower")
    x = _square(input, "MatrixPower", floating=False)
    if n < 0:
        x, n = inverse(x), -n
    result, base = _eye_like(x, x.shape[-1]), x
    while n:
        if n & 1:
            result = ops.matmul(result, base)
        n >>= 1
        if n:
            base = ops.matmul(base, base)
    return result


# -- Cholesky -------------------------------------------------------------------------------
def cholesky(input_x, upper=False):
    """The Cholesky factor of the symmetric positive-definite ``input_x`` (..., n, n):
    lower ``L`` with ``L @ L.T == input_x``, or upper ``U = L.T`` when ``upper``."""
    a = _square(input_x, "Cholesky", "input_x")
    upper = _bool_arg(upper, "upper", "Cholesky")
    n = a.shape[-1]
    rows = ops.arange(n)
    work, factor, pivots = a, ops.zeros_like(a), []
    for j in range(n):
        pivots.append(work[..., j, j])
        pivot = ops.sqrt(pivots[-1])
        col = ops.where(ops.greater_equal(rows, j),
                        work[..., j] / ops.expand_dims(pivot, -1), 0.0)
        factor = factor + _outer(col, ops.broadcast_to(_unit(n, j, a.dtype), col.shape))
        work = work - _outer(col, col)
    _check_positive_definite(pivots)
    return _mt(factor) if upper else factor


def _check_positive_definite(pivots):
    """MindSpore's RuntimeError when a Cholesky pivot is not positive. It reads the pivots
    on the host, so it runs where values exist: in PYNATIVE mode, not inside a compiled
    program or a function the array library traces itself (there the factor holds nan)."""
    if _thread.compiled_depth:
        return
    try:
        values = ops.stack(pivots, -1).asnumpy()
    except Exception:
        return
    if not (values > 0).all():
        raise RuntimeError("Cholesky expects symmetric positive definite matrices as inputs.")


def _lower_factor(factor, upper, prim, name):
    factor = _square(factor, prim, name)
    return _mt(factor) if _bool_arg(upper, "upper", prim) else factor


def cholesky_solve(input, input2, upper=False):
    """``x`` with ``A @ x == input`` where ``input2`` is A's Cholesky factor."""
    b = _matrix(input, "CholeskySolve", "input")
    lower = _lower_factor(input2, upper, "CholeskySolve", "input2")
    return _tri_solve(_mt(lower), _tri_solve(lower, b, True), False)


def cholesky_inverse(input_x, upper=False):
    """The inverse of ``A`` from its Cholesky factor ``input_x``."""
    lower = _lower_factor(input_x, upper, "CholeskyInverse", "input_x")
    inv_lower = _tri_solve(lower, _eye_like(lower, lower.shape[-1]), True)
    return ops.matmul(_mt(inv_lower), inv_lower)


# -- LU and triangular solves ---------------------------------------------------------------
def lu_solve(b, LU_data, LU_pivots):
    """``x`` with ``A @ x == b`` from A's packed LU factors (unit-lower L below the
    diagonal, U on and above it) and LAPACK's 1-based row swaps ``LU_pivots``."""
    lu = _square(LU_data, "LuSolve", "LU_data")
    b = _matrix(b, "LuSolve", "b")
    if not isinstance(LU_pivots, Tensor) or LU_pivots.dtype.is_floating:
        got = f"Tensor[{str(LU_pivots.dtype).capitalize()}]" \
            if isinstance(LU_pivots, Tensor) else type(LU_pivots).__name__
        raise TypeError(f"For primitive[LuSolve], the input argument[lu_pivots] must be a type "
                        f"of {{Tensor[Int32]}}, but got {got}.")
    n = lu.shape[-1]
    rows = ops.arange(n)
    perm = _eye_like(lu, n)
    for k in range(n):
        target = ops.sub(ops.cast(LU_pivots[..., k], mdt.int64), 1)
        onehot = ops.cast(ops.equal(rows, ops.expand_dims(target, -1)), lu.dtype)
        perm = ops.matmul(_swap_rows(k, onehot), perm)
    y = _tri_solve(ops.tril(lu, -1) + _eye_like(lu, n), ops.matmul(perm, b), True, True)
    return _tri_solve(ops.triu(lu), y, False)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``(x, A)``: ``x`` solving ``op(A) @ x == b`` for triangular ``A`` (``op`` the
    transpose when ``transpose``; ones assumed on A's diagonal when ``unitriangular``)."""
    b = _matrix(b, "TriangularSolve", "b")
    a = _square(A, "TriangularSolve", "A")
    for name, value in (("upper", upper), ("transpose", transpose),
                        ("unitriangular", unitriangular)):
        _bool_arg(value, name, "TriangularSolve")
    tri = ops.triu(a) if upper else ops.tril(a)
    if transpose:
        tri, upper = _mt(tri), not upper
    return _tri_solve(tri, b, not upper, unitriangular), ops.mul(a, 1)


# -- Householder QR -------------------------------------------------------------------------
def _reflector(col, k, zero_goes_up):
    """LAPACK's elementary reflector for the column ``col`` (..., m) at row ``k``:
    ``(v, tau, beta)`` with ``(I - tau v v^T) col == beta e_k`` and ``v[k] == 1``
    (``tau == 0`` when nothing lies below row ``k``). ``beta`` has the sign opposite to
    the pivot ``alpha``; at ``alpha == 0`` it is positive when ``zero_goes_up`` (MindSpore's
    geqrf kernel) and negative otherwise (its qr kernel)."""
    m = col.shape[-1]
    rows = ops.arange(m)
    alpha = col[..., k]
    below = ops.where(ops.greater(rows, k), col, 0.0)
    sigma = ops.sum(below * below, -1)
    trivial = ops.equal(sigma, 0.0)
    norm = ops.sqrt(alpha * alpha + sigma)
    upward = ops.less_equal(alpha, 0.0) if zero_goes_up else ops.less(alpha, 0.0)
    beta = ops.where(upward, norm, -norm)
    beta = ops.where(trivial, alpha, beta)
    safe_beta = ops.where(trivial, 1.0, beta)
    tau = ops.where(trivial, 0.0, (beta - alpha) / safe_beta)
    scale = ops.where(trivial, 1.0, alpha - beta)
    v = below / ops.expand_dims(scale, -1) + ops.broadcast_to(_unit(m, k, col.dtype),
                                                               col.shape)
    return v, tau, beta


def _apply_reflector(v, tau, x):
    """``(I - tau v v^T) @ x`` for ``x`` (..., m, n)."""
    vtx = ops.matmul(ops.expand_dims(v, -2), x)                          # (..., 1, n)
    return x - ops.expand_dims(ops.expand_dims(tau, -1), -1) * \
        ops.matmul(ops.expand_dims(v, -1), vtx)


def geqrf(input):
    """LAPACK's QR in Householder form: ``(y, tau)`` with R on and above y's diagonal and
    the reflectors' vectors below it."""
    return _householder_qr(_matrix(input, "Geqrf", "input"), True)


def _householder_qr(a, zero_goes_up):
    """geqrf's ``(y, tau)`` of ``a`` (see :func:`_reflector` for ``zero_goes_up``)."""
    m, n = a.shape[-2:]
    r, taus, vs = a, [], []
    for k in range(min(m, n)):
        v, tau, _ = _reflector(r[..., k], k, zero_goes_up)
        r = _apply_reflector(v, tau, r)
        taus.append(tau)
        vs.append(v)
    y = ops.triu(r)
    if vs:
        cols = ops.stack(vs, -1)                                           # (..., m, k)
        if n > len(vs):
            pad_shape = tuple(cols.shape[:-1]) + (n - len(vs),)
            cols = ops.concat([cols, ops.zeros(pad_shape, a.dtype)], -1)
        y = y + ops.tril(cols, -1)
        tau = ops.stack(taus, -1)
    else:
        tau = ops.zeros(tuple(a.shape[:-2]) + (0,), a.dtype)
    return y, tau


def _reflectors(y, tau):
    """The Householder vectors stored below ``y``'s diagonal, one per ``tau`` entry."""
    m = y.shape[-2]
    rows = ops.arange(m)
    return [ops.where(ops.greater(rows, k), y[..., k], 0.0) +
            ops.broadcast_to(_unit(m, k, y.dtype), tuple(y.shape[:-2]) + (m,))
            for k in range(tau.shape[-1])]


def _q_times(y, tau, x, transpose=False):
    """``Q @ x`` (``Q^T @ x`` when ``transpose``), Q = H_1 ... H_k from geqrf's output."""
    pairs = list(zip(_reflectors(y, tau), [tau[..., k] for k in range(tau.shape[-1])]))
    for v, t in (pairs if transpose else reversed(pairs)):
        x = _apply_reflector(v, t, x)
    return x


def orgqr(input, input2):
    """The first n columns of Q = H_1 ... H_k from geqrf's ``(input, input2)``."""
    y = _matrix(input, "Orgqr", "input")
    tau = input2
    m, n = y.shape[-2:]
    if not isinstance(tau, Tensor) or tau.shape[-1] > n or n > m:
        raise ValueError(f"For 'Orgqr', expected input of shape (..., m, n) with m >= n and "
                         f"tau of length <= n, got {y.shape} and "
                         f"{getattr(tau, 'shape', type(tau).__name__)}")
    return _q_times(y, tau, _eye_like(y, m, n))


def ormqr(input, tau, other, left=True, transpose=False):
    """``op(Q) @ other`` (``other @ op(Q)`` when not ``left``), Q = H_1 ... H_k from
    geqrf's ``(input, tau)``, ``op`` the transpose when ``transpose``."""
    y = _matrix(input, "Ormqr", "input")
    other = _matrix(other, "Ormqr", "other")
    if not isinstance(tau, Tensor) or tau.shape[-1] > min(y.shape[-2:]):
        raise ValueError(f"For 'Ormqr', 'tau' must be a Tensor of at most min(m, n) = "
                         f"{min(y.shape[-2:])} reflector scales, got "
                         f"{getattr(tau, 'shape', type(tau).__name__)}")
    _bool_arg(left, "left", "Ormqr")
    _bool_arg(transpose, "transpose", "Ormqr")
    if left:
        return _q_times(y, tau, other, transpose)
    return _mt(_q_times(y, tau, _mt(other), not transpose))


def qr(input, mode="reduced"):
    """``(Q, R)`` with ``input == Q @ R``: Q (..., m, k) and R (..., k, n), k = min(m, n),
    for ``mode='reduced'``; Q (..., m, m) and R (..., m, n) for ``'complete'``; R only
    (Q empty) for ``'r'``."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"For 'qr', 'mode' must be 'reduced', 'complete' or 'r', but got "
                         f"{mode!r}.")
    a = _matrix(input, "Qr", "input")
    m, n = a.shape[-2:]
    k = min(m, n)
    y, tau = _householder_qr(a, False)
    if mode == "complete":
        return _q_times(y, tau, _eye_like(a, m)), ops.triu(y)
    r = ops.triu(y)[..., :k, :]
    if mode == "r":
        return ops.zeros((0,), a.dtype), r
    return _q_times(y, tau, _eye_like(a, m, k)), r


def lstsq(input, A):
    """The least-squares solution ``X`` (n, k) of ``input @ X ~= A`` for a full-rank
    ``input`` (m, n) and ``A`` (m, k); the minimum-norm solution when ``m < n``."""
    for operand, label in ((input, "x"), (A, "a")):
        if isinstance(operand, Tensor) and operand.ndim != 2:
            raise ValueError(f"For 'Lstsq', the dimension of {label} must be equal to 2, but "
                             f"got {label}_dim: {operand.ndim}.")
    x = _matrix(input, "Lstsq", "input")
    b = _matrix(A, "Lstsq", "A")
    if x.shape[0] != b.shape[0]:
        raise ValueError(f"For 'Lstsq', the length of x_dim[0] must be equal to the length of "
                         f"a_dims[0]. But got x_dim[0]: {x.shape[0]},  a_dims[0]: "
                         f"{b.shape[0]}.")
    m, n = x.shape
    if m >= n:
        q, r = qr(x)
        return _tri_solve(r, ops.matmul(_mt(q), b), False)
    q, r = qr(_mt(x))
    return ops.matmul(q, _tri_solve(_mt(r), b, True))


# -- singular value decomposition -----------------------------------------------------------
_JACOBI_SWEEPS = 12


def _rotate(w, vm, i, j, dtype):
    """One one-sided Jacobi rotation making columns i and j of ``w`` orthogonal."""
    wi, wj = w[..., i], w[..., j]
    alpha = ops.sum(wi * wi, -1)
    beta = ops.sum(wj * wj, -1)
    gamma = ops.sum(wi * wj, -1)
    tiny = ops.less_equal(ops.abs(gamma), 1e-30)
    zeta = (beta - alpha) / ops.where(tiny, 1.0, 2.0 * gamma)
    sgn = ops.where(ops.less(zeta, 0.0), -1.0, 1.0)
    # t = sgn / (|zeta| + sqrt(1 + zeta^2)), written so that a huge |zeta| cannot overflow
    az = ops.abs(zeta)
    big = ops.greater(az, 1.0)
    inv = 1.0 / ops.where(big, az, 1.0)
    small_az = ops.where(big, 0.0, az)
    t = sgn * ops.where(big, inv / (1.0 + ops.sqrt(1.0 + inv * inv)),
                        1.0 / (small_az + ops.sqrt(1.0 + small_az * small_az)))
    t = ops.where(tiny, 0.0, t)
    c = 1.0 / ops.sqrt(1.0 + t * t)
    s = c * t
    n = w.shape[-1]
    e_i, e_j = _unit(n, i, dtype), _unit(n, j, dtype)
    c_, s_ = ops.expand_dims(ops.expand_dims(c, -1), -1), ops.expand_dims(
        ops.expand_dims(s, -1), -1)
    rot = ops.eye(n, n, dtype) + (c_ - 1.0) * (ops.expand_dims(e_i, -1) * e_i +
                                              ops.expand_dims(e_j, -1) * e_j) + \
        s_ * (ops.expand_dims(e_i, -1) * e_j - ops.expand_dims(e_j, -1) * e_i)
    return ops.matmul(w, rot), ops.matmul(vm, rot)


def _descending_order(values):
    """The permutation (..., n, n) one-hot matrix ``p`` with ``values @ p`` sorted
    descending (ties keep their order): each entry's rank is the count of entries that
    come before it, computed with comparisons (no host round trip, so it traces)."""
    n = values.shape[-1]
    vi, vj = ops.expand_dims(values, -1), ops.expand_dims(values, -2)     # [i, j]
    earlier = Tensor(np.arange(n)[None, :] < np.arange(n)[:, None])     # j < i
    before = ops.logical_or(ops.greater(vj, vi), ops.logical_and(ops.equal(vj, vi), earlier))
    rank = ops.sum(ops.cast(before, mdt.int32), -1)                        # (..., n)
    return ops.cast(ops.equal(ops.expand_dims(rank, -1), ops.arange(n, dtype=mdt.int32)),
                    values.dtype)                                          # [i, rank i]


def svd(input, full_matrices=False, compute_uv=True):
    """``(s, u, v)`` with ``input == u @ diag(s) @ v^T``, the singular values ``s``
    descending (only ``s`` when not ``compute_uv``); one-sided Jacobi rotations."""
    a = _matrix(input, "Svd", "input")
    _bool_arg(full_matrices, "full_matrices", "Svd")
    _bool_arg(compute_uv, "compute_uv", "Svd")
    m, n = a.shape[-2:]
    if m < n:
        out = svd(_mt(a), full_matrices, compute_uv)
        return out if not compute_uv else (out[0], out[2], out[1])
    w, vm = a, _eye_like(a, n)
    for _ in range(_JACOBI_SWEEPS):
        for i in range(n - 1):
            for j in range(i + 1, n):
                w, vm = _rotate(w, vm, i, j, a.dtype)
    norms = ops.sqrt(ops.sum(w * w, -2))                                   # (..., n)
    onehot = _descending_order(norms)                                      # (..., n, n)
    s = ops.squeeze(ops.matmul(ops.expand_dims(norms, -2), onehot), -2)
    if not compute_uv:
        return s
    vm = ops.matmul(vm, onehot)
    safe = ops.where(ops.greater(s, 0.0), s, 1.0)
    u = ops.matmul(w, onehot) / ops.expand_dims(safe, -2)
    if full_matrices and m > n:
        q, _ = qr(u, "complete")
        u = ops.concat([u, q[..., n:]], -1)
    return s, u, vm
