"""MindSpore's primitives as a loaded MindIR graph calls them, run with mscore's ops.

Each entry of :data:`PRIMITIVES` takes the primitive's attributes (a dict, for the primitives
that keep their settings there, such as ``Conv2D`` and ``MaxPool``) and the node's operand
values: Tensors, Python scalars and tuples (the constants MindSpore 2.10 passes as operands:
``MatMul``'s transpose flags, ``Cast``'s type id, ``Reshape``'s shape), or :data:`MONAD` (the
side-effect tokens of ``Load``/``UpdateState``, which an inference graph only threads
through). Everything runs through ``mscore.ops``, so a loaded graph runs on every backend.
"""
from __future__ import annotations

from mscore.common.tensor import Tensor
from mscore.nn.graph.mindir_types import (
    DTYPE_OF_TYPE_ID,
    FORMAT_NCHW,
    PAD_MODE_NAMES,
    same_pad_pairs,
)
from mscore.ops import functional as F


class _Monad:
    """The value of MindSpore's UMONAD/IOMONAD side-effect tokens."""

    def __repr__(self):
        return "MONAD"


MONAD = _Monad()
PRIMITIVES = {}


def primitive(*names):
    """Register the decorated function as the implementation of MindSpore primitives
    ``names``."""
    def register(fn):
        for name in names:
            PRIMITIVES[name] = fn
        return fn
    return register


def _dtype_of(type_id, op):
    try:
        return DTYPE_OF_TYPE_ID[int(type_id)]
    except (KeyError, TypeError, ValueError):
        raise NotImplementedError(f"{op}: MindSpore type id {type_id!r} is not supported") from None


def _axes(x, axis):
    """A reduction's axis operand: an int or tuple; the empty tuple means every axis."""
    if axis is None:
        return None
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (int(axis),)
    return axes if axes else None


# -- side effects, tuples ------------------------------------------------------------------------
@primitive("Load")
def _load(attrs, value, *monad):
    return value


@primitive("UpdateState")
def _update_state(attrs, *operands):
    return MONAD


@primitive("Depend")
def _depend(attrs, value, *after):
    return value


@primitive("MakeTuple")
def _make_tuple(attrs, *values):
    return tuple(values)


@primitive("TupleGetItem")
def _tuple_get_item(attrs, values, index):
    return values[int(index)]


@primitive("StopGradient")
def _stop_gradient(attrs, x):
    return F.stop_gradient(x)


# -- elementwise ---------------------------------------------------------------------------------
def _unary(fn):
    return lambda attrs, x: fn(x)


def _binary(fn):
    return lambda attrs, a, b: fn(a, b)


for _names, _fn in (
        (("Neg",), F.neg), (("Abs",), F.abs), (("Exp",), F.exp), (("Sqrt",), F.sqrt),
        (("Sin",), F.sin), (("Cos",), F.cos), (("Tanh",), F.tanh), (("Erf",), F.erf),
        (("Sign",), F.sign), (("Floor",), F.floor), (("Ceil",), F.ceil),
        (("LogicalNot",), F.logical_not), (("IsFinite",), F.isfinite), (("ReLU",), F.relu),
        (("Sigmoid",), F.sigmoid), (("Rsqrt",), F.rsqrt), (("Square",), F.square),
        (("Reciprocal",), F.reciprocal)):
    primitive(*_names)(_unary(_fn))

for _names, _fn in (
        (("Add", "AddExt", "Adds", "ScalarAdd"), F.add), (("Sub", "SubExt", "ScalarSub"), F.sub),
        (("Mul", "Muls", "ScalarMul"), F.mul), (("Div", "RealDiv", "Divs"), F.div),
        (("Pow",), F.pow), (("Maximum",), F.maximum), (("Minimum",), F.minimum),
        (("Equal", "EqScalar"), F.equal), (("NotEqual", "NeScalar"), F.not_equal),
        (("Less", "LessScalar"), F.less), (("LessEqual", "LeScalar"), F.less_equal),
        (("Greater", "GreaterScalar"), F.greater),
        (("GreaterEqual", "GeScalar"), F.greater_equal),
        (("LogicalAnd",), F.logical_and), (("LogicalOr",), F.logical_or)):
    primitive(*_names)(_binary(_fn))


@primitive("Log")
def _log(attrs, x):
    if float(attrs.get("base", -1.0)) != -1.0 or float(attrs.get("scale", 1.0)) != 1.0 \
            or float(attrs.get("shift", 0.0)) != 0.0:
        raise NotImplementedError("Log: only the natural logarithm (base -1, scale 1, shift 0) "
                                  "is supported")
    return F.log(x)


def _bitwise(logical, op):
    def run(attrs, a, b):
        if not (isinstance(a, Tensor) and a.dtype.is_bool):
            raise NotImplementedError(f"{op}: only boolean operands are supported")
        return logical(a, b)
    return run


primitive("BitwiseAnd")(_bitwise(F.logical_and, "BitwiseAnd"))
primitive("BitwiseOr")(_bitwise(F.logical_or, "BitwiseOr"))


@primitive("Select")
def _select(attrs, cond, x, y):
    return F.where(cond, x, y)


@primitive("Cast")
def _cast(attrs, x, dst_type):
    return F.cast(x, _dtype_of(dst_type, "Cast"))


# -- shapes --------------------------------------------------------------------------------------
@primitive("Reshape")
def _reshape(attrs, x, shape):
    return F.reshape(x, tuple(int(s) for s in shape))


@primitive("Flatten")
def _flatten(attrs, x):
    return F.reshape(x, (x.shape[0], -1) if x.ndim else (1,))


@primitive("Transpose")
def _transpose(attrs, x, perm):
    return F.transpose(x, tuple(int(p) for p in perm))


@primitive("BroadcastTo")
def _broadcast_to(attrs, x, shape):
    shape = tuple(int(s) for s in shape)
    lead = len(shape) - x.ndim  # -1 keeps the input's size on that axis
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
    return F.broadcast_to(x, shape)


@primitive("Concat")
def _concat(attrs, values, axis=None):
    if axis is None:
        axis = attrs.get("axis", 0)
    return F.concat(list(values), int(axis))


# -- linear algebra ------------------------------------------------------------------------------
def _swap_last(x):
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return F.transpose(x, perm)


def _matmul_flags(attrs, flags):
    if len(flags) == 2:
        return bool(flags[0]), bool(flags[1])
    return bool(attrs.get("transpose_a", False)), bool(attrs.get("transpose_b", False))


@primitive("MatMul", "BatchMatMul")
def _matmul(attrs, a, b, *flags):
    ta, tb = _matmul_flags(attrs, flags)
    return F.matmul(_swap_last(a) if ta else a, _swap_last(b) if tb else b)


@primitive("MatMulExt", "BatchMatMulExt")
def _matmul_ext(attrs, a, b):
    return F.matmul(a, b)


@primitive("BiasAdd")
def _bias_add(attrs, x, bias, data_format=None):
    fmt = data_format if data_format is not None else attrs.get("data_format", "NCHW")
    if fmt not in (FORMAT_NCHW, "NCHW", "NCDHW"):
        raise NotImplementedError(f"BiasAdd: data_format {fmt!r} is not supported (NCHW only)")
    return F.add(x, F.reshape(bias, (1, -1) + (1,) * (x.ndim - 2)))


# -- reductions ----------------------------------------------------------------------------------
@primitive("ReduceSum")
def _reduce_sum(attrs, x, axis=(), keep_dims=None, skip_mode=False):
    keep = attrs.get("keep_dims", False) if keep_dims is None else keep_dims
    if not _axes(x, axis) and skip_mode:
        return x
    return F.sum(x, _axes(x, axis), bool(keep))


@primitive("SumExt")
def _sum_ext(attrs, x, axis=None, keep_dims=False, dtype=None):
    out = F.sum(x, _axes(x, axis), bool(keep_dims))
    return out if dtype is None else F.cast(out, _dtype_of(dtype, "SumExt"))


def _reduce(fn):
    def run(attrs, x, axis=(), keep_dims=None):
        keep = attrs.get("keep_dims", False) if keep_dims is None else keep_dims
        return fn(x, _axes(x, axis), bool(keep))
    return run


primitive("ReduceMax")(_reduce(F.amax))
primitive("ReduceMin")(_reduce(F.amin))
primitive("ReduceMean")(_reduce(F.mean))
primitive("ReduceAll")(_reduce(F.all))
primitive("ReduceAny")(_reduce(F.any))


def _arg(fn, op):
    def run(attrs, x, axis=None, output_type=None):
        axis = attrs.get("axis", -1) if axis is None else axis
        out = fn(x, int(axis))
        out_type = attrs.get("output_type") if output_type is None else output_type
        return out if out_type is None else F.cast(out, _dtype_of(out_type, op))
    return run


primitive("Argmax")(_arg(F.argmax, "Argmax"))
primitive("Argmin")(_arg(F.argmin, "Argmin"))


@primitive("Softmax")
def _softmax(attrs, x, axis=None):
    axes = attrs.get("axis", (-1,)) if axis is None else axis
    axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
    if len(axes) != 1:
        raise NotImplementedError(f"Softmax: over several axes {axes} is not supported")
    return F.softmax(x, int(axes[0]))


@primitive("LogSoftmax")
def _log_softmax(attrs, x, axis=None):
    return F.log_softmax(x, int(attrs.get("axis", -1) if axis is None else axis))


# -- convolution, pooling, normalisation ---------------------------------------------------------
def _last2(values, name):
    values = tuple(int(v) for v in (values if isinstance(values, (tuple, list)) else (values,)))
    if len(values) == 1:
        return values * 2
    if len(values) in (2, 4):
        return values[-2:]
    raise ValueError(f"{name}: expected 1, 2 or 4 values, got {values}")


def _check_format(attrs, op):
    fmt = attrs.get("format", "NCHW")
    if fmt not in ("NCHW", FORMAT_NCHW):
        raise NotImplementedError(f"{op}: format {fmt!r} is not supported (NCHW only)")


@primitive("Conv2D")
def _conv2d(attrs, x, w):
    _check_format(attrs, "Conv2D")
    mode = str(attrs.get("pad_mode", "valid")).lower()
    pads = tuple(int(p) for p in attrs.get("pad", (0, 0, 0, 0)))
    if len(pads) == 1:
        pads *= 4
    return F.conv(x, w, None, _last2(attrs.get("stride", 1), "stride"), mode,
                  pads if mode == "pad" else 0, _last2(attrs.get("dilation", 1), "dilation"),
                  int(attrs.get("group", attrs.get("groups", 1))))


def _pool_padding(mode, x, kernel, stride, op):
    mode = PAD_MODE_NAMES.get(mode, mode) if isinstance(mode, int) else str(mode).upper()
    if mode == "VALID":
        return 0
    if mode == "SAME":
        return tuple(p for pair in same_pad_pairs(x.shape[2:], kernel, stride) for p in pair)
    raise NotImplementedError(f"{op}: pad_mode {mode!r} is not supported (VALID or SAME)")


@primitive("MaxPool")
def _max_pool(attrs, x):
    _check_format(attrs, "MaxPool")
    kernel = _last2(attrs.get("kernel_size", 1), "kernel_size")
    stride = _last2(attrs.get("strides", 1), "strides")
    padding = _pool_padding(attrs.get("pad_mode", "VALID"), x, kernel, stride, "MaxPool")
    return F.max_pool(x, kernel, stride, padding, 2)


@primitive("AvgPool")
def _avg_pool(attrs, x, kernel_size=None, strides=None, pad_mode=None, data_format=None):
    if kernel_size is None:  # the attribute form of older files
        kernel_size, strides = attrs.get("kernel_size", 1), attrs.get("strides", 1)
        pad_mode, data_format = attrs.get("pad_mode", "VALID"), attrs.get("format", "NCHW")
    if data_format not in (FORMAT_NCHW, "NCHW"):
        raise NotImplementedError(f"AvgPool: format {data_format!r} is not supported (NCHW only)")
    kernel = _last2(kernel_size, "kernel_size")
    stride = _last2(strides, "strides")
    padding = _pool_padding(pad_mode, x, kernel, stride, "AvgPool")
    return F.avg_pool(x, kernel, stride, padding, False, 2)


@primitive("BatchNorm")
def _batch_norm(attrs, x, scale, bias, mean, variance, is_training=None, epsilon=None,
                momentum=None, data_format=None):
    training = attrs.get("is_training", False) if is_training is None else is_training
    eps = attrs.get("epsilon", 1e-5) if epsilon is None else epsilon
    fmt = attrs.get("format", "NCHW") if data_format is None else data_format
    if training:
        raise NotImplementedError("BatchNorm: only inference (is_training=False) is supported")
    if fmt not in (FORMAT_NCHW, "NCHW"):
        raise NotImplementedError(f"BatchNorm: format {fmt!r} is not supported (NCHW only)")
    out = F.batch_norm(x, mean, variance, scale, bias, False, 0.1, float(eps))
    return out, mean, variance, mean, variance
