"""Matrix and vector products: ``matmul``, ``bmm``, ``dense``, ``bidense``, ``ger``,
``bias_add``, ``cosine_similarity``, ``addmm``-style sums of products, ``dot``, ``inner``,
``mv``, ``cross`` and ``trace``, with their Primitives.
"""
from __future__ import annotations

import numpy as np

from mscore import dispatch, fused_reference, ops
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import (
    _as_tensor,
    _axis,
    _axis1,
    _check_tensor,
    _float_input,
    _float_tensor,
    _operands,
    _tensor,
)
from mscore.ops.array.manipulation import (
    _broadcast_shape,
    diagonal,
    expand_dims,
    reshape,
    swapaxes,
    transpose,
)
from mscore.ops.control import cast
from mscore.ops.math.elementwise import add, div, maximum, mul, sqrt
from mscore.ops.primitive_base import Primitive, check_bool
from mscore.ops.reduction.reduce import sum

_wrap = Tensor._wrap


def matmul(input, other):
    """Matrix product with numpy semantics (1-d operands are promoted and squeezed)."""
    a, b = _as_tensor(input, "input"), _as_tensor(other, "other")
    ra, rb = _operands(a, b)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must be at least 1-d")
    if a_vec:
        ra = call("reshape", ra, (1,) + a.shape)
    if b_vec:
        rb = call("reshape", rb, b.shape + (1,))
    ka = dispatch.shape(ra)[-1]
    kb = dispatch.shape(rb)[-2]
    if ka != kb:
        raise ValueError(f"matmul: inner sizes differ: {a.shape} @ {b.shape}")
    if a.dtype.is_bool and b.dtype.is_bool:
        raise TypeError("matmul: expected numeric Tensors, got bool and bool")
    try:
        out = call("matmul", ra, rb)
    except Exception:
        sa, sb = dispatch.shape(ra), dispatch.shape(rb)
        try:
            np.broadcast_shapes(sa[:-2], sb[:-2])
        except ValueError:
            raise ValueError(f"matmul: batch shapes {sa[:-2]} and {sb[:-2]} do not "
                             f"broadcast ({a.shape} @ {b.shape})") from None
        raise
    if a_vec or b_vec:
        shape = dispatch.shape(out)
        shape = shape[:-2] + ((shape[-2],) if not a_vec else ()) + \
            ((shape[-1],) if not b_vec else ())
        out = call("reshape", out, shape)
    return _wrap(out)


def bmm(input_x, mat2):
    """Batched matrix product of two 3-d (or more) tensors."""
    return matmul(input_x, mat2)


batch_matmul = bmm


def dense(input, weight, bias=None):
    """``input @ weight.T + bias`` (weight is (out, in))."""
    x = _check_tensor(input, "input")
    w = _check_tensor(weight, "weight")
    if w.ndim == 2 and x.ndim >= 1 and x.dtype is w.dtype and x.shape[-1] == w.shape[1] and (
            bias is None or (isinstance(bias, Tensor) and bias.dtype is x.dtype and
                             bias.shape == (w.shape[0],))):
        raw = (x._data, w._data, None if bias is None else bias._data)
        fused = dispatch.fused("dense")
        return _wrap(fused(*raw) if fused is not None else fused_reference.dense(*raw)[0])
    out = matmul(x, transpose(w, (1, 0)))
    return out if bias is None else add(out, bias)


def ger(input, vec2):
    """Outer product of two vectors."""
    a, b = _check_tensor(input, "input"), _check_tensor(vec2, "vec2")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("ger: expected two 1-d tensors")
    return mul(reshape(a, (-1, 1)), reshape(b, (1, -1)))


outer = ger


def mm(input, mat2):
    """The matrix product of two 2-d Tensors."""
    return matmul(input, mat2)


def bias_add(input_x, bias):
    """``input_x + bias`` with ``bias`` along axis 1 (the channels)."""
    x = _check_tensor(input_x, "input_x")
    b = _check_tensor(bias, "bias")
    if x.ndim < 2:
        raise ValueError(f"input_x: expected at least 2 dimensions, got shape {x.shape}")
    if b.ndim != 1 or b.shape[0] != x.shape[1]:
        raise ValueError(f"bias: expected shape ({x.shape[1]},), got {b.shape}")
    return add(x, reshape(b, (1, -1) + (1,) * (x.ndim - 2)))


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """``x1 . x2 / max(|x1| |x2|, eps)`` along ``dim`` (shapes must broadcast)."""
    a = _float_input(x1, "x1")
    b = _float_input(x2, "x2")
    ndim = len(_broadcast_shape(a.shape, b.shape))
    ax = _axis1(dim, ndim, "dim")
    dot = sum(mul(a, b), ax)
    norms = mul(sqrt(sum(mul(a, a), ax)), sqrt(sum(mul(b, b), ax)))
    return div(dot, maximum(norms, float(eps)))


def bidense(input1, input2, weight, bias=None):
    """Bilinear map ``y_k = x1 W_k x2^T + b_k`` with ``weight`` (out, in1, in2); inputs
    (*, in1) and (*, in2) with the same leading shape."""
    a = _float_tensor(input1, "input1", "bidense")
    b = _float_tensor(input2, "input2", "bidense")
    w = _check_tensor(weight, "weight")
    out_c, in1, in2 = w.shape
    if a.shape[-1] != in1 or b.shape[-1] != in2 or a.shape[:-1] != b.shape[:-1]:
        raise ValueError(f"For 'bidense', input1 {a.shape} and input2 {b.shape} must share "
                         f"their leading shape and end in {in1} and {in2}")
    lead = a.shape[:-1]
    a2 = reshape(a, (-1, in1))
    b2 = reshape(b, (-1, in2))
    # (B, in1) @ (in1, out * in2) -> (B, out, in2), then contract with x2.
    wt = reshape(transpose(cast(w, a.dtype), (1, 0, 2)), (in1, out_c * in2))
    t = reshape(matmul(a2, wt), (-1, out_c, in2))
    y = sum(mul(t, expand_dims(b2, 1)), 2)
    if bias is not None:
        y = add(y, cast(bias, a.dtype))
    return reshape(y, lead + (out_c,))


class Dense(Primitive):
    """``Dense()(input, weight, bias=None)``: ``input @ weight.T + bias``."""

    def compute(self, input, weight, bias=None):
        return dense(input, weight, bias)


class BiasAdd(Primitive):
    """``BiasAdd(data_format='NCHW')(x, bias)``: ``bias`` along the channel axis."""

    def __init__(self, data_format="NCHW"):
        super().__init__()
        if data_format not in ("NCHW", "NHWC", "NCDHW"):
            raise ValueError(f"BiasAdd: data_format must be 'NCHW', 'NHWC' or 'NCDHW', got "
                             f"{data_format!r}")
        self.data_format = data_format

    def compute(self, input_x, bias):
        if self.data_format == "NHWC":
            return add(input_x, bias)
        return bias_add(input_x, bias)


class MatMul(Primitive):
    """``MatMul(transpose_a=False, transpose_b=False)(a, b)`` for 2-d operands."""

    def __init__(self, transpose_a=False, transpose_b=False):
        super().__init__()
        self.transpose_a = check_bool(transpose_a, "transpose_a", type(self).__name__)
        self.transpose_b = check_bool(transpose_b, "transpose_b", type(self).__name__)

    def compute(self, a, b):
        if self.transpose_a:
            a = swapaxes(a, -1, -2)
        if self.transpose_b:
            b = swapaxes(b, -1, -2)
        return matmul(a, b)


class BatchMatMul(MatMul):
    """``BatchMatMul(transpose_a=False, transpose_b=False)(a, b)`` for >= 3-d operands."""


class Ger(Primitive):
    """Outer product of two vectors."""

    def compute(self, x1, x2):
        return ger(x1, x2)


def _beta_alpha(base, product, beta, alpha):
    """``beta * base + alpha * product`` (``base`` ignored when ``beta`` is 0, so its NaNs do
    not leak, as in MindSpore)."""
    out = product if alpha == 1 else ops.mul(product, alpha)
    if beta == 0:
        return out
    return ops.add(base if beta == 1 else ops.mul(base, beta), out)


def addmm(input, mat1, mat2, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return _beta_alpha(input, ops.matmul(mat1, mat2), beta, alpha)


def addbmm(input, batch1, batch2, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    return _beta_alpha(input, ops.sum(ops.bmm(batch1, batch2), 0), beta, alpha)


def baddbmm(input, batch1, batch2, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` per batch."""
    return _beta_alpha(input, ops.bmm(batch1, batch2), beta, alpha)


def addmv(input, mat, vec, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``."""
    return _beta_alpha(input, ops.matmul(mat, vec), beta, alpha)


def addr(x, vec1, vec2, beta=1, alpha=1):
    """``beta * x + alpha * outer(vec1, vec2)``."""
    return _beta_alpha(x, ops.outer(vec1, vec2), beta, alpha)


def inner(input, other):
    """Sum of products over the last axes (a scalar times a tensor when one is 0-d)."""
    if input.ndim == 0 or other.ndim == 0:
        return ops.mul(input, other)
    k = input.shape[-1]
    if other.shape[-1] != k:
        raise ValueError(f"inner: the last dimensions differ: {input.shape} and "
                         f"{other.shape}")
    flat = ops.matmul(ops.reshape(input, (-1, k)), ops.transpose(ops.reshape(other, (-1, k)),
                                                                (1, 0)))
    return ops.reshape(flat, input.shape[:-1] + other.shape[:-1])


def dot(input, other):
    """The dot product of two 1-d Tensors."""
    if input.ndim != 1 or other.ndim != 1:
        raise ValueError(f"dot: expected two 1-d Tensors, got shapes {input.shape} and "
                         f"{other.shape}")
    return ops.sum(ops.mul(input, other))


def mv(mat, vec):
    """Matrix times vector."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise ValueError(f"mv: expected a 2-d matrix and a 1-d vector, got shapes "
                         f"{mat.shape} and {vec.shape}")
    return ops.matmul(mat, vec)


def trace(input, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum of the diagonal."""
    out = ops.sum(diagonal(input, offset, axis1, axis2), -1)
    return ops.cast(out, dtype) if dtype is not None else out


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (the first axis of size 3 when None)."""
    x = _tensor(input)
    if dim is None:
        dim = next((i for i, s in enumerate(x.shape) if s == 3), None)
        if dim is None:
            raise ValueError(f"cross: no dimension of size 3 in shape {x.shape}")
    ax = _axis(dim, x.ndim, "dim")
    lead = (slice(None),) * ax

    def part(t, i):
        return t[lead + (slice(i, i + 1),)]
    a = [part(x, i) for i in range(3)]
    b = [part(other, i) for i in range(3)]
    return ops.concat((ops.sub(ops.mul(a[1], b[2]), ops.mul(a[2], b[1])),
                       ops.sub(ops.mul(a[2], b[0]), ops.mul(a[0], b[2])),
                       ops.sub(ops.mul(a[0], b[1]), ops.mul(a[1], b[0]))), ax)
