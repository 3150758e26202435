"""MindSpore 2.10's Tensor methods for shapes, selection, scatter, creation and dtype
conversion, each a thin binding to the functional op in :mod:`mscore.ops` (see
:mod:`mscore.ops.tensor_api`, which attaches them)."""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore import ops
from mscore.ops import array_extra_func as arr
from mscore.ops.tensor_api_registry import MethodRegistry

METHODS = MethodRegistry()
PROPERTIES = {}
method = METHODS.method


def store(self, result):
    """In place: ``self`` takes ``result``'s values in its own dtype and shape; returns
    ``self``."""
    if not isinstance(result, Tensor):
        result = Tensor(np.asarray(result), dtype=self.dtype)
    if result.dtype != self.dtype:
        result = ops.cast(result, self.dtype)
    if tuple(result.shape) != tuple(self.shape):
        result = ops.broadcast_to(result, self.shape)
    self._data = result._data
    return self


def _sizes(args, name):
    """``(2, 3)`` from ``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    out = []
    for a in args:
        if isinstance(a, Tensor):
            a = a.item()
        if isinstance(a, bool) or not isinstance(a, numbers.Integral):
            raise TypeError(f"{name}: expected ints, got {type(a).__name__}")
        out.append(int(a))
    return tuple(out)


# -- shapes ------------------------------------------------------------------------------------
@method
def permute(self, *dims):
    """Axes reordered to ``dims`` (``x.permute(1, 0)`` or ``x.permute((1, 0))``)."""
    return ops.permute(self, _sizes(dims, "dims"))


@method
def swapaxes(self, axis0, axis1):
    """Axes ``axis0`` and ``axis1`` exchanged."""
    return ops.swapaxes(self, axis0, axis1)


@method
def swapdims(self, dim0, dim1):
    """Axes ``dim0`` and ``dim1`` exchanged."""
    return ops.swapaxes(self, dim0, dim1)


@method
def transpose(self, *axes):
    """``transpose(dim0, dim1)``: two axes exchanged; ``transpose(*axes)``: axes permuted
    (reversed when none are given)."""
    if len(axes) == 2 and all(isinstance(a, numbers.Integral) for a in axes) and \
            self.ndim != 2:
        return ops.swapaxes(self, axes[0], axes[1])
    if not axes:
        return ops.transpose(self, tuple(reversed(range(self.ndim))))
    return ops.transpose(self, _sizes(axes, "axes"))


@method
def t(self):
    """The transpose of a tensor of at most 2 dimensions."""
    return ops.t(self)


@method
def adjoint(self):
    """The last two axes exchanged (real dtypes: no conjugation)."""
    return ops.swapaxes(self, -1, -2)


@method
def reshape(self, *shape):
    """Same values in a new shape (one -1 is inferred)."""
    return ops.reshape(self, _sizes(shape, "shape"))


@method
def view(self, *shape):
    """``view(*shape)``: :meth:`reshape`; ``view(dtype)``: the same bytes read as
    ``dtype``."""
    if len(shape) == 1 and isinstance(shape[0], (mdt.DType, str, builtins.type)) and \
            not isinstance(shape[0], (tuple, list)):
        target = mdt.as_dtype(shape[0])
        return Tensor(np.ascontiguousarray(self.asnumpy()).view(target.np_dtype))
    return ops.reshape(self, _sizes(shape, "shape"))


@method
def view_as(self, other):
    """Reshaped to ``other``'s shape."""
    return ops.reshape(self, other.shape)


@method
def reshape_as(self, other):
    """Reshaped to ``other``'s shape."""
    return ops.reshape(self, other.shape)


@method
def resize(self, *new_shape):
    """A copy with ``new_shape``: truncated, or padded by repeating the values (NumPy's
    ``resize``)."""
    shape = _sizes(new_shape, "new_shape")
    return Tensor(np.resize(self.asnumpy(), shape))


@method
def expand(self, *size):
    """Broadcast to ``size`` (-1 keeps a dimension)."""
    size = _sizes(size, "size")
    lead = len(size) - self.ndim
    target = tuple(self.shape[i - lead] if s == -1 else s for i, s in enumerate(size))
    return ops.broadcast_to(self, target)


@method
def expand_as(self, other=None, *, x=None):
    """Broadcast to ``other``'s shape (``x`` is the other overload's name)."""
    other = other if x is None else x
    return ops.broadcast_to(self, other.shape)


@method
def broadcast_to(self, *shape):
    """Broadcast to ``shape``."""
    return ops.broadcast_to(self, _sizes(shape, "shape"))


@method
def expand_dims(self, axis):
    """A new axis of size 1 at ``axis``."""
    return ops.expand_dims(self, axis)


@method
def unsqueeze(self, dim):
    """A new axis of size 1 at ``dim``."""
    return ops.expand_dims(self, dim)


@method
def squeeze(self, *axis):
    """Axes of size 1 removed (only ``axis`` when given)."""
    if not axis or axis == (None,):
        return ops.squeeze(self)
    axes = _sizes(axis, "axis")
    axes = tuple(a for a in axes if self.shape[a] == 1)  # MindSpore skips non-1 axes
    return ops.squeeze(self, axes) if axes else self


@method
def flatten(self, start_dim=0, end_dim=-1, *, order="C"):
    """Axes ``start_dim`` .. ``end_dim`` merged into one."""
    if isinstance(start_dim, str):  # the flatten(order, *, start_dim, end_dim) overload
        order, start_dim = start_dim, 0
    if order not in ("C", "F"):
        raise ValueError(f"order: expected 'C' or 'F', got {order!r}")
    x = ops.transpose(self, tuple(reversed(range(self.ndim)))) if order == "F" else self
    return ops.flatten(x, start_dim=start_dim, end_dim=end_dim)


@method
def ravel(self):
    """Flattened to 1-d."""
    return arr.ravel(self)


@method
def repeat(self, *repeats):
    """Tiled ``repeats[i]`` times along axis i (PyTorch's ``repeat``)."""
    return ops.tile(self, _sizes(repeats, "repeats"))


@method
def tile(self, dims):
    """Tiled ``dims[i]`` times along axis i."""
    return ops.tile(self, tuple(dims) if isinstance(dims, (tuple, list)) else (dims,))


@method
def repeat_interleave(self, repeats, dim=None, *, output_size=None):
    """Each entry repeated ``repeats`` times along ``dim``."""
    return arr.repeat_interleave(self, repeats, dim)


@method
def chunk(self, chunks, dim=0, *, axis=None):
    """``chunks`` near-equal pieces along ``dim``."""
    return ops.chunk(self, chunks, dim if axis is None else axis)


@method
def split(self, split_size, dim=0, *, axis=None):
    """Pieces of ``split_size`` (an int or a list of sizes) along ``dim``."""
    return ops.split(self, split_size, dim if axis is None else axis)


@method
def tensor_split(self, indices_or_sections, axis=0):
    """Near-equal pieces, or pieces cut at the given indices, along ``axis``."""
    return arr.tensor_split(self, indices_or_sections, axis)


@method
def hsplit(self, indices_or_sections):
    """:meth:`tensor_split` along axis 1."""
    return arr.hsplit(self, indices_or_sections)


@method
def vsplit(self, indices_or_sections):
    """:meth:`tensor_split` along axis 0."""
    return arr.vsplit(self, indices_or_sections)


@method
def dsplit(self, indices_or_sections):
    """:meth:`tensor_split` along axis 2."""
    return arr.dsplit(self, indices_or_sections)


@method
def unbind(self, dim=0):
    """The slices along ``dim``."""
    return ops.unbind(self, dim)


@method
def narrow(self, dim, start, length):
    """``length`` entries from ``start`` along ``dim``."""
    return ops.narrow(self, dim, start, length)


@method
def flip(self, dims):
    """Reversed along ``dims``."""
    return ops.flip(self, tuple(dims) if isinstance(dims, (tuple, list)) else (dims,))


@method
def fliplr(self):
    """Reversed along axis 1."""
    return arr.fliplr(self)


@method
def flipud(self):
    """Reversed along axis 0."""
    return arr.flipud(self)


@method
def roll(self, shifts, dims):
    """Shifted cyclically by ``shifts`` along ``dims``."""
    return ops.roll(self, shifts, dims)


@method
def rot90(self, k, dims):
    """Rotated by 90 degrees ``k`` times in the plane ``dims``."""
    return arr.rot90(self, k, dims)


@method
def movedim(self, source, destination):
    """Axes ``source`` moved to ``destination``."""
    return arr.movedim(self, source, destination)


@method
def moveaxis(self, source, destination):
    """Axes ``source`` moved to ``destination``."""
    return arr.moveaxis(self, source, destination)


@method
def diagonal(self, offset=0, axis1=0, axis2=1):
    """The diagonal of the ``axis1``/``axis2`` planes as the last axis."""
    return arr.diagonal(self, offset, axis1, axis2)


@method
def diag(self, diagonal=0):
    """A 1-d tensor as a diagonal matrix; the diagonal of a 2-d one."""
    return arr.diag(self, diagonal)


@method
def tril(self, diagonal=0):
    """Lower triangle (the rest zero)."""
    return ops.tril(self, diagonal)


@method
def triu(self, diagonal=0):
    """Upper triangle (the rest zero)."""
    return ops.triu(self, diagonal)


@method
def diff(self, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``."""
    return arr.diff(self, n, axis, prepend, append)


@method
def unfold(self, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a 4-d (N, C, H, W) tensor as columns (im2col)."""
    return ops.unfold(self, kernel_size, dilation, padding, stride)


# -- selection ----------------------------------------------------------------------------------
@method
def gather(self, dim=None, index=None, batch_dims=0, *, input_indices=None, axis=None):
    """``gather(dim, index)``: entries picked along ``dim`` (``gather_elements``);
    ``gather(input_indices, axis, batch_dims=0)``: slices along ``axis``."""
    if input_indices is not None or axis is not None:
        return ops.gather(self, dim if input_indices is None else input_indices,
                          index if axis is None else axis, batch_dims)
    if isinstance(dim, Tensor) or not isinstance(dim, numbers.Integral):
        return ops.gather(self, dim, index, batch_dims)
    return ops.gather_elements(self, dim, index)


@method
def gather_elements(self, dim, index):
    """Entries picked along ``dim`` by ``index``."""
    return ops.gather_elements(self, dim, index)


@method
def index_select(self, axis, index):
    """Slices along ``axis`` at ``index``."""
    return arr.index_select(self, axis, index)


@method
def take(self, indices, axis=None, mode="clip"):
    """Entries at ``indices`` (of the flattened tensor when ``axis`` is None)."""
    return arr.take(self, indices, axis, mode)


@method
def select(self, dim, index):
    """``select(dim, index)``: the slice at ``index`` along ``dim``;
    ``select(condition, y)``: ``self`` where ``condition`` else ``y``."""
    if isinstance(dim, Tensor):
        return ops.select(dim, self, index)
    return ops.getitem(self, (slice(None),) * (dim % self.ndim) + (index,))


@method
def where(self, condition, y):
    """``self`` where ``condition`` else ``y``."""
    return ops.where(condition, self, y)


@method
def masked_fill(self, mask, value):
    """``value`` where ``mask`` is true."""
    return ops.masked_fill(self, mask, value)


@method
def masked_fill_(self, mask, value):
    """In place: :meth:`masked_fill`; returns the tensor."""
    return store(self, ops.masked_fill(self, mask, value))


@method
def masked_scatter(self, mask, source):
    """The positions where ``mask`` is true filled in order from ``source``."""
    return arr.masked_scatter(self, mask, source)


@method
def masked_scatter_(self, mask, source):
    """In place: :meth:`masked_scatter`; returns the tensor."""
    return store(self, arr.masked_scatter(self, mask, source))


@method
def scatter(self, dim=None, index=None, src=None, *, axis=None, value=None, reduce=None):
    """``src`` (or the number ``value``) written along ``dim`` at ``index``; ``reduce``
    'add' adds instead."""
    dim = dim if axis is None else axis
    src = src if value is None else value
    if reduce == "add":
        if not isinstance(src, Tensor):
            src = ops.full(index.shape, src, self.dtype)
        return arr.scatter_add_dim(self, dim, index, src)
    if reduce is not None:
        raise ValueError(f"reduce: expected None or 'add', got {reduce!r}")
    return arr.scatter(self, dim, index, src)


@method
def scatter_(self, dim, index, src):
    """In place: :meth:`scatter`; returns the tensor."""
    return store(self, arr.scatter(self, dim, index, src))


@method
def scatter_add(self, dim, index, src):
    """``src`` added along ``dim`` at ``index``."""
    return arr.scatter_add_dim(self, dim, index, src)


@method
def scatter_add_(self, dim, index, src):
    """In place: :meth:`scatter_add`; returns the tensor."""
    return store(self, arr.scatter_add_dim(self, dim, index, src))


@method
def index_add(self, indices, y, axis, use_lock=True, check_index_bound=True, *, alpha=1):
    """``index_add(indices, y, axis)``: slices of ``y`` added along ``axis`` at
    ``indices``; ``index_add(dim, index, source, *, alpha=1)``: ``alpha * source``."""
    if isinstance(indices, numbers.Integral):  # the (dim, index, source) overload
        indices, y, axis = y, axis, indices
    return arr.index_add(self, indices, y if alpha == 1 else ops.mul(y, alpha), axis)


@method
def index_add_(self, dim, index, source, *, alpha=1):
    """In place: ``source * alpha`` added along ``dim`` at ``index``; returns the tensor."""
    source = source if alpha == 1 else ops.mul(source, alpha)
    return store(self, arr.index_add(self, index, source, dim))


@method
def index_fill(self, axis, index, value):
    """``value`` in the slices along ``axis`` at ``index``."""
    return arr.index_fill(self, axis, index, value)


@method
def index_fill_(self, dim, index, value):
    """In place: :meth:`index_fill`; returns the tensor."""
    return store(self, arr.index_fill(self, dim, index, value))


@method
def index_put(self, indices, values, accumulate=False):
    """``values`` written (added with ``accumulate``) at the advanced index ``indices``."""
    index = tuple(indices)
    if accumulate:
        return ops.setitem(self, index, ops.add(ops.getitem(self, index), values))
    return ops.setitem(self, index, values)


@method
def index_put_(self, indices, values, accumulate=False):
    """In place: :meth:`index_put`; returns the tensor."""
    return store(self, index_put(self, indices, values, accumulate))


# -- filling and copying (in place) -----------------------------------------------------------
@method
def fill_(self, value):
    """In place: every entry set to ``value``; returns the tensor."""
    return store(self, ops.full_like(self, value.item() if isinstance(value, Tensor)
                                     else value))


@method
def zero_(self):
    """In place: every entry set to 0; returns the tensor."""
    return store(self, ops.zeros_like(self))


@method
def copy_(self, src, non_blocking=False):
    """In place: the values of ``src`` (broadcast, cast to this dtype); returns the
    tensor."""
    return store(self, src)


@method
def fill(self, value):
    """A tensor of this shape and dtype filled with ``value``."""
    return ops.full_like(self, value.item() if isinstance(value, Tensor) else value)


@method
def fills(self, value):
    """A tensor of this shape and dtype filled with ``value``."""
    return fill(self, value)


@method
def fill_diagonal_(self, fill_value, wrap=False):
    """In place: the main diagonal set to ``fill_value``; returns the tensor."""
    a = self.asnumpy().copy()
    np.fill_diagonal(a, fill_value, wrap=wrap)
    return store(self, Tensor(a))


@method
def uniform_(self, from_=0, to=1, *, generator=None):
    """In place: values drawn uniformly from ``[from_, to)``; returns the tensor."""
    return store(self, ops.uniform(self.shape, float(from_), float(to),
                                   dtype=self.dtype if self.dtype.is_floating
                                   else mdt.float32, generator=generator))


@method
def normal_(self, mean=0, std=1, *, generator=None):
    """In place: values drawn from N(mean, std**2); returns the tensor."""
    draws = ops.standard_normal(self.shape, generator=generator)
    return store(self, ops.add(ops.mul(draws, std), mean))


@method
def bernoulli_(self, p=0.5, *, generator=None):
    """In place: 1 with probability ``p``, else 0; returns the tensor."""
    draws = ops.uniform(self.shape, 0.0, 1.0, generator=generator)
    return store(self, ops.cast(ops.less(draws, p), self.dtype))


# -- creation ------------------------------------------------------------------------------------
@method
def new_zeros(self, size, dtype=None):
    """Zeros of ``size`` in this tensor's dtype (or ``dtype``)."""
    return ops.zeros(_sizes((size,), "size"), dtype or self.dtype)


@method
def new_ones(self, size, dtype=None):
    """Ones of ``size`` in this tensor's dtype (or ``dtype``)."""
    return ops.ones(_sizes((size,), "size"), dtype or self.dtype)


@method
def new_full(self, size, fill_value, *, dtype=None):
    """``fill_value`` everywhere, of ``size``, in this tensor's dtype (or ``dtype``)."""
    return ops.full(_sizes((size,), "size"), fill_value, dtype=dtype or self.dtype)


@method
def new_empty(self, size, *, dtype=None, device=None):
    """A tensor of ``size`` (zeros) in this tensor's dtype (or ``dtype``)."""
    return ops.zeros(_sizes((size,), "size"), dtype or self.dtype)


@method
def new_tensor(self, data, *, dtype=None):
    """A tensor of ``data`` in this tensor's dtype (or ``dtype``)."""
    return Tensor(data, dtype=dtype or self.dtype)


@method
def clone(self):
    """A copy with its own storage."""
    return self.copy()


@method
def init_data(self, slice_index=None, shape=None, opt_shard_group=None):
    """The tensor itself: values are materialised when the tensor is made (MindSpore's lazy
    initialisation and sharded slices do not apply)."""
    return self


@method
def contiguous(self):
    """The tensor itself (storage is always contiguous)."""
    return self


@method
def is_contiguous(self):
    """True: storage is always contiguous."""
    return True


# -- dtype ---------------------------------------------------------------------------------------
def _converter(name, dtype):
    def convert(self):
        return ops.cast(self, dtype)
    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"Converted to {dtype}."
    return method(convert)


for _name, _dtype in (("int", mdt.int32), ("long", mdt.int64), ("short", mdt.int16),
                      ("byte", mdt.uint8), ("bool", mdt.bool_), ("double", mdt.float64),
                      ("float", mdt.float32), ("half", mdt.float16),
                      ("bfloat16", mdt.bfloat16)):
    _converter(_name, _dtype)


@method
def astype(self, dtype, copy=True):
    """Converted to ``dtype`` (``ms.float16``, ``"float32"``, ``np.int32`` ...)."""
    return ops.cast(self, mdt.as_dtype(dtype))


@method
def to(self, dtype=None, non_blocking=False, copy=False, *, device=None, other=None):
    """Converted to ``dtype`` (or to ``other``'s dtype when a Tensor is given)."""
    if isinstance(dtype, Tensor):
        dtype = dtype.dtype
    if other is not None:
        dtype = other.dtype
    if dtype is None:
        return self
    return ops.cast(self, mdt.as_dtype(dtype))


@method
def type(self, dtype=None):
    """Without ``dtype``: the dtype's name (``'Float32'``); with it: converted."""
    if dtype is None:
        return str(self.dtype).capitalize().replace("Bfloat", "BFloat")
    return ops.cast(self, mdt.as_dtype(dtype))


@method
def type_as(self, other):
    """Converted to ``other``'s dtype."""
    return ops.cast(self, other.dtype)


@method
def is_floating_point(self):
    """True for a floating dtype."""
    return bool(self.dtype.is_floating)


@method
def is_signed(self):
    """True for a signed dtype (floats and signed integers)."""
    return bool(self.dtype.is_floating or np.dtype(self.dtype.np_dtype).kind == "i")


@method
def is_complex(self):
    """False: mscore has no complex dtypes."""
    return False


# -- metadata ---------------------------------------------------------------------------------
@method
def numel(self):
    """Number of entries."""
    return self.size


@method
def nelement(self):
    """Number of entries."""
    return self.size


@method
def ndimension(self):
    """Number of dimensions."""
    return self.ndim


@method
def stride(self, dim=None):
    """Element strides of the (contiguous, row-major) storage: a list, or one int."""
    strides, step = [], 1
    for s in reversed(self.shape):
        strides.append(step)
        step *= s
    strides = list(reversed(strides))
    return strides if dim is None else strides[dim]


@method
def storage_offset(self):
    """0: a tensor owns its storage from the start."""
    return 0


@method
def element_size(self):
    """Bytes per entry."""
    return self.itemsize


@method
def set_const_arg(self, const_arg=True):
    """Marks the tensor as a constant argument of a compiled network (kept for MindSpore
    code; nothing else changes)."""
    if not isinstance(const_arg, bool):
        raise TypeError(f"const_arg: expected a bool, got {type(const_arg).__name__}")
    return self


def _matrix_transpose(self):
    """The last two axes exchanged."""
    return ops.swapaxes(self, -1, -2)


def _strides(self):
    """Byte strides of the (contiguous, row-major) storage."""
    return tuple(s * self.itemsize for s in stride(self))


def _data(self):
    """The tensor itself (MindSpore's ``Tensor.data``)."""
    return self


def _has_init(self):
    """False: values are materialised when the tensor is made."""
    return False


PROPERTIES.update(mT=property(_matrix_transpose), mH=property(_matrix_transpose),
                  H=property(lambda self: ops.transpose(self, (1, 0)) if self.ndim == 2
                             else _matrix_transpose(self)),
                  strides=property(_strides), data=property(_data),
                  has_init=property(_has_init))
