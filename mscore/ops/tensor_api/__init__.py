"""MindSpore 2.10's Tensor methods, each a thin binding to the functional op in
:mod:`mscore.ops` (so one implementation serves ``ops.f(x)`` and ``x.f()``), and
:func:`attach`, which puts them on :class:`mscore.Tensor` (``mscore.ops`` calls it once).

A method has the signature of MindSpore's first documented overload; the other overloads'
spellings are accepted too (``x.sum(axis=0, keepdims=True)`` beside ``x.sum(dim=0,
keepdim=True)``; ``x.max(1)`` returns ``(values, indices)`` while ``x.max(axis=1)`` returns
the values, as in MindSpore). In-place variants (``add_``, ``clamp_``, ``fill_``, ``zero_``,
``copy_`` ...) compute the out-of-place result with the same op, store it in the tensor (in
the tensor's own dtype) and return the tensor itself.

Each module of this package holds the methods of one concept in its ``METHODS``
(a :class:`~mscore.ops.tensor_api.registry.MethodRegistry`) and, where it has some, its
properties in ``PROPERTIES``: elementwise functions and arithmetic
(:mod:`~mscore.ops.tensor_api.elementwise`), reductions (:mod:`~mscore.ops.tensor_api.reduction`),
sorting and searching (:mod:`~mscore.ops.tensor_api.sorting`), shapes
(:mod:`~mscore.ops.tensor_api.shape`), selection and scatter
(:mod:`~mscore.ops.tensor_api.selection`), fills and new tensors
(:mod:`~mscore.ops.tensor_api.creation`), dtype conversions (:mod:`~mscore.ops.tensor_api.dtype`),
sizes and strides (:mod:`~mscore.ops.tensor_api.metadata`), the less common ones: random
draws, bit functions, quantiles, segment reductions (:mod:`~mscore.ops.tensor_api.misc`),
matrix, special-function and device ones (:mod:`~mscore.ops.tensor_api.linalg`), and
``register_hook`` (:mod:`~mscore.ops.tensor_api.hooks`). The helpers they share are in
:mod:`~mscore.ops.tensor_api.helpers`.
"""
from __future__ import annotations

from mscore.common.tensor import Tensor
from mscore.ops.tensor_api import (creation, dtype, elementwise, hooks, linalg, metadata, misc,
                                   operators, reduction, selection, shape, sorting)

# Every module with Tensor methods (a name is bound in one module only).
METHOD_MODULES = (operators, misc, shape, selection, creation, dtype, metadata, linalg, hooks,
                  elementwise, reduction, sorting)
# The modules that also have Tensor properties.
PROPERTY_MODULES = (operators, shape, metadata, linalg)


def attach(cls=Tensor):
    """Puts every registered method and property on ``cls``."""
    for module in METHOD_MODULES:
        for name, fn in module.METHODS.items():
            setattr(cls, name, fn)
    for module in PROPERTY_MODULES:
        for name, prop in module.PROPERTIES.items():
            setattr(cls, name, prop)
