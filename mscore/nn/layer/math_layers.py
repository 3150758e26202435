"""Math cells of MindSpore 2.10 (mostly deprecated there, still found in training code):
``nn.Range``, ``nn.Moments``, ``nn.MatMul``, ``nn.ReduceLogSumExp``, ``nn.LGamma``,
``nn.DiGamma``, ``nn.IGamma`` and ``nn.LBeta``."""
from __future__ import annotations

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_tensor
from mscore.ops import functional as F
from mscore.ops.math.special import lbeta


def _float_in(x, name, cls, dtypes=(mdt.float16, mdt.float32)):
    check_tensor(x, name, cls)
    if x.dtype not in dtypes:
        raise TypeError(f"For '{cls}', the '{name}' should be one of "
                        f"{[str(d) for d in dtypes]}, but got '{x.dtype}'.")
    return x


class Range(Cell):
    """The constant ``arange(start, limit, delta)`` (``limit`` None: ``arange(start)``),
    float32 when any bound is a float, int32 otherwise; ``construct()`` returns it."""

    def __init__(self, start, limit=None, delta=1):
        super().__init__()
        if delta == 0:
            raise ValueError("For 'Range', the 'delta' can not be zero.")
        data = np.arange(start, limit, delta)
        dtype = mdt.float32 if data.dtype.kind == "f" else mdt.int32
        self.result_tensor = Tensor(data.astype(np.float32 if dtype is mdt.float32
                                                else np.int32))

    def construct(self):
        return self.result_tensor


class Moments(Cell):
    """``(mean, variance)`` over ``axis`` (every axis when None), biased variance; float16
    inputs are reduced in float32."""

    def __init__(self, axis=None, keep_dims=None):
        super().__init__()
        axis = () if axis is None else axis
        if isinstance(axis, tuple):
            for i, item in enumerate(axis):
                if isinstance(item, bool) or not isinstance(item, int):
                    raise TypeError(f"For 'Moments', the type of 'axis[{i}]' should be 'int', "
                                    f"but got type '{type(item).__name__}'.")
        elif isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"For 'Moments', the type of 'axis' should be one of '['int', "
                            f"'tuple']', but got type '{type(axis).__name__}'.")
        self.axis = axis
        self.keep_dims = check_bool(False if keep_dims is None else keep_dims, "keep_dims",
                                    "Moments")

    def construct(self, x):
        _float_in(x, "input x", "Moments")
        xf = F.cast(x, mdt.float32) if x.dtype is mdt.float16 else x
        axis = None if self.axis == () else self.axis
        mean = F.mean(xf, axis, True)
        d = F.sub(xf, F.stop_gradient(mean))
        var = F.mean(F.mul(d, d), axis, True)
        if not self.keep_dims:
            mean, var = self._squeeze(mean), self._squeeze(var)
        return F.cast(mean, x.dtype), F.cast(var, x.dtype)

    def _squeeze(self, t):
        if self.axis == ():
            return F.reshape(t, ())
        axes = (self.axis,) if isinstance(self.axis, int) else self.axis
        return F.squeeze(t, tuple(a % t.ndim for a in axes))


class MatMul(Cell):
    """Matrix product with broadcasting of the batch axes and optional transposes of the
    last two axes (1-d operands as in numpy)."""

    def __init__(self, transpose_x1=False, transpose_x2=False):
        super().__init__()
        self.transpose_x1 = check_bool(transpose_x1, "transpose_x1", "MatMul")
        self.transpose_x2 = check_bool(transpose_x2, "transpose_x2", "MatMul")

    def construct(self, x1, x2):
        check_tensor(x1, "x1", "MatMul")
        check_tensor(x2, "x2", "MatMul")
        if self.transpose_x1 and x1.ndim > 1:
            x1 = F.swapaxes(x1, -1, -2)
        if self.transpose_x2 and x2.ndim > 1:
            x2 = F.swapaxes(x2, -1, -2)
        k1 = x1.shape[-1]
        k2 = x2.shape[0] if x2.ndim == 1 else x2.shape[-2]
        if k1 != k2:
            raise ValueError(f"For 'MatMul', the column of 'x1' ({k1}) must equal the row of "
                             f"'x2' ({k2}), got shapes {x1.shape} and {x2.shape}")
        return F.matmul(x1, x2)


class ReduceLogSumExp(Cell):
    """``log(sum(exp(x)))`` over ``axis``, computed stably."""

    def __init__(self, axis, keep_dims=False):
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, (int, list, tuple)):
            raise TypeError(f"For 'ReduceLogSumExp', the type of 'axis' should be one of "
                            f"'['int', 'list', 'tuple']', but got type '{type(axis).__name__}'.")
        self.axis = tuple(axis) if isinstance(axis, list) else axis
        self.keep_dims = check_bool(keep_dims, "keep_dims", "ReduceLogSumExp")

    def construct(self, x):
        check_tensor(x, "x", "ReduceLogSumExp")
        axis = None if self.axis == () else self.axis
        top = F.stop_gradient(F.amax(x, axis, True))
        out = F.add(F.log(F.sum(F.exp(F.sub(x, top)), axis, True)), top)
        if self.keep_dims:
            return out
        if axis is None:
            return F.reshape(out, ())
        axes = (axis,) if isinstance(axis, int) else axis
        return F.squeeze(out, tuple(a % x.ndim for a in axes))


class LGamma(Cell):
    """log |Gamma(x)| elementwise."""

    def construct(self, x):
        return ops.lgamma(_float_in(x, "x", "LGamma"))


class DiGamma(Cell):
    """The digamma function elementwise."""

    def construct(self, x):
        return ops.digamma(_float_in(x, "x", "DiGamma"))


class IGamma(Cell):
    """Regularized lower incomplete gamma P(a, x)."""

    def construct(self, a, x):
        _float_in(a, "a", "IGamma")
        _float_in(x, "x", "IGamma")
        if a.dtype is not x.dtype:
            raise TypeError(f"For 'IGamma', 'a' and 'x' must have the same dtype, got "
                            f"{a.dtype} and {x.dtype}")
        return ops.igamma(a, x)


class LBeta(Cell):
    """log |B(x, y)| = lgamma(x) + lgamma(y) - lgamma(x + y)."""

    def construct(self, x, y):
        _float_in(x, "x", "LBeta")
        _float_in(y, "y", "LBeta")
        if x.dtype is not y.dtype:
            raise TypeError(f"For 'LBeta', 'x' and 'y' must have the same dtype, got {x.dtype} "
                            f"and {y.dtype}")
        return lbeta(x, y)
