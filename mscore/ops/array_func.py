"""MindSpore's array functions beyond :mod:`mscore.ops.functional` (``ops.flip``,
``ops.narrow``, ``ops.chunk``, ``ops.tril``, ``ops.gather_d``, ``ops.strided_slice``,
...), built on indexing and the functional ops, so every backend computes and
differentiates them."""
from __future__ import annotations

import builtins

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops import functional as F


def _int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    return int(value)


def flip(input, dims):  # noqa: A002
    """``input`` reversed along each axis of ``dims`` (a tuple or list of ints)."""
    x = F._check_tensor(input, "input")
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"dims: expected a tuple or list of ints, got {type(dims).__name__}")
    axes = [F._axis1(_int(d, "dims"), x.ndim, "dims") for d in dims]
    if len(set(axes)) != len(axes):
        raise ValueError(f"dims: repeated axis in {tuple(dims)}")
    out = x
    for ax in axes:
        n = x.shape[ax]
        index = (builtins.slice(None),) * ax + (Tensor(np.arange(n - 1, -1, -1, dtype=np.int64)),)
        out = F.getitem(out, index)
    return out


def narrow(input, axis, start, length):  # noqa: A002
    """``length`` elements of ``input`` along ``axis`` from ``start``."""
    x = F._check_tensor(input, "input")
    ax = F._axis1(_int(axis, "axis"), x.ndim, "axis")
    start, length = _int(start, "start"), _int(length, "length")
    n = x.shape[ax]
    if start < 0:
        start += n
    if not 0 <= start <= n:
        raise ValueError(f"start: {start} is out of range for size {n}")
    if length < 0 or start + length > n:
        raise ValueError(f"length: {start} + {length} exceeds size {n} of axis {ax}")
    return F.getitem(x, (builtins.slice(None),) * ax + (builtins.slice(start, start + length),))


def chunk(input, chunks, axis=0):  # noqa: A002
    """``input`` split along ``axis`` into ``chunks`` pieces of ``ceil(n / chunks)``
    elements (the last may be smaller; fewer pieces when the size runs out)."""
    x = F._check_tensor(input, "input")
    chunks = _int(chunks, "chunks")
    if chunks <= 0:
        raise ValueError(f"chunks: expected a positive int, got {chunks}")
    ax = F._axis1(_int(axis, "axis"), x.ndim, "axis")
    n = x.shape[ax]
    step = -(-n // chunks) if n else 1
    return F.split(x, builtins.max(step, 1), ax)


def unbind(input, dim=0):  # noqa: A002
    """The slices of ``input`` along ``dim``, that axis removed."""
    x = F._check_tensor(input, "input")
    if not -builtins.max(x.ndim, 1) <= _int(dim, "dim") < builtins.max(x.ndim, 1):
        raise ValueError(f"dim: {dim} is out of range for a {x.ndim}-d tensor")
    ax = F._axis1(dim, x.ndim, "dim")
    return tuple(F.getitem(x, (builtins.slice(None),) * ax + (i,)) for i in range(x.shape[ax]))


def unstack(input_x, axis=0):
    """The slices of ``input_x`` along ``axis`` (MindSpore's ``ops.unstack``)."""
    return unbind(input_x, axis)


def _triangle(x, diagonal, lower):
    x = F._check_tensor(x, "input")
    diagonal = _int(diagonal, "diagonal")
    if x.ndim < 2:
        raise ValueError(f"input: expected at least 2 dimensions, got shape {x.shape}")
    rows, cols = x.shape[-2], x.shape[-1]
    r = np.arange(rows).reshape(rows, 1)
    c = np.arange(cols).reshape(1, cols)
    keep = (c - r <= diagonal) if lower else (c - r >= diagonal)
    return F.where(Tensor(keep), x, F.zeros_like(x))


def tril(input, diagonal=0):  # noqa: A002
    """The lower triangle of the last two axes (above ``diagonal`` zeroed)."""
    return _triangle(input, diagonal, True)


def triu(input, diagonal=0):  # noqa: A002
    """The upper triangle of the last two axes (below ``diagonal`` zeroed)."""
    return _triangle(input, diagonal, False)


def t(input):  # noqa: A002
    """A 2-d Tensor transposed (0-d and 1-d returned as they are)."""
    x = F._check_tensor(input, "input")
    if x.ndim > 2:
        raise ValueError(f"input: expected at most 2 dimensions, got shape {x.shape}")
    return F.transpose(x, (1, 0)) if x.ndim == 2 else x


def swapdims(input, dim0, dim1):  # noqa: A002
    """Two axes exchanged (``ops.swapaxes`` with torch's argument names)."""
    return F.swapaxes(input, dim0, dim1)


def unsqueeze(input, dim):  # noqa: A002
    """A new axis of size 1 at ``dim``."""
    return F.expand_dims(input, dim)


def gather_elements(input, dim, index):  # noqa: A002
    """``out[i][j][k] = input[index[i][j][k]][j][k]`` for ``dim`` 0 (and so on): values of
    ``input`` picked along ``dim`` by ``index`` (same rank; other axes no larger)."""
    x = F._check_tensor(input, "input")
    idx = F._check_tensor(index, "index")
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
            grids.append(F.cast(idx, mdt.int64))
        else:
            shape = [1] * x.ndim
            shape[ax] = idx.shape[ax]
            grids.append(Tensor(np.arange(idx.shape[ax], dtype=np.int64).reshape(shape)))
    return F.getitem(x, tuple(grids))


def gather_d(x, dim, index):
    """MindSpore's ``ops.gather_d``: :func:`gather_elements`."""
    return gather_elements(x, dim, index)


def masked_fill(input_x, mask, value):
    """``input_x`` with ``value`` (a number or a 0-d Tensor) where ``mask`` is true."""
    x = F._check_tensor(input_x, "input_x")
    if isinstance(value, Tensor):
        value = F.cast(value, x.dtype)
    return F.where(mask, value, x)


def slice(input_x, begin, size):  # noqa: A001
    """``size[i]`` elements from ``begin[i]`` along each axis (``-1``: to the end)."""
    x = F._check_tensor(input_x, "input_x")
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
    return F.getitem(x, tuple(index))


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
    x = F._check_tensor(input_x, "input_x")
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
        return F.getitem(x, index)
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
    out = F.getitem(out, tuple(first))
    # Axes that survive the first pass: count them to locate each gathered axis.
    for k in tensor_axes:
        pos = builtins.sum(1 for i in first[:k] if not isinstance(i, (int, np.integer)))
        out = F.getitem(out, (builtins.slice(None),) * pos + (plain[k],))
    return out


def bias_add(input_x, bias):
    """``input_x + bias`` with ``bias`` along axis 1 (the channels)."""
    x = F._check_tensor(input_x, "input_x")
    b = F._check_tensor(bias, "bias")
    if x.ndim < 2:
        raise ValueError(f"input_x: expected at least 2 dimensions, got shape {x.shape}")
    if b.ndim != 1 or b.shape[0] != x.shape[1]:
        raise ValueError(f"bias: expected shape ({x.shape[1]},), got {b.shape}")
    return F.add(x, F.reshape(b, (1, -1) + (1,) * (x.ndim - 2)))


__all__ = ["flip", "narrow", "chunk", "unbind", "unstack", "tril", "triu", "t", "swapdims",
           "unsqueeze", "gather_elements", "gather_d", "masked_fill", "slice",
           "strided_slice", "bias_add"]
