"""Indexing and slicing: ``getitem``/``setitem``, ``gather``, ``one_hot``, ``slice``,
``strided_slice``, ``masked_fill``, ``split``/``chunk``/``unbind``, ``flip``, ``roll``, with
their Primitives.
"""
from __future__ import annotations

import builtins

import numpy as np

from mscore import dispatch, ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _axis1, _check_tensor, _int
from mscore.ops.array.creation import arange
from mscore.ops.array.manipulation import reshape, transpose
from mscore.ops.control import cast
from mscore.ops.math.elementwise import where
from mscore.ops.primitive_base import Primitive, check_int

_wrap = Tensor._wrap


def split(tensor, split_size_or_sections, axis=0):
    """Pieces of ``tensor`` along ``axis``: equal ``int`` sizes or a list of sizes."""
    x = _check_tensor(tensor, "tensor")
    ax = _axis1(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(split_size_or_sections, int):
        if split_size_or_sections <= 0:
            raise ValueError("split_size_or_sections: must be positive")
        sizes = [split_size_or_sections] * (n // split_size_or_sections)
        if n % split_size_or_sections:
            sizes.append(n % split_size_or_sections)
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise ValueError(f"split_size_or_sections: sizes {sizes} do not add up to {n}")
    out, start = [], 0
    for s in sizes:
        index = tuple(builtins.slice(start, start + s) if i == ax else builtins.slice(None)
                      for i in range(x.ndim))
        out.append(getitem(x, index))
        start += s
    return tuple(out)


def _index_arg(item):
    if isinstance(item, Tensor):
        if item.dtype.is_bool:
            raise TypeError("index: boolean mask indexing is not supported; use ops.where "
                            "or ops.masked_select")
        return call("cast", item._data, mdt.int64)
    if isinstance(item, (list, np.ndarray)):
        arr = np.asarray(item)
        if arr.dtype == np.bool_:
            raise TypeError("index: boolean mask indexing is not supported")
        return dispatch.backend().from_numpy(arr.astype(np.int64))
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        return int(item)
    if item is None or item is Ellipsis or isinstance(item, builtins.slice):
        return item
    raise TypeError(f"index: unsupported index element {item!r}")


def getitem(input, index):
    """numpy-style indexing with ints, slices, None, Ellipsis and integer tensors."""
    x = _check_tensor(input, "input")
    if not isinstance(index, tuple):
        index = (index,)
    return _wrap(call("getitem", x._data, tuple(_index_arg(i) for i in index)))


def setitem(input, index, value):
    """A copy of ``input`` with ``input[index] = value`` (functional, differentiable)."""
    x = _check_tensor(input, "input")
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(_index_arg(i) for i in index)
    current = call("getitem", x._data, index)
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value),
                                                            dtype=x.dtype)
    target_shape = dispatch.shape(current)
    update = call("broadcast_to", call("cast", value._data, x.dtype), target_shape)
    delta = call("sub", update, current)
    return _wrap(call("scatter_add", x._data, index, delta))


def gather(input_params, input_indices, axis, batch_dims=0):
    """Slices of ``input_params`` along ``axis`` picked by ``input_indices``."""
    x = _check_tensor(input_params, "input_params")
    ax = _axis1(axis, x.ndim)
    if batch_dims == 0:
        return getitem(x, (builtins.slice(None),) * ax + (input_indices,))
    return _batched_gather(x, _check_tensor(input_indices, "input_indices"), ax, batch_dims)


def _batched_gather(x, idx, ax, batch_dims):
    """``gather`` with ``batch_dims`` leading dimensions shared by the params and the
    indices: ``out[b..., i..., r...] = x[b..., idx[b..., i...], r...]`` (the dimensions of
    ``x`` between the batch and ``ax`` stay in front of the index dimensions)."""
    if not isinstance(batch_dims, int) or isinstance(batch_dims, bool):
        raise TypeError(f"batch_dims: expected an int, got {type(batch_dims).__name__}")
    b = batch_dims + idx.ndim if batch_dims < 0 else batch_dims
    if not 0 <= b <= builtins.min(ax, idx.ndim) or x.shape[:b] != idx.shape[:b]:
        raise ValueError(f"batch_dims: expected at most axis ({ax}) and the rank of the "
                         f"indices ({idx.ndim}), with the same leading shape in both, got "
                         f"{batch_dims} for shapes {x.shape} and {idx.shape}")
    middle = list(range(b, ax))  # dimensions of x between the batch and the gather axis
    order = list(range(b)) + [ax] + middle + list(range(ax + 1, x.ndim))
    moved = transpose(x, tuple(order)) if middle else x
    iotas = tuple(reshape(arange(0, n, 1, mdt.int64),
                          (1,) * k + (n,) + (1,) * (idx.ndim - k - 1))
                  for k, n in enumerate(idx.shape[:b]))
    out = getitem(moved, iotas + (idx,))  # batch + index dims + middle + rest
    if not middle:
        return out
    n_idx = idx.ndim - b
    perm = (list(range(b)) + list(range(b + n_idx, b + n_idx + len(middle)))
            + list(range(b, b + n_idx)) + list(range(b + n_idx + len(middle), out.ndim)))
    return transpose(out, tuple(perm))


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1):
    """One-hot encoding of integer ``indices`` with ``depth`` classes."""
    idx = _check_tensor(indices, "indices")
    if idx.dtype.is_floating:
        raise TypeError(f"indices: expected an integer Tensor, got {idx.dtype}")
    if not isinstance(depth, int) or depth < 0:
        raise ValueError(f"depth: expected a non-negative int, got {depth!r}")
    on = on_value if isinstance(on_value, Tensor) else Tensor(float(on_value))
    off = off_value if isinstance(off_value, Tensor) else Tensor(float(off_value))
    classes = call("arange", 0, depth, 1, mdt.int64)
    ax = _axis1(axis, idx.ndim + 1)
    expanded = call("reshape", call("cast", idx._data, mdt.int64),
                    idx.shape[:ax] + (1,) + idx.shape[ax:])
    cshape = [1] * (idx.ndim + 1)
    cshape[ax] = depth
    hit = call("equal", expanded, call("reshape", classes, tuple(cshape)))
    return where(_wrap(hit), on, off)


def flip(input, dims):
    """``input`` reversed along each axis of ``dims`` (a tuple or list of ints)."""
    x = _check_tensor(input, "input")
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"dims: expected a tuple or list of ints, got {type(dims).__name__}")
    axes = [_axis1(_int(d, "dims"), x.ndim, "dims") for d in dims]
    if len(set(axes)) != len(axes):
        raise ValueError(f"dims: repeated axis in {tuple(dims)}")
    out = x
    for ax in axes:
        n = x.shape[ax]
        index = (builtins.slice(None),) * ax + (Tensor(np.arange(n - 1, -1, -1, dtype=np.int64)),)
        out = getitem(out, index)
    return out


def narrow(input, axis, start, length):
    """``length`` elements of ``input`` along ``axis`` from ``start``."""
    x = _check_tensor(input, "input")
    ax = _axis1(_int(axis, "axis"), x.ndim, "axis")
    start, length = _int(start, "start"), _int(length, "length")
    n = x.shape[ax]
    if start < 0:
        start += n
    if not 0 <= start <= n:
        raise ValueError(f"start: {start} is out of range for size {n}")
    if length < 0 or start + length > n:
        raise ValueError(f"length: {start} + {length} exceeds size {n} of axis {ax}")
    return getitem(x, (builtins.slice(None),) * ax + (builtins.slice(start, start + length),))


def chunk(input, chunks, axis=0):
    """``input`` split along ``axis`` into ``chunks`` pieces of ``ceil(n / chunks)``
    elements (the last may be smaller; fewer pieces when the size runs out)."""
    x = _check_tensor(input, "input")
    chunks = _int(chunks, "chunks")
    if chunks <= 0:
        raise ValueError(f"chunks: expected a positive int, got {chunks}")
    ax = _axis1(_int(axis, "axis"), x.ndim, "axis")
    n = x.shape[ax]
    step = -(-n // chunks) if n else 1
    return split(x, builtins.max(step, 1), ax)


def unbind(input, dim=0):
    """The slices of ``input`` along ``dim``, that axis removed."""
    x = _check_tensor(input, "input")
    if not -builtins.max(x.ndim, 1) <= _int(dim, "dim") < builtins.max(x.ndim, 1):
        raise ValueError(f"dim: {dim} is out of range for a {x.ndim}-d tensor")
    ax = _axis1(dim, x.ndim, "dim")
    return tuple(getitem(x, (builtins.slice(None),) * ax + (i,)) for i in range(x.shape[ax]))


def unstack(input_x, axis=0):
    """The slices of ``input_x`` along ``axis`` (MindSpore's ``ops.unstack``)."""
    return unbind(input_x, axis)


def gather_elements(input, dim, index):
    """``out[i][j][k] = input[index[i][j][k]][j][k]`` for ``dim`` 0 (and so on): values of
    ``input`` picked along ``dim`` by ``index`` (same rank; other axes no larger)."""
    x = _check_tensor(input, "input")
    idx = _check_tensor(index, "index")
    d = _int(dim, "dim")
    if not -builtins.max(x.ndim, 1) <= d < builtins.max(x.ndim, 1):
        raise ValueError(f"dim: {dim} is out of range for a {x.ndim}-d tensor")
    d %= builtins.max(x.ndim, 1)
    if idx.ndim != x.ndim:
        raise ValueError(f"index: expected {x.ndim} dimensions, got shape {idx.shape}")
    if idx.dtype.is_floating:
        raise TypeError(f"index: expected an integer Tensor, got {idx.dtype}")
    grids = []
    for ax in range(x.ndim):
        if ax == d:
            grids.append(cast(idx, mdt.int64))
        else:
            shape = [1] * x.ndim
            shape[ax] = idx.shape[ax]
            grids.append(Tensor(np.arange(idx.shape[ax], dtype=np.int64).reshape(shape)))
    return getitem(x, tuple(grids))


def gather_d(x, dim, index):
    """MindSpore's ``ops.gather_d``: :func:`gather_elements`."""
    return gather_elements(x, dim, index)


def masked_fill(input_x, mask, value):
    """``input_x`` with ``value`` (a number or a 0-d Tensor) where ``mask`` is true."""
    x = _check_tensor(input_x, "input_x")
    if isinstance(value, Tensor):
        value = cast(value, x.dtype)
    return where(mask, value, x)


def slice(input_x, begin, size):
    """``size[i]`` elements from ``begin[i]`` along each axis (``-1``: to the end)."""
    x = _check_tensor(input_x, "input_x")
    begin, size = tuple(begin), tuple(size)
    if len(begin) != x.ndim or len(size) != x.ndim:
        raise ValueError(f"begin, size: expected {x.ndim} entries each, got {begin} and "
                         f"{size}")
    index = []
    for b, s, n in zip(begin, size, x.shape):
        b, s = _int(b, "begin"), _int(s, "size")
        end = n if s == -1 else b + s
        if b < 0 or end > n or end < b:
            raise ValueError(f"slice: begin {begin} and size {size} exceed shape {x.shape}")
        index.append(builtins.slice(b, end))
    return getitem(x, tuple(index))


def _bits(mask, name):
    if isinstance(mask, bool) or not isinstance(mask, (int, np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(mask).__name__}")
    if mask < 0:
        raise ValueError(f"{name}: expected a non-negative int, got {mask}")
    return int(mask)


def strided_slice(input_x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0):
    """numpy-style ``input_x[b0:e0:s0, ...]`` with TensorFlow's masks: bit i of
    ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]``, ``ellipsis_mask`` makes
    entry i an ellipsis, ``new_axis_mask`` a new axis and ``shrink_axis_mask`` an index."""
    x = _check_tensor(input_x, "input_x")
    masks = [_bits(m, n) for m, n in ((begin_mask, "begin_mask"), (end_mask, "end_mask"),
                                      (ellipsis_mask, "ellipsis_mask"),
                                      (new_axis_mask, "new_axis_mask"),
                                      (shrink_axis_mask, "shrink_axis_mask"))]
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask = masks
    begin, end, strides = tuple(begin), tuple(end), tuple(strides)
    if not len(begin) == len(end) == len(strides):
        raise ValueError(f"begin, end, strides: expected equal lengths, got {len(begin)}, "
                         f"{len(end)}, {len(strides)}")
    if bin(ellipsis_mask).count("1") > 1:
        raise ValueError("ellipsis_mask: at most one bit may be set")
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        b, e, s = _int(b, "begin"), _int(e, "end"), _int(s, "strides")
        if s == 0:
            raise ValueError("strides: must not be 0")
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif new_axis_mask & bit:
            index.append(None)
        elif shrink_axis_mask & bit:
            index.append(0 if begin_mask & bit else b)
        else:
            index.append(builtins.slice(None if begin_mask & bit else b,
                                        None if end_mask & bit else e, s))
    return _getitem_any_step(x, tuple(index))


def _getitem_any_step(x, index):
    """``x[index]`` where slices may have negative steps (not every backend slices
    backwards): those axes gather explicit indices instead."""
    if not builtins.any(isinstance(i, builtins.slice) and (i.step or 1) < 0 for i in index):
        return getitem(x, index)
    # Expand the ellipsis, then replace each backward slice by a gather of its indices.
    n_real = builtins.sum(1 for i in index if i is not None and i is not Ellipsis)
    full = []
    for i in index:
        if i is Ellipsis:
            full.extend([builtins.slice(None)] * (x.ndim - n_real))
        else:
            full.append(i)
    out, axis, plain = x, 0, []
    for i in full:
        if i is None:
            plain.append(None)
            continue
        if isinstance(i, builtins.slice) and (i.step or 1) < 0:
            positions = np.arange(x.shape[axis])[i]
            plain.append(Tensor(positions.astype(np.int64)))
        else:
            plain.append(i)
        axis += 1
    # Gather one axis at a time so that tensor indices never combine (numpy would pair
    # them elementwise).
    tensor_axes = [k for k, i in enumerate(plain) if isinstance(i, Tensor)]
    first = [builtins.slice(None) if isinstance(i, Tensor) else i for i in plain]
    out = getitem(out, tuple(first))
    # Axes that survive the first pass: count them to locate each gathered axis.
    for k in tensor_axes:
        pos = builtins.sum(1 for i in first[:k] if not isinstance(i, (int, np.integer)))
        out = getitem(out, (builtins.slice(None),) * pos + (plain[k],))
    return out


def roll(input, shifts, dims=None):
    """Elements shifted cyclically by ``shifts`` along ``dims`` (flattened when None)."""
    x = _check_tensor(input, "input")
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    if dims is None:
        flat = reshape(x, (-1,))
        return reshape(roll(flat, shifts[:1] if len(shifts) == 1 else shifts, 0), x.shape)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise ValueError(f"For 'roll', 'shifts' {shifts} and 'dims' {dims} must have the same "
                         f"length")
    out = x
    for s, d in zip(shifts, dims):
        ax = _axis1(int(d), x.ndim, "dims")
        n = x.shape[ax]
        if n == 0:
            continue
        idx = (np.arange(n) - int(s)) % n
        out = getitem(out, (builtins.slice(None),) * ax + (Tensor(idx.astype(np.int64)),))
    return out


class Unstack(Primitive):
    """``Unstack(axis=0, num=None)(x)``: the slices along ``axis``."""

    def __init__(self, axis=0, num=None):
        super().__init__()
        self.axis = check_int(axis, "axis", type(self).__name__)
        if num is not None:
            check_int(num, "num", type(self).__name__)
        self.num = num

    def compute(self, input_x):
        out = unbind(input_x, self.axis)
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
        x = _check_tensor(input_x, "input_x")
        ax = _axis1(self.axis, x.ndim)
        n = x.shape[ax]
        if n % self.output_num:
            raise ValueError(f"Split: axis {self.axis} of size {n} does not split into "
                             f"{self.output_num} equal pieces")
        return split(x, n // self.output_num, ax)


class Gather(Primitive):
    """``Gather(batch_dims=0)(params, indices, axis)``."""

    def __init__(self, batch_dims=0):
        super().__init__()
        self.batch_dims = check_int(batch_dims, "batch_dims", type(self).__name__)

    def compute(self, input_params, input_indices, axis):
        return gather(input_params, input_indices, axis, self.batch_dims)


class GatherV2(Gather):
    """The 1.x name of ``Gather``."""


class GatherD(Primitive):
    """``GatherD()(x, dim, index)``: values picked along ``dim`` by ``index``."""

    def compute(self, x, dim, index):
        return gather_elements(x, dim, index)


class Slice(Primitive):
    """``Slice()(x, begin, size)``."""

    def compute(self, input, begin, size):
        return slice(input, begin, size)


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
        return strided_slice(input_x, begin, end, strides, *self.masks)


class MaskedFill(Primitive):
    """``MaskedFill()(x, mask, value)``."""

    def compute(self, input_x, mask, value):
        return masked_fill(input_x, mask, value)


class ReverseV2(Primitive):
    """``ReverseV2(axis)(x)``: ``x`` reversed along the axes of ``axis``."""

    def __init__(self, axis):
        super().__init__()
        if not isinstance(axis, (tuple, list)):
            raise TypeError(f"ReverseV2: axis must be a tuple or list of ints, got "
                            f"{type(axis).__name__}")
        self.axis = tuple(check_int(a, "axis", "ReverseV2") for a in axis)

    def compute(self, input):
        return flip(input, self.axis)


class OneHot(Primitive):
    """``OneHot(axis=-1)(indices, depth, on_value, off_value)``."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = check_int(axis, "axis", "OneHot")

    def compute(self, indices, depth, on_value, off_value):
        return one_hot(indices, depth, on_value, off_value, self.axis)


def _grids(index_shape, axis, index):
    """Advanced-index tuple that picks ``index`` along ``axis`` and every other position in
    place (``take_along_axis``'s index)."""
    grids = []
    for ax in range(len(index_shape)):
        if ax == axis:
            grids.append(index)
        else:
            shape = [1] * len(index_shape)
            shape[ax] = index_shape[ax]
            grids.append(Tensor(np.arange(index_shape[ax], dtype=np.int64).reshape(shape)))
    return tuple(grids)


def _take_along(x, axis, idx):
    """``x`` picked along ``axis`` by the integer numpy array ``idx`` (differentiable in
    ``x``)."""
    if x.ndim == 0:
        return x
    return ops.getitem(x, _grids(idx.shape, axis, Tensor(idx.astype(np.int64))))
