"""What the Tensor-method modules (``mscore.ops.tensor_api``) share: :func:`store`, the
write-back of the in-place methods; :func:`sizes`, a size argument given as ``f(2, 3)``,
``f((2, 3))`` or ``f([2, 3])``; :func:`dim_alias`, a parameter MindSpore spells two ways."""
from __future__ import annotations

import numbers

import numpy as np

from mscore import ops
from mscore.common.tensor import Tensor


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


def sizes(args, name):
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


def dim_alias(primary, name, alias, alias_value, default):
    """The value of a parameter MindSpore spells two ways (``dim``/``axis``): the one given,
    or ``default``; both given is TypeError."""
    if alias_value is None:
        return primary
    if primary is not default:
        raise TypeError(f"got values for both '{name}' and '{alias}'")
    return alias_value
