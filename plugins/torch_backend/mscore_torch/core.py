"""The torch backend's dtypes, array creation, host transfer and device placement."""
from __future__ import annotations

import contextlib
import os

import ml_dtypes
import numpy as np
import torch

from mscore.common import dtype as mdt
from mscore.plugin.rules import saturate_to_int

from ._casts import FLOAT_METHODS
from .ops import matmul_any_device
from .plugin import UNDECLARED_DTYPES

_TO_TORCH = {
    mdt.float16: torch.float16, mdt.bfloat16: torch.bfloat16, mdt.float32: torch.float32,
    mdt.float64: torch.float64, mdt.int8: torch.int8, mdt.int16: torch.int16,
    mdt.int32: torch.int32, mdt.int64: torch.int64, mdt.uint8: torch.uint8,
    mdt.bool_: torch.bool,
}
_FROM_TORCH = {v: k for k, v in _TO_TORCH.items()}
_BF16_NP = np.dtype(ml_dtypes.bfloat16)
_is_compiling = torch.compiler.is_compiling
# numpy dtypes torch.from_numpy takes directly (bfloat16 goes through a 16-bit view).
_NP_OK = frozenset(np.dtype(d) for d in (np.float16, np.float32, np.float64, np.int8,
                                         np.int16, np.int32, np.int64, np.uint8, np.bool_))


def unsupported_dtype(name):
    """The ``TypeError`` for an mscore dtype this backend does not provide."""
    why = UNDECLARED_DTYPES.get(name, "torch has no such dtype")
    return TypeError(f"dtype: the torch backend does not support {name} ({why}); its dtypes "
                     f"are {', '.join(d.name for d in _TO_TORCH)}")


def torch_dtype(dtype):
    """The torch dtype of mscore DType ``dtype``."""
    try:
        return _TO_TORCH[dtype]
    except KeyError:
        if isinstance(dtype, mdt.DType):
            raise unsupported_dtype(dtype.name) from None
        raise TypeError(f"dtype: expected an mscore dtype such as ms.float32, got "
                        f"{dtype!r}") from None


class TorchCore:
    """Device placement, dtypes, creation and host transfer (state: ``_device``, the torch
    device of new arrays, and ``_const``, cached 0-d constants)."""

    # -- device --------------------------------------------------------------------------
    def set_device(self, device_target, device_id=0):
        """"CPU" places new arrays on the host, "GPU" on ``cuda:device_id``."""
        if device_target == "CPU":
            device = torch.device("cpu")
        elif device_target == "GPU":
            if not torch.cuda.is_available():
                raise ValueError("device_target: 'GPU' needs CUDA, which this torch build "
                                 f"({torch.__version__}) cannot use here")
            count = torch.cuda.device_count()
            if not 0 <= device_id < count:
                raise ValueError(f"device_id: expected 0..{count - 1} for the {count} CUDA "
                                 f"device(s), got {device_id}")
            device = torch.device("cuda", device_id)
            if os.environ.get("MSCORE_TORCH_TF32", "0") in ("", "0"):
                # float32 means float32 (as in MindSpore and numpy): cuDNN convolutions
                # would otherwise round their inputs to TF32 on Ampere and newer.
                torch.backends.cudnn.allow_tf32 = False
                torch.backends.cuda.matmul.allow_tf32 = False
        else:
            raise ValueError(f"device_target: backend 'torch' supports 'CPU' and 'GPU', got "
                             f"{device_target!r}")
        self._device = device
        self.device = "CPU" if device.type == "cpu" else f"GPU:{device.index}"
        self._const.clear()
        self._bind_matmul()

    def _bind_matmul(self):
        """``matmul`` for the current device, bound once here: ``torch.matmul`` itself on the
        CPU; on CUDA, which has no integer GEMM, integer operands go through
        :func:`~mscore_torch.ops.exact_int_matmul` (wrapping around like the CPU kernel)."""
        self.matmul = torch.matmul if self._device.type == "cpu" else matmul_any_device

    @property
    def torch_device(self):
        """The ``torch.device`` new arrays are placed on."""
        return self._device

    @contextlib.contextmanager
    def limit_threads(self, threads):
        """torch's intra-op pool at ``threads`` inside the block (restored after); its
        inter-op pool too, which torch lets a process size once, before its first parallel
        work (later the pool keeps its size)."""
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        with contextlib.suppress(RuntimeError):  # already started: torch refuses a resize
            torch.set_num_interop_threads(threads)
        try:
            yield
        finally:
            torch.set_num_threads(before)

    def synchronize(self):
        """Wait for the queued CUDA work of the current device (no-op on CPU)."""
        if self._device.type == "cuda":
            torch.cuda.synchronize(self._device)

    def memory_stats(self):
        """CUDA: ``bytes_in_use``, ``peak_bytes_in_use``, ``bytes_reserved``; CPU: ``{}``."""
        if self._device.type != "cuda":
            return {}
        return {"bytes_in_use": int(torch.cuda.memory_allocated(self._device)),
                "peak_bytes_in_use": int(torch.cuda.max_memory_allocated(self._device)),
                "bytes_reserved": int(torch.cuda.memory_reserved(self._device))}

    # -- creation and transfer ----------------------------------------------------------
    def native_dtype(self, dtype):
        """The torch dtype for mscore ``dtype``."""
        return torch_dtype(dtype)

    def from_numpy(self, array, dtype=None):
        """A tensor on the current device holding a copy of ``array``."""
        array = np.asarray(array)
        if dtype is not None:
            array = array.astype(dtype.np_dtype, copy=False)
        if array.dtype == _BF16_NP:
            host = torch.from_numpy(np.ascontiguousarray(array).view(np.uint16).view(np.int16))
            host = host.view(torch.bfloat16).reshape(array.shape)  # view() makes 0-d 1-d
        else:
            if array.dtype not in _NP_OK:
                if array.dtype.name in UNDECLARED_DTYPES:
                    raise unsupported_dtype(array.dtype.name)
                raise TypeError(f"from_numpy: numpy dtype {array.dtype} has no mscore "
                                f"equivalent")
            if not array.flags.c_contiguous or not array.flags.writeable:
                array = np.array(array, copy=True, order="C")
            host = torch.from_numpy(array)
        if self._device.type == "cpu":
            return host.clone()
        return host.to(self._device, copy=True)

    def to_numpy(self, a):
        """A numpy copy of ``a`` (bfloat16 as ``ml_dtypes.bfloat16``)."""
        a = a.detach()
        if a.dtype == torch.bfloat16:
            bits = a.cpu().view(torch.int16).numpy().reshape(tuple(a.shape))
            return bits.view(_BF16_NP).copy()
        return a.cpu().numpy().copy()

    def full(self, shape, value, dtype):
        """A tensor of ``shape`` filled with ``value``; 0-d constants are cached."""
        if not shape and not _is_compiling():  # never cache tensors of a dynamo trace
            key = (value, type(value), dtype)
            try:
                return self._const[key]
            except (KeyError, TypeError):
                pass
            out = torch.full((), value, dtype=_TO_TORCH[dtype], device=self._device)
            if len(self._const) > 4096:
                self._const.clear()
            try:
                self._const[key] = out
            except TypeError:  # an unhashable value
                pass
            return out
        return torch.full(tuple(shape), value, dtype=_TO_TORCH[dtype], device=self._device)

    def arange(self, start, stop, step, dtype):
        """``start, start+step, ...`` below ``stop`` (computed like numpy, then cast)."""
        ints = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
        work = torch.int64 if ints else torch.float64
        return torch.arange(start, stop, step, dtype=work,
                            device=self._device).to(_TO_TORCH[dtype])

    def shape(self, a):
        """The shape as a tuple of ints."""
        return tuple(a.shape)

    def dtype(self, a):
        """The mscore DType of ``a``."""
        return _FROM_TORCH[a.dtype]

    def cast(self, a, dtype):
        """``a`` converted to ``dtype`` (itself when it already has it); float to integer
        saturates at the integer range and maps NaN to 0 (the contract)."""
        target = _TO_TORCH[dtype]
        if dtype.is_integer and a.is_floating_point():
            return _saturating_cast(a, target)
        method = FLOAT_METHODS.get(target)
        return a.to(target) if method is None else method(a)

    def float_caster(self, dtype):
        """torch's own conversion to the floating ``dtype`` as a method without arguments
        (``Tensor.half`` and friends, see :mod:`._casts`); ``cast`` above adds only the
        integer rule."""
        return FLOAT_METHODS[_TO_TORCH[dtype]]

    def stop_gradient(self, a):  # rebound to Tensor.detach in __init__
        """``a.detach()``."""
        return a.detach()



def _saturating_cast(a, target):
    """Float to integer with the contract's saturation
    (:func:`mscore.plugin.rules.saturate_to_int`)."""
    info = torch.iinfo(target)
    t = torch.trunc(a.float() if a.element_size() < 4 else a)
    return saturate_to_int(t, info.min, info.max, where=torch.where, isnan=torch.isnan,
                           convert=lambda x: x.to(target))
