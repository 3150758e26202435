"""Basic layers: ``nn.Dense``, ``nn.Flatten``, ``nn.Dropout``."""
from __future__ import annotations

import math

from mscore.common import dtype as mdt
from mscore.common.initializer import HeUniform, Initializer, Uniform, initializer
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore import dispatch
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import (check_bool, check_dtype, check_int, check_number,
                                     check_positive_int, check_tensor)
from mscore.nn.layer.activation import _activation_arg
from mscore.ops import functional as F

_wrap = Tensor._wrap


def make_weight(init, shape, dtype, cls, name="weight_init"):
    """A Tensor for a weight: MindSpore 2.3's default (``init`` None) is
    HeUniform(negative_slope=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    if init is None:
        init = HeUniform(negative_slope=math.sqrt(5))
    return _make(init, shape, dtype, cls, name)


def make_bias(init, shape, fan_in, dtype, cls, name="bias_init"):
    """A Tensor for a bias: MindSpore 2.3's default is U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    if init is None:
        init = Uniform(1.0 / math.sqrt(fan_in)) if fan_in > 0 else "zeros"
    return _make(init, shape, dtype, cls, name)


def _make(init, shape, dtype, cls, name):
    if isinstance(init, Tensor):
        if tuple(init.shape) != tuple(shape):
            raise ValueError(f"For '{cls}', '{name}' must have shape {tuple(shape)}, got "
                             f"{init.shape}")
        return Tensor(init, dtype=dtype)
    if not isinstance(init, (str, Initializer, int, float)) or isinstance(init, bool):
        raise TypeError(f"For '{cls}', '{name}' must be None, a str, an Initializer, a number "
                        f"or a Tensor, got {type(init).__name__}")
    return initializer(init, shape, dtype)


class Dense(Cell):
    """Fully connected layer ``activation(x @ weight.T + bias)``.

    ``Dense(in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
    activation=None, dtype=mstype.float32)``; ``weight`` is (out_channels, in_channels).
    Inputs of more than 2 dims are multiplied over their last axis.
    """

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None,
                 has_bias=True, activation=None, dtype=mdt.float32):
        super().__init__()
        self.in_channels = check_positive_int(in_channels, "in_channels", "Dense")
        self.out_channels = check_positive_int(out_channels, "out_channels", "Dense")
        self.has_bias = check_bool(has_bias, "has_bias", "Dense")
        dtype = check_dtype(dtype, "dtype", "Dense")
        self.weight = Parameter(make_weight(weight_init, (self.out_channels, self.in_channels),
                                            dtype, "Dense"), name="weight")
        self.bias = None
        if self.has_bias:
            self.bias = Parameter(make_bias(bias_init, (self.out_channels,), self.in_channels,
                                            dtype, "Dense"), name="bias")
        self.activation = _activation_arg(activation, "Dense")
        self.activation_flag = self.activation is not None

    def construct(self, x):
        check_tensor(x, "x", "Dense")
        w = self.cast_param(self.weight)
        xd = x._data
        shape = x.shape
        if not shape or shape[-1] != self.in_channels:
            raise ValueError(f"For 'Dense', the last axis of 'x' must be {self.in_channels}, "
                             f"got shape {shape}")
        fused = dispatch.fused("dense")  # x @ w.T + b in one kernel (torch: F.linear)
        b = None if self.bias is None else self.cast_param(self.bias)
        if fused is not None and x.dtype is w.dtype and (b is None or b.dtype is w.dtype):
            out = _wrap(fused(xd, w._data, None if b is None else b._data))
        elif x.dtype is not w.dtype:
            out = F.dense(x, w, b)
        else:
            out = call("matmul", xd if len(shape) > 1 else call("reshape", xd, (1,) + shape),
                       call("transpose", w._data, (1, 0)))
            if len(shape) == 1:
                out = call("reshape", out, (self.out_channels,))
            if b is not None:
                out = call("add", out, b._data)
            out = _wrap(out)
        if self.activation is not None:
            out = self.activation(out)
        return out

    def extend_repr(self):
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}"
        if self.has_bias:
            s += f", has_bias={self.has_bias}"
        if self.activation is not None:
            s += f", activation={self.activation}"
        return s


class Flatten(Cell):
    """Merge axes ``start_dim``..``end_dim`` (default: everything but the batch axis)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = check_int(start_dim, "start_dim", "Flatten")
        self.end_dim = check_int(end_dim, "end_dim", "Flatten")

    def construct(self, x):
        check_tensor(x, "x", "Flatten")
        shape = x.shape
        nd = len(shape)
        if nd == 0:
            return _wrap(call("reshape", x._data, (1,)))
        s, e = self.start_dim, self.end_dim
        if not (-nd <= s < nd and -nd <= e < nd):
            raise ValueError(f"For 'Flatten', start_dim {s} / end_dim {e} out of range for a "
                             f"{nd}-d input")
        s, e = s % nd, e % nd
        if s > e:
            raise ValueError(f"For 'Flatten', 'start_dim' {self.start_dim} must not come after "
                             f"'end_dim' {self.end_dim}")
        new = shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:]
        if new == shape:
            return x
        return _wrap(call("reshape", x._data, new))


class Dropout(Cell):
    """Zero each element with probability ``p`` in training mode and scale the rest by
    ``1/(1-p)``; identity in eval mode.

    ``Dropout(keep_prob=0.5, p=None, dtype=float32)``: ``p`` wins over the deprecated
    ``keep_prob`` (``p = 1 - keep_prob``, so 0.5 when neither is given).
    """

    def __init__(self, keep_prob=0.5, p=None, dtype=mdt.float32):
        super().__init__()
        if p is not None:
            p = check_number(p, "p", "Dropout", 0.0, 1.0, high_inclusive=False)
        else:
            keep_prob = check_number(keep_prob, "keep_prob", "Dropout", 0.0, 1.0,
                                     low_inclusive=False)
            p = 1.0 - keep_prob
        self.p = p
        self.keep_prob = 1.0 - p

    def construct(self, x):
        check_tensor(x, "x", "Dropout")
        if not self.training or self.p == 0.0:
            return x
        return F.dropout(x, self.p, True)

    def extend_repr(self):
        return f"p={self.p}"
