"""Expressions run with MindSpore (``make_tensor_methods_linalg_oracle.py``) and with mscore
(``tests/test_tensor_methods_linalg.py``): ``ms`` is the framework and the names of
``inputs(ms)`` its tensors. Each case is a name and an expression; the result is a Tensor,
a tuple of Tensors, a Python value, or an exception (its type and message recorded)."""
import numpy as np


def _hooked(hook, remove=False):
    """MindSpore's register_hook example: ``z = x * y`` hooked, then ``z * y``."""
    def fn(x, y):
        z = x * y
        handle = z.register_hook(hook)
        if remove:
            handle.remove()
        return z * y
    return fn


def inputs(ms):
    """The shared inputs, built with the framework ``ms`` (and the functions that
    ``register_hook`` cases differentiate)."""
    spd = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
    gen = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 3.0], [2.0, -1.0, 0.5]], np.float32)
    return {
        "a": ms.Tensor(spd),
        "g": ms.Tensor(gen),                 # needs row pivoting (a zero leading entry)
        "ab": ms.Tensor(np.stack([spd, 2.0 * gen])),
        "b": ms.Tensor(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)),
        "r": ms.Tensor(np.array([-1.5, 0.0, 2.0], np.float32)),
        "e": ms.Tensor(np.array([-0.9, -0.3, 0.0, 0.5, 0.95], np.float32)),
        "k": ms.Tensor(np.array([1, 2, 4], np.int64)),
        "m": ms.Tensor(np.array([[1, 2, 0], [3, 4, 1], [0, 1, 2]], np.int64)),
        "cols": ms.Tensor(np.arange(36, dtype=np.float32).reshape(1, 4, 9)),
        "cols2": ms.Tensor(np.arange(64, dtype=np.float32).reshape(2, 8, 4)),
        "one": ms.Tensor(1.0, ms.float32),
        "two": ms.Tensor(2.0, ms.float32),
        "hook_doubles": _hooked(lambda grad: grad * 2),
        "hook_removed": _hooked(lambda grad: grad * 2, remove=True),
        "hook_returns_none": _hooked(lambda grad: None),
    }


CASES = [
    # determinants and inverses
    ("det", "a.det()"),
    ("det_pivot", "g.det()"),
    ("det_batch", "ab.det()"),
    ("matrix_determinant", "g.matrix_determinant()"),
    ("slogdet", "g.slogdet()"),
    ("slogdet_batch", "ab.slogdet()"),
    ("log_matrix_determinant", "a.log_matrix_determinant()"),
    ("logdet", "a.logdet()"),
    ("logdet_negative", "a[[1, 0, 2]].logdet()"),
    ("inverse", "g.inverse()"),
    ("inverse_batch", "ab.inverse()"),
    ("matrix_power_3", "g.matrix_power(3)"),
    ("matrix_power_0", "g.matrix_power(0)"),
    ("matrix_power_neg", "a.matrix_power(-2)"),
    ("matrix_power_int", "m.matrix_power(2)"),
    # Cholesky
    ("cholesky", "a.cholesky()"),
    ("cholesky_upper", "a.cholesky(True)"),
    ("cholesky_inverse", "a.cholesky().cholesky_inverse()"),
    ("cholesky_inverse_upper", "a.cholesky(True).cholesky_inverse(True)"),
    ("cholesky_solve", "b.cholesky_solve(a.cholesky())"),
    ("cholesky_solve_upper", "b.cholesky_solve(a.cholesky(True), True)"),
    # LU, QR, least squares, SVD
    ("lu_solve", "b.lu_solve(a, ms.Tensor(np.array([1, 2, 3], np.int32)))"),
    ("lu_solve_pivots", "b.lu_solve(a, ms.Tensor(np.array([3, 3, 3], np.int32)))"),
    ("lu_solve_swaps", "b.lu_solve(a, ms.Tensor(np.array([2, 3, 3], np.int32)))"),
    ("geqrf", "b.geqrf()"),
    ("geqrf_square", "g.geqrf()"),
    ("orgqr", "b.geqrf()[0].orgqr(b.geqrf()[1])"),
    ("qr", "b.qr()"),
    ("qr_complete", "b.qr(False)"),
    ("qr_square", "g.qr()"),
    ("lstsq", "b.lstsq(a)"),
    ("lstsq_wide", "b.T.lstsq(ms.Tensor(np.eye(2, dtype=np.float32)))"),
    ("svd", "b.svd()"),
    ("svd_values", "b.svd(compute_uv=False)"),
    ("svd_full", "b.svd(full_matrices=True)"),
    # elementwise and special functions
    ("inv", "a.inv()"),
    ("inv_int", "k.inv()"),
    ("conj", "r.conj()"),
    ("real", "r.real()"),
    ("imag", "r.imag()"),
    ("real_int", "k.real()"),
    ("imag_int", "k.imag()"),
    ("erfinv", "e.erfinv()"),
    ("i0", "(r * 3).i0()"),
    # col2im
    ("fold", "cols.fold(ms.Tensor([4, 4]), 2, 1, 0, 1)"),
    ("fold_tuple", "cols2.fold(ms.Tensor([3, 3]), (2, 2), 1, 0, 1)"),
    ("fold_padding", "cols2.fold(ms.Tensor([2, 2]), 2, 1, 1, 2)"),
    ("fold_dilation", "cols2.fold(ms.Tensor([5, 5]), 2, 2, 0, 2)"),
    ("col2im_tuples", "cols2.reshape(2, 2, 4, 4).col2im(ms.Tensor([3, 4]), (2, 2), (1, 2), (1, 0), "
                      "(2, 1))"),
    ("col2im", "cols.reshape(1, 1, 4, 9).col2im(ms.Tensor([4, 4]), 2, 1, 0, 1)"),
    # device
    ("device", "r.device"),
    ("move_to", "r.move_to('CPU')"),
    ("move_to_copy", "r.move_to('CPU') is r"),
    ("value", "r.value() is r"),
    ("is_pinned", "r.is_pinned()"),
    ("is_shared", "r.is_shared()"),
    ("dlpack_roundtrip", "ms.Tensor.from_dlpack(b.to_dlpack())"),
    # backward hooks on tensors
    ("register_hook", "ms.grad(hook_doubles, grad_position=(0, 1))(one, two)"),
    ("register_hook_removed", "ms.grad(hook_removed, grad_position=(0, 1))(one, two)"),
    ("register_hook_none", "ms.grad(hook_returns_none, grad_position=(0, 1))(one, two)"),
    # argument checks
    ("err_det_rank", "r.det()"),
    ("err_cholesky_square", "b.cholesky()"),
    ("err_matrix_power_float", "a.matrix_power(1.5)"),
    ("err_matrix_power_square", "b.matrix_power(2)"),
    ("err_inverse_square", "b.inverse()"),
    ("err_i0_int", "k.i0()"),
    ("err_erfinv_int", "k.erfinv()"),
    ("err_det_int", "m.det()"),
    ("err_cholesky_not_positive_definite", "g.cholesky()"),
    ("err_det_square", "b.det()"),
    ("err_slogdet_square", "b.slogdet()"),
    ("err_logdet_square", "b.logdet()"),
    ("err_slogdet_rank", "r.slogdet()"),
    ("err_inverse_rank", "r.inverse()"),
    ("err_cholesky_rank", "r.cholesky()"),
    ("err_matrix_power_rank", "r.matrix_power(2)"),
    ("err_geqrf_rank", "r.geqrf()"),
    ("err_qr_rank", "r.qr()"),
    ("err_qr_some", "b.qr(1)"),
    ("err_lstsq_rank", "r.lstsq(a)"),
    ("err_lstsq_rows", "b.lstsq(ms.Tensor(np.ones((2, 2), np.float32)))"),
    ("err_cholesky_solve_square", "b.cholesky_solve(b)"),
    ("err_cholesky_inverse_square", "b.cholesky_inverse()"),
    ("err_lu_solve_pivots", "b.lu_solve(a, ms.Tensor(np.array([1.0, 2.0, 3.0], np.float32)))"),
    ("err_svd_rank", "r.svd()"),
    ("err_register_hook_callable", "r.register_hook(1)"),
    ("err_inv_bool", "ms.Tensor([True, False]).inv()"),
    ("err_fold_blocks",
     "ms.Tensor(np.zeros((1, 4, 10), np.float32)).fold(ms.Tensor([4, 4]), 2, 1, 0, 1)"),
    ("err_move_to_target", "r.move_to(1)"),
    ("err_move_to_blocking", "r.move_to('CPU', 1)"),
]

# Cases whose exception message mscore words as MindSpore does (the others: the type only,
# MindSpore's text being a kernel-selection report).
SAME_MESSAGE = frozenset({
    "err_det_rank", "err_cholesky_square", "err_matrix_power_float",
    "err_matrix_power_square", "err_inverse_square", "err_i0_int", "err_fold_blocks",
    "err_move_to_target", "err_move_to_blocking", "err_cholesky_not_positive_definite",
    "err_det_square", "err_slogdet_square", "err_logdet_square", "err_slogdet_rank",
    "err_inverse_rank", "err_cholesky_rank", "err_matrix_power_rank", "err_geqrf_rank",
    "err_qr_rank", "err_qr_some", "err_lstsq_rank", "err_lstsq_rows",
    "err_cholesky_solve_square", "err_cholesky_inverse_square", "err_lu_solve_pivots",
    "err_svd_rank", "err_register_hook_callable",
})
