"""Tensor layouts over the ranks of a job, and the moves between them (SEMI_AUTO_PARALLEL
across processes).

A layout is MindSpore's pair of a *device matrix* (the ranks of the job arranged as an
n-d grid, row-major, its first dimension the repeated calculations) and a *tensor map* (for
each axis of the tensor, the device-matrix dimension that cuts it, or -1: not cut). A rank
holds the piece of the tensor at its coordinates.

The moves are written with the job's collectives (``all_reduce``, ``all_gather`` of the
backend's engine) and their gradients with :func:`~mscore.autodiff.boundary.grad_boundary`
and ``stop_gradient``, so they run eagerly and inside a compiled step, under every
backend's autodiff. Gradients follow one rule: the cotangent a rank holds for a replicated
value or for its piece of a cut value is the true one (the same on every rank holding it);
where an operator's local computation only sees part of it, the moves into the operator sum
the parts over the ranks that computed them (:func:`enter_replicated`, :func:`enter_piece`).
"""
from __future__ import annotations

import functools
import math

from mscore import _state, dispatch
from mscore.autodiff.boundary import grad_boundary
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor, _dtype_of

call = dispatch.call


class TensorLayout:
    """``dev_matrix`` (ints whose product is the job's size; dimension 0 counts repeated
    calculations), ``tensor_map`` (per axis: the dimension of ``dev_matrix`` cutting it, -1
    for none) and the full ``shape``."""

    __slots__ = ("dev_matrix", "tensor_map", "shape")

    def __init__(self, dev_matrix, tensor_map, shape):
        self.dev_matrix = tuple(dev_matrix)
        self.tensor_map = tuple(tensor_map)
        self.shape = tuple(shape)

    def _key(self):
        return self.dev_matrix, self.tensor_map, self.shape

    def __eq__(self, other):
        return isinstance(other, TensorLayout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"TensorLayout(dev_matrix={self.dev_matrix}, tensor_map={self.tensor_map}, "
                f"shape={self.shape})")

    @property
    def parts(self):
        """How many pieces each axis is cut into."""
        return tuple(1 if m < 0 else self.dev_matrix[m] for m in self.tensor_map)

    @property
    def piece_count(self):
        """How many distinct pieces the ranks hold."""
        return math.prod(self.parts)

    @property
    def local_shape(self):
        """The shape of one piece."""
        return tuple(n // p for n, p in zip(self.shape, self.parts))

    def piece_index(self, rank):
        """The grid index of the piece ``rank`` holds."""
        return _piece_index(self, rank)

    def slices(self, rank):
        """``rank``'s piece as a tuple of slices of the full tensor."""
        return tuple(slice(i * n, (i + 1) * n)
                     for i, n in zip(self.piece_index(rank), self.local_shape))

    def sharers(self, rank):
        """The ranks holding the same piece as ``rank`` (``rank`` among them)."""
        mine = self.piece_index(rank)
        return tuple(q for q in range(math.prod(self.dev_matrix))
                     if self.piece_index(q) == mine)

    def mindspore_layout(self):
        """``(dev_matrix, tensor_map)`` as MindSpore's strategy file writes them
        (``ParallelLayouts``): the tensor map counts device-matrix axes from the right."""
        last = len(self.dev_matrix) - 1
        return list(self.dev_matrix), [-1 if m < 0 else last - m for m in self.tensor_map]

    def is_replicated(self):
        """True when every rank holds the whole tensor."""
        return self.piece_count == 1

    def same_pieces(self, other):
        """True when every rank holds the same piece under both layouts."""
        if self.shape != other.shape or self.parts != other.parts:
            return False
        size = math.prod(self.dev_matrix)
        return size == math.prod(other.dev_matrix) and all(
            self.piece_index(q) == other.piece_index(q) for q in range(size))


@functools.lru_cache(maxsize=4096)
def _piece_index(layout, rank):
    coords = []
    for n in reversed(layout.dev_matrix):
        coords.append(rank % n)
        rank //= n
    coords.reverse()
    return tuple(0 if m < 0 else coords[m] for m in layout.tensor_map)


# -- the job ------------------------------------------------------------------------------------
def job():
    """``(collectives, rank, world size)`` of the joined job (collectives None outside one)."""
    comm = _state.process.communication
    coll = comm["collectives"]
    if coll is None:
        return None, 0, 1
    env = comm["env"]
    return coll, env.rank, env.world_size


def in_job():
    """True when this process has joined a communication job (``init()``), of any size."""
    return _state.process.communication["collectives"] is not None


def across_processes():
    """True when a job of more than one process is joined."""
    return job()[2] > 1


def _scaled(a, factor):
    if factor == 1:
        return a
    return call("mul", a, call("full", (), factor, dispatch.dtype(a)))


def _sum_over(local, layout):
    """The sum of ``local`` (a piece of ``layout``) over the ranks holding the same piece."""
    coll, rank, world = job()
    sharers = layout.sharers(rank)
    if len(sharers) == 1:
        return local
    if len(sharers) == world:
        return coll.all_reduce(local, "sum", None)
    # a proper sub-group: place the piece in a zero tensor of the full shape, reduce over the
    # world (each position sums exactly the ranks holding that piece) and take it back
    widths = [(s.start, n - s.stop) for s, n in zip(layout.slices(rank), layout.shape)]
    padded = call("pad", local, tuple(widths), 0)
    return call("getitem", coll.all_reduce(padded, "sum", None), layout.slices(rank))


def copy(a):
    """A copy of native ``a`` that shares no buffer with it (a slice of a big array must not
    keep the big one alive)."""
    backend = dispatch.backend()
    if callable(getattr(backend, "copy", None)):
        return backend.copy(a)
    return call("where", call("full", (), True, mdt.bool_), a, a)


# -- the moves ----------------------------------------------------------------------------------
def enter_replicated(full, layout, repeat):
    """This rank's piece of the replicated native ``full`` as an operator of ``repeat``
    repeated calculations consumes it. Backward: the operator's local cotangent, placed in
    the full shape, summed over the job and divided by ``repeat``: the true cotangent of
    ``full``, on every rank."""
    coll, rank, _ = job()

    def vjp(cotangents, needed):
        if not needed[0]:
            return [None]
        return [_scaled(coll.all_reduce(cotangents[0], "sum", None), 1.0 / repeat)]
    bounded = grad_boundary([full], vjp)[0]
    if layout.is_replicated():
        return bounded
    return call("getitem", bounded, layout.slices(rank))


def enter_piece(piece, layout, repeat):
    """A piece this rank already holds (``layout``) as an operator of ``repeat`` repeated
    calculations consumes it. Backward: the local cotangents summed over the ranks holding
    the same piece, divided by ``repeat``."""
    _, rank, _ = job()
    if len(layout.sharers(rank)) == 1 and repeat == 1:
        return piece

    def vjp(cotangents, needed):
        if not needed[0]:
            return [None]
        return [_scaled(_sum_over(cotangents[0], layout), 1.0 / repeat)]
    return grad_boundary([piece], vjp)[0]


def reduce_partial(local, layout, repeat, factor=1.0):
    """The sum over the ranks holding the same piece of ``layout`` of the partial results
    ``local`` (a cut contraction), divided by ``repeat`` (repeated calculations counted once)
    and multiplied by ``factor``. Backward: the cotangent, times ``factor``, unchanged (every
    partial result contributed once)."""
    total = _scaled(_sum_over(call("stop_gradient", local), layout), factor / repeat)
    link = call("sub", local, call("stop_gradient", local))   # 0, with local's gradient
    return call("add", total, _scaled(link, factor))


def to_replicated(piece, layout):
    """The full tensor from every rank's piece (all-gather). Backward: this rank's piece of
    the (replicated, true) cotangent."""
    coll, rank, world = job()
    if layout.is_replicated():
        return piece
    local = layout.local_shape
    gathered = call("reshape", coll.all_gather(call("stop_gradient", piece), None),
                    (world,) + local)
    mine = layout.piece_index(rank)
    pieces = {}
    for q in range(world):
        index = layout.piece_index(q)
        if index == mine:
            pieces[index] = piece
        elif index not in pieces:
            pieces[index] = call("getitem", gathered, (q,))
    parts = layout.parts

    def assemble(prefix):
        axis = len(prefix)
        if axis == len(parts):
            return pieces[prefix]
        row = [assemble(prefix + (i,)) for i in range(parts[axis])]
        return row[0] if len(row) == 1 else call("concat", row, axis)
    return assemble(())


# -- cut values -----------------------------------------------------------------------------------
class ShardedTensor(Tensor):
    """An operator's output cut over the ranks: this rank's piece and its layout. Reading
    ``_data`` (any operator without a matching strategy) all-gathers the full value once;
    an operator whose strategy asks for the same pieces uses the piece directly."""

    __slots__ = ("_piece", "_layout", "_full")

    @property
    def _data(self):
        full = self._full
        if full is None:
            full = self._full = to_replicated(self._piece, self._layout)
        return full

    @_data.setter
    def _data(self, value):
        self._full = value
        self._piece = None
        self._layout = None

    @property
    def shape(self):
        """The full shape."""
        if self._layout is None:
            return tuple(dispatch.shape(self._full))
        return self._layout.shape

    @property
    def dtype(self):
        """The element type."""
        return _dtype_of(self._piece if self._layout is not None else self._full)


def make_sharded(piece, layout):
    """A Tensor for an operator's output: a :class:`ShardedTensor` when cut, else plain."""
    if layout.is_replicated():
        return Tensor._wrap(piece)
    t = object.__new__(ShardedTensor)
    t._piece = piece
    t._layout = layout
    t._full = None
    return t


def held_piece(tensor):
    """``(piece, layout)`` of a cut value (a ShardedTensor, or a Parameter that holds its
    slice), else None."""
    if isinstance(tensor, ShardedTensor):
        return None if tensor._layout is None else (tensor._piece, tensor._layout)
    layout = getattr(tensor, "__dict__", {}).get("_shard_layout")
    if layout is not None:
        return tensor._data, layout
    return None


def reshaped(layout, shape):
    """The layout of a cut tensor reshaped to ``shape`` when each rank can reshape its piece
    alone (every cut axis is the outermost of the axes it merges into or splits into, and
    the outermost new axis divides by its pieces); None when not."""
    old = layout.shape
    out_map = [-1] * len(shape)
    i = j = 0
    while i < len(old) and j < len(shape):
        group_in, group_out = [i], [j]
        have, want = old[i], shape[j]
        i, j = i + 1, j + 1
        while have != want:
            if have < want and i < len(old):
                group_in.append(i)
                have *= old[i]
                i += 1
            elif want < have and j < len(shape):
                group_out.append(j)
                want *= shape[j]
                j += 1
            else:
                return None
        cut = [a for a in group_in if layout.tensor_map[a] >= 0 and layout.parts[a] > 1]
        if not cut:
            continue
        if cut != [group_in[0]] or shape[group_out[0]] % layout.parts[cut[0]]:
            return None
        out_map[group_out[0]] = layout.tensor_map[cut[0]]
    rest_in = [a for a in range(i, len(old)) if layout.parts[a] > 1]
    if rest_in:
        return None
    return TensorLayout(layout.dev_matrix, out_map, shape)
