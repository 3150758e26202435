"""Primitive classes for shapes, creation and indexing (``P.Concat(axis)``, ``P.Split``,
``P.StridedSlice(masks)``, ``P.Gather``, ``P.Shape``, ``P.Fill``, ...), with MindSpore's
constructor arguments and checks."""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.ops import array_func
from mscore.ops import functional as F
from mscore.ops import math_func
from mscore.ops.primitives import Primitive, check_axes, check_int


class Concat(Primitive):
    """``Concat(axis=0)(tensors)``."""

    def __init__(self, axis=0):
        super().__init__()
        self.axis = check_int(axis, "axis", "Concat")

    def compute(self, tensors):
        return F.concat(tensors, self.axis)


class Stack(Primitive):
    """``Stack(axis=0)(tensors)``: join along a new axis."""

    def __init__(self, axis=0):
        super().__init__()
        self.axis = check_int(axis, "axis", type(self).__name__)

    def compute(self, tensors):
        return F.stack(tensors, self.axis)


class Pack(Stack):
    """The 1.x name of ``Stack``."""


class Unstack(Primitive):
    """``Unstack(axis=0, num=None)(x)``: the slices along ``axis``."""

    def __init__(self, axis=0, num=None):
        super().__init__()
        self.axis = check_int(axis, "axis", type(self).__name__)
        if num is not None:
            check_int(num, "num", type(self).__name__)
        self.num = num

    def compute(self, input_x):
        out = array_func.unbind(input_x, self.axis)
        if self.num is not None and self.num != len(out):
            raise ValueError(f"{type(self).__name__}: num is {self.num} but axis "
                             f"{self.axis} has {len(out)} elements")
        return out


class Unpack(Unstack):
    """The 1.x name of ``Unstack``."""


class Split(Primitive):
    """``Split(axis=0, output_num=1)(x)``: ``output_num`` equal pieces along ``axis``."""

    def __init__(self, axis=0, output_num=1):
        super().__init__()
        self.axis = check_int(axis, "axis", "Split")
        self.output_num = check_int(output_num, "output_num", "Split")
        if self.output_num <= 0:
            raise ValueError(f"Split: output_num must be positive, got {output_num}")

    def compute(self, input_x):
        x = F._check_tensor(input_x, "input_x")
        ax = F._axis1(self.axis, x.ndim)
        n = x.shape[ax]
        if n % self.output_num:
            raise ValueError(f"Split: axis {self.axis} of size {n} does not split into "
                             f"{self.output_num} equal pieces")
        return F.split(x, n // self.output_num, ax)


class Squeeze(Primitive):
    """``Squeeze(axis=())(x)``: size-1 axes removed (only ``axis`` when given)."""

    def __init__(self, axis=()):
        super().__init__()
        self.axis = check_axes(axis, "axis", "Squeeze")

    def compute(self, input):  # noqa: A002
        return F.squeeze(input, None if self.axis == () else self.axis)


class Tile(Primitive):
    """``Tile()(x, multiples)``."""

    def compute(self, input, dims):  # noqa: A002
        return F.tile(input, dims)


class BroadcastTo(Primitive):
    """``BroadcastTo(shape)(x)``; -1 keeps the input's size."""

    def __init__(self, shape):
        super().__init__()
        if not isinstance(shape, (tuple, list)):
            raise TypeError(f"BroadcastTo: shape must be a tuple of ints, got "
                            f"{type(shape).__name__}")
        self.shape = tuple(check_int(s, "shape", "BroadcastTo") for s in shape)

    def compute(self, input):  # noqa: A002
        return F.broadcast_to(input, self.shape)


class Gather(Primitive):
    """``Gather(batch_dims=0)(params, indices, axis)``."""

    def __init__(self, batch_dims=0):
        super().__init__()
        self.batch_dims = check_int(batch_dims, "batch_dims", type(self).__name__)

    def compute(self, input_params, input_indices, axis):
        return F.gather(input_params, input_indices, axis, self.batch_dims)


class GatherV2(Gather):
    """The 1.x name of ``Gather``."""


class GatherD(Primitive):
    """``GatherD()(x, dim, index)``: values picked along ``dim`` by ``index``."""

    def compute(self, x, dim, index):
        return array_func.gather_elements(x, dim, index)


class Slice(Primitive):
    """``Slice()(x, begin, size)``."""

    def compute(self, input, begin, size):  # noqa: A002
        return array_func.slice(input, begin, size)


class StridedSlice(Primitive):
    """``StridedSlice(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
    shrink_axis_mask=0)(x, begin, end, strides)``."""

    def __init__(self, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                 shrink_axis_mask=0):
        super().__init__()
        masks = (("begin_mask", begin_mask), ("end_mask", end_mask),
                 ("ellipsis_mask", ellipsis_mask), ("new_axis_mask", new_axis_mask),
                 ("shrink_axis_mask", shrink_axis_mask))
        for name, m in masks:
            check_int(m, name, "StridedSlice")
            if m < 0:
                raise ValueError(f"StridedSlice: {name} must be non-negative, got {m}")
        self.masks = tuple(m for _, m in masks)

    def compute(self, input_x, begin, end, strides):
        return array_func.strided_slice(input_x, begin, end, strides, *self.masks)


class Pad(Primitive):
    """``Pad(paddings)(x)``: constant zero padding, ``paddings[i] = (before, after)`` for
    axis i."""

    def __init__(self, paddings):
        super().__init__()
        if not isinstance(paddings, (tuple, list)) or not all(
                isinstance(p, (tuple, list)) and len(p) == 2 for p in paddings):
            raise TypeError(f"Pad: paddings must be a tuple of (before, after) pairs, got "
                            f"{paddings!r}")
        self.paddings = tuple((check_int(a, "paddings", "Pad"), check_int(b, "paddings",
                                                                          "Pad"))
                              for a, b in paddings)

    def compute(self, input_x):
        x = F._check_tensor(input_x, "input_x")
        if len(self.paddings) != x.ndim:
            raise ValueError(f"Pad: paddings has {len(self.paddings)} pairs for a {x.ndim}-d "
                             f"input")
        flat = tuple(v for pair in reversed(self.paddings) for v in pair)
        return F.pad(x, flat)


class _Triangle(Primitive):
    _fn = None

    def __init__(self, diagonal=0):
        super().__init__()
        self.diagonal = check_int(diagonal, "diagonal", type(self).__name__)

    def compute(self, input):  # noqa: A002
        return type(self)._fn(input, self.diagonal)


class Tril(_Triangle):
    """``Tril(diagonal=0)(x)``: the lower triangle."""

    _fn = staticmethod(array_func.tril)


class Triu(_Triangle):
    """``Triu(diagonal=0)(x)``: the upper triangle."""

    _fn = staticmethod(array_func.triu)


class MaskedFill(Primitive):
    """``MaskedFill()(x, mask, value)``."""

    def compute(self, input_x, mask, value):
        return array_func.masked_fill(input_x, mask, value)


class Identity(Primitive):
    """``Identity()(x)``: a copy of ``x``."""

    def compute(self, input_x):
        x = F._check_tensor(input_x, "input_x")
        return F._wrap(F.call("where", F.call("full", (), True, mdt.bool_), x._data, x._data))


class ReverseV2(Primitive):
    """``ReverseV2(axis)(x)``: ``x`` reversed along the axes of ``axis``."""

    def __init__(self, axis):
        super().__init__()
        if not isinstance(axis, (tuple, list)):
            raise TypeError(f"ReverseV2: axis must be a tuple or list of ints, got "
                            f"{type(axis).__name__}")
        self.axis = tuple(check_int(a, "axis", "ReverseV2") for a in axis)

    def compute(self, input):  # noqa: A002
        return array_func.flip(input, self.axis)


class Range(Primitive):
    """``Range(maxlen=1000000)(start, end, step)``: ``start, start + step, ...`` below
    ``end`` (at most ``maxlen`` values)."""

    def __init__(self, maxlen=1000000):
        super().__init__()
        self.maxlen = check_int(maxlen, "maxlen", "Range")
        if self.maxlen <= 0:
            raise ValueError(f"Range: maxlen must be positive, got {maxlen}")

    def compute(self, start, end, step):
        vals = [v.asnumpy().item() if hasattr(v, "asnumpy") else v for v in (start, end, step)]
        ints = all(isinstance(v, int) for v in vals)
        out = F.arange(*vals, dtype=mdt.int64 if ints else mdt.float32)
        if out.shape[0] > self.maxlen:
            raise ValueError(f"Range: {out.shape[0]} values exceed maxlen {self.maxlen}")
        return out


class Eye(Primitive):
    """``Eye()(n, m, dtype)``: the ``n`` x ``m`` identity matrix."""

    def compute(self, n, m, dtype):
        return F.eye(n, m, dtype)


class LinSpace(Primitive):
    """``LinSpace()(start, stop, num)``: ``num`` evenly spaced values."""

    def compute(self, start, stop, num):
        return math_func.linspace(start, stop, num)


class Shape(Primitive):
    """``Shape()(x)``: the shape as a tuple of ints."""

    def compute(self, x):
        return math_func.shape(x)


class Rank(Primitive):
    """``Rank()(x)``: the number of dimensions."""

    def compute(self, x):
        return math_func.rank(x)


class Size(Primitive):
    """``Size()(x)``: the number of elements."""

    def compute(self, x):
        return math_func.size(x)


class DType(Primitive):
    """``DType()(x)``: the dtype of ``x``."""

    def compute(self, x):
        return math_func.dtype(x)


class Fill(Primitive):
    """``Fill()(dtype, dims, value)``."""

    def compute(self, dtype, dims, x):
        return F.full(dims, x, dtype)


class Ones(Primitive):
    """``Ones()(shape, dtype=None)``."""

    def compute(self, shape, dtype=None):
        return F.ones(shape, dtype)


class Zeros(Primitive):
    """``Zeros()(size, dtype=None)``."""

    def compute(self, size, dtype=None):
        return F.zeros(size, dtype)


__all__ = ["Concat", "Stack", "Pack", "Unstack", "Unpack", "Split", "Squeeze", "Tile",
           "BroadcastTo", "Gather", "GatherV2", "GatherD", "Slice", "StridedSlice", "Pad",
           "Tril", "Triu", "MaskedFill", "Identity", "Shape", "Rank", "Size", "DType", "Fill",
           "Ones", "Zeros", "ReverseV2", "Range", "Eye", "LinSpace"]
