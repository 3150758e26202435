"""``mindspore.mint.linalg``: PyTorch-style names of the matrix functions of
:mod:`mscore.ops` (``inv``, ``qr``, ``norm``, ``vector_norm``, ``matrix_norm``)."""
from __future__ import annotations

from mscore import ops

__all__ = ["inv", "matrix_norm", "norm", "qr", "vector_norm"]


def inv(input):
    """The inverse of each square matrix in ``input`` (:func:`mscore.ops.inverse`)."""
    return ops.inverse(input)


def qr(A, mode="reduced"):
    """``(Q, R)`` of ``A``'s QR decomposition, 'reduced', 'complete' or 'r'
    (:func:`mscore.ops.qr`)."""
    return ops.qr(A, mode)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or matrix norm of ``A`` (:func:`mscore.ops.norm`)."""
    return ops.norm(A, ord, dim, keepdim, dtype=dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ``ord``-norm of the entries of ``x`` over ``dim`` (:func:`mscore.ops.vector_norm`)."""
    return ops.vector_norm(x, ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The ``ord`` norm of the matrices of ``A`` over the axes ``dim``
    (:func:`mscore.ops.matrix_norm`)."""
    return ops.matrix_norm(A, ord, dim, keepdim, dtype=dtype)
