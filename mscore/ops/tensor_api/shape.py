"""MindSpore 2.10's Tensor methods that change the shape or the layout of the axes:
permutations and transposes (``mT``, ``mH``, ``H`` too), reshapes and views, broadcasts,
squeezes, repeats and tiles, splits, flips and rolls, diagonals and triangles; each a thin
binding to the functional op in :mod:`mscore.ops` (attached by :mod:`mscore.ops.tensor_api`).

The methods that select or scatter entries are in :mod:`mscore.ops.tensor_api.selection`,
those that fill or make tensors in :mod:`mscore.ops.tensor_api.creation`, the dtype
conversions in :mod:`mscore.ops.tensor_api.dtype`, sizes and strides in
:mod:`mscore.ops.tensor_api.metadata`. :func:`store` (the write-back of the in-place methods,
of :mod:`mscore.ops.tensor_api.helpers`) is importable from here too.
"""
from __future__ import annotations

import numbers

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops.tensor_api import args as checks
from mscore.ops.tensor_api.helpers import sizes, store  # noqa: F401 (store: its former home)
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
PROPERTIES = {}
method = METHODS.method


# -- shapes ------------------------------------------------------------------------------------
@method
def permute(self, *dims):
    """Axes reordered to ``dims`` (``x.permute(1, 0)`` or ``x.permute((1, 0))``; reversed
    when none are given)."""
    return ops.permute(self, checks.permute_dims(dims, self.ndim))


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
    return ops.transpose(self, sizes(axes, "axes"))


@method
def t(self):
    """The transpose of a tensor of at most 2 dimensions."""
    return ops.t(self)


@method
def adjoint(self):
    """The last two axes exchanged (real dtypes: no conjugation)."""
    return ops.swapaxes(self, -1, -2)


@method
def reshape(self, *shape, **kwargs):
    """Same values in a new shape (one -1 is inferred): ``reshape(2, 3)``,
    ``reshape((2, 3))`` or ``reshape(shape=(2, 3))``."""
    if "shape" in kwargs and not shape:
        shape = (kwargs.pop("shape"),)
    if kwargs:
        raise TypeError(f"reshape() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return ops.reshape(self, checks.reshape_shape(shape))


@method
def view(self, *shape):
    """``view(*shape)``: :meth:`reshape`; ``view(dtype)``: the same bytes read as
    ``dtype`` (an mscore dtype)."""
    target = checks.view_target(shape)
    if isinstance(target, mdt.DType):
        return Tensor(np.ascontiguousarray(self.asnumpy()).view(target.np_dtype))
    return ops.reshape(self, target)


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
    shape = sizes(new_shape, "new_shape")
    return Tensor(np.resize(self.asnumpy(), shape))


@method
def expand(self, *size):
    """Broadcast to ``size`` (-1 keeps a dimension)."""
    size = sizes(size, "size")
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
    return ops.broadcast_to(self, sizes(shape, "shape"))


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
    axes = sizes(axis, "axis")
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
    return ops.ravel(self)


@method
def repeat(self, *repeats):
    """Tiled ``repeats[i]`` times along axis i (PyTorch's ``repeat``)."""
    return ops.tile(self, sizes(repeats, "repeats"))


@method
def tile(self, dims):
    """Tiled ``dims[i]`` times along axis i."""
    return ops.tile(self, tuple(dims) if isinstance(dims, (tuple, list)) else (dims,))


@method
def repeat_interleave(self, repeats, dim=None, *, output_size=None):
    """Each entry repeated ``repeats`` times along ``dim``."""
    return ops.repeat_interleave(self, repeats, dim)


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
    return ops.tensor_split(self, indices_or_sections, axis)


@method
def hsplit(self, indices_or_sections):
    """:meth:`tensor_split` along axis 1."""
    return ops.hsplit(self, indices_or_sections)


@method
def vsplit(self, indices_or_sections):
    """:meth:`tensor_split` along axis 0."""
    return ops.vsplit(self, indices_or_sections)


@method
def dsplit(self, indices_or_sections):
    """:meth:`tensor_split` along axis 2."""
    return ops.dsplit(self, indices_or_sections)


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
    return ops.fliplr(self)


@method
def flipud(self):
    """Reversed along axis 0."""
    return ops.flipud(self)


@method
def roll(self, shifts, dims):
    """Shifted cyclically by ``shifts`` along ``dims``."""
    return ops.roll(self, shifts, dims)


@method
def rot90(self, k, dims):
    """Rotated by 90 degrees ``k`` times in the plane ``dims``."""
    return ops.rot90(self, k, dims)


@method
def movedim(self, source, destination):
    """Axes ``source`` moved to ``destination``."""
    return ops.movedim(self, source, destination)


@method
def moveaxis(self, source, destination):
    """Axes ``source`` moved to ``destination``."""
    return ops.moveaxis(self, source, destination)


@method
def diagonal(self, offset=0, axis1=0, axis2=1):
    """The diagonal of the ``axis1``/``axis2`` planes as the last axis."""
    return ops.diagonal(self, offset, axis1, axis2)


@method
def diag(self, diagonal=0):
    """A 1-d tensor as a diagonal matrix; the diagonal of a 2-d one."""
    return ops.diag(self, diagonal)


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
    return ops.diff(self, n, axis, prepend, append)


@method
def unfold(self, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a 4-d (N, C, H, W) tensor as columns (im2col)."""
    return ops.unfold(self, kernel_size, dilation, padding, stride)


def _matrix_transpose(self):
    """The last two axes exchanged."""
    return ops.swapaxes(self, -1, -2)


PROPERTIES.update(mT=property(_matrix_transpose), mH=property(_matrix_transpose),
                  H=property(lambda self: ops.transpose(self, (1, 0)) if self.ndim == 2
                             else _matrix_transpose(self)))
