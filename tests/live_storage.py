"""The bytes a process really holds behind Parameters: distinct storages, not shapes.

Two Parameters that are views of one buffer count it once; a Parameter that is a small view
of a large buffer counts the whole buffer (it keeps it alive). torch: the tensor's untyped
storage (``data_ptr``, ``nbytes``); jax: the array's device buffers
(``unsafe_buffer_pointer``, ``nbytes``); numpy: the base array's memory. Used by the
parallel optimizer's memory test (tests/sharded_memory_worker.py) and its bench
(bench/parallel_optimizer_memory.py).
"""
from __future__ import annotations

import gc


def storages(native):
    """``{key: nbytes}`` of the buffers a native array keeps alive."""
    module = type(native).__module__
    if module.startswith("torch"):
        s = native.untyped_storage()
        return {("torch", s.device.type, s.data_ptr()): s.nbytes()}
    if module.startswith("jax"):
        out = {}
        for shard in native.addressable_shards:
            data = shard.data
            if data.nbytes:
                out[("jax", str(shard.device), data.unsafe_buffer_pointer())] = data.nbytes
        return out
    import numpy as np
    if isinstance(native, np.ndarray):
        base = native
        while isinstance(base.base, np.ndarray):
            base = base.base
        return {("numpy", base.__array_interface__["data"][0]): base.nbytes}
    raise TypeError(f"live_storage: no storage rule for {type(native).__name__}")


def storage_bytes(params):
    """Bytes of the distinct storages behind ``params`` (Parameters or Tensors)."""
    seen = {}
    for p in params:
        seen.update(storages(p._data))
    return sum(seen.values())


def live_parameters():
    """Every Parameter alive in this process (after a garbage collection)."""
    from mscore import Parameter
    gc.collect()
    return [o for o in gc.get_objects() if issubclass(type(o), Parameter)]
