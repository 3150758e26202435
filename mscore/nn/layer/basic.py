"""Basic layers: ``nn.Dense``, ``nn.Linear``, ``nn.BiDense``, ``nn.Flatten``, ``nn.Unflatten``,
``nn.Dropout`` and ``nn.Dropout1d/2d/3d``, ``nn.Unfold``, ``nn.Tril``, ``nn.Triu``, ``nn.Roll``,
``nn.OneHot``, ``nn.Norm``, ``nn.ClipByNorm``, ``nn.L1Regularizer`` and ``nn.MatrixDiag`` /
``MatrixDiagPart`` / ``MatrixSetDiag`` (several deprecated in MindSpore but still used)."""
from __future__ import annotations

import math

import numpy as np

from mscore import dispatch, ops
from mscore.common import dtype as mdt
from mscore.common.cast_cache import cast_param
from mscore.common.initializer import HeUniform, Initializer, Uniform, initializer
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import (
    check_bool,
    check_dtype,
    check_int,
    check_number,
    check_positive_int,
    check_tensor,
)
from mscore.nn.layer.activation import _activation_arg
from mscore.ops import functional as F
from mscore.ops._args import _axis1
from mscore.ops.nn.image import extract_image_patches
from mscore.ops.random.draws import channel_dropout

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
    Inputs of more than 2 dims are multiplied over their last axis. As in MindSpore it
    holds ``matmul`` (``MatMul(transpose_b=True)``) and ``bias_add`` (``BiasAdd``): shard
    strategies set on them (or by ``Dense.shard`` in a job) cut the layer.
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
        # MindSpore's primitives of the layer: what shard strategies cut (the fused kernel
        # below computes the layer while they have none)
        self.matmul = ops.MatMul(transpose_b=True)
        self.bias_add = ops.BiasAdd()

    def construct(self, x):
        if not isinstance(x, Tensor):
            check_tensor(x, "x", "Dense")
        params = self._params   # one lookup for both (attribute reads go through __getattr__)
        w, b = params["weight"], params.get("bias")
        dtype = self._compute_dtype
        if dtype is not None:   # Cell.cast_param's work, without its frame per weight
            w = cast_param(w, dtype)
            if b is not None:
                b = cast_param(b, dtype)
        if "in_strategy" in self.matmul.attrs or "in_strategy" in self.bias_add.attrs:
            return self._by_primitives(x, w, b)
        xd, wd = x._data, w._data
        fused = dispatch.fused("dense")  # x @ w.T + b in one kernel (torch: F.linear)
        # the same library dtype object answers without asking the backend (same_dtype)
        if fused is not None and (xd.dtype is wd.dtype or dispatch.same_dtype(xd, wd)) and (
                b is None or b._data.dtype is wd.dtype or dispatch.same_dtype(b._data, wd)):
            try:
                out = object.__new__(Tensor)   # Tensor._wrap inlined: every Dense, every step
                out._data = fused(xd, wd, None if b is None else b._data)
            except Exception:
                self._check_last_axis(xd)   # the kernel's error on a wrong width is MindSpore's
                raise
        else:
            out = self._composite(x, xd, w, b)
        if self.activation is not None:
            out = self.activation(out)
        return out

    def _by_primitives(self, x, w, b):
        """The layer through its primitives, as MindSpore computes it (inputs of other than
        2 axes flattened to rows), so that their shard strategies cut it."""
        shape = self._check_width(tuple(x.shape))   # (a cut x's shape is its whole one)
        if len(shape) != 2:
            x = x.reshape((-1, shape[-1]))
        out = self.matmul(x, w)
        if b is not None:
            out = self.bias_add(out, b)
        if self.activation is not None:
            out = self.activation(out)
        if len(shape) != 2:
            out = out.reshape(shape[:-1] + (self.out_channels,))
        return out

    def _primitive_strategies(self, in_strategy, parameter_plan):
        """``Cell.shard``'s strategies in a job as the strategies of this layer's
        primitives: ``[(primitive, strategy)]``. ``in_strategy[0]`` cuts the input (rows,
        ``in_channels``; leading axes of a wider input count as rows and only the first may
        be cut); ``parameter_plan`` may cut ``weight`` (``out_channels``, ``in_channels``,
        whole by default apart from ``in_channels``, cut as the input's) and ``bias``."""
        if len(in_strategy) != 1:
            raise ValueError(f"For 'Dense.shard', 'in_strategy' must have one entry (the "
                             f"input's), but got {len(in_strategy)}")
        parts = tuple(in_strategy[0])
        if len(parts) < 2 or any(p != 1 for p in parts[1:-1]):
            raise NotImplementedError(
                f"For 'Dense.shard', the input's strategy {parts} cuts an axis other than the "
                f"first and the last, or has fewer than 2 axes; across processes only rows "
                f"and in_channels can be cut")
        rows, inner = parts[0], parts[-1]
        plan = {k.rsplit(".", 1)[-1]: tuple(v) for k, v in parameter_plan.items()}
        weight = plan.get("weight", (1, inner))
        strategies = [(self.matmul, ((rows, inner), weight))]
        if self.has_bias:
            strategies.append((self.bias_add, ((rows, weight[0]),
                                               plan.get("bias", (weight[0],)))))
        return strategies

    def _check_last_axis(self, xd):
        return self._check_width(dispatch.shape(xd))

    def _check_width(self, shape):
        if not shape or shape[-1] != self.in_channels:
            raise ValueError(f"For 'Dense', the last axis of 'x' must be {self.in_channels}, "
                             f"got shape {shape}")
        return shape

    def _composite(self, x, xd, w, b):
        """``x @ w.T + b`` in primitive ops (mixed dtypes: by ``F.dense``'s promotion)."""
        shape = self._check_last_axis(xd)
        if not dispatch.same_dtype(xd, w._data):
            return F.dense(x, w, b)
        out = call("matmul", xd if len(shape) > 1 else call("reshape", xd, (1,) + shape),
                   call("transpose", w._data, (1, 0)))
        if len(shape) == 1:
            out = call("reshape", out, (self.out_channels,))
        if b is not None:
            out = call("add", out, b._data)
        return _wrap(out)

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


class Linear(Dense):
    """``x @ weight.T + bias`` with torch-style names: ``Linear(in_features, out_features,
    bias=True, weight_init=None, bias_init=None, dtype=None)`` (float32 when ``dtype`` is
    None); ``weight`` is (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True, weight_init=None, bias_init=None,
                 dtype=None):
        cls = "Linear"
        check_positive_int(in_features, "in_features", cls)
        check_positive_int(out_features, "out_features", cls)
        check_bool(bias, "has_bias", cls)
        super().__init__(in_features, out_features, weight_init, bias_init, bias, None,
                         mdt.float32 if dtype is None else dtype)
        self.in_features = in_features
        self.out_features = out_features

    def extend_repr(self):
        s = f"input_features={self.in_features}, output_features={self.out_features}"
        return s + (f", has_bias={self.has_bias}" if self.has_bias else "")


class BiDense(Cell):
    """Bilinear layer ``y_k = x1^T W_k x2 + b_k``: ``weight`` (out_channels, in1_channels,
    in2_channels), ``bias`` (out_channels,), both U(-1/sqrt(in1), 1/sqrt(in1)) by default;
    inputs (*, in1) and (*, in2) with the same leading shape."""

    def __init__(self, in1_channels, in2_channels, out_channels, weight_init=None,
                 bias_init=None, has_bias=True, dtype=mdt.float32):
        super().__init__()
        cls = "BiDense"
        self.in1_channels = check_positive_int(in1_channels, "in1_channels", cls)
        self.in2_channels = check_positive_int(in2_channels, "in2_channels", cls)
        self.out_channels = check_positive_int(out_channels, "out_channels", cls)
        self.has_bias = check_bool(has_bias, "has_bias", cls)
        dtype = check_dtype(dtype, "dtype", cls)
        bound = 1 / math.sqrt(in1_channels)
        shape = (out_channels, in1_channels, in2_channels)
        self.weight = Parameter(_make(Uniform(bound) if weight_init is None else weight_init,
                                      shape, dtype, cls, "weight_init"), name="weight")
        self.bias = None
        if self.has_bias:
            self.bias = Parameter(_make(Uniform(bound) if bias_init is None else bias_init,
                                        (out_channels,), dtype, cls, "bias_init"), name="bias")

    def construct(self, input1, input2):
        cls = "BiDense"
        check_tensor(input1, "input1", cls)
        check_tensor(input2, "input2", cls)
        if input1.shape[-1] != self.in1_channels:
            raise ValueError(f"For '{cls}', the last dimension of 'input1' must be "
                             f"{self.in1_channels}, got shape {input1.shape}")
        if input2.shape[-1] != self.in2_channels:
            raise ValueError(f"For '{cls}', the last dimension of 'input2' must be "
                             f"{self.in2_channels}, got shape {input2.shape}")
        if input1.shape[:-1] != input2.shape[:-1]:
            raise ValueError(f"For '{cls}', the leading shapes of 'input1' {input1.shape} and "
                             f"'input2' {input2.shape} must be equal")
        bias = None if self.bias is None else self.cast_param(self.bias)
        return ops.bidense(input1, input2, self.cast_param(self.weight), bias)

    def extend_repr(self):
        s = (f"in1_channels={self.in1_channels}, in2_channels={self.in2_channels}, "
             f"output_channels={self.out_channels}")
        return s + (f", has_bias={self.has_bias}" if self.has_bias else "")


class _DropoutNd(Cell):
    _fn = None
    _shapes = ()

    def __init__(self, p=0.5):
        super().__init__()
        cls = type(self).__name__
        if not isinstance(p, float):
            raise TypeError(f"For '{cls}', the type of 'p' should be 'float', but got type "
                            f"'{type(p).__name__}'.")
        if not 0 <= p <= 1:
            raise ValueError(f"For '{cls}', the 'p' must be a number in range [0, 1], but got "
                             f"{p}.")
        self.p = p
        self.keep_prob = 1.0 - p

    def construct(self, x):
        check_tensor(x, "x", type(self).__name__)
        if not self.training or self.p == 0:
            return x
        return channel_dropout(x, self.p, True, self._shapes, type(self).__name__)

    def extend_repr(self):
        return f"p={self.p}"


class Dropout1d(_DropoutNd):
    """In training, zero whole channels of (N, C, L) or (C, L) with probability ``p`` and
    scale the rest by 1 / (1 - p); identity in eval."""

    _shapes = (2, 3)


class Dropout2d(_DropoutNd):
    """Channel dropout of (N, C, H, W) inputs (identity in eval)."""

    _shapes = (4,)


class Dropout3d(_DropoutNd):
    """Channel dropout of (N, C, D, H, W) inputs (identity in eval)."""

    _shapes = (5,)


class Unflatten(Cell):
    """Axis ``axis`` reshaped into ``unflattened_size`` (one entry may be -1)."""

    def __init__(self, axis, unflattened_size):
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"For 'Unflatten', the type of 'axis' must be 'int', but got "
                            f"'{type(axis).__name__}'.")
        if not isinstance(unflattened_size, (list, tuple)):
            raise TypeError(f"For 'Unflatten', the type of 'unflattended_size' should be one of "
                            f"'['list', 'tuple']', but got type "
                            f"'{type(unflattened_size).__name__}'.")
        self.axis = axis
        self.unflattened_size = tuple(unflattened_size)

    def construct(self, input_x):
        check_tensor(input_x, "input_x", "Unflatten")
        shape = input_x.shape
        ax = _axis1(self.axis, input_x.ndim, "axis")
        new = shape[:ax] + self.unflattened_size + shape[ax + 1:]
        return F.reshape(input_x, new)


def _check_window(name, value, cls):
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"For '{cls}', the type of '{name}s' should be one of '['tuple', "
                        f"'list']', but got type '{type(value).__name__}'.")
    if len(value) != 4 or value[0] != 1 or value[3] != 1:
        raise ValueError(f"For '{cls}' the format of '{name}s' must be [1, {name}_row, "
                         f"{name}_col, 1], but got {value}.")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value[1:3]) or \
            value[1] < 1 or value[2] < 1:
        raise ValueError(f"For '{cls}' the {name}_row and {name}_col in '{name}s' must be an "
                         f"positive integer number, but got {value}")
    return int(value[1]), int(value[2])


class Unfold(Cell):
    """Image patches (TensorFlow's extract_image_patches): (N, C, H, W) ->
    (N, C * kh * kw, out_h, out_w), depth ordered (row offset, column offset, channel).
    ``ksizes``/``strides``/``rates`` are ``[1, row, col, 1]``; ``padding`` 'valid' or
    'same'."""

    def __init__(self, ksizes, strides, rates, padding="valid"):
        super().__init__()
        cls = "Unfold"
        self.ksizes = _check_window("ksize", ksizes, cls)
        self.strides = _check_window("stride", strides, cls)
        self.rates = _check_window("rate", rates, cls)
        if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
            raise ValueError(f"For '{cls}', 'padding' must be 'valid' or 'same', got "
                             f"{padding!r}")
        self.padding = padding.lower()

    def construct(self, input_x):
        check_tensor(input_x, "input_x", "Unfold")
        if input_x.ndim != 4:
            raise ValueError(f"For 'Unfold', 'input_x' must be 4-d (N, C, H, W), got shape "
                             f"{input_x.shape}")
        return extract_image_patches(input_x, self.ksizes, self.strides, self.rates,
                                     self.padding)


class Tril(Cell):
    """The lower triangle of the last two axes: ``construct(x, k=0)`` zeroes the elements
    above diagonal ``k``."""

    def construct(self, x, k=0):
        check_tensor(x, "x", "Tril")
        return ops.tril(x, k)


class Triu(Cell):
    """The upper triangle of the last two axes: ``construct(x, k=0)`` zeroes the elements
    below diagonal ``k``."""

    def construct(self, x, k=0):
        check_tensor(x, "x", "Triu")
        return ops.triu(x, k)


class Roll(Cell):
    """Elements shifted cyclically by ``shift`` along ``axis`` (ints or equally long
    sequences)."""

    def __init__(self, shift, axis):
        super().__init__()
        for name, value in (("shift", shift), ("axis", axis)):
            if isinstance(value, bool) or not isinstance(value, (int, tuple, list)):
                raise TypeError(f"For 'Roll', the type of '{name}' should be one of '['int', "
                                f"'tuple', 'list']', but got type '{type(value).__name__}'.")
        self.shift = list(shift) if isinstance(shift, (tuple, list)) else [shift]
        self.axis = list(axis) if isinstance(axis, (tuple, list)) else [axis]
        if len(self.shift) != len(self.axis):
            raise ValueError(f"For 'Roll', the shape of 'shift' and the shape of 'axis' must be "
                             f"the same, but got the length of 'shift' {len(self.shift)} and the "
                             f"length of 'axis' {len(self.axis)}.")

    def construct(self, input_x):
        check_tensor(input_x, "input_x", "Roll")
        return ops.roll(input_x, tuple(self.shift), tuple(self.axis))


class OneHot(Cell):
    """One-hot encoding of integer ids: ``depth`` classes along ``axis``, ``on_value``
    and ``off_value`` in ``dtype``."""

    def __init__(self, axis=-1, depth=1, on_value=1.0, off_value=0.0, dtype=mdt.float32):
        super().__init__()
        self.axis = axis
        self.depth = depth
        self.on_value = on_value
        self.off_value = off_value
        self.dtype = dtype

    def construct(self, indices):
        check_tensor(indices, "indices", "OneHot")
        out = F.one_hot(indices, self.depth, self.on_value, self.off_value, self.axis)
        return F.cast(out, self.dtype)


class Norm(Cell):
    """The Euclidean norm over ``axis`` (every axis when empty), size-1 axes of the
    result squeezed unless ``keep_dims``."""

    def __init__(self, axis=(), keep_dims=False):
        super().__init__()
        self.keep_dims = check_bool(keep_dims, "keep_dims", "Norm")
        self.axis = axis

    def construct(self, x):
        check_tensor(x, "x", "Norm")
        axis = None if self.axis in ((), []) else self.axis
        out = F.sqrt(F.sum(F.mul(x, x), axis, True))
        if self.keep_dims:
            return out
        if axis is None:
            return F.reshape(out, ())
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        return F.squeeze(out, tuple(a % x.ndim for a in axes))

    def extend_repr(self):
        return f"axis={self.axis}, keep_dims={self.keep_dims}"


class ClipByNorm(Cell):
    """``x * clip_norm / max(||x||_2 over axis, clip_norm)``: ``construct(x, clip_norm)``
    with ``clip_norm`` a Tensor (broadcast against the norm)."""

    def __init__(self, axis=None):
        super().__init__()
        self.axis = axis

    def construct(self, x, clip_norm):
        if not isinstance(x, Tensor) or not isinstance(clip_norm, Tensor):
            raise TypeError("For 'ClipByNorm', the input args must be tensor.")
        axis = None if self.axis in (None, (), []) else self.axis
        xf = F.cast(x, mdt.float32) if x.dtype.itemsize < 4 else x
        norm = F.sqrt(F.sum(F.mul(xf, xf), axis, True))
        limit = F.cast(clip_norm, xf.dtype)
        out = F.div(F.mul(xf, limit), F.maximum(norm, limit))
        return F.cast(out, x.dtype)


class L1Regularizer(Cell):
    """``scale * sum(|weights|)``."""

    def __init__(self, scale):
        super().__init__()
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise TypeError(f"For 'L1Regularizer', the type of 'scale' should be one of "
                            f"'['int', 'float']', but got type '{type(scale).__name__}'.")
        if math.isinf(scale) or math.isnan(scale):
            raise ValueError(f"For 'L1Regularizer', the 'scale' can not be INF or NAN, but got "
                             f"{scale}.")
        if scale <= 0:
            raise ValueError(f"For 'L1Regularizer', the 'scale' must be greater than 0, but got "
                             f"{scale}.")
        self.scale = float(scale)

    def construct(self, weights):
        check_tensor(weights, "weights", "L1Regularizer")
        if weights.dtype.is_bool:
            raise TypeError(f"For 'L1Regularizer', 'weights' must be a number Tensor, got "
                            f"{weights.dtype}")
        total = F.sum(F.abs(weights))
        if not total.dtype.is_floating:
            total = F.cast(total, mdt.float32)
        return F.mul(total, self.scale)


def _eye(rows, cols, dtype):
    return Tensor(np.eye(rows, cols, dtype=np.float32), dtype=dtype)


class MatrixDiag(Cell):
    """(..., n) -> (..., n, n) with the input on the diagonal."""

    def construct(self, input_x):
        check_tensor(input_x, "input_x", "MatrixDiag")
        if input_x.ndim < 1:
            raise ValueError("For 'MatrixDiag', 'input_x' must be at least 1-d")
        n = input_x.shape[-1]
        return F.mul(F.expand_dims(input_x, -1), _eye(n, n, input_x.dtype))


class MatrixDiagPart(Cell):
    """The main diagonal of the last two axes: (..., m, n) -> (..., min(m, n))."""

    def construct(self, input_x):
        check_tensor(input_x, "input_x", "MatrixDiagPart")
        if input_x.ndim < 2:
            raise ValueError("For 'MatrixDiagPart', 'input_x' must be at least 2-d")
        m, n = input_x.shape[-2:]
        k = min(m, n)
        sub = F.getitem(input_x, (Ellipsis, slice(0, k), slice(0, k)))
        return F.sum(F.mul(sub, _eye(k, k, input_x.dtype)), -1)


class MatrixSetDiag(Cell):
    """``input_x`` (..., m, n) with its main diagonal replaced by ``diagonal``
    (..., min(m, n))."""

    def construct(self, input_x, diagonal):
        check_tensor(input_x, "input_x", "MatrixSetDiag")
        check_tensor(diagonal, "diagonal", "MatrixSetDiag")
        if input_x.ndim < 2:
            raise ValueError("For 'MatrixSetDiag', 'input_x' must be at least 2-d")
        m, n = input_x.shape[-2:]
        k = min(m, n)
        if diagonal.shape != input_x.shape[:-2] + (k,):
            raise ValueError(f"For 'MatrixSetDiag', 'diagonal' must have shape "
                             f"{input_x.shape[:-2] + (k,)}, got {diagonal.shape}")
        eye = _eye(m, n, input_x.dtype)
        rows = F.pad(diagonal, (0, m - k)) if m > k else diagonal            # (..., m)
        placed = F.mul(F.expand_dims(F.cast(rows, input_x.dtype), -1), eye)
        return F.add(F.mul(input_x, F.sub(1.0, eye)), placed)
