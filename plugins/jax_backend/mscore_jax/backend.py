"""The JAX backend: mscore's backend contract over ``jax.numpy`` / ``jax.lax``, assembled from
its parts.

Native arrays are ``jax.Array`` (or JAX tracers while ``jax.jit`` / ``jax.value_and_grad``
trace a function). The parts, one concern each: :mod:`.core` (dtypes and the 64-bit switch,
creation, host transfer, device), :mod:`.ops` (primitives and the overflow check),
:mod:`.fused` (fused ops), :mod:`.random` (explicit keys), :mod:`.autodiff`
(``jax.value_and_grad``), :mod:`.compile` (``jax.jit`` with donated state buffers);
:mod:`.collectives` is the data-parallel engine.
"""
from __future__ import annotations

import os

import jax

from mscore.common import dtype as mdt
from mscore.plugin.backend import Backend

from .autodiff import JaxAutodiff
from .compile import DONATE_MIN_SIZE, JaxCompile
from .core import JaxCore, enable_x64, is_tracer
from .fused import JaxFused
from .ops import JaxOps, _all_finite_traced
from .random import JaxRandom

__all__ = ["JaxBackend", "is_tracer", "DONATE_MIN_SIZE"]


class JaxBackend(JaxCore, JaxOps, JaxFused, JaxRandom, JaxAutodiff, JaxCompile, Backend):
    """mscore's backend contract over JAX (CPU and GPU)."""

    name = "jax"

    def __init__(self, precision="highest"):
        super().__init__()
        if precision not in (None, "default", "high", "highest"):
            raise ValueError(f"precision: expected None, 'default', 'high' or 'highest', got "
                             f"{precision!r}")
        self.precision = precision
        if os.environ.get("MSCORE_JAX_ENABLE_X64", "") not in ("", "0"):
            enable_x64()
        self._to_ms = {d.np_dtype: d for d in mdt.ALL_DTYPES}
        self._jax_device = None
        self._all_finite_jit = jax.jit(_all_finite_traced)
