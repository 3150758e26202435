"""Vector and matrix norms of ``mindspore.ops`` (``norm``, ``vector_norm``, ``matrix_norm``)
and pairwise distances (``cdist``), built from the reductions and the singular values of
:mod:`mscore.ops.linalg.decompositions`."""
from __future__ import annotations

import numbers

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops.linalg.decompositions import svd

__all__ = [
    "norm", "vector_norm", "matrix_norm", "cdist",
]


# -- norms ----------------------------------------------------------------------------------
_MATRIX_ORDS = (2, -2, 1, -1, float("inf"), -float("inf"), "fro", "nuc", None)


def _vector_norm(x, ord, dim, keepdim):
    if isinstance(ord, str):
        raise TypeError(f"For norm, ord mode can not be str for vectors, but got {ord}.")
    if ord is None or ord == 2:
        return ops.sqrt(ops.sum(x * x, dim, keepdim))
    if ord == 1:
        return ops.sum(ops.abs(x), dim, keepdim)
    if ord == float("inf"):
        return ops.amax(ops.abs(x), dim, keepdim)
    if ord == -float("inf"):
        return ops.amin(ops.abs(x), dim, keepdim)
    if ord == 0:
        return ops.sum(ops.cast(ops.not_equal(x, 0.0), x.dtype), dim, keepdim)
    p = float(ord)
    return ops.pow(ops.sum(ops.pow(ops.abs(x), p), dim, keepdim), 1.0 / p)


def _matrix_norm(x, ord, dims, keepdim):
    d0, d1 = dims
    if ord in (None, "fro"):
        return ops.sqrt(ops.sum(x * x, dims, keepdim))
    if ord in (1, -1, float("inf"), -float("inf")):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = ops.sum(ops.abs(x), inner, True)
        out = ops.amax(sums, outer, True) if ord in (1, float("inf")) else \
            ops.amin(sums, outer, True)
        return out if keepdim else ops.squeeze(out, tuple(sorted(dims)))
    rest = [a for a in range(x.ndim) if a not in (d0, d1)]
    s = svd(ops.transpose(x, tuple(rest) + (d0, d1)), compute_uv=False)
    out = ops.sum(s, -1) if ord == "nuc" else ops.amax(s, -1) if ord == 2 else ops.amin(s, -1)
    for axis in sorted(dims) if keepdim else ():
        out = ops.expand_dims(out, axis)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """MindSpore's ``ops.norm``: a vector norm over one axis ``dim`` (``ord`` a number, inf,
    -inf or 0, the count of non-zeros) or a matrix norm over two (``ord`` 'fro', 'nuc', 2 /
    -2 the largest / smallest singular value, 1 / -1 and inf / -inf the largest / smallest
    absolute column / row sum); without ``dim``, the 2-norm of all elements when ``ord`` is
    None, else the vector or matrix norm of a 1-D or 2-D input. ``dtype`` casts first."""
    if not isinstance(A, Tensor):
        raise TypeError(f"For norm, the input must be a Tensor, but got {type(A).__name__}.")
    x = ops.cast(A, dtype) if dtype is not None else A
    if not x.dtype.is_floating:
        x = ops.cast(x, mdt.float32)
    if dim is None:
        if ord is None:
            return ops.sqrt(ops.sum(x * x, tuple(range(x.ndim)), keepdim))
        if x.ndim not in (1, 2):
            raise ValueError(f"For norm, the input must be 1-D or 2-D when dim is None and "
                             f"ord is not None, but got {x.ndim}-D.")
        dim = tuple(range(x.ndim))
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    if len(dims) == 1 and isinstance(ord, str):
        raise TypeError(f"For norm, ord mode can not be str for vectors, but got {ord}.")
    if len(dims) == 2 and ord not in _MATRIX_ORDS:
        raise ValueError("For norm, the ord mode must be in [2, -2, 1, -1, float('inf'), "
                         f"-float('inf'), 'fro', 'nuc', None] for matrices, but got {ord}.")
    if len(dims) not in (1, 2) or not all(-x.ndim <= d < x.ndim for d in dims):
        raise ValueError("For norm, the dim is out of range.")
    dims = tuple(int(d) % x.ndim for d in dims)
    if len(dims) == 1:
        return _vector_norm(x, ord, dims[0], keepdim)
    return _matrix_norm(x, ord, dims, keepdim)


def _norm_input(x, name, dtype):
    if not isinstance(x, Tensor):
        raise TypeError(f"For {name}, the input must be a Tensor, but got {type(x).__name__}.")
    x = ops.cast(x, dtype) if dtype is not None else x
    return x if x.dtype.is_floating else ops.cast(x, mdt.float32)


def vector_norm(x, ord=2, axis=None, keepdims=False, *, dtype=None):
    """MindSpore's ``ops.vector_norm``: the ``ord``-norm of the entries over ``axis`` (an
    int, a tuple, or None for all of them): ``sum(|x|**ord)**(1/ord)``, inf / -inf the
    largest / smallest absolute value, 0 the count of non-zeros."""
    if isinstance(ord, str) or isinstance(ord, bool) or \
            not isinstance(ord, numbers.Real):
        raise ValueError("For vector_norm, the ord mode must be in [0, 2, float('inf'), "
                         "-float('inf')] or must be int or float, but got "
                         f"{ord}.")
    x = _norm_input(x, "vector_norm", dtype)
    dims = tuple(range(x.ndim)) if axis is None else \
        (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    if not all(-x.ndim <= d < max(x.ndim, 1) for d in dims):
        raise ValueError("For vector_norm, the dim is out of range.")
    dims = tuple(int(d) % max(x.ndim, 1) for d in dims)
    return _vector_norm(x, ord, dims, keepdims)


def matrix_norm(A, ord="fro", axis=(-2, -1), keepdims=False, *, dtype=None):
    """MindSpore's ``ops.matrix_norm``: the ``ord`` norm of the matrices spanned by the two
    axes ``axis`` ('fro', 'nuc', 2 / -2 the largest / smallest singular value, 1 / -1 and
    inf / -inf the largest / smallest absolute column / row sum)."""
    if ord not in _MATRIX_ORDS or ord is None:
        raise ValueError("For matrix_norm, the ord mode must be in [2, -2, 1, -1, "
                         "float('inf'), float('-inf'), 'fro', 'nuc'] but got "
                         f"{ord}.")
    x = _norm_input(A, "matrix_norm", dtype)
    dims = tuple(axis)
    if len(dims) != 2 or not all(-x.ndim <= d < x.ndim for d in dims) or x.ndim < 2:
        raise ValueError("For norm, the dim is out of range.")
    return _matrix_norm(x, ord, tuple(int(d) % x.ndim for d in dims), keepdims)


def cdist(x1, x2, p=2.0):
    """MindSpore's ``ops.cdist``: the ``p``-norm distances between the rows of ``x1``
    (..., P, M) and ``x2`` (..., R, M), shaped (..., P, R)."""
    for name, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"For 'cdist', '{name}' must be a Tensor, but got "
                            f"{type(t).__name__}.")
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or p < 0:
        raise ValueError(f"For Primitive[Cdist], p must be a non-negative value, but got "
                         f"{p}.")
    if x1.ndim < 2 or x1.ndim != x2.ndim:
        raise ValueError(f"For Primitive[Cdist], 'x' and 'y' must have the same rank of at "
                         f"least 2, but got {x1.ndim} and {x2.ndim}.")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError("For Primitive[Cdist], the number of columns of 'x' must be the "
                         "same as the number of 'y', but got "
                         f"'x_shape[{x1.ndim - 1}]': {x1.shape[-1]} and "
                         f"'y_shape[{x2.ndim - 1}]': {x2.shape[-1]}")
    diff = ops.sub(ops.expand_dims(_norm_input(x1, "cdist", None), -2),
                   ops.expand_dims(_norm_input(x2, "cdist", None), -3))
    return _vector_norm(diff, float(p), (-1,), False)
