"""MindSpore 2.10's matrix, special-function and device Tensor methods, each a thin binding
to the functional op (:mod:`mscore.ops.linalg.decompositions`, :mod:`mscore.ops.math.special`,
:mod:`mscore.ops.nn.image_fold`, :mod:`mscore.ops.math.arithmetic`); attached by
:mod:`mscore.ops.tensor_api`.

The device methods (``device``, ``move_to``, ``is_pinned``, ``is_shared``, ``value``) answer
for the tensor's one home, the active backend's device: mscore has no pinned or shared host
storage, and a tensor moves only to the device target it already lives on.
"""
from __future__ import annotations

import numpy as np

from mscore import context, ops
from mscore.common.tensor import Tensor
from mscore.ops.linalg import decompositions
from mscore.ops.math import arithmetic
from mscore.ops.math import special as special
from mscore.ops.nn import image_fold as image_fold
from mscore.ops.tensor_api.helpers import store
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
PROPERTIES = {}
method = METHODS.method


for _name, _op, _doc in (
        ("det", decompositions.det, "The determinant of the (batched) square matrix."),
        ("matrix_determinant", decompositions.matrix_determinant, "The determinant (older name)."),
        ("logdet", decompositions.logdet, "log(det): nan for a negative determinant."),
        ("slogdet", decompositions.slogdet, "``(sign, log|det|)`` of the square matrix."),
        ("log_matrix_determinant", decompositions.log_matrix_determinant, "``(sign, log|det|)``."),
        ("inverse", decompositions.inverse, "The matrix inverse."),
        ("geqrf", decompositions.geqrf, "LAPACK's Householder QR: ``(y, tau)``."),
        ("inv", arithmetic.inv, "``1 / x`` elementwise (MindSpore's ``ops.inv``)."),
        ("angle", ops.angle, "The argument of each (real) entry: pi for negatives, else 0."),
        ("conj", ops.conj, "The complex conjugate (a real tensor's values)."),
        ("real", ops.real, "The real part (a real tensor's values)."),
        ("imag", ops.imag, "The imaginary part (zeros for a real tensor)."),
        ("erfinv", special.erfinv, "The inverse error function, elementwise."),
        ("i0", special.i0, "The modified Bessel function I0, elementwise.")):
    METHODS.bind(_name, _op, _doc)


@method
def erfinv_(self):
    """In place: the inverse error function; returns ``self``."""
    return store(self, special.erfinv(self))


@method
def matrix_power(self, n):
    """The matrix multiplied by itself ``n`` times (the inverse's power when negative)."""
    return decompositions.matrix_power(self, n)


@method
def cholesky(self, upper=False):
    """The Cholesky factor (lower, or upper when ``upper``)."""
    return decompositions.cholesky(self, upper)


@method
def cholesky_inverse(self, upper=False):
    """The inverse of the matrix whose Cholesky factor is ``self``."""
    return decompositions.cholesky_inverse(self, upper)


@method
def cholesky_solve(self, input2, upper=False):
    """``x`` with ``A @ x == self``, ``input2`` being A's Cholesky factor."""
    return decompositions.cholesky_solve(self, input2, upper)


@method
def lu_solve(self, LU_data, LU_pivots):
    """``x`` with ``A @ x == self`` from A's packed LU factors and pivots."""
    return decompositions.lu_solve(self, LU_data, LU_pivots)


@method
def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    """``(x, A)`` with ``op(A) @ x == self`` for triangular ``A``."""
    return decompositions.triangular_solve(self, A, upper, transpose, unitriangular)


@method
def orgqr(self, input2):
    """Q's first columns from geqrf's ``(self, input2)``."""
    return decompositions.orgqr(self, input2)


@method
def ormqr(self, input2, input3, left=True, transpose=False):
    """``op(Q) @ input3`` (or ``input3 @ op(Q)``), Q from geqrf's ``(self, input2)``."""
    return decompositions.ormqr(self, input2, input3, left, transpose)


@method
def qr(self, some=True):
    """``(Q, R)``: reduced when ``some``, complete otherwise."""
    if not isinstance(some, bool):
        raise TypeError(f"For 'Tensor.qr', the type of 'some' should be 'bool', but got type "
                        f"'{type(some).__name__}'.")
    return decompositions.qr(self, "reduced" if some else "complete")


@method
def lstsq(self, A):
    """The least-squares solution ``X`` of ``self @ X ~= A``."""
    return decompositions.lstsq(self, A)


@method
def svd(self, full_matrices=False, compute_uv=True):
    """``(s, u, v)`` with ``self == u @ diag(s) @ v.T`` (``s`` only without
    ``compute_uv``)."""
    return decompositions.svd(self, full_matrices, compute_uv)


@method
def fold(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C * kh * kw, L) sliding-block columns summed back into (N, C, H, W) images."""
    return image_fold.fold(self, output_size, kernel_size, dilation, padding, stride)


@method
def col2im(self, output_size, kernel_size, dilation, padding_value, stride):
    """(N, C, kh * kw, L) columns summed back into (N, C, H, W) images."""
    return image_fold.col2im(self, output_size, kernel_size, dilation, padding_value, stride)


# -- device ---------------------------------------------------------------------------------
_TARGETS = ("Ascend", "GPU", "CPU")


@method
def move_to(self, to, blocking=True):
    """A copy of the tensor on device target ``to`` (the active device target only)."""
    if not isinstance(blocking, bool):   # ValueError: MindSpore's exception type
        raise ValueError(f"The type of 'blocking' must be bool, but got {blocking}")
    if to not in _TARGETS:
        raise ValueError(f"The value of 'to' must be one of ['Ascend', 'GPU', 'CPU'], but "
                         f"got {to}")
    target = context.get_context("device_target")
    if to != target:
        raise RuntimeError(f"The value of arg 'to' of method 'move_to' should be same with "
                           f"device target, bug got to:{to}, device target: {target}")
    return self.copy()


@method
def value(self):
    """The tensor itself (a Parameter's value is its data)."""
    return self


@method
def is_pinned(self):
    """False: mscore keeps no pinned host memory."""
    return False


@method
def is_shared(self):
    """False: mscore keeps no shared-memory tensors."""
    return False


class _Capsule:
    """A DLPack capsule dressed as an array-API producer on the host, for
    ``numpy.from_dlpack``."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)          # kDLCPU, device 0


@method
def to_dlpack(self):
    """A DLPack capsule of the tensor's values (a host copy: the array library owns the
    device storage)."""
    host = np.array(self.asnumpy(), copy=True)
    try:
        return host.__dlpack__()
    except (BufferError, TypeError) as exc:   # e.g. bfloat16, which DLPack-on-numpy lacks
        raise TypeError(f"to_dlpack: a {self.dtype} tensor cannot be exported ({exc})") \
            from None


def from_dlpack(dlpack):
    """A Tensor from a DLPack capsule or any object with ``__dlpack__`` (host memory;
    the values are copied onto the active backend)."""
    if hasattr(dlpack, "__dlpack__"):
        source = dlpack
    elif type(dlpack).__name__ == "PyCapsule":
        source = _Capsule(dlpack)
    else:
        raise TypeError(f"from_dlpack: expected a DLPack capsule or an object with "
                        f"__dlpack__, got {type(dlpack).__name__}")
    try:
        array = np.from_dlpack(source)
    except (TypeError, ValueError, BufferError, RuntimeError) as exc:
        raise TypeError(f"from_dlpack: expected a DLPack capsule of host memory, got "
                        f"{type(dlpack).__name__} ({exc})") from None
    return Tensor(np.array(array, copy=True))


METHODS["from_dlpack"] = staticmethod(from_dlpack)
PROPERTIES["device"] = property(lambda self: context.get_context("device_target"),
                                doc="The device target the tensor lives on ('CPU', 'GPU').")
