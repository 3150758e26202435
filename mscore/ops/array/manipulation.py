"""Shape manipulation: ``reshape``, ``transpose``, ``expand_dims``, ``squeeze``, ``flatten``,
``concat``, ``stack``, ``tile``, ``broadcast_to`` and the shape queries, with their Primitives;
axis moves, diagonals, splits (``tensor_split``, ``hsplit`` ...), stacks (``hstack``,
``vstack``), rotations and flips.
"""
from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from mscore import ops
from mscore._state import in_compiled
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.dispatch import shape as _shape_of
from mscore.ops import _layout
from mscore.ops._args import _axes, _axis, _axis1, _check_tensor, _tensor
from mscore.ops._layout import ShardedTensor
from mscore.ops.primitive_base import Primitive, _elementwise, check_axes, check_int

_wrap = Tensor._wrap


def reshape(input, shape):
    """Same values in ``shape`` (one entry may be -1)."""
    x = input if isinstance(input, Tensor) else _check_tensor(input, "input")
    if type(x) is ShardedTensor:   # an operator's cut output keeps its pieces where it can
        return _reshape_pieces(x, shape)
    xd = x._data
    have = _shape_of(xd)
    try:
        target = _checked_shapes.get((shape, have))
    except TypeError:   # a list: not hashable
        target = None
    if target is None:
        target = _checked_shape(shape, have)
    if target == have:
        return x
    return _wrap(call("reshape", xd, target))


def _reshape_pieces(x, shape):
    target = _checked_shape(shape, tuple(x.shape))
    layout = None if x._layout is None else _layout.reshaped(x._layout, target)
    if layout is None:
        return _wrap(call("reshape", x._data, target))
    return _layout.make_sharded(call("reshape", x._piece, layout.local_shape), layout)


# (shape asked, shape had) -> the shape to reshape to, for shapes given as tuples of ints: a
# network reshapes by the same few shapes every step, and checking them is most of the op's
# host time.
_checked_shapes = {}
_MAX_CHECKED = 256


def _size_mismatch(shape, size):
    """MindSpore's ValueError for a ``shape`` (as asked, -1 included) that does not hold
    ``size`` elements."""
    return ValueError(f"proposed_shape '[const vector]{{{', '.join(map(str, shape))}}}' is "
                      f"invalid for input of size {size}")


def _checked_shape(shape, have):
    asked = shape
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape: expected a tuple of ints, got {type(shape).__name__}")
    else:
        shape = tuple(map(int, shape))
    size = math.prod(have)
    if shape and builtins.min(shape) < 0:
        if shape.count(-1) > 1:
            raise ValueError("only one dimension can be inferred")
        if builtins.min(shape) < -1:
            raise ValueError("invalid proposed_shape dimension")
        known = -math.prod(shape)   # the product of the others
        if known == 0 or size % known:
            raise _size_mismatch(shape, size)
        shape = tuple(size // known if s == -1 else s for s in shape)
    elif math.prod(shape) != size:
        raise _size_mismatch(shape, size)
    if isinstance(asked, tuple) and len(_checked_shapes) < _MAX_CHECKED and \
            not in_compiled() and all(type(s) is int for s in asked + have):
        _checked_shapes[(asked, have)] = shape
    return shape


# (dims, ndim) -> the checked permutation: a network transposes by the same few dims every
# step, and checking them is most of the op's host time.
_checked_perms = {}


def transpose(input, dims):
    """Axes permuted by ``dims``."""
    x = input if isinstance(input, Tensor) else _check_tensor(input, "input")
    xd = x._data
    ndim = len(_shape_of(xd))
    try:
        perm = _checked_perms.get((dims, ndim))
    except TypeError:   # a list: not hashable
        perm = None
    if perm is None:
        perm = _checked_perm(dims, ndim)
    return _wrap(call("transpose", xd, perm))


def _checked_perm(dims, ndim):
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"dims: expected a tuple of ints, got {type(dims).__name__}")
    if len(dims) != ndim:
        raise ValueError(f"For 'Transpose', size of perm should equal to rank of x, but got "
                         f"{len(dims)} and {ndim}!")
    perm = []
    for p in map(int, dims):
        if not -ndim <= p < ndim:
            raise ValueError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim}), but got {p})")
        if p % ndim in perm:
            raise ValueError(f"For 'Transpose' perms should all be unique dim, but"
                             f"{p % ndim} is not unique!")
        perm.append(p % ndim)
    perm = tuple(perm)
    if isinstance(dims, tuple) and len(_checked_perms) < _MAX_CHECKED and \
            not in_compiled() and all(type(p) is int for p in dims):
        _checked_perms[(dims, ndim)] = perm
    return perm


def permute(input, axis):
    """Axes permuted by ``axis`` (MindSpore's name for the permutation here)."""
    return transpose(input, axis)


def swapaxes(input, axis0, axis1):
    """Two axes exchanged."""
    x = _check_tensor(input, "input")
    perm = list(range(x.ndim))
    a, b = _axis1(axis0, x.ndim, "axis0"), _axis1(axis1, x.ndim, "axis1")
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def broadcast_to(input, shape):
    """``input`` broadcast to ``shape`` (-1 keeps the input's size)."""
    x = _check_tensor(input, "input")
    shape = tuple(shape)
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ValueError(f"broadcast_to: cannot broadcast {x.shape} to {shape}")
    shape = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
    for s, t in zip(x.shape, shape[lead:]):
        if s != t and s != 1:
            raise ValueError(f"broadcast_to: cannot broadcast {x.shape} to {shape}")
    return _wrap(call("broadcast_to", x._data, shape))


def expand_dims(input_x, axis):
    """A new axis of size 1 at ``axis``."""
    x = _check_tensor(input_x, "input_x")
    ax = _axis1(axis, x.ndim + 1)
    shape = x.shape
    return _wrap(call("reshape", x._data, shape[:ax] + (1,) + shape[ax:]))


def squeeze(input, axis=None):
    """Axes of size 1 removed (only ``axis`` when given; a larger one is ValueError)."""
    x = _check_tensor(input, "input")
    shape = x.shape
    axes = _axes(axis, x.ndim)
    if axes is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    for a in axes:
        if shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {shape[a]}, expected 1")
    new = tuple(s for i, s in enumerate(shape) if i not in axes)
    return _wrap(call("reshape", x._data, new))


def flatten_dims(x, start_dim=0, end_dim=-1):
    """Axes ``start_dim``..``end_dim`` merged into one."""
    x = _check_tensor(x, "input")
    if x.ndim == 0:
        return reshape(x, (1,))
    s, e = _axis1(start_dim, x.ndim, "start_dim"), _axis1(end_dim, x.ndim, "end_dim")
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} is after end_dim {end_dim}")
    shape = x.shape
    return reshape(x, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def flatten(input, order="C", *, start_dim=1, end_dim=-1):
    """MindSpore 2.x ``ops.flatten``: axes from ``start_dim`` (default 1) merged."""
    if order not in ("C", "F"):
        raise ValueError(f"order: expected 'C' or 'F', got {order!r}")
    x = _check_tensor(input, "input")
    if order == "F":
        x = transpose(x, tuple(reversed(range(x.ndim))))
    return flatten_dims(x, start_dim, end_dim)


def concat(tensors, axis=0):
    """Tensors joined along ``axis`` (dtypes promoted to a common one)."""
    if not isinstance(tensors, (tuple, list)) or not tensors:
        raise TypeError("tensors: expected a non-empty tuple or list of Tensors")
    ts = [_check_tensor(t, "tensors") for t in tensors]
    ndim = ts[0].ndim
    ax = _axis1(axis, ndim)
    target = ts[0].dtype
    for t in ts[1:]:
        target = mdt.promote(target, t.dtype)
        if t.ndim != ndim:
            raise ValueError(f"concat: all tensors need {ndim} dims, got {t.ndim}")
        if t.shape[:ax] + t.shape[ax + 1:] != ts[0].shape[:ax] + ts[0].shape[ax + 1:]:
            raise ValueError(f"concat: shapes must match except along axis {ax}, got "
                             f"{ts[0].shape} and {t.shape}")
    data = [t._data if t.dtype is target else call("cast", t._data, target) for t in ts]
    return _wrap(call("concat", data, axis=ax))


cat = concat


def stack(tensors, axis=0):
    """Tensors of one shape joined along a new ``axis``."""
    if not isinstance(tensors, (tuple, list)) or not tensors:
        raise TypeError("tensors: expected a non-empty tuple or list of Tensors")
    ts = [_check_tensor(t, "tensors") for t in tensors]
    shape = ts[0].shape
    for t in ts:
        if t.shape != shape:
            raise ValueError(f"stack: all tensors need shape {shape}, got {t.shape}")
    ax = _axis1(axis, len(shape) + 1)
    return concat([expand_dims(t, ax) for t in ts], ax)


def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along axis i (leading axes added as needed)."""
    x = _check_tensor(input, "input")
    if not isinstance(dims, (tuple, list)) or not builtins.all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
            for d in dims):
        raise ValueError(f"dims: expected a tuple of non-negative ints, got {dims!r}")
    multiples = tuple(int(d) for d in dims)
    if len(multiples) < x.ndim:
        multiples = (1,) * (x.ndim - len(multiples)) + multiples
    x = reshape(x, (1,) * (len(multiples) - x.ndim) + x.shape)
    shape = x.shape
    expanded = reshape(x, tuple(v for s in shape for v in (1, s)))
    target = tuple(v for m, s in zip(multiples, shape) for v in (m, s))
    return reshape(broadcast_to(expanded, target),
                   tuple(m * s for m, s in zip(multiples, shape)))


def numel(input):
    """The number of elements of ``input``."""
    return _check_tensor(input, "input").size


def size(input_x):
    """The number of elements of ``input_x`` (a Python int)."""
    if not isinstance(input_x, Tensor):
        raise TypeError(f"input_x: expected a Tensor, got {type(input_x).__name__}")
    return input_x.size


def rank(input_x):
    """The number of dimensions of ``input_x`` (a Python int)."""
    if not isinstance(input_x, Tensor):
        raise TypeError(f"input_x: expected a Tensor, got {type(input_x).__name__}")
    return input_x.ndim


def shape(input_x):
    """The shape of ``input_x`` as a tuple of ints."""
    return _check_tensor(input_x, "input_x").shape


def dtype(x):
    """The dtype of Tensor ``x``."""
    return _check_tensor(x, "x").dtype


def t(input):
    """A 2-d Tensor transposed (0-d and 1-d returned as they are)."""
    x = _check_tensor(input, "input")
    if x.ndim > 2:
        raise ValueError(f"input: expected at most 2 dimensions, got shape {x.shape}")
    return transpose(x, (1, 0)) if x.ndim == 2 else x


def swapdims(input, dim0, dim1):
    """Two axes exchanged (``ops.swapaxes`` with torch's argument names)."""
    return swapaxes(input, dim0, dim1)


def unsqueeze(input, dim):
    """A new axis of size 1 at ``dim``."""
    return expand_dims(input, dim)


def _broadcast_shape(sa, sb):
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for p, q in zip(sa, sb):
        if p != q and 1 not in (p, q):
            raise ValueError(f"x1, x2: shapes {sa} and {sb} do not broadcast")
        out.append(max(p, q))
    return out


class Concat(Primitive):
    """``Concat(axis=0)(tensors)``."""

    def __init__(self, axis=0):
        super().__init__()
        self.axis = check_int(axis, "axis", "Concat")

    def compute(self, tensors):
        return concat(tensors, self.axis)


class Stack(Primitive):
    """``Stack(axis=0)(tensors)``: join along a new axis."""

    def __init__(self, axis=0):
        super().__init__()
        self.axis = check_int(axis, "axis", type(self).__name__)

    def compute(self, tensors):
        return stack(tensors, self.axis)


class Pack(Stack):
    """The 1.x name of ``Stack``."""


class Squeeze(Primitive):
    """``Squeeze(axis=())(x)``: size-1 axes removed (only ``axis`` when given)."""

    def __init__(self, axis=()):
        super().__init__()
        self.axis = check_axes(axis, "axis", "Squeeze")

    def compute(self, input):
        return squeeze(input, None if self.axis == () else self.axis)


class Tile(Primitive):
    """``Tile()(x, multiples)``."""

    def compute(self, input, dims):
        return tile(input, dims)


class BroadcastTo(Primitive):
    """``BroadcastTo(shape)(x)``; -1 keeps the input's size."""

    def __init__(self, shape):
        super().__init__()
        if not isinstance(shape, (tuple, list)):
            raise TypeError(f"BroadcastTo: shape must be a tuple of ints, got "
                            f"{type(shape).__name__}")
        self.shape = tuple(check_int(s, "shape", "BroadcastTo") for s in shape)

    def compute(self, input):
        return broadcast_to(input, self.shape)


class Identity(Primitive):
    """``Identity()(x)``: a copy of ``x``."""

    def compute(self, input_x):
        x = _check_tensor(input_x, "input_x")
        return _wrap(call("where", call("full", (), True, mdt.bool_), x._data, x._data))


class Shape(Primitive):
    """``Shape()(x)``: the shape as a tuple of ints."""

    def compute(self, x):
        return shape(x)


class Rank(Primitive):
    """``Rank()(x)``: the number of dimensions."""

    def compute(self, x):
        return rank(x)


class Size(Primitive):
    """``Size()(x)``: the number of elements."""

    def compute(self, x):
        return size(x)


class DType(Primitive):
    """``DType()(x)``: the dtype of ``x``."""

    def compute(self, x):
        return dtype(x)


Reshape = _elementwise("Reshape", reshape, "``Reshape()(x, shape)``.")
Transpose = _elementwise("Transpose", transpose, "``Transpose()(x, perm)``.")
ExpandDims = _elementwise("ExpandDims", expand_dims, "``ExpandDims()(x, axis)``.")


class Flatten(Primitive):
    """``Flatten()(x)``: (N, ...) to (N, -1)."""

    def compute(self, x):
        return flatten(x)


def movedim(x, source, destination):
    """``x`` with the axes ``source`` moved to the positions ``destination``."""
    src = source if isinstance(source, (tuple, list)) else (source,)
    dst = destination if isinstance(destination, (tuple, list)) else (destination,)
    if len(src) != len(dst):
        raise ValueError(f"source and destination: expected the same number of axes, got "
                         f"{len(src)} and {len(dst)}")
    src = [_axis(a, x.ndim, "source") for a in src]
    dst = [_axis(a, x.ndim, "destination") for a in dst]
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ops.transpose(x, tuple(order))


def moveaxis(x, source, destination):
    """NumPy's spelling of :func:`movedim`."""
    return movedim(x, source, destination)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the ``dim1``/``dim2`` planes (shifted by ``offset``) as the last
    axis."""
    x = _tensor(input)
    d1, d2 = _axis(dim1, x.ndim, "dim1"), _axis(dim2, x.ndim, "dim2")
    if d1 == d2:
        raise ValueError("dim1 and dim2 must differ")
    x = movedim(x, (d1, d2), (-2, -1))
    rows, cols = x.shape[-2], x.shape[-1]
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    n = builtins.max(0, builtins.min(rows - start_r, cols - start_c))
    r = Tensor(np.arange(start_r, start_r + n, dtype=np.int64))
    c = Tensor(np.arange(start_c, start_c + n, dtype=np.int64))
    return ops.getitem(x, (Ellipsis, r, c))


def diag(input, diagonal=0):
    """A 1-d input as the diagonal of a square matrix; the diagonal of a 2-d input."""
    x = _tensor(input)
    if x.ndim == 1:
        n = x.shape[0] + builtins.abs(diagonal)
        r = np.arange(x.shape[0]) + builtins.max(0, -diagonal)
        c = np.arange(x.shape[0]) + builtins.max(0, diagonal)
        return ops.setitem(ops.zeros((n, n), x.dtype),
                           (Tensor(r.astype(np.int64)), Tensor(c.astype(np.int64))), x)
    if x.ndim == 2:
        return globals()["diagonal"](x, diagonal)
    raise ValueError(f"diag: expected a 1-d or 2-d Tensor, got shape {x.shape}")


def repeat_interleave(input, repeats, axis=None):
    """Each entry repeated ``repeats`` times along ``axis`` (the flattened input when
    None)."""
    x = _tensor(input)
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    ax = _axis(axis, x.ndim)
    reps = repeats.asnumpy() if isinstance(repeats, Tensor) else np.asarray(repeats)
    idx = np.repeat(np.arange(x.shape[ax]), np.broadcast_to(reps, (x.shape[ax],)))
    return ops.gather(x, Tensor(idx.astype(np.int64)), ax)


def tensor_split(input, indices_or_sections, axis=0):
    """Pieces of ``input`` along ``axis``: ``n`` near-equal ones (the first ``size % n``
    one larger), or cut at the given indices."""
    x = _tensor(input)
    ax = _axis(axis, x.ndim)
    size = x.shape[ax]
    if isinstance(indices_or_sections, numbers.Integral):
        n = int(indices_or_sections)
        if n <= 0:
            raise ValueError(f"indices_or_sections: expected a positive int, got {n}")
        q, r = divmod(size, n)
        cuts = np.cumsum([q + 1] * r + [q] * (n - r))[:-1].tolist()
    else:
        cuts = [int(i) for i in indices_or_sections]
    bounds = [0] + cuts + [size]
    lead = (slice(None),) * ax
    return tuple(x[lead + (slice(a, builtins.max(a, b)),)]
                 for a, b in zip(bounds[:-1], bounds[1:]))


def hsplit(input, indices_or_sections):
    """:func:`tensor_split` along axis 1 (axis 0 for a 1-d input)."""
    return tensor_split(input, indices_or_sections, 1 if input.ndim > 1 else 0)


def vsplit(input, indices_or_sections):
    """:func:`tensor_split` along axis 0."""
    return tensor_split(input, indices_or_sections, 0)


def dsplit(input, indices_or_sections):
    """:func:`tensor_split` along axis 2."""
    return tensor_split(input, indices_or_sections, 2)


def ravel(input):
    """``input`` flattened to 1-d."""
    return ops.reshape(_tensor(input), (-1,))


def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by 90 degrees ``k`` times in the plane ``dims``."""
    x = _tensor(input)
    k %= 4
    d0, d1 = dims
    for _ in range(k):
        x = ops.swapaxes(ops.flip(x, (d1,)), d0, d1)
    return x


def fliplr(input):
    """``input`` reversed along axis 1."""
    return ops.flip(input, (1,))


def flipud(input):
    """``input`` reversed along axis 0."""
    return ops.flip(input, (0,))


def hstack(tensors):
    """Joined along axis 1 (axis 0 for 1-d tensors)."""
    tensors = [_tensor(t, "tensors") for t in tensors]
    return ops.concat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(inputs):
    """Joined along axis 0 (1-d tensors as rows)."""
    rows = [ops.reshape(t, (1, -1)) if _tensor(t, "inputs").ndim < 2 else t for t in inputs]
    return ops.concat(rows, 0)
