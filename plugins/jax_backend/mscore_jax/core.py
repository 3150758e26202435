"""The JAX backend's dtypes (and the 64-bit switch), array creation, host transfer and
device placement.

64-bit types. JAX runs in 32-bit mode unless the global flag ``jax_enable_x64`` is on. This
backend switches it on the first time a 64-bit array is requested (``from_numpy`` of a
float64 or int64 array, ``cast``/``full``/``arange``/random draws to ``ms.float64`` or
``ms.int64``, an ``argmax``), or at build time when ``MSCORE_JAX_ENABLE_X64=1``, so the
declared int64 and float64 are always real. The flag is process-wide: once on, it stays on,
plain JAX code in the same process sees 64-bit defaults too, arrays made earlier keep their
32-bit types, and every jitted function (mscore's GRAPH_MODE programs included) is traced
again the next time it is called.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

try:
    from jax.core import Tracer as _Tracer
except ImportError:  # pragma: no cover - moved in a future JAX
    from jax._src.core import Tracer as _Tracer


def is_tracer(x) -> bool:
    """True when ``x`` is a JAX tracer (an abstract value inside jit/grad), not an array."""
    return isinstance(x, _Tracer)


def x64_enabled() -> bool:
    """True when JAX's process-wide ``jax_enable_x64`` flag is on."""
    return bool(jax.config.jax_enable_x64)  # type: ignore[attr-defined]  # a config flag


def enable_x64() -> None:
    """Switch on 64-bit types in JAX for the whole process (see the module docstring)."""
    if not x64_enabled():
        jax.config.update("jax_enable_x64", True)


class JaxCore:
    """Dtype mapping, device placement, creation and transfer (state: ``_jax_device``, the
    default device set by :meth:`set_device`)."""

    # -- dtype mapping -------------------------------------------------------------------
    def native_dtype(self, dtype):
        """The numpy dtype JAX stores mscore ``dtype`` as (64-bit types switch x64 on)."""
        if dtype.itemsize == 8:     # float64, int64, uint64
            enable_x64()
        return dtype.np_dtype

    # -- device --------------------------------------------------------------------------
    def set_device(self, device_target, device_id=0):
        """Make ``device_target`` ("CPU" or "GPU") number ``device_id`` JAX's default device."""
        if device_target not in ("CPU", "GPU"):
            raise ValueError(f"device_target: backend 'jax' supports 'CPU' and 'GPU', got "
                             f"{device_target!r}")
        platform = "cpu" if device_target == "CPU" else "gpu"
        try:  # this process's own devices (in a jax.distributed job, not the others')
            devices = jax.local_devices(backend=platform)
        except RuntimeError:
            devices = []
        if not devices:
            have = sorted({d.platform.upper() for d in jax.devices()})
            raise ValueError(f"device_target: JAX has no {device_target} device here "
                             f"(available: {', '.join(have)}); install jax[cuda12] on a "
                             f"machine with a GPU")
        if not 0 <= device_id < len(devices):
            raise ValueError(f"device_id: {device_id} is out of range; JAX sees "
                             f"{len(devices)} {device_target} device(s)")
        dev = devices[device_id]
        if dev is not self._jax_device:
            jax.config.update("jax_default_device", dev)
            self._jax_device = dev
        self.device = "CPU" if device_target == "CPU" else f"GPU:{device_id}"

    def synchronize(self):
        """Wait until every live array's computation has finished."""
        for a in jax.live_arrays():
            try:
                a.block_until_ready()
            except RuntimeError:  # deleted (donated) meanwhile
                pass

    def memory_stats(self):
        """``Device.memory_stats()`` of the current device (empty on CPU)."""
        dev = self._jax_device or jax.local_devices()[0]
        stats = dev.memory_stats()
        return dict(stats) if stats else {}

    # -- creation and transfer -------------------------------------------------------------
    def from_numpy(self, array, dtype=None):
        array = np.asarray(array)
        target = self.native_dtype(dtype) if dtype is not None else \
            self._native_for_numpy(array.dtype)
        if array.dtype != target:
            array = array.astype(target)
        return jnp.array(array, copy=True)

    def _native_for_numpy(self, np_dtype):
        if np_dtype in (np.float64, np.int64, np.uint64):
            enable_x64()
        return np_dtype

    def to_numpy(self, a):
        return np.array(a, copy=True)

    def copy(self, a):
        """A new buffer with the values of ``a`` (GRAPH_MODE protects shared values from
        donation with it)."""
        return jnp.array(a, copy=True)

    def full(self, shape, value, dtype):
        return jnp.full(tuple(shape), value, dtype=self.native_dtype(dtype))

    def arange(self, start, stop, step, dtype):
        # Computed on the host like numpy (float64, then cast) so float ranges match exactly.
        return jnp.asarray(np.arange(start, stop, step).astype(self.native_dtype(dtype)))

    def shape(self, a):
        return tuple(a.shape)

    def dtype(self, a):
        return self._to_ms[a.dtype]

    def cast(self, a, dtype):
        target = self.native_dtype(dtype)
        if a.dtype == target:
            return a
        return a.astype(target)

    def stop_gradient(self, a):
        return lax.stop_gradient(a) if isinstance(a, _Tracer) else a
