"""MindSpore 2.10's less common Tensor methods: random draws, integer bit functions,
quantiles, segment and scatter reductions, slice scatters. Thin bindings to
:mod:`mscore.ops` and :mod:`mscore.ops.reduction.statistics` (attached by
:mod:`mscore.ops.tensor_api`)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops.array import sorting
from mscore.ops.math import bitwise
from mscore.ops.random import draws
from mscore.ops.reduction import statistics
from mscore.ops.tensor_api.helpers import store as _store
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
method = METHODS.method


def _floating(self):
    return self.dtype if self.dtype.is_floating else mdt.float32


# -- integer bit functions ---------------------------------------------------------------------
for _name, _op, _doc in (
        ("bitwise_and", ops.bitwise_and, "Bitwise AND, elementwise (integers, bools)."),
        ("bitwise_or", ops.bitwise_or, "Bitwise OR, elementwise (integers, bools)."),
        ("bitwise_xor", ops.bitwise_xor, "Bitwise XOR, elementwise (integers, bools)."),
        ("bitwise_left_shift", ops.bitwise_left_shift, "Left shift, elementwise."),
        ("bitwise_right_shift", ops.bitwise_right_shift, "Arithmetic right shift."),
        ("gcd", ops.gcd, "Greatest common divisor, elementwise."),
        ("lcm", ops.lcm, "Least common multiple, elementwise."),
        ("nextafter", ops.nextafter, "The next float after ``self`` toward ``other``."),
        ("ldexp", ops.ldexp, "``self * 2 ** other``.")):
    METHODS.bind(_name, _op, _doc, binary=True)
METHODS.bind("bitwise_not", bitwise.bitwise_not, "Bitwise NOT (logical NOT for bools).")
METHODS.bind("invert", bitwise.bitwise_not, "Bitwise NOT (logical NOT for bools).")


# -- random draws --------------------------------------------------------------------------------
@method
def uniform(self, from_=0.0, to=1.0, generator=None):
    """A tensor shaped like this one of draws uniform in ``[from_, to)``."""
    return ops.uniform(self.shape, float(from_), float(to), dtype=_floating(self),
                       generator=generator)


@method
def bernoulli(self, *, generator=None):
    """1 with probability ``self`` (elementwise), else 0, in this dtype."""
    draws = ops.uniform(self.shape, 0.0, 1.0, generator=generator)
    return ops.cast(ops.less(draws, self), self.dtype)


@method
def cauchy(self, median=0.0, sigma=1.0):
    """A tensor shaped like this one of Cauchy draws (inverse CDF of uniform draws)."""
    return draws.cauchy(self.shape, median, sigma, _floating(self))


@method
def log_normal(self, mean=1.0, std=2.0):
    """A tensor shaped like this one of log-normal draws ``exp(mean + std * N(0, 1))``."""
    return ops.exp(ops.add(ops.mul(ops.randn(self.shape, dtype=_floating(self)), std), mean))


@method
def exponential_(self, lambd=1, *, generator=None):
    """In place: exponential draws with rate ``lambd``; returns the tensor."""
    return _store(self, draws.exponential(self.shape, lambd, _floating(self)))


@method
def random_(self, from_=0, to=None, *, generator=None):
    """In place: integers drawn uniformly from ``[from_, to)`` (``[0, from_)`` when ``to``
    is None); returns the tensor."""
    low, high = (0, from_) if to is None else (from_, to)
    return _store(self, ops.floor(ops.uniform(self.shape, float(low), float(high))))


@method
def multinomial(self, num_samples, replacement=True, seed=None):
    """``num_samples`` category indices per row drawn with probabilities ``self``."""
    return ops.multinomial(self, num_samples, replacement)


@method
def random_categorical(self, num_sample, seed=0, dtype=mdt.int64):
    """``num_sample`` category indices per row drawn from the logits ``self``."""
    probs = ops.softmax(ops.cast(self, mdt.float32), -1)
    return ops.cast(ops.multinomial(probs, num_sample, True), dtype)


# -- statistics ------------------------------------------------------------------------------
@method
def quantile(self, q, axis=None, keepdims=False):
    """The ``q``-th quantiles over ``axis`` (linear interpolation)."""
    return statistics.quantile(self, q, axis, keepdims)


@method
def nanquantile(self, q, axis=None, keepdims=False):
    """The ``q``-th quantiles over ``axis``, ignoring NaN."""
    return statistics.nanquantile(self, q, axis, keepdims)


@method
def nanmedian(self, axis=-1, keepdims=False):
    """``(values, indices)`` of the lower median along ``axis``, ignoring NaN."""
    return statistics.nanmedian(self, axis, keepdims)


@method
def histc(self, bins=100, min=0, max=0):
    """Histogram in ``bins`` equal bins over ``[min, max]`` (the data's range when both
    are 0)."""
    a = self.asnumpy().astype(np.float64).reshape(-1)
    lo, hi = (float(a.min()), float(a.max())) if min == 0 and max == 0 else (min, max)
    counts, _ = np.histogram(a, bins=int(bins), range=(lo, hi))
    return Tensor(counts.astype(self.dtype.np_dtype))


@method
def cov(self, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the rows (variables) over the columns (observations)."""
    return statistics.cov(self, correction=correction, fweights=fweights, aweights=aweights)


@method
def mvlgamma(self, p):
    """Multivariate log-gamma of dimension ``p``."""
    x = self if self.dtype.is_floating else ops.cast(self, mdt.float32)
    out = ops.full_like(x, p * (p - 1) / 4.0 * math.log(math.pi))
    for j in range(1, p + 1):
        out = ops.add(out, ops.lgamma(ops.add(x, (1.0 - j) / 2.0)))
    return out


# -- selection and scatter ------------------------------------------------------------------------
@method
def choose(self, choices, mode="clip"):
    """Entries picked from ``choices[self[i]]``."""
    a = self.asnumpy()
    n = len(choices)
    a = np.clip(a, 0, n - 1) if mode == "clip" else np.mod(a, n) if mode == "wrap" else a
    stacked = ops.stack([ops.broadcast_to(c if isinstance(c, Tensor) else Tensor(c), a.shape)
                         for c in choices])
    return ops.gather_elements(stacked, 0, Tensor(a[None].astype(np.int64)))[0]


@method
def diagflat(self, offset=0):
    """The flattened tensor as the ``offset``-th diagonal of a square matrix."""
    return ops.diag(ops.reshape(self, (-1,)), offset)


@method
def fill_diagonal(self, fill_value, wrap=False):
    """A copy with the main diagonal set to ``fill_value``."""
    a = self.asnumpy().copy()
    np.fill_diagonal(a, fill_value, wrap=wrap)
    return Tensor(a)


@method
def gather_nd(self, indices):
    """Slices at the index tuples in the last axis of ``indices``."""
    idx = indices.asnumpy() if isinstance(indices, Tensor) else np.asarray(indices)
    grids = tuple(Tensor(idx[..., k].astype(np.int64)) for k in range(idx.shape[-1]))
    return ops.getitem(self, grids)


@method
def index_copy_(self, dim, index, tensor):
    """In place: the slices along ``dim`` at ``index`` replaced by ``tensor``'s; returns
    the tensor."""
    return _store(self, ops.setitem(self, (slice(None),) * (dim % self.ndim) + (index,),
                                    tensor))


@method
def inplace_update(self, v, indices):
    """A copy with the rows at ``indices`` replaced by ``v``'s rows."""
    idx = indices if isinstance(indices, Tensor) else Tensor(np.asarray(indices, np.int64))
    return ops.setitem(self, (idx,), v)


@method
def put_(self, index, source, accumulate=False):
    """In place: ``source`` written (added with ``accumulate``) at the flat ``index``;
    returns the tensor."""
    flat = ops.reshape(self, (-1,))
    values = ops.reshape(source, (-1,))
    if accumulate:
        flat = ops.index_add(flat, index, values, 0)
    else:
        flat = ops.setitem(flat, (index,), values)
    return _store(self, ops.reshape(flat, self.shape))


@method
def reverse(self, axis):
    """Reversed along ``axis`` (a list of ints)."""
    return ops.flip(self, tuple(axis) if isinstance(axis, (tuple, list)) else (axis,))


@method
def reverse_sequence(self, seq_lengths, seq_dim=0, batch_dim=0):
    """For each batch entry ``b``, the first ``seq_lengths[b]`` entries along ``seq_dim``
    reversed."""
    lengths = seq_lengths.asnumpy() if isinstance(seq_lengths, Tensor) else \
        np.asarray(seq_lengths)
    n = self.shape[seq_dim]
    pos = np.tile(np.arange(n), (len(lengths), 1))
    for b, length in enumerate(lengths):
        pos[b, :length] = pos[b, :length][::-1]
    shape = [1] * self.ndim
    shape[batch_dim], shape[seq_dim] = len(lengths), n
    order = [batch_dim, seq_dim] if batch_dim < seq_dim else [seq_dim, batch_dim]
    index = pos if order[0] == batch_dim else pos.T
    index = np.broadcast_to(index.reshape(shape), self.shape)
    return ops.gather_elements(self, seq_dim, Tensor(np.ascontiguousarray(index)
                                                     .astype(np.int64)))


def _scatter_rows(name, combine):
    def bound(self, indices, updates):
        idx = indices if isinstance(indices, Tensor) else Tensor(np.asarray(indices))
        current = ops.getitem(self, (idx,))
        return ops.setitem(self, (idx,), combine(current, updates))
    bound.__name__ = bound.__qualname__ = name
    bound.__doc__ = f"A copy with the rows at ``indices`` combined with ``updates`` " \
                    f"({name[8:]})."
    return method(bound)


_scatter_rows("scatter_mul", ops.mul)
_scatter_rows("scatter_div", ops.div)
_scatter_rows("scatter_sub", ops.sub)
_scatter_rows("scatter_max", ops.maximum)
_scatter_rows("scatter_min", ops.minimum)


@method
def select_scatter(self, src, axis, index):
    """A copy with the slice at ``index`` along ``axis`` replaced by ``src``."""
    return ops.setitem(self, (slice(None),) * (axis % self.ndim) + (index,), src)


@method
def slice_scatter(self, src, axis=0, start=None, end=None, step=1):
    """A copy with the slice ``start:end:step`` along ``axis`` replaced by ``src``."""
    return ops.setitem(self, (slice(None),) * (axis % self.ndim) + (slice(start, end, step),),
                       src)


@method
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    """A copy with the ``offset`` diagonal of the ``dim1``/``dim2`` planes replaced by
    ``src``."""
    rows, cols = self.shape[dim1], self.shape[dim2]
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    n = max(0, min(rows - start_r, cols - start_c))
    moved = ops.movedim(self, (dim1, dim2), (-2, -1))
    r = Tensor(np.arange(start_r, start_r + n, dtype=np.int64))
    c = Tensor(np.arange(start_c, start_c + n, dtype=np.int64))
    out = ops.setitem(moved, (Ellipsis, r, c), src)
    return ops.movedim(out, (-2, -1), (dim1, dim2))


@method
def sum_to_size(self, *size):
    """Summed down to ``size`` (the reverse of broadcasting)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    lead = self.ndim - len(size)
    out = ops.sum(self, tuple(range(lead))) if lead > 0 else self
    axes = tuple(i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1)
    return ops.sum(out, axes, True) if axes else out


@method
def renorm(self, p, axis, maxnorm):
    """Each sub-tensor along ``axis`` rescaled to ``p``-norm at most ``maxnorm``."""
    others = tuple(i for i in range(self.ndim) if i != axis % self.ndim)
    norm = ops.pow(ops.sum(ops.pow(ops.abs(self), p), others, True), 1.0 / p)
    scale = ops.where(ops.greater(norm, maxnorm), ops.div(maxnorm, ops.add(norm, 1e-7)),
                      ops.ones_like(norm))
    return ops.mul(self, scale)


def _segment(name, reduce, empty):
    def bound(self, segment_ids, num_segments):
        ids = segment_ids.asnumpy() if isinstance(segment_ids, Tensor) else \
            np.asarray(segment_ids)
        rows = []
        tail = self.shape[ids.ndim:]
        flat = ops.reshape(self, (-1,) + tail)
        flat_ids = ids.reshape(-1)
        for s in range(int(num_segments)):
            picked = np.flatnonzero(flat_ids == s)
            if picked.size:
                rows.append(reduce(ops.gather(flat, Tensor(picked.astype(np.int64)), 0), 0))
            else:
                rows.append(ops.full(tail, empty(self.dtype), dtype=self.dtype))
        return ops.stack(rows)
    bound.__name__ = bound.__qualname__ = name
    bound.__doc__ = f"Per segment id in ``[0, num_segments)``: the {name[17:]} of its rows."
    return method(bound)


def _lowest(dtype):
    return float(np.finfo(dtype.np_dtype).min) if dtype.is_floating else \
        int(np.iinfo(dtype.np_dtype).min)


def _highest(dtype):
    return float(np.finfo(dtype.np_dtype).max) if dtype.is_floating else \
        int(np.iinfo(dtype.np_dtype).max)


_segment("unsorted_segment_max", ops.amax, _lowest)
_segment("unsorted_segment_min", ops.amin, _highest)
_segment("unsorted_segment_prod", lambda x, ax: ops.prod(x, ax), lambda _: 1)


@method
def unique_with_pad(self, pad_num):
    """``(values, inverse)`` of the 1-d tensor, the values padded with ``pad_num`` to the
    input's length."""
    values, inverse = sorting.unique(self)
    pad = self.shape[0] - values.shape[0]
    if pad:
        values = ops.concat((values, ops.full((pad,), pad_num, dtype=values.dtype)))
    return values, ops.cast(inverse, self.dtype if not self.dtype.is_floating
                            else mdt.int32)


@method
def itemset(self, *args):
    """Sets one entry: ``itemset(value)`` for a 1-element tensor, ``itemset(index,
    value)`` with a flat index or an index tuple; returns the tensor."""
    if len(args) == 1:
        index, value = (0,) * self.ndim, args[0]
    else:
        index, value = args
        if isinstance(index, numbers.Integral):
            index = np.unravel_index(int(index), self.shape)
    return _store(self, ops.setitem(self, tuple(int(i) for i in index), value))


@method
def from_numpy(array):
    """A Tensor sharing nothing with ``array`` (a copy of its values)."""
    return Tensor(np.asarray(array))


METHODS["from_numpy"] = staticmethod(from_numpy)
