"""A backend over any numpy-like array module (``xp``): the numpy reference, and CuPy (whose
plugin subclasses it), assembled from its parts: :mod:`.core` (dtypes, creation, transfer),
:mod:`.ops` (primitives), :mod:`.fused` (optimizer updates), :mod:`.random` (streams);
:mod:`.collectives` is the data-parallel engine. Autodiff and compilation are the core's
reference ones (no ``value_and_grad``, no ``compile``).
"""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.plugin.backend import Backend

from .core import ArrayModuleCore
from .fused import ArrayModuleFused
from .ops import ArrayModuleOps
from .random import ArrayModuleRandom


class ArrayModuleBackend(ArrayModuleCore, ArrayModuleOps, ArrayModuleFused, ArrayModuleRandom,
                         Backend):
    """The primitive op set implemented once over the array module ``xp``."""

    def __init__(self, xp, name, special_erf=None):
        super().__init__()
        self.xp = xp
        self._special_erf = special_erf
        self.name = name
        self._as_strided = xp.lib.stride_tricks.as_strided
        self._native_to_dtype = {}
        for d in mdt.ALL_DTYPES:
            try:
                self._native_to_dtype[xp.dtype(d.np_dtype)] = d
            except TypeError:  # bfloat16 is not a CuPy dtype
                pass
