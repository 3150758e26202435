"""MindSpore 2.10's Tensor methods that fill a tensor or make a new one: in-place fills,
copies and random draws (``fill_``, ``zero_``, ``copy_``, ``uniform_``, ``normal_`` ...),
``new_zeros``/``new_full``/``new_tensor`` & co., ``clone`` and the storage no-ops
(``contiguous``, ``init_data``); attached by :mod:`mscore.ops.tensor_api`."""
from __future__ import annotations

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops.tensor_api import args as checks
from mscore.ops.tensor_api.helpers import sizes, store
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
method = METHODS.method


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
    """Zeros of ``size`` in this tensor's dtype (or ``dtype``, an mscore dtype)."""
    return ops.zeros(checks.new_size("new_zeros", size, "Zeros"),
                     checks.new_dtype("new_zeros", dtype, self.dtype))


@method
def new_ones(self, size, dtype=None):
    """Ones of ``size`` in this tensor's dtype (or ``dtype``, an mscore dtype)."""
    return ops.ones(checks.new_size("new_ones", size, "Ones"),
                    checks.new_dtype("new_ones", dtype, self.dtype))


@method
def new_full(self, size, fill_value, *, dtype=None):
    """``fill_value`` everywhere, of ``size``, in this tensor's dtype (or ``dtype``)."""
    return ops.full(sizes((size,), "size"), fill_value, dtype=dtype or self.dtype)


@method
def new_empty(self, size, *, dtype=None, device=None):
    """A tensor of ``size`` (zeros) in this tensor's dtype (or ``dtype``)."""
    return ops.zeros(sizes((size,), "size"), dtype or self.dtype)


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
