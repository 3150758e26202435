"""How ``mscore.numpy`` turns its inputs into Tensors: MindSpore's NumPy defaults (Python
ints become int32, Python floats float32)."""
from __future__ import annotations

import numbers

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor


def asarray(a, dtype=None):
    """``a`` (a Tensor, number, list, tuple or numpy array) as a Tensor; Python ints are
    int32 and Python floats float32, as in ``mindspore.numpy``."""
    if isinstance(a, Tensor):
        return a if dtype is None else ops.cast(a, mdt.as_dtype(dtype))
    if isinstance(a, (list, tuple)) and any(isinstance(v, Tensor) for v in a):
        return ops.stack([asarray(v, dtype) for v in a])
    if isinstance(a, (numbers.Number, list, tuple, np.ndarray, np.generic)):
        arr = np.asarray(a)
        if dtype is not None:
            arr = arr.astype(mdt.as_dtype(dtype).np_dtype)
        elif arr.dtype == np.float64 and not isinstance(a, (np.ndarray, np.generic)):
            arr = arr.astype(np.float32)
        elif arr.dtype.kind == "i" and not isinstance(a, (np.ndarray, np.generic)):
            arr = arr.astype(np.int32)
        return Tensor(arr)
    raise TypeError(f"expected a Tensor, number, list, tuple or numpy array, got "
                    f"{type(a).__name__}")


def with_dtype(out, dtype):
    """``out`` cast to ``dtype`` when one is given."""
    return out if dtype is None else ops.cast(out, mdt.as_dtype(dtype))


def float_input(x):
    """``x`` as a Tensor, integer and bool values as float32 (for the transcendental
    functions)."""
    x = asarray(x)
    return x if x.dtype.is_floating else ops.cast(x, mdt.float32)
