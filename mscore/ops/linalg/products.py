"""Linear algebra: ``matmul``, ``bmm``, ``dense``, ``bidense``, ``ger``, ``bias_add``,
``cosine_similarity`` and the cumulative sums, with their Primitives.
"""
from __future__ import annotations

import numpy as np

from mscore import dispatch, fused_reference
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import (_as_tensor, _axis1, _check_tensor, _float_input, _float_tensor,
                              _operands)
from mscore.ops.primitive_base import check_bool, Primitive
from mscore.ops.control import cast
from mscore.ops.math.elementwise import add, div, maximum, mul, sqrt
from mscore.ops.array.manipulation import (
    _broadcast_shape, expand_dims, reshape, swapaxes, transpose)
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


def _cumsum_axis(x, axis):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis: expected an int, got {type(axis).__name__}")
    return _axis1(axis, x.ndim)


def cumulative_sum(x, axis, exclusive=False, reverse=False):
    """Running sums along ``axis`` as one matrix product with a triangular mask (so it
    differentiates and compiles on every backend); integer inputs keep their dtype."""
    x = _check_tensor(x, "x")
    ax = _cumsum_axis(x, axis)
    n = x.shape[ax] if x.ndim else 1
    rows = call("reshape", call("arange", 0, n, 1, mdt.int64), (n, 1))
    cols = call("reshape", call("arange", 0, n, 1, mdt.int64), (1, n))
    # mask[i, j]: input element i contributes to output j
    if reverse:
        keep = call("greater", rows, cols) if exclusive else call("greater_equal", rows,
                                                                  cols)
    else:
        keep = call("less", rows, cols) if exclusive else call("less_equal", rows, cols)
    work = x.dtype if x.dtype.is_floating else mdt.float64
    mask = _wrap(call("cast", keep, work))
    data = x if x.dtype is work else cast(x, work)
    moved = swapaxes(data, ax, -1) if x.ndim > 1 else reshape(data, (1, n))
    out = matmul(moved, mask)
    out = swapaxes(out, ax, -1) if x.ndim > 1 else reshape(out, x.shape)
    return out if work is x.dtype else cast(out, x.dtype)


def cumsum(x, axis, dtype=None):
    """Running sums of ``x`` along ``axis`` (``dtype`` casts the input first)."""
    x = _check_tensor(x, "x")
    if dtype is not None:
        x = cast(x, dtype)
    return cumulative_sum(x, axis)


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


class CumSum(Primitive):
    """``CumSum(exclusive=False, reverse=False)(input, axis)``: running sums."""

    def __init__(self, exclusive=False, reverse=False):
        super().__init__()
        self.exclusive = check_bool(exclusive, "exclusive", "CumSum")
        self.reverse = check_bool(reverse, "reverse", "CumSum")

    def compute(self, input, axis):
        return cumulative_sum(input, axis, self.exclusive, self.reverse)


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
