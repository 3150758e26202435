"""The CuPy backend's device selection and host transfer.

Streams: every op is queued on CuPy's *current* stream of the current device (the null stream
unless the caller entered a ``cupy.cuda.Stream``), so ops run in program order. Host reads
(:meth:`to_numpy`, :meth:`all_finite`) wait for that stream; :meth:`synchronize` waits for the
whole device.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np


class CupyCore:
    """Device selection, synchronisation, memory statistics, host transfer."""

    # -- device --------------------------------------------------------------------------------
    def device_count(self):
        """Number of CUDA devices CuPy sees (1 for the numpy stand-in)."""
        if self._host:
            return 1
        return int(self.xp.cuda.runtime.getDeviceCount())

    def set_device(self, device_target, device_id=0):
        """Place new arrays on CUDA device ``device_id``.

        ``device_target`` must be "GPU", or "CPU" (the context's default), which CuPy cannot
        honour and takes to mean "the backend's device", i.e. the GPU: CuPy arrays always live
        on a CUDA device. The device becomes CuPy's current device for the calling thread.
        """
        if not isinstance(device_target, str):
            raise TypeError(f"device_target: expected a str, got {type(device_target).__name__}")
        if device_target not in ("GPU", "CPU"):
            raise ValueError(f"device_target: backend 'cupy' runs on 'GPU' only, got "
                             f"{device_target!r}")
        if not isinstance(device_id, (int, np.integer)) or isinstance(device_id, bool):
            raise TypeError(f"device_id: expected an int, got {type(device_id).__name__}")
        count = self.device_count()
        if not 0 <= int(device_id) < count:
            raise ValueError(f"device_id: expected 0 <= device_id < {count} (CUDA devices "
                             f"visible to CuPy), got {device_id}")
        self._use_device(int(device_id))

    def _use_device(self, device_id):
        if not self._host:
            self.xp.cuda.Device(device_id).use()
        self._device_id = device_id
        self.device = f"GPU:{device_id}"

    def synchronize(self):
        """Wait until every stream of the current device has finished its queued work."""
        if not self._host:
            self.xp.cuda.Device(self._device_id).synchronize()

    def memory_stats(self):
        """CuPy memory-pool bytes in use / reserved and the device's free / total bytes.

        CuPy's pool keeps no peak, so none is reported.
        """
        if self._host:
            return {}
        pool = self.xp.get_default_memory_pool()
        with self.xp.cuda.Device(self._device_id):
            free, total = self.xp.cuda.runtime.memGetInfo()
        return {"device": self.device, "bytes_in_use": int(pool.used_bytes()),
                "bytes_reserved": int(pool.total_bytes()), "bytes_free": int(free),
                "bytes_limit": int(total)}

    # -- creation and transfer -----------------------------------------------------------------
    def from_numpy(self, array, dtype=None):
        array = np.asarray(array)
        if dtype is not None:
            array = array.astype(self.native_dtype(dtype), copy=False)
        if not self._bf16 and array.dtype == np.dtype(ml_dtypes.bfloat16):
            raise TypeError("dtype: bfloat16 needs CuPy >= 14 on NumPy >= 2.1.2; backend "
                            "'cupy' does not declare it here")
        return self.xp.array(array, copy=True)

    def to_numpy(self, a):
        """A host copy; for CuPy arrays this waits for the current stream (``.get()``)."""
        if isinstance(a, np.ndarray):
            return a.copy()
        if isinstance(a, np.generic):
            return np.asarray(a).copy()
        return a.get()
