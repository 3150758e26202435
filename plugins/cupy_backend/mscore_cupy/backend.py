"""The CuPy backend: :class:`ArrayModuleBackend` over ``cupy``, plus what CUDA needs.

Everything that is plain array-module code (elementwise math, reductions, shape ops, the
im2col/GEMM convolution and strided-window pooling, which need no cuDNN) is inherited. This
class adds device selection, host transfer, scatter-add through CUDA atomics, a counter-based
random stream computed on the device, the overflow check as one kernel over all arrays, and
one-kernel forms of relu and of the reference autodiff's hot gradient steps (:mod:`.kernels`).

Streams: every op is queued on CuPy's *current* stream of the current device (the null stream
unless the caller entered a ``cupy.cuda.Stream``), so ops run in program order. Host reads
(:meth:`to_numpy`, :meth:`all_finite`) wait for that stream; :meth:`synchronize` waits for the
whole device.

For tests without a GPU the class also runs with ``xp=numpy`` standing in for CuPy: the code
that decides *what* runs on the device (the overflow-check table, the scatter dtype plan, the
random stream, argument validation) is the same, only the CUDA calls are replaced.
"""
from __future__ import annotations

from collections import OrderedDict

import ml_dtypes
import numpy as np

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.common import dtype as mdt

from .core import CupyCore
from .fused import CupyFused
from .kernels import CupyKernels
from .ops import CupyOps, _scan_table_on_host, scatter_accumulator
from .plugin import bfloat16_supported
from .random import CupyRandom

__all__ = ["CupyBackend", "scatter_accumulator", "_scan_table_on_host"]


class CupyBackend(CupyCore, CupyOps, CupyFused, CupyKernels, CupyRandom,
                  ArrayModuleBackend):
    """mscore's primitive op set on CuPy arrays, on one CUDA device at a time.

    ``CupyBackend()`` imports CuPy and uses CUDA device 0; ``CupyBackend(xp=numpy)`` is the
    stand-in used by the CPU tests (same logic, host memory, no CUDA calls).
    """

    def __init__(self, xp=None):
        if xp is None:
            import cupy as xp
        self._host = xp is np
        if self._host:
            from scipy import special
        else:
            from cupyx.scipy import special
        super().__init__(xp, "cupy", special_erf=special.erf)
        self._bf16 = self._host or bfloat16_supported(xp.__version__, np.__version__)
        self._finite_rule = {}
        for d in mdt.FLOAT_DTYPES:
            info = ml_dtypes.finfo(d.np_dtype)
            mask = ((1 << int(info.nexp)) - 1) << int(info.nmant)
            self._finite_rule[np.dtype(d.np_dtype)] = (d.itemsize, mask)
        self._finite_tables = OrderedDict()
        self._finite_kernel = None
        self._bf16_matmul = None     # None: not tried yet; False: upcast to float32
        self._momentum_kernel = None
        self._addcmul_kernel = None
        self._adam_kernel = None
        self._elementwise = {}      # the kernels of .kernels, by name
        self._device_id = 0
        self.device = "GPU:0"
        if not self._host:
            self._use_device(0)
