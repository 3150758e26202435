"""Vector and matrix norms of ``mindspore.ops`` (``norm``), built from the reductions and
the singular values of :mod:`mscore.ops.linalg.decompositions`."""
from __future__ import annotations

import numbers


from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore import ops
from mscore.ops.linalg.decompositions import svd

__all__ = [
    "norm",
]


# -- norms ----------------------------------------------------------------------------------
_MATRIX_ORDS = (2, -2, 1, -1, float("inf"), -float("inf"), "fro", "nuc", None)


def _vector_norm(x, ord, dim, keepdim):
    if isinstance(ord, str):
        raise TypeError(f"For norm, ord mode can not be str for vectors, but got {ord}.")
    if ord is None or ord == 2:
        return ops.sqrt(ops.sum(x * x, dim, keepdim))
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
