"""Dtypes, creation and host transfer over a numpy-like array module ``xp``."""
from __future__ import annotations

import numpy as np

from mscore.plugin.rules import is_half_precision, saturate_to_int


class ArrayModuleCore:
    """Dtype mapping, creation and transfer (state set by the backend: ``xp`` and
    ``_native_to_dtype``)."""

    # -- dtype mapping -----------------------------------------------------------------
    def native_dtype(self, dtype):
        """The array module's dtype for mscore ``dtype``."""
        return dtype.np_dtype

    # -- creation and transfer ----------------------------------------------------------
    def from_numpy(self, array, dtype=None):
        array = np.asarray(array)
        if dtype is not None:
            array = array.astype(self.native_dtype(dtype), copy=False)
        return self.xp.array(array, copy=True)

    def to_numpy(self, a):
        return np.array(a, copy=True)

    def full(self, shape, value, dtype):
        return self.xp.full(tuple(shape), value, dtype=self.native_dtype(dtype))

    def arange(self, start, stop, step, dtype):
        return self.xp.arange(start, stop, step).astype(self.native_dtype(dtype))

    def shape(self, a):
        return tuple(a.shape)

    def dtype(self, a):
        return self._native_to_dtype[a.dtype]

    def cast(self, a, dtype):
        target = self.native_dtype(dtype)
        if a.dtype == target:
            return a
        if dtype.is_integer and a.dtype.kind in "fV":   # V: bfloat16
            return self._saturating_cast(a, dtype)
        with np.errstate(over="ignore"):   # beyond a narrower float's range: inf, silently
            return a.astype(target)

    def _saturating_cast(self, a, dtype):
        """Float to integer with the contract's saturation (``rules.saturate_to_int``)."""
        xp = self.xp
        info = np.iinfo(dtype.np_dtype)
        t = xp.trunc(a.astype(np.float32) if is_half_precision(a.dtype.itemsize) else a)
        target = self.native_dtype(dtype)
        return saturate_to_int(t, info.min, info.max, where=xp.where, isnan=xp.isnan,
                               convert=lambda x: x.astype(target))
