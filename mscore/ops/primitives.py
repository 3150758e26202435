"""Primitive classes (``ops.MatMul()``, ``ops.Conv2D(...)``, ...) in MindSpore's style.

A Primitive is configured at construction and called on Tensors. Each instance may carry an
amp compute dtype (``set_compute_dtype``): then its floating inputs are cast to that dtype
and its floating outputs back to float32, which is how O1 treats white-listed primitives
inside a user's ``construct``.
"""
from __future__ import annotations

import functools
import inspect
import numbers

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops import _sharding
from mscore.ops import functional as F


def prim_attr_register(fn):
    """Decorator of a Primitive subclass's ``__init__`` (``fn``), as in MindSpore: before
    ``fn`` runs, the primitive is initialised under its class name and every argument of
    the call (defaults included) is recorded with ``add_prim_attr`` and in ``init_attrs``."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        Primitive.__init__(self, type(self).__name__)
        self.init_attrs = {}
        for name, value in list(bound.arguments.items())[1:]:
            self.add_prim_attr(name, value)
            self.init_attrs[name] = value
        return fn(self, *args, **kwargs)
    return wrapper


class Primitive:
    """Base of the primitive classes: ``__call__`` applies amp casts around ``compute``.

    ``Primitive(name)`` as in MindSpore (``name`` defaults to the class name);
    ``add_prim_attr``/``init_prim_io_names`` record attributes the way custom primitives
    written for MindSpore set them.
    """

    def __init__(self, name=None):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name: expected a str, got {type(name).__name__}")
        self._compute_dtype = None
        self.name = name or type(self).__name__
        self.attrs = {}

    def add_prim_attr(self, name, value):
        """Record attribute ``name`` (also readable as ``self.<name>``); returns self."""
        self.attrs[name] = value
        setattr(self, name, value)
        return self

    def del_prim_attr(self, name):
        """Forget attribute ``name``; returns self."""
        self.attrs.pop(name, None)
        self.__dict__.pop(name, None)
        return self

    def init_prim_io_names(self, inputs, outputs):
        """Record the names of the inputs and outputs."""
        self.add_prim_attr("input_names", list(inputs))
        self.add_prim_attr("output_names", list(outputs))

    def set_prim_instance_name(self, instance_name):
        """Record the instance name MindSpore shows in graphs; returns self."""
        self.instance_name = instance_name
        return self

    def set_compute_dtype(self, dtype):
        """Compute in ``dtype`` (float16/bfloat16) with outputs back in float32; None undoes."""
        self._compute_dtype = None if dtype is None else mdt.as_dtype(dtype)
        return self

    @property
    def compute_dtype(self):
        """The amp compute dtype set on this instance, or None."""
        return self._compute_dtype

    def shard(self, in_strategy=None, out_strategy=None):
        """Record how the inputs (``in_strategy``: per input, pieces per axis) and outputs
        are cut over the devices; returns self. Effective in SEMI_AUTO_PARALLEL mode (see
        :mod:`mscore.ops._sharding`), recorded and ignored in the others, as in MindSpore."""
        if in_strategy is None and out_strategy is None:
            return self
        if in_strategy is not None:
            self.add_prim_attr("in_strategy", _sharding.check_strategy(
                in_strategy, "in_strategy", self.name))
        if out_strategy is not None:
            self.add_prim_attr("out_strategy", _sharding.check_strategy(
                out_strategy, "out_strategy", self.name))
        return self

    def __call__(self, *args, **kwargs):
        strategy = self.attrs.get("in_strategy")
        if strategy is not None and _sharding.strategies_apply():
            args = _sharding.lay_out_inputs(args, strategy, f"{self.name}.shard")
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
        return f"Prim[{self.name}]"


def call_signature(cls):
    """The inputs of an instance of Primitive class ``cls`` (its ``__call__`` when the
    class defines one, else its ``compute``), without ``self``; None when unknown."""
    fn = None
    for klass in cls.__mro__:
        if "__call__" in vars(klass) and klass is not Primitive:
            fn = vars(klass)["__call__"]
            break
        if "compute" in vars(klass):
            fn = vars(klass)["compute"]
            break
    if fn is None:
        return None
    sig = inspect.signature(fn)
    return sig.replace(parameters=list(sig.parameters.values())[1:])


def check_bool(value, name, prim):
    """``value`` if it is a bool, else ``TypeError`` naming ``prim``'s argument."""
    if not isinstance(value, bool):
        raise TypeError(f"{prim}: {name} must be a bool, got {type(value).__name__}")
    return value


def check_int(value, name, prim):
    """``value`` if it is an int (not bool), else ``TypeError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{prim}: {name} must be an int, got {type(value).__name__}")
    return int(value)


def check_float(value, name, prim):
    """``value`` if it is a float, else ``TypeError`` (MindSpore refuses ints here)."""
    if not isinstance(value, float):
        raise TypeError(f"{prim}: {name} must be a float, got {type(value).__name__}")
    return value


def check_axes(value, name, prim):
    """An int or a tuple/list of ints, else ``TypeError``."""
    if isinstance(value, (tuple, list)):
        for v in value:
            check_int(v, name, prim)
        return tuple(int(v) for v in value)
    return check_int(value, name, prim)


def check_reduction(value, prim, allowed=("none", "mean", "sum")):
    """A loss's ``reduction``: ``TypeError`` when not a str, ``ValueError`` when unknown."""
    if not isinstance(value, str):
        raise TypeError(f"{prim}: reduction must be a str, got {type(value).__name__}")
    if value not in allowed:
        raise ValueError(f"{prim}: reduction must be one of {list(allowed)}, got {value!r}")
    return value


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
        self.transpose_a = check_bool(transpose_a, "transpose_a", type(self).__name__)
        self.transpose_b = check_bool(transpose_b, "transpose_b", type(self).__name__)

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

    def __call__(self, input_x, dtype):
        return F.cast(input_x, dtype)


class _ConvBase(Primitive):
    _nd = 2

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCHW"):
        super().__init__()
        prim = type(self).__name__
        if isinstance(out_channel, bool) or not isinstance(out_channel, int) or \
                out_channel <= 0:
            raise ValueError(f"{prim}: out_channel must be a positive int, got "
                             f"{out_channel!r}")
        _check_format(data_format, ("NCHW", "NCDHW"), prim)
        if mode != 1:
            raise NotImplementedError(f"{prim}: mode={mode!r} selects an Ascend "
                                      f"convolution algorithm; only 1 is supported")
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("valid", "same", "pad"):
            raise ValueError(f"{prim}: pad_mode must be 'valid', 'same' or 'pad', got "
                             f"{pad_mode!r}")
        pad_mode = pad_mode.lower()
        if pad_mode != "pad" and pad not in (0, (0,) * (2 * self._nd), (0,) * 4):
            raise ValueError(f"{prim}: pad must be 0 unless pad_mode is 'pad', got {pad!r}")
        self.out_channel = out_channel
        self.kernel_size = _positive(_strip(kernel_size), self._nd, "kernel_size", prim)
        self.pad_mode, self.pad = pad_mode, pad
        self.stride = _positive(_strip_n(stride, self._nd), self._nd, "stride", prim)
        self.dilation = _positive(_strip_n(dilation, self._nd), self._nd, "dilation", prim)
        if isinstance(group, bool) or not isinstance(group, int) or group <= 0:
            raise ValueError(f"{prim}: group must be a positive int, got {group!r}")
        self.group = group
        self.mode, self.data_format = mode, data_format


def _check_format(data_format, supported, prim):
    """Channels-first layouts compute; channels-last ones (GPU/Ascend kernels in MindSpore)
    are ``NotImplementedError``; anything else ``ValueError``."""
    if data_format in supported:
        return
    if data_format in ("NHWC", "NDHWC"):
        raise NotImplementedError(f"{prim}: data_format={data_format!r} (channels last) is "
                                  f"not supported; use {supported[0]!r}")
    raise ValueError(f"{prim}: data_format must be {supported[0]!r}, got {data_format!r}")


def _strip_n(value, nd):
    """MindSpore accepts (1, 1, s, s) 4-tuples for stride/dilation; keep the spatial
    part."""
    if isinstance(value, (tuple, list)) and len(value) == nd + 2:
        return tuple(value[2:])
    return value


def _positive(value, nd, name, prim):
    """An int or ``nd`` ints, each positive: else ``ValueError`` naming ``name``."""
    out = F._tuple(value, nd, name)
    if any(v <= 0 for v in out):
        raise ValueError(f"{prim}: {name} must be positive, got {value!r}")
    return out


class Conv2D(_ConvBase):
    """``Conv2D(out_channel, kernel_size, ...)(x, weight)``."""

    def compute(self, x, w):
        return F.conv(x, w, None, self.stride, self.pad_mode, self.pad, self.dilation,
                      self.group)


class Conv3D(Conv2D):
    """``Conv3D(out_channel, kernel_size, ...)(x, weight)``."""

    _nd = 3

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCDHW"):
        super().__init__(out_channel, kernel_size, mode, pad_mode, pad, stride, dilation,
                         group, data_format)


class Conv2DTranspose(_ConvBase):
    """``Conv2DTranspose(out_channel, kernel_size, ...)(dout, weight, input_size)``: the
    input-gradient of Conv2D, weight (in, out, kh, kw) as Conv2D's (out, in, kh, kw).
    ``pad_list`` (explicit (top, bottom, left, right) padding) must be None or the
    padding ``pad`` gives."""

    def __init__(self, out_channel, kernel_size, pad_mode="valid", pad=0, pad_list=None,
                 mode=1, stride=1, dilation=1, group=1, data_format="NCHW"):
        super().__init__(out_channel, kernel_size, mode, pad_mode, pad, stride, dilation,
                         group, data_format)
        if pad_list is not None and tuple(pad_list) not in ((0, 0, 0, 0),) and \
                tuple(pad_list) != _pad4(pad):
            raise NotImplementedError(f"{type(self).__name__}: pad_list={pad_list!r} "
                                      f"differing from pad is not supported")

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


def _pad4(pad):
    return (pad,) * 4 if isinstance(pad, int) else tuple(pad)


class Conv3DTranspose(Conv2DTranspose):
    """``Conv3DTranspose(in_channel, out_channel, kernel_size, ...)(x, weight)``."""

    _nd = 3

    def __init__(self, in_channel, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0,
                 stride=1, dilation=1, group=1, output_padding=0, data_format="NCDHW"):
        if isinstance(in_channel, bool) or not isinstance(in_channel, int) or in_channel <= 0:
            raise ValueError(f"Conv3DTranspose: in_channel must be a positive int, got "
                             f"{in_channel!r}")
        _ConvBase.__init__(self, out_channel, kernel_size, mode, pad_mode, pad, stride,
                           dilation, group, data_format)
        self.in_channel = in_channel
        self.output_padding = F._tuple(output_padding, 3, "output_padding")

    def compute(self, x, w):
        return F.conv_transpose(x, w, None, self.stride, self.pad_mode, self.pad,
                                self.output_padding, self.dilation, self.group)


class MaxPool(Primitive):
    """``MaxPool(kernel_size=1, strides=1, pad_mode='valid')(x)`` over NCHW."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        super().__init__()
        prim = type(self).__name__
        self.kernel_size = _positive(_strip(kernel_size), 2, "kernel_size", prim)
        self.strides = _positive(_strip(strides), 2, "strides", prim)
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("valid", "same"):
            raise ValueError(f"{prim}: pad_mode must be 'valid' or 'same', got {pad_mode!r}")
        _check_format(data_format, ("NCHW",), prim)
        self.pad_mode = pad_mode.lower()
        self.data_format = data_format

    def compute(self, x):
        if self.pad_mode == "same":
            pads = F.conv_padding_pairs("same", 0, 2, x.shape[2:], self.kernel_size, self.strides,
                                   (1, 1))
            x = F._wrap(F.call("pad", x._data, ((0, 0), (0, 0)) + pads, value=float("-inf")))
        return F.max_pool(x, self.kernel_size, self.strides, 0, 2)


def _strip(v):
    return tuple(v[2:]) if isinstance(v, (tuple, list)) and len(v) == 4 else v


class _Reduce(Primitive):
    """``Reduce*(keep_dims=False)(x, axis=())``: ``axis`` () or None reduces every axis."""

    def __init__(self, keep_dims=False):
        super().__init__()
        self.keep_dims = check_bool(keep_dims, "keep_dims", type(self).__name__)

    def compute(self, x, axis=()):
        return self._reduce(x, None if axis in ((), [], None) else axis, self.keep_dims)


class ReduceSum(_Reduce):
    """``ReduceSum(keep_dims=False)(x, axis=())``; ``skip_mode=True`` (an empty ``axis``
    meaning no reduction) is not supported."""

    def __init__(self, keep_dims=False, skip_mode=False):
        super().__init__(keep_dims)
        if skip_mode is not False:
            raise NotImplementedError("ReduceSum: skip_mode=True is not supported")

    @staticmethod
    def _reduce(x, axis, keep):
        return F.sum(x, axis, keep)


class ReduceMean(_Reduce):
    """``ReduceMean(keep_dims=False)(x, axis=())``."""

    @staticmethod
    def _reduce(x, axis, keep):
        return F.mean(x, axis, keep)


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
        axis = check_axes(axis, "axis", type(self).__name__)
        self.axis = axis[0] if isinstance(axis, tuple) else axis

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
        self.axis = check_int(axis, "axis", "OneHot")

    def compute(self, indices, depth, on_value, off_value):
        return F.one_hot(indices, depth, on_value, off_value, self.axis)


class Dropout(Primitive):
    """``Dropout(keep_prob=0.5)(x)`` returns ``(output, mask)``."""

    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):  # noqa: N803  (MindSpore names)
        super().__init__()
        check_float(keep_prob, "keep_prob", "Dropout")
        if not 0 < keep_prob <= 1:
            # MindSpore's kernel check raises RuntimeError here.
            raise RuntimeError(f"Dropout: keep_prob must be in (0, 1], got {keep_prob!r}")
        self.keep_prob = keep_prob
        self.seed0, self.seed1 = Seed0, Seed1

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
