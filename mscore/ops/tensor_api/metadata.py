"""MindSpore 2.10's Tensor methods and properties about the storage: entry counts
(``numel``, ``nelement``), ``ndimension``, strides (``stride()``, ``strides``), element
size, ``data``, ``has_init`` and ``set_const_arg``; attached by :mod:`mscore.ops.tensor_api`.
"""
from __future__ import annotations

from mscore.ops.tensor_api.args import check_const_arg
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
PROPERTIES = {}
method = METHODS.method


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
    check_const_arg(const_arg)
    return self


def _strides(self):
    """Byte strides of the (contiguous, row-major) storage."""
    return tuple(s * self.itemsize for s in stride(self))


def _data(self):
    """The tensor itself (MindSpore's ``Tensor.data``)."""
    return self


def _has_init(self):
    """False: values are materialised when the tensor is made."""
    return False


PROPERTIES.update(strides=property(_strides), data=property(_data),
                  has_init=property(_has_init))
