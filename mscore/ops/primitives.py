"""Primitive classes (``ops.MatMul()``, ``ops.Conv2D(...)``, ...) in MindSpore's style.

A Primitive is configured at construction and called on Tensors. Each instance may carry an
amp compute dtype (``set_compute_dtype``): then its floating inputs are cast to that dtype
and its floating outputs back to float32, which is how O1 treats white-listed primitives
inside a user's ``construct``.
"""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops import functional as F


class Primitive:
    """Base of the primitive classes: ``__call__`` applies amp casts around ``compute``."""

    def __init__(self):
        self._compute_dtype = None

    def set_compute_dtype(self, dtype):
        """Compute in ``dtype`` (float16/bfloat16) with outputs back in float32; None undoes."""
        self._compute_dtype = None if dtype is None else mdt.as_dtype(dtype)
        return self

    @property
    def compute_dtype(self):
        """The amp compute dtype set on this instance, or None."""
        return self._compute_dtype

    def __call__(self, *args, **kwargs):
        low = self._compute_dtype
        if low is None:
            return self.compute(*args, **kwargs)
        args = tuple(F.cast(a, low) if isinstance(a, Tensor) and a.dtype.is_floating
                     and a.dtype is not low else a for a in args)
        out = self.compute(*args, **kwargs)
        return cast_floating(out, mdt.float32)

    def compute(self, *args, **kwargs):
        raise NotImplementedError

    def __repr__(self):
        return f"Prim[{type(self).__name__}]"


def cast_floating(out, dtype):
    """``out`` (a Tensor or nested tuples/lists of them) with floating Tensors cast to
    ``dtype``; other values unchanged. Amp's output casts use it."""
    if isinstance(out, Tensor):
        return F.cast(out, dtype) if out.dtype.is_floating and out.dtype is not dtype else out
    if isinstance(out, (tuple, list)):
        return type(out)(cast_floating(o, dtype) for o in out)
    return out


class MatMul(Primitive):
    """``MatMul(transpose_a=False, transpose_b=False)(a, b)`` for 2-d operands."""

    def __init__(self, transpose_a=False, transpose_b=False):
        super().__init__()
        for n, v in (("transpose_a", transpose_a), ("transpose_b", transpose_b)):
            if not isinstance(v, bool):
                raise TypeError(f"{n}: expected a bool, got {type(v).__name__}")
        self.transpose_a, self.transpose_b = transpose_a, transpose_b

    def compute(self, a, b):
        if self.transpose_a:
            a = F.swapaxes(a, -1, -2)
        if self.transpose_b:
            b = F.swapaxes(b, -1, -2)
        return F.matmul(a, b)


class BatchMatMul(MatMul):
    """``BatchMatMul(transpose_a=False, transpose_b=False)(a, b)`` for >= 3-d operands."""


class Ger(Primitive):
    """Outer product of two vectors."""

    def compute(self, x1, x2):
        return F.ger(x1, x2)


class ReLU(Primitive):
    """max(x, 0)."""

    def compute(self, x):
        return F.relu(x)


class PReLU(Primitive):
    """``PReLU()(x, weight)``: x where positive, weight * x elsewhere."""

    def compute(self, x, weight):
        return F.prelu(x, weight)


class Cast(Primitive):
    """``Cast()(x, dtype)``."""

    def __call__(self, x, dtype):
        return F.cast(x, dtype)


class _ConvBase(Primitive):
    _nd = 2

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCHW"):
        super().__init__()
        if not isinstance(out_channel, int) or out_channel <= 0:
            raise ValueError(f"out_channel: expected a positive int, got {out_channel!r}")
        if data_format not in ("NCHW", "NCDHW"):
            raise ValueError(f"data_format: only channels-first is supported, got "
                             f"{data_format!r}")
        self.out_channel = out_channel
        self.kernel_size = F._tuple(kernel_size, self._nd, "kernel_size")
        self.pad_mode, self.pad = pad_mode, pad
        self.stride = _last(stride, self._nd, "stride")
        self.dilation = _last(dilation, self._nd, "dilation")
        self.group = group


def _last(value, nd, name):
    """MindSpore accepts (1, 1, s, s) 4-tuples for stride/dilation; keep the spatial part."""
    if isinstance(value, (tuple, list)) and len(value) == nd + 2:
        value = tuple(value[2:])
    return F._tuple(value, nd, name)


class Conv2D(_ConvBase):
    """``Conv2D(out_channel, kernel_size, ...)(x, weight)``."""

    def compute(self, x, w):
        return F.conv(x, w, None, self.stride, self.pad_mode, self.pad, self.dilation,
                      self.group)


class Conv3D(Conv2D):
    """``Conv3D(out_channel, kernel_size, ...)(x, weight)``."""

    _nd = 3


class Conv2DTranspose(_ConvBase):
    """``Conv2DTranspose(out_channel, kernel_size, ...)(dout, weight, input_size)``: the
    input-gradient of Conv2D, weight (in, out, kh, kw) as Conv2D's (out, in, kh, kw)."""

    def compute(self, x, w, input_size=None):
        out = F.conv_transpose(x, w, None, self.stride, self.pad_mode, self.pad, 0,
                               self.dilation, self.group)
        if input_size is not None:
            target = tuple(input_size)[2:]
            extra = tuple(t - s for t, s in zip(target, out.shape[2:]))
            if any(e < 0 for e in extra):
                raise ValueError(f"input_size: {tuple(input_size)} is smaller than the "
                                 f"computed output {out.shape}")
            if any(extra):
                out = F.conv_transpose(x, w, None, self.stride, self.pad_mode, self.pad,
                                       extra, self.dilation, self.group)
        return out


Conv2DBackpropInput = Conv2DTranspose


class Conv3DTranspose(Conv2DTranspose):
    """``Conv3DTranspose(...)(x, weight)``."""

    _nd = 3


class MaxPool(Primitive):
    """``MaxPool(kernel_size=1, strides=1, pad_mode='valid')(x)`` over NCHW."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        super().__init__()
        self.kernel_size = F._tuple(_strip(kernel_size), 2, "kernel_size")
        self.strides = F._tuple(_strip(strides), 2, "strides")
        if pad_mode.lower() not in ("valid", "same"):
            raise ValueError(f"pad_mode: expected 'valid' or 'same', got {pad_mode!r}")
        self.pad_mode = pad_mode.lower()

    def compute(self, x):
        if self.pad_mode == "same":
            pads = F.conv_padding_pairs("same", 0, 2, x.shape[2:], self.kernel_size, self.strides,
                                   (1, 1))
            x = F._wrap(F.call("pad", x._data, ((0, 0), (0, 0)) + pads, value=float("-inf")))
        return F.max_pool(x, self.kernel_size, self.strides, 0, 2)


def _strip(v):
    return tuple(v[2:]) if isinstance(v, (tuple, list)) and len(v) == 4 else v


class ReduceSum(Primitive):
    """``ReduceSum(keep_dims=False)(x, axis=())``."""

    def __init__(self, keep_dims=False):
        super().__init__()
        self.keep_dims = keep_dims

    def compute(self, x, axis=()):
        return F.sum(x, axis if axis != () else None, self.keep_dims)


class ReduceMean(ReduceSum):
    """``ReduceMean(keep_dims=False)(x, axis=())``."""

    def compute(self, x, axis=()):
        return F.mean(x, axis if axis != () else None, self.keep_dims)


class _Elementwise(Primitive):
    _fn = None

    def compute(self, *args):
        return type(self)._fn(*args)


def _elementwise(name, fn, doc):
    return type(name, (_Elementwise,), {"_fn": staticmethod(fn), "__doc__": doc})


Add = _elementwise("Add", F.add, "Elementwise sum.")
Sub = _elementwise("Sub", F.sub, "Elementwise difference.")
Mul = _elementwise("Mul", F.mul, "Elementwise product.")
Div = _elementwise("Div", F.div, "Elementwise quotient.")
RealDiv = Div
Exp = _elementwise("Exp", F.exp, "Elementwise exp.")
Log = _elementwise("Log", F.log, "Elementwise log.")
Sqrt = _elementwise("Sqrt", F.sqrt, "Elementwise sqrt.")
Square = _elementwise("Square", F.square, "Elementwise square.")
Tanh = _elementwise("Tanh", F.tanh, "Elementwise tanh.")
Sigmoid = _elementwise("Sigmoid", F.sigmoid, "Elementwise sigmoid.")
Abs = _elementwise("Abs", F.abs, "Elementwise absolute value.")
Neg = _elementwise("Neg", F.neg, "Elementwise negation.")
Maximum = _elementwise("Maximum", F.maximum, "Elementwise maximum.")
Minimum = _elementwise("Minimum", F.minimum, "Elementwise minimum.")
Reshape = _elementwise("Reshape", F.reshape, "``Reshape()(x, shape)``.")
Transpose = _elementwise("Transpose", F.transpose, "``Transpose()(x, perm)``.")
ExpandDims = _elementwise("ExpandDims", F.expand_dims, "``ExpandDims()(x, axis)``.")
Select = _elementwise("Select", F.where, "``Select()(cond, x, y)``.")
OnesLike = _elementwise("OnesLike", F.ones_like, "Ones shaped like x.")
ZerosLike = _elementwise("ZerosLike", F.zeros_like, "Zeros shaped like x.")
IsFinite = _elementwise("IsFinite", F.isfinite, "True where finite.")


class Softmax(Primitive):
    """``Softmax(axis=-1)(x)``."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis[0] if isinstance(axis, (tuple, list)) else axis

    def compute(self, x):
        return F.softmax(x, self.axis)


class LogSoftmax(Softmax):
    """``LogSoftmax(axis=-1)(x)``."""

    def compute(self, x):
        return F.log_softmax(x, self.axis)


class Flatten(Primitive):
    """``Flatten()(x)``: (N, ...) to (N, -1)."""

    def compute(self, x):
        return F.flatten(x)


class Assign(Primitive):
    """``Assign()(variable, value)``."""

    def compute(self, variable, value):
        return F.assign(variable, value)


class StopGradient(Primitive):
    """``StopGradient()(x)``."""

    def compute(self, x):
        return F.stop_gradient(x)


class Depend(Primitive):
    """``Depend()(value, expr)`` returns value."""

    def compute(self, value, expr):
        return value


class OneHot(Primitive):
    """``OneHot(axis=-1)(indices, depth, on_value, off_value)``."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def compute(self, indices, depth, on_value, off_value):
        return F.one_hot(indices, depth, on_value, off_value, self.axis)


class Dropout(Primitive):
    """``Dropout(keep_prob=0.5)(x)`` returns ``(output, mask)``."""

    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):  # noqa: N803  (MindSpore names)
        super().__init__()
        if not 0 < keep_prob <= 1:
            raise ValueError(f"keep_prob: expected a value in (0, 1], got {keep_prob!r}")
        self.keep_prob = keep_prob

    def compute(self, x):
        out = F.dropout(x, 1.0 - self.keep_prob)
        return out, F.not_equal(out, 0.0)

__all__ = [
    "Primitive",
    "MatMul",
    "BatchMatMul",
    "Ger",
    "ReLU",
    "PReLU",
    "Cast",
    "Conv2D",
    "Conv3D",
    "Conv2DTranspose",
    "Conv2DBackpropInput",
    "Conv3DTranspose",
    "MaxPool",
    "ReduceSum",
    "ReduceMean",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "RealDiv",
    "Exp",
    "Log",
    "Sqrt",
    "Square",
    "Tanh",
    "Sigmoid",
    "Abs",
    "Neg",
    "Maximum",
    "Minimum",
    "Reshape",
    "Transpose",
    "ExpandDims",
    "Select",
    "OnesLike",
    "ZerosLike",
    "IsFinite",
    "Softmax",
    "LogSoftmax",
    "Flatten",
    "Assign",
    "StopGradient",
    "Depend",
    "OneHot",
    "Dropout",
]
