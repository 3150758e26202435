"""``mindspore.numpy``'s shape and selection functions, thin over :mod:`mscore.ops`."""
from __future__ import annotations

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.numpy._convert import asarray
from mscore.ops.array import sorting

__all__ = [
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "expand_dims",
    "squeeze", "broadcast_to", "broadcast_arrays", "concatenate", "stack", "hstack",
    "vstack", "dstack", "column_stack", "append", "split", "array_split", "hsplit", "vsplit",
    "dsplit", "tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90", "where", "take",
    "take_along_axis", "argmax", "argmin", "argwhere", "searchsorted", "unique", "size",
    "atleast_1d", "atleast_2d", "atleast_3d", "pad", "choose", "select", "bincount",
    "unravel_index", "ravel_multi_index",
]


def reshape(x, new_shape):
    """Same values in ``new_shape``."""
    return ops.reshape(asarray(x), tuple(new_shape) if isinstance(new_shape, (list, tuple))
                       else (new_shape,))


def ravel(x):
    """Flattened to 1-d."""
    return ops.reshape(asarray(x), (-1,))


def transpose(a, axes=None):
    """Axes permuted (reversed when None)."""
    a = asarray(a)
    return ops.transpose(a, tuple(reversed(range(a.ndim))) if axes is None else tuple(axes))


def swapaxes(x, axis1, axis2):
    """Two axes exchanged."""
    return ops.swapaxes(asarray(x), axis1, axis2)


def moveaxis(a, source, destination):
    """Axes ``source`` moved to ``destination``."""
    return ops.moveaxis(asarray(a), source, destination)


def rollaxis(x, axis, start=0):
    """``axis`` moved to just before ``start``."""
    x = asarray(x)
    axis %= x.ndim
    start = start % (x.ndim + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return ops.moveaxis(x, axis, start)


def expand_dims(a, axis):
    """New axes of size 1 at ``axis`` (an int or a tuple)."""
    a = asarray(a)
    for ax in sorted(axis if isinstance(axis, (tuple, list)) else (axis,)):
        a = ops.expand_dims(a, ax)
    return a


def squeeze(a, axis=None):
    """Axes of size 1 removed (only ``axis`` when given)."""
    return ops.squeeze(asarray(a), axis)


def broadcast_to(array, shape):
    """Broadcast to ``shape``."""
    return ops.broadcast_to(asarray(array), tuple(shape))


def broadcast_arrays(*args):
    """The inputs broadcast to their common shape."""
    arrays = [asarray(a) for a in args]
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    return [ops.broadcast_to(a, shape) for a in arrays]


def concatenate(arrays, axis=0):
    """Joined along ``axis`` (flattened first when None)."""
    arrays = [asarray(a) for a in arrays]
    if axis is None:
        arrays, axis = [ops.reshape(a, (-1,)) for a in arrays], 0
    return ops.concat(arrays, axis)


def stack(arrays, axis=0):
    """Joined along a new axis."""
    return ops.stack([asarray(a) for a in arrays], axis)


def atleast_1d(*arys):
    """Each input with at least 1 dimension."""
    out = [ops.reshape(a, (1,)) if a.ndim == 0 else a for a in map(asarray, arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """Each input with at least 2 dimensions."""
    out = [ops.reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a
           for a in map(asarray, arys)]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """Each input with at least 3 dimensions (1-d: (1, n, 1); 2-d: (m, n, 1))."""
    out = []
    for a in map(asarray, arys):
        if a.ndim == 0:
            a = ops.reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = ops.reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = ops.expand_dims(a, 2)
        out.append(a)
    return out[0] if len(out) == 1 else out


def hstack(tup):
    """Joined along axis 1 (axis 0 for 1-d inputs)."""
    arrays = atleast_1d(*tup) if len(tup) > 1 else [atleast_1d(*tup)]
    return ops.concat(arrays, 0 if arrays[0].ndim == 1 else 1)


def vstack(tup):
    """Joined along axis 0 (1-d inputs as rows)."""
    arrays = atleast_2d(*tup) if len(tup) > 1 else [atleast_2d(*tup)]
    return ops.concat(arrays, 0)


def dstack(tup):
    """Joined along axis 2."""
    arrays = atleast_3d(*tup) if len(tup) > 1 else [atleast_3d(*tup)]
    return ops.concat(arrays, 2)


def column_stack(tup):
    """1-d inputs as columns, joined along axis 1."""
    arrays = [ops.expand_dims(a, 1) if a.ndim == 1 else a for a in map(asarray, tup)]
    return ops.concat(arrays, 1)


def append(arr, values, axis=None):
    """``values`` appended along ``axis`` (both flattened when None)."""
    return concatenate((arr, values), axis)


def split(x, indices_or_sections, axis=0):
    """Equal pieces (an int, which must divide the axis) or pieces cut at indices."""
    x = asarray(x)
    if isinstance(indices_or_sections, int) and x.shape[axis] % indices_or_sections:
        raise ValueError(f"split: the axis of size {x.shape[axis]} does not split into "
                         f"{indices_or_sections} equal pieces")
    return list(ops.tensor_split(x, indices_or_sections, axis))


def array_split(x, indices_or_sections, axis=0):
    """Near-equal pieces (an int) or pieces cut at indices."""
    return list(ops.tensor_split(asarray(x), indices_or_sections, axis))


def hsplit(x, indices_or_sections):
    """:func:`split` along axis 1 (axis 0 for 1-d)."""
    x = asarray(x)
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(x, indices_or_sections):
    """:func:`split` along axis 0."""
    return split(x, indices_or_sections, 0)


def dsplit(x, indices_or_sections):
    """:func:`split` along axis 2."""
    return split(x, indices_or_sections, 2)


def tile(a, reps):
    """``a`` repeated ``reps[i]`` times along axis i."""
    return ops.tile(asarray(a), tuple(reps) if isinstance(reps, (tuple, list)) else (reps,))


def repeat(a, repeats, axis=None):
    """Each entry repeated ``repeats`` times along ``axis`` (flattened when None)."""
    return ops.repeat_interleave(asarray(a), repeats, axis)


def flip(m, axis=None):
    """Reversed along ``axis`` (every axis when None)."""
    m = asarray(m)
    axes = tuple(range(m.ndim)) if axis is None else (
        tuple(axis) if isinstance(axis, (tuple, list)) else (axis,))
    return ops.flip(m, axes)


def fliplr(m):
    """Reversed along axis 1."""
    return ops.fliplr(asarray(m))


def flipud(m):
    """Reversed along axis 0."""
    return ops.flipud(asarray(m))


def roll(a, shift, axis=None):
    """Shifted cyclically by ``shift`` along ``axis`` (flattened when None)."""
    a = asarray(a)
    if axis is None:
        return ops.reshape(ops.roll(ops.reshape(a, (-1,)), shift, 0), a.shape)
    return ops.roll(a, shift, axis)


def rot90(a, k=1, axes=(0, 1)):
    """Rotated by 90 degrees ``k`` times in the plane ``axes``."""
    return ops.rot90(asarray(a), k, tuple(axes))


def where(condition, x=None, y=None):
    """``x`` where ``condition`` else ``y``; with only ``condition``: its non-zero
    indices per axis."""
    condition = asarray(condition)
    if x is None and y is None:
        return ops.nonzero(condition, as_tuple=True)
    x, y = asarray(x), asarray(y)
    return ops.where(ops.cast(condition, mdt.bool_), x, y)


def take(a, indices, axis=None, mode="clip"):
    """Entries at ``indices`` along ``axis`` (of the flattened array when None)."""
    return asarray(a).take(indices, axis, mode)


def take_along_axis(arr, indices, axis):
    """Entries of ``arr`` picked along ``axis`` by ``indices`` (same rank)."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = ops.reshape(arr, (-1,)), 0
    return ops.gather_elements(arr, axis, asarray(indices))


def argmax(a, axis=None):
    """Index of the largest value (of the flattened array when ``axis`` is None)."""
    return ops.argmax(asarray(a), axis)


def argmin(a, axis=None):
    """Index of the smallest value (of the flattened array when ``axis`` is None)."""
    return ops.argmin(asarray(a), axis)


def argwhere(a):
    """``(n, ndim)`` indices of the non-zero entries."""
    return ops.argwhere(asarray(a))


def searchsorted(a, v, side="left", sorter=None):
    """Where ``v`` would be inserted into the sorted 1-d ``a``."""
    return ops.searchsorted(asarray(a), asarray(v), side=side, sorter=sorter)


def unique(x, return_inverse=False):
    """The distinct values, sorted (with the inverse indices on request)."""
    return sorting.unique_values(asarray(x), return_inverse=return_inverse)


def size(a, axis=None):
    """Number of entries (along ``axis`` when given)."""
    a = asarray(a)
    return a.size if axis is None else a.shape[axis]


def pad(arr, pad_width, mode="constant", stat_length=None, constant_values=0,
        end_values=0, reflect_type="even", **kwargs):
    """``arr`` padded by ``pad_width``: ``mode`` 'constant', 'edge', 'reflect', 'wrap' or
    'linear_ramp' (from ``end_values`` to the edge value; the others are
    ``NotImplementedError``)."""
    modes = {"constant": "constant", "edge": "replicate", "reflect": "reflect",
             "wrap": "circular", "linear_ramp": "linear_ramp"}
    if mode not in modes:
        raise NotImplementedError(f"pad: mode={mode!r} is not supported; use one of "
                                  f"{sorted(modes)}")
    arr = asarray(arr)
    widths = np.broadcast_to(np.asarray(pad_width), (arr.ndim, 2)).tolist()
    flat = []
    for before, after in reversed(widths):
        flat += [int(before), int(after)]
    if mode == "linear_ramp":
        ends = np.broadcast_to(np.asarray(end_values, np.float64), (arr.ndim, 2)).tolist()
        return _pad_linear_ramp(arr, widths, ends)
    if mode != "constant":
        return _pad_by_index(arr, widths, mode)
    return ops.pad(arr, tuple(flat), value=constant_values)


def _pad_linear_ramp(arr, widths, ends):
    """NumPy's 'linear_ramp': along each axis in turn, ``before`` values rising evenly from
    ``end`` (outermost) towards the edge value (not reaching it), likewise ``after``; on
    integer arrays each axis's ramp is truncated towards zero, as MindSpore's is."""
    dtype = arr.dtype
    work = dtype if dtype.is_floating else mdt.float32
    for ax, ((before, after), (end_lo, end_hi)) in enumerate(zip(widths, ends)):
        n, left, right = arr.shape[ax], [], []
        for count, end, edge_at, side in ((int(before), end_lo, 0, left),
                                          (int(after), end_hi, n - 1, right)):
            if count == 0:
                continue
            steps = np.arange(count, dtype=np.float64) / count
            shape = [1] * arr.ndim
            shape[ax] = count
            t = Tensor((steps if side is left else steps[::-1]).reshape(shape), work)
            edge = ops.cast(ops.narrow(arr, ax, edge_at, 1), work)
            ramp = ops.add(ops.mul(ops.sub(edge, end), t), end)
            side.append(ops.cast(ramp, dtype))    # integers: truncated, as MindSpore
        arr = ops.concat(left + [arr] + right, ax)
    return arr


def _pad_by_index(arr, widths, mode):
    """Non-constant padding as a gather of source positions per axis (NumPy's rules)."""
    for ax, (before, after) in enumerate(widths):
        n = arr.shape[ax]
        pos = np.arange(-int(before), n + int(after))
        if mode == "edge":
            pos = np.clip(pos, 0, n - 1)
        elif mode == "wrap":
            pos = np.mod(pos, n)
        else:  # reflect: mirror without repeating the edge
            period = 2 * (n - 1) if n > 1 else 1
            pos = np.abs(np.mod(pos, period))
            pos = np.where(pos >= n, period - pos, pos)
        arr = ops.gather(arr, Tensor(pos.astype(np.int64)), ax)
    return arr


def choose(a, choices, mode="clip"):
    """Entries picked from ``choices[a[i]]``."""
    a = asarray(a).asnumpy()
    n = len(choices)
    a = np.clip(a, 0, n - 1) if mode == "clip" else np.mod(a, n) if mode == "wrap" else a
    stacked = ops.stack([ops.broadcast_to(asarray(c), a.shape) for c in choices])
    return ops.gather_elements(stacked, 0, Tensor(a[None].astype(np.int64)))[0]


def select(condlist, choicelist, default=0):
    """From ``choicelist[i]`` where ``condlist[i]`` is the first true condition."""
    out = None
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        base = out if out is not None else ops.full_like(asarray(choice), default)
        out = ops.where(ops.cast(asarray(cond), mdt.bool_), asarray(choice), base)
    return out


def bincount(x, weights=None, minlength=0, length=None):
    """Counts of each non-negative integer value."""
    return ops.bincount(asarray(x), weights, minlength)


def unravel_index(indices, shape, order="C"):
    """Flat indices as a tuple of coordinate arrays."""
    out = np.unravel_index(asarray(indices).asnumpy(), tuple(shape), order=order)
    return tuple(Tensor(o.astype(np.int32)) for o in out)


def ravel_multi_index(multi_index, dims, mode="clip", order="C"):
    """Coordinate arrays as flat indices."""
    coords = tuple(asarray(m).asnumpy() for m in multi_index)
    return Tensor(np.ravel_multi_index(coords, tuple(dims), mode=mode, order=order)
                  .astype(np.int32))
