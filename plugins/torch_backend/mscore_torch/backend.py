"""The PyTorch implementation of mscore's backend contract.

Every method works on ``torch.Tensor`` objects. Ops that map one-to-one onto a torch function
are bound as instance attributes in ``__init__`` (``self.add = torch.add``), so the core's
dispatcher calls torch directly with no Python frame in between; the class methods of the
same names document the contract and are what ``mscore.plugin.backend.missing_primitives``
checks.

Autodiff is torch autograd (:meth:`TorchBackend.value_and_grad`), the overflow check is one
fused ``torch._foreach_norm`` pass with a single host synchronisation, and ``GRAPH_MODE``
runs through ``torch.compile`` with ``MSCORE_TORCH_COMPILE=always`` (eagerly by default,
where it measured faster; see :meth:`TorchBackend.compile`). On CUDA, TF32 is switched off
so that float32 is float32 (``MSCORE_TORCH_TF32=1`` keeps torch's setting).

Random streams are counter based: a state is a CPU ``int64`` tensor ``[seed, counter]``; a
draw hashes ``(seed, counter, element index)`` with integer tensor ops on the current device
and returns the state ``[seed, counter + 1]``. The values are therefore a pure function of
``(seed, counter, shape, dtype)``: identical on CPU and CUDA, across runs, thread counts and
torch versions (they differ from the numpy backend's stream, whose generator is numpy's).
"""
from __future__ import annotations

import contextlib
import math
import os
import sys
import types
import warnings

import ml_dtypes
import numpy as np
import torch
import torch.nn.functional as tnf

from mscore.common import dtype as mdt
from mscore.plugin.backend import Backend

_TO_TORCH = {
    mdt.float16: torch.float16, mdt.bfloat16: torch.bfloat16, mdt.float32: torch.float32,
    mdt.float64: torch.float64, mdt.int8: torch.int8, mdt.int16: torch.int16,
    mdt.int32: torch.int32, mdt.int64: torch.int64, mdt.uint8: torch.uint8,
    mdt.bool_: torch.bool,
}
_FROM_TORCH = {v: k for k, v in _TO_TORCH.items()}
_BF16_NP = np.dtype(ml_dtypes.bfloat16)

_CONV = {1: tnf.conv1d, 2: tnf.conv2d, 3: tnf.conv3d}
_CONV_T = {1: tnf.conv_transpose1d, 2: tnf.conv_transpose2d, 3: tnf.conv_transpose3d}
_MAX_POOL = {1: tnf.max_pool1d, 2: tnf.max_pool2d, 3: tnf.max_pool3d}
_AVG_POOL = {1: tnf.avg_pool1d, 2: tnf.avg_pool2d, 3: tnf.avg_pool3d}

_M32 = 0xFFFFFFFF
_is_compiling = torch.compiler.is_compiling
COMPILE_POLICIES = ("auto", "always", "never")
MAX_RECOMPILES = 2   # later calls that compile again before GRAPH_MODE falls back to eager


def torch_dtype(dtype):
    """The torch dtype of mscore DType ``dtype``."""
    try:
        return _TO_TORCH[dtype]
    except KeyError:
        raise TypeError(f"dtype: expected an mscore dtype such as ms.float32, got "
                        f"{dtype!r}") from None


# -- counter-based hashing for the random streams ---------------------------------------------
def _mul32(x, c):
    """``(x * c) mod 2**32`` for int64 ``x`` in [0, 2**32) without int64 overflow."""
    hi, lo = c >> 16, c & 0xFFFF
    return (((x * hi) & 0xFFFF) * 65536 + x * lo) & _M32


def _mix32(x):
    """A 32-bit integer finaliser (xor-shift-multiply); a bijection of [0, 2**32)."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def _mix32_int(x):
    """:func:`_mix32` on a Python int (used for the per-draw keys, on the host)."""
    x &= _M32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & _M32
    x ^= x >> 15
    x = (x * 0x846CA68B) & _M32
    return x ^ (x >> 16)


class TorchBackend(Backend):
    """mscore's primitive op set, fused ops, autodiff and compilation over PyTorch."""

    name = "torch"

    def __init__(self):
        super().__init__()
        self._device = torch.device("cpu")
        self._const = {}
        self._compile_policy = os.environ.get("MSCORE_TORCH_COMPILE", "auto").lower()
        if self._compile_policy not in COMPILE_POLICIES:
            raise ValueError(f"MSCORE_TORCH_COMPILE: expected one of {COMPILE_POLICIES}, got "
                             f"{self._compile_policy!r}")
        self._compile_backend = os.environ.get("MSCORE_TORCH_COMPILE_BACKEND", "inductor")
        # Direct bindings: the dispatcher calls torch with no wrapper frame.
        t = torch
        for name, fn in (
                ("neg", t.neg), ("abs", t.abs), ("exp", t.exp), ("log", t.log),
                ("sqrt", t.sqrt), ("sin", t.sin), ("cos", t.cos), ("tanh", t.tanh),
                ("sign", t.sign), ("floor", t.floor), ("ceil", t.ceil),
                ("logical_not", t.logical_not), ("isfinite", t.isfinite),
                ("add", t.add), ("sub", t.sub), ("mul", t.mul), ("maximum", t.maximum),
                ("minimum", t.minimum), ("equal", t.eq), ("not_equal", t.ne),
                ("less", t.lt), ("less_equal", t.le), ("greater", t.gt),
                ("greater_equal", t.ge), ("logical_and", t.logical_and),
                ("logical_or", t.logical_or), ("where", t.where), ("matmul", t.matmul),
                ("pow", t.pow), ("reshape", t.reshape), ("transpose", t.permute),
                ("broadcast_to", t.broadcast_to), ("stop_gradient", t.Tensor.detach),
                ("softmax", t.softmax), ("log_softmax", t.log_softmax),
                ("addcmul", t.addcmul), ("relu", t.relu), ("dense", tnf.linear)):
            setattr(self, name, fn)

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

    def graph_mode_eager_reason(self):
        """None when GRAPH_MODE programs go through ``torch.compile`` (see :meth:`compile`),
        else the policy that keeps them eager."""
        if self._compile_policy == "always":
            return None
        return ("torch.compile is off by default (MSCORE_TORCH_COMPILE=always turns it on; "
                "on CPU it did not pay off)")

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
        return a.to(target)

    def stop_gradient(self, a):  # rebound to Tensor.detach in __init__
        """``a.detach()``."""
        return a.detach()

    # -- elementwise (bound to torch functions in __init__; kept for the contract) ------------
    def neg(self, a): return torch.neg(a)                      # noqa: E704
    def abs(self, a): return torch.abs(a)                      # noqa: E704
    def exp(self, a): return torch.exp(a)                      # noqa: E704
    def log(self, a): return torch.log(a)                      # noqa: E704
    def sqrt(self, a): return torch.sqrt(a)                    # noqa: E704
    def sin(self, a): return torch.sin(a)                      # noqa: E704
    def cos(self, a): return torch.cos(a)                      # noqa: E704
    def tanh(self, a): return torch.tanh(a)                    # noqa: E704
    def sign(self, a): return torch.sign(a)                    # noqa: E704
    def floor(self, a): return torch.floor(a)                  # noqa: E704
    def ceil(self, a): return torch.ceil(a)                    # noqa: E704
    def logical_not(self, a): return torch.logical_not(a)      # noqa: E704
    def isfinite(self, a): return torch.isfinite(a)            # noqa: E704
    def add(self, a, b): return torch.add(a, b)                # noqa: E704
    def sub(self, a, b): return torch.sub(a, b)                # noqa: E704
    def mul(self, a, b): return torch.mul(a, b)                # noqa: E704
    def maximum(self, a, b): return torch.maximum(a, b)        # noqa: E704
    def minimum(self, a, b): return torch.minimum(a, b)        # noqa: E704
    def equal(self, a, b): return torch.eq(a, b)               # noqa: E704
    def not_equal(self, a, b): return torch.ne(a, b)           # noqa: E704
    def less(self, a, b): return torch.lt(a, b)                # noqa: E704
    def less_equal(self, a, b): return torch.le(a, b)          # noqa: E704
    def greater(self, a, b): return torch.gt(a, b)             # noqa: E704
    def greater_equal(self, a, b): return torch.ge(a, b)       # noqa: E704
    def logical_and(self, a, b): return torch.logical_and(a, b)  # noqa: E704
    def logical_or(self, a, b): return torch.logical_or(a, b)    # noqa: E704
    def pow(self, a, b): return torch.pow(a, b)                # noqa: E704
    def where(self, cond, x, y): return torch.where(cond, x, y)  # noqa: E704

    def erf(self, a):
        """The error function (half precision computed in float32, rounded once)."""
        if a.dtype in (torch.float16, torch.bfloat16):
            return torch.erf(a.float()).to(a.dtype)
        return torch.erf(a)

    def div(self, a, b):
        """True division of floats; integers divide truncating toward zero (MindSpore Div),
        ``x / 0`` is 0 and ``MIN / -1`` wraps to MIN (the contract: torch would raise, and
        the CPU would trap, on those)."""
        if a.is_floating_point():
            return torch.div(a, b)
        if a.dtype == torch.bool:
            return self.div(a.to(torch.int8), b.to(torch.int8)).to(torch.bool)
        zero, minus_one = b == 0, b == -1
        safe = torch.where(zero | minus_one, torch.ones_like(b), b)
        q = torch.div(a, safe, rounding_mode="trunc")
        q = torch.where(minus_one, torch.neg(a), q)
        return torch.where(zero, torch.zeros_like(q), q)

    # -- reductions ----------------------------------------------------------------------
    def sum(self, a, axis, keepdims):
        """Sum in ``a``'s own dtype (torch would widen integers to int64)."""
        if axis is None:
            if keepdims:
                return torch.sum(a, dim=tuple(range(a.ndim)), keepdim=True, dtype=a.dtype)
            return torch.sum(a, dtype=a.dtype)
        return torch.sum(a, dim=axis, keepdim=keepdims, dtype=a.dtype)

    def max(self, a, axis, keepdims):
        """Largest value over ``axis`` (all axes when None)."""
        return torch.amax(a, dim=tuple(range(a.ndim)) if axis is None else axis,
                          keepdim=keepdims)

    def min(self, a, axis, keepdims):
        """Smallest value over ``axis`` (all axes when None)."""
        return torch.amin(a, dim=tuple(range(a.ndim)) if axis is None else axis,
                          keepdim=keepdims)

    def all(self, a, axis, keepdims):
        """True where every element over ``axis`` is true."""
        if a.dtype != torch.bool:
            a = a != 0
        return torch.all(a, dim=tuple(range(a.ndim)) if axis is None else axis,
                         keepdim=keepdims)

    def any(self, a, axis, keepdims):
        """True where some element over ``axis`` is true."""
        if a.dtype != torch.bool:
            a = a != 0
        return torch.any(a, dim=tuple(range(a.ndim)) if axis is None else axis,
                         keepdim=keepdims)

    def argmax(self, a, axis):
        """Index (int64) of the first maximum along ``axis``."""
        return torch.argmax(a, dim=axis)

    def argmin(self, a, axis):
        """Index (int64) of the first minimum along ``axis``."""
        return torch.argmin(a, dim=axis)

    # -- shape ---------------------------------------------------------------------------
    def reshape(self, a, shape): return torch.reshape(a, shape)            # noqa: E704
    def transpose(self, a, perm): return torch.permute(a, perm)            # noqa: E704
    def broadcast_to(self, a, shape): return torch.broadcast_to(a, shape)  # noqa: E704

    def concat(self, arrays, axis):
        """Join same-dtype tensors along ``axis``."""
        return torch.cat(list(arrays), dim=axis)

    def pad(self, a, pad_width, value):
        """Constant padding; ``pad_width`` holds one ``(before, after)`` pair per axis."""
        flat = []
        for lo, hi in reversed(pad_width):
            flat.extend((int(lo), int(hi)))
        if not any(flat):
            return a
        return tnf.pad(a, flat, mode="constant", value=value)

    # -- indexing ------------------------------------------------------------------------
    def getitem(self, a, index):
        """numpy indexing (negative slice steps included, which torch lacks)."""
        if any(type(i) is slice and i.step is not None and i.step < 0 for i in index):
            a, index = _flip_negative_steps(a, index)
        return a[index]

    def scatter_add(self, a, index, updates):
        """A copy of ``a`` with ``updates`` added at ``a[index]``; repeated indices add up."""
        advanced = any(isinstance(i, torch.Tensor) for i in index)
        negative = any(type(i) is slice and i.step is not None and i.step < 0 for i in index)
        if not advanced and not negative:
            out = a.clone()
            out[index] += updates
            return out
        # Map each selected element to its flat position, then accumulate with index_add_.
        flat_ids = torch.arange(a.numel(), device=a.device).reshape(a.shape)
        picked = self.getitem(flat_ids, index)
        upd = torch.broadcast_to(updates.to(a.dtype), picked.shape).reshape(-1)
        out = a.reshape(-1).clone()
        out.index_add_(0, picked.reshape(-1), upd)
        return out.reshape(a.shape)

    # -- linear algebra, convolution, pooling --------------------------------------------
    def matmul(self, a, b): return torch.matmul(a, b)  # noqa: E704

    def conv(self, x, w, stride, padding, dilation, groups):
        """N-d cross-correlation (N = 1, 2, 3) with torch's convolution kernels."""
        return self._convolve("conv", x, w, None, stride, padding, dilation, groups)

    def _convolve(self, op, x, w, b, stride, padding, dilation, groups):
        nd = w.ndim - 2
        fn = _CONV.get(nd)
        if fn is None:
            raise ValueError(f"{op}: backend 'torch' supports 1-, 2- and 3-d convolution, got "
                             f"{nd}-d")
        sym = _symmetric(padding)
        if sym is None:
            x = self.pad(x, ((0, 0), (0, 0)) + tuple(padding), 0)
            sym = (0,) * nd
        return fn(x, w, b, tuple(stride), sym, tuple(dilation), groups)

    def conv_transpose(self, x, w, stride, padding, output_padding, dilation, groups):
        """N-d transposed convolution (the input-gradient of :meth:`conv`)."""
        nd = w.ndim - 2
        fn = _CONV_T.get(nd)
        if fn is None:
            raise ValueError(f"conv_transpose: backend 'torch' supports 1-, 2- and 3-d, got "
                             f"{nd}-d")
        stride, dilation, output_padding = tuple(stride), tuple(dilation), tuple(output_padding)
        sym = _symmetric(padding)
        if sym is not None and all(op < max(s, d) for op, s, d in
                                   zip(output_padding, stride, dilation)):
            return fn(x, w, None, stride, sym, output_padding, groups, dilation)
        # General case: the full (unpadded) result, cropped by the padding and extended by
        # the output padding (zeros past the full extent, where nothing contributes).
        full = fn(x, w, None, stride, 0, 0, groups, dilation)
        index = [slice(None), slice(None)]
        extend = []
        for ax, ((lo, hi), op) in enumerate(zip(padding, output_padding)):
            size = full.shape[2 + ax]
            stop = size - hi + op
            index.append(slice(lo, min(stop, size)))
            extend.append(max(stop - size, 0))
        out = full[tuple(index)]
        if any(extend):
            out = self.pad(out, ((0, 0), (0, 0)) + tuple((0, e) for e in extend), 0)
        return out

    def max_pool(self, x, kernel, stride, padding):
        """Max over windows; padding counts as -inf."""
        nd = len(kernel)
        sym = _symmetric(padding)
        fn = _MAX_POOL.get(nd)
        if fn is not None and sym is not None and x.is_floating_point() and \
                all(2 * p <= k for p, k in zip(sym, kernel)):
            try:
                return fn(x, tuple(kernel), tuple(stride), sym)
            except NotImplementedError:  # no kernel for this dtype on this device
                pass
        low = -math.inf if x.is_floating_point() else torch.iinfo(x.dtype).min
        win = _windows(self.pad(x, ((0, 0), (0, 0)) + tuple(padding), low), kernel, stride)
        return torch.amax(win, dim=tuple(range(-nd, 0)))

    def avg_pool(self, x, kernel, stride, padding, count_include_pad):
        """Mean over windows; zero padding counted or not by ``count_include_pad``."""
        nd = len(kernel)
        sym = _symmetric(padding)
        fn = _AVG_POOL.get(nd)
        if fn is not None and sym is not None and x.is_floating_point() and \
                all(2 * p <= k for p, k in zip(sym, kernel)):
            try:
                return fn(x, tuple(kernel), tuple(stride), sym, False, bool(count_include_pad))
            except NotImplementedError:  # no kernel for this dtype on this device
                pass
        acc = torch.float64 if not x.is_floating_point() or x.dtype == torch.float64 \
            else torch.float32
        pads = ((0, 0), (0, 0)) + tuple(padding)
        axes = tuple(range(-nd, 0))
        total = torch.sum(_windows(self.pad(x.to(acc), pads, 0), kernel, stride), dim=axes)
        if count_include_pad:
            res = total / math.prod(kernel)
        else:
            ones = torch.ones((1, 1) + tuple(x.shape[2:]), dtype=acc, device=x.device)
            res = total / torch.sum(_windows(self.pad(ones, pads, 0), kernel, stride), dim=axes)
        return res.to(x.dtype)

    # -- fused ops -----------------------------------------------------------------------
    def addcmul(self, a, b, c): return torch.addcmul(a, b, c)          # noqa: E704
    def relu(self, x): return torch.relu(x)                             # noqa: E704
    def dense(self, x, w, b): return tnf.linear(x, w, b)                # noqa: E704
    def gelu(self, x, approximate): return tnf.gelu(x, approximate=approximate)  # noqa: E704

    def foreach_div(self, arrays, scalar):
        """``[a / scalar]`` in one multi-tensor call (``torch._foreach_div``)."""
        return list(torch._foreach_div(list(arrays), scalar))

    def unscale_check(self, arrays, scale):
        """``(arrays / scale, finite)`` in one fused pass, in place (the kernel
        ``torch.amp.GradScaler`` unscales with: multiplies by the float32 reciprocal);
        arrays that share storage or are not contiguous are copied first; float64 arrays are
        divided (two passes)."""
        arrays = list(arrays)
        if any(a.dtype == torch.float64 for a in arrays):
            # The fused kernel's reciprocal is float32: divide float64 exactly instead.
            out = list(torch._foreach_div(arrays, scale))
            return out, torch.stack([torch.isfinite(a).all() for a in out]).all()
        storages = {a.untyped_storage().data_ptr() for a in arrays}
        if len(storages) != len(arrays) or not all(a.is_contiguous() for a in arrays):
            arrays = [a.clone() for a in arrays]
        found = torch.zeros(1, dtype=torch.float32, device=scale.device)
        inverse = torch.reciprocal(scale.to(torch.float32)).reshape(1)
        torch._amp_foreach_non_finite_check_and_unscale_(arrays, found, inverse)
        return arrays, found[0] == 0

    def momentum_update(self, params, moments, grads, lr, momentum, nesterov, inplace=False):
        """Momentum SGD over lists in a few multi-tensor calls (``torch._foreach_*``):
        ``v = momentum * v + g``, ``p = p - lr * v`` (Nesterov: ``g + momentum * v``); with
        ``inplace`` into the given tensors, as ``torch.optim.SGD`` does (three passes on the
        host: ``p += v * -lr`` in one; on CUDA two multi-tensor launches for it instead)."""
        params, moments, grads = list(params), list(moments), list(grads)
        if inplace:
            torch._foreach_mul_(moments, momentum)
            new_moments = moments
        else:
            new_moments = list(torch._foreach_mul(moments, momentum))
        torch._foreach_add_(new_moments, grads)
        step = new_moments
        if nesterov:
            step = torch._foreach_mul(new_moments, momentum)
            torch._foreach_add_(step, grads)
        if inplace and params[0].device.type == "cpu":
            torch._foreach_addcmul_(params, step, [torch.neg(lr)] * len(params))
            return params, new_moments
        step = torch._foreach_mul(step, lr)
        if inplace:
            torch._foreach_sub_(params, step)
            return params, new_moments
        return list(torch._foreach_sub(params, step)), new_moments

    def adam_update(self, params, m, v, grads, lr, beta1, beta2, eps, nesterov,
                    weight_decay=None, inplace=False):
        """Adam over lists in multi-tensor calls (``torch._foreach_*``), out of place or, with
        ``inplace``, into the given tensors as ``torch.optim.Adam(foreach=True)`` does."""
        params, m, v, grads = list(params), list(m), list(v), list(grads)
        fe = torch
        if inplace:
            fe._foreach_mul_(m, beta1)
            fe._foreach_mul_(v, beta2)
            new_m, new_v = m, v
        else:
            new_m = list(fe._foreach_mul(m, beta1))
            new_v = list(fe._foreach_mul(v, beta2))
        fe._foreach_add_(new_m, grads, alpha=1.0 - beta1)
        fe._foreach_addcmul_(new_v, grads, grads, value=1.0 - beta2)
        num = new_m
        if nesterov:
            num = fe._foreach_mul(new_m, beta1)
            fe._foreach_add_(num, grads, alpha=1.0 - beta1)
        denom = fe._foreach_sqrt(new_v)
        fe._foreach_add_(denom, eps)
        update = fe._foreach_div(num, denom)
        if weight_decay is not None:
            fe._foreach_add_(update, fe._foreach_mul(params, weight_decay))
        fe._foreach_mul_(update, lr)
        if inplace:
            fe._foreach_sub_(params, update)
            return params, new_m, new_v
        return list(fe._foreach_sub(params, update)), new_m, new_v

    def conv_bias(self, x, w, b, stride, padding, dilation, groups):
        """``conv`` with the bias added by the convolution kernel itself."""
        return self._convolve("conv_bias", x, w, b, stride, padding, dilation, groups)
    def softmax(self, x, axis): return torch.softmax(x, axis)           # noqa: E704
    def log_softmax(self, x, axis): return torch.log_softmax(x, axis)   # noqa: E704

    def layer_norm(self, x, normalized_shape, weight, bias, eps):
        """``torch.nn.functional.layer_norm``. Inputs narrower than float32 are normalised
        in float32 with float32 parameters and the output rounded once to their dtype
        (MindSpore's rule); otherwise the parameters take the input's dtype."""
        work = torch.float32 if x.dtype.itemsize < 4 else x.dtype
        xc = x if x.dtype == work else x.to(work)
        weight = weight if weight is None or weight.dtype == work else weight.to(work)
        bias = bias if bias is None or bias.dtype == work else bias.to(work)
        out = tnf.layer_norm(xc, tuple(normalized_shape), weight, bias, eps)
        return out if out.dtype == x.dtype else out.to(x.dtype)

    def batch_norm(self, x, running_mean, running_var, weight, bias, training, momentum, eps):
        """Batch normalisation over axis 1: ``(out, new_running_mean, new_running_var)``.

        Functional: the running statistics given are not modified. In training the new ones
        are fresh tensors, ``(1 - momentum) * running + momentum * batch`` with the unbiased
        batch variance (as in MindSpore and torch); otherwise both are None. Half-precision
        inputs normalise with float32 statistics and parameters, as cuDNN does.
        """
        pdt = torch.float64 if x.dtype == torch.float64 else torch.float32

        weight = weight if weight is None or weight.dtype == pdt else weight.to(pdt)
        bias = bias if bias is None or bias.dtype == pdt else bias.to(pdt)
        if running_mean is None:
            return tnf.batch_norm(x, None, None, weight, bias, True, momentum, eps), None, None
        if not training:
            rm = running_mean.detach()
            rv = running_var.detach()
            rm = rm if rm.dtype == pdt else rm.to(pdt)
            rv = rv if rv.dtype == pdt else rv.to(pdt)
            return tnf.batch_norm(x, rm, rv, weight, bias, False, momentum, eps), None, None
        # torch updates the statistics it is handed in place: hand it copies.
        rm = running_mean.detach().to(pdt, copy=True)
        rv = running_var.detach().to(pdt, copy=True)
        out = tnf.batch_norm(x, rm, rv, weight, bias, True, momentum, eps)
        return out, rm.to(running_mean.dtype), rv.to(running_var.dtype)

    def cross_entropy(self, logits, target, ignore_index=-100, reduction="mean",
                      label_smoothing=0.0):
        """``torch.nn.functional.cross_entropy`` of logits (N, C) and class indices (N,)."""
        if target.dtype != torch.int64:
            target = target.long()
        return tnf.cross_entropy(logits, target, ignore_index=ignore_index,
                                 reduction=reduction, label_smoothing=label_smoothing)

    def attention(self, q, k, v, mask, is_causal, scale):
        """``scaled_dot_product_attention``; a boolean mask keeps the True positions, a
        float mask is added to the scores. Causal masking is top-left aligned."""
        if mask is not None:
            if mask.dtype != torch.bool and mask.dtype != q.dtype:
                mask = mask.to(q.dtype)
            if is_causal:  # torch refuses both at once: fold the causal mask in
                lq, lk = q.shape[-2], k.shape[-2]
                causal = torch.ones(lq, lk, dtype=torch.bool, device=q.device).tril()
                if mask.dtype == torch.bool:
                    mask = mask & causal
                else:
                    mask = mask.masked_fill(~causal, -math.inf)
                is_causal = False
        return tnf.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0,
                                                is_causal=bool(is_causal), scale=scale)

    # -- random streams ------------------------------------------------------------------
    def rng_state(self, seed):
        """``int64[2] = [seed, 0]`` on the host (see the module docstring)."""
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed: expected a non-negative int, got {seed!r}")
        return torch.tensor([int(seed) % (1 << 63), 0], dtype=torch.int64)

    def _words(self, state, count):
        """``count`` pseudo-random 32-bit words (int64 tensor) for ``state``."""
        seed, counter = (int(v) for v in state.tolist())
        k1 = _mix32_int(_mix32_int(seed & _M32) ^ (seed >> 32))
        k2 = _mix32_int(_mix32_int(k1 ^ (counter & _M32)) ^ ((counter >> 32) & _M32))
        k3 = _mix32_int(k2 ^ 0x9E3779B9)
        idx = torch.arange(count, dtype=torch.int64, device=self._device)
        return _mix32(_mix32(idx ^ k2) ^ k3)

    @staticmethod
    def _next(state):
        return state + torch.tensor([0, 1], dtype=torch.int64, device=state.device)

    def _unit(self, state, shape, dtype, open_low):
        """Uniform values of ``dtype`` in [0, 1) (or (0, 1] when ``open_low``)."""
        n = math.prod(shape)
        tdt = _TO_TORCH[dtype]
        if tdt == torch.float64:
            w = self._words(state, 2 * n).reshape(2, n) if n else \
                torch.zeros((2, 0), dtype=torch.int64, device=self._device)
            bits, nbits = (w[0] >> 5) * (1 << 26) + (w[1] >> 6), 53
            work = torch.float64
        else:
            nbits = {torch.float16: 11, torch.bfloat16: 8}.get(tdt, 24)
            bits = self._words(state, n) >> (32 - nbits)
            work = torch.float32
        if open_low:
            bits = bits + 1
        return (bits.to(work) * (2.0 ** -nbits)).reshape(tuple(shape))

    def random_uniform(self, state, shape, dtype):
        """``(values in [0, 1), next_state)``."""
        if not dtype.is_floating:
            raise TypeError(f"dtype: random_uniform needs a floating dtype, got {dtype}")
        values = self._unit(state, shape, dtype, False).to(_TO_TORCH[dtype])
        return values, self._next(state)

    def random_normal(self, state, shape, dtype):
        """``(standard normal values, next_state)`` by the Box-Muller transform."""
        if not dtype.is_floating:
            raise TypeError(f"dtype: random_normal needs a floating dtype, got {dtype}")
        work = mdt.float64 if dtype is mdt.float64 else mdt.float32
        n = math.prod(shape)
        u = self._unit(state, (2, n), work, True)
        z = torch.sqrt(-2.0 * torch.log(u[0])) * torch.cos((2.0 * math.pi) * u[1])
        return z.reshape(tuple(shape)).to(_TO_TORCH[dtype]), self._next(state)

    # -- overflow check ------------------------------------------------------------------
    def all_finite(self, arrays):
        """True when no floating array holds inf or nan, with one host synchronisation.

        CUDA: one fused ``torch._foreach_norm(inf)`` launch over all arrays of a device
        (multi-tensor apply). CPU: ``torch.aminmax`` per array (one vectorised pass each;
        inf and nan reach the min or the max), 10x faster there than the foreach norm.
        """
        floats = [a.detach() for a in arrays if a.is_floating_point() and a.numel()]
        if not floats:
            return True
        by_device = {}
        for a in floats:
            by_device.setdefault(a.device, []).append(a)
        flags = []
        for device, group in by_device.items():
            if device.type == "cuda":
                extremes = [n.double() for n in torch._foreach_norm(group, math.inf)]
            else:
                extremes = [torch.stack(torch.aminmax(a)).double() for a in group]
            flags.append(torch.isfinite(torch.cat([e.reshape(-1) for e in extremes])).all())
        ok = flags[0] if len(flags) == 1 else torch.stack([f.cpu() for f in flags]).all()
        return bool(ok.item())

    # -- autodiff ------------------------------------------------------------------------
    def value_and_grad(self, fn, primals, has_aux):
        """``((value, aux), grads)`` of ``fn(*primals)`` by torch autograd.

        Each primal becomes a detached leaf (``requires_grad`` for floating dtypes); ``fn``
        runs under ``torch.enable_grad()``; ``torch.autograd.grad`` gives the gradients, zeros
        for primals the value does not depend on. ``value`` and ``aux`` come back detached.
        """
        if torch.compiler.is_compiling():
            return _func_value_and_grad(fn, primals, has_aux)
        leaves = []
        for p in primals:
            leaf = p.detach()
            if leaf.is_floating_point():
                leaf.requires_grad_(True)
            leaves.append(leaf)
        with torch.enable_grad():
            out = fn(*leaves)
            value, aux = out if has_aux else (out, None)
            wanted = [leaf for leaf in leaves if leaf.requires_grad]
            if wanted and isinstance(value, torch.Tensor) and value.requires_grad:
                found = iter(torch.autograd.grad(value, wanted, allow_unused=True))
            else:
                found = iter([None] * len(wanted))
        grads = []
        for leaf in leaves:
            g = next(found) if leaf.requires_grad else None
            grads.append(torch.zeros_like(leaf, requires_grad=False) if g is None else g)
        if isinstance(value, torch.Tensor):
            value = value.detach()
        return (value, _detach_tree(aux)), grads

    def grad_boundary(self, arrays, vjp):
        """``arrays`` unchanged; on the backward pass ``vjp(cotangents, needed)`` maps the
        outputs' cotangents to the inputs' (a ``torch.autograd.Function``; cells' backward
        hooks use it)."""
        return _GradBoundary.apply(vjp, *arrays)

    # -- compilation ---------------------------------------------------------------------
    def compile(self, fn, donate_argnums=()):
        """``fn`` for GRAPH_MODE: ``torch.compile``d when asked for, else ``fn`` itself.

        ``MSCORE_TORCH_COMPILE`` picks the policy: ``always`` compiles, ``never`` and
        ``auto`` (default) run the program eagerly. ``auto`` is eager because compiling did
        not pay off where it was measured (bench/torch_vs_native.py, MLP 784-512-512-10,
        batch 64): on CPU the first call takes 10-30 s and steps got no faster; on an H100
        the compiled step (one graph, traced once) took 2.32 ms against 2.09 ms eagerly.
        ``MSCORE_TORCH_COMPILE_BACKEND`` names the ``torch.compile`` backend (default
        ``inductor``). Under ``torch.compile`` the gradients come from ``torch.func.grad``,
        so forward, backward and optimizer update trace into one graph. A program that
        fails to compile, or that recompiles on :data:`MAX_RECOMPILES` later calls, runs
        eagerly from then on, with a warning. ``donate_argnums`` is accepted and ignored
        (torch has no buffer donation).
        """
        policy = self._compile_policy
        if policy != "always":
            return fn
        stats = {"graphs": 0}
        traced, counter_globals = _private_trace_counter(fn)
        try:
            inner = self._compile_backend
            if isinstance(inner, str):
                inner = torch._dynamo.lookup_backend(inner)

            def counting_backend(gm, example_inputs, **kwargs):
                stats["graphs"] += 1
                return inner(gm, example_inputs, **kwargs)
            compiled = torch.compile(traced, backend=counting_backend, dynamic=False)
        except Exception as exc:  # an unknown or broken compiler backend
            _warn_eager(exc)
            return fn
        state = {"fn": compiled, "calls": 0, "recompiles": 0}

        def run(*args):
            current = state["fn"]
            if current is fn:
                return fn(*args)
            before = stats["graphs"]
            if counter_globals is not None:
                counter_globals["trace_count"] = 0  # the value dynamo's guard was made with
            try:
                result = current(*args)
            except Exception as exc:
                # Compilation failed, or the program itself raised: run it eagerly. Its own
                # error then surfaces unchanged; a success means the compiler was at fault.
                result = fn(*args)
                _warn_eager(exc)
                state["fn"] = fn
                return result
            state["calls"] += 1
            if counter_globals is not None and stats["graphs"] > before:
                module = sys.modules.get(fn.__module__)
                if module is not None:  # count real traces, as the module expects
                    module.trace_count = getattr(module, "trace_count", 0) + 1
            if state["calls"] > 1 and stats["graphs"] > before:
                state["recompiles"] += 1
                if state["recompiles"] >= MAX_RECOMPILES:
                    # Something the program reads changes on every call (a guard fails):
                    # compiling again each step costs far more than it saves.
                    _warn_eager(RuntimeError(f"the program was recompiled on "
                                             f"{state['recompiles']} later calls"))
                    state["fn"] = fn
            return result

        run.__wrapped__ = fn
        run.compile_stats = stats
        return run


def _private_trace_counter(fn):
    """``fn`` with a private copy of its globals when it bumps a global ``trace_count``
    (mscore.common.graph's pure step does): dynamo guards on every global int a program
    reads, so a counter that changes on every call would recompile the program on every
    call. The copy's counter is reset to 0 before each call; :meth:`TorchBackend.compile`
    adds the real traces to the module's counter instead. Returns ``(fn, None)`` otherwise.
    """
    code = getattr(fn, "__code__", None)
    if code is None or "trace_count" not in code.co_names:
        return fn, None
    private = dict(fn.__globals__)
    clone = types.FunctionType(code, private, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone, private


def _warn_eager(exc):
    warnings.warn(f"torch.compile failed ({type(exc).__name__}: {str(exc)[:300]}); running "
                  f"this GRAPH_MODE program eagerly", RuntimeWarning, stacklevel=3)


# numpy dtypes torch.from_numpy takes directly (bfloat16 goes through a 16-bit view).
_NP_OK = frozenset(np.dtype(d) for d in (np.float16, np.float32, np.float64, np.int8,
                                         np.int16, np.int32, np.int64, np.uint8, np.bool_))


def _symmetric(padding):
    """The per-axis padding when every ``(before, after)`` pair is equal, else None."""
    out = []
    for lo, hi in padding:
        if lo != hi:
            return None
        out.append(int(lo))
    return tuple(out)


def _windows(x, kernel, stride):
    """A view (N, C, *out, *kernel) of the pooling windows of an already-padded ``x``."""
    for ax, (k, s) in enumerate(zip(kernel, stride)):
        if x.shape[2 + ax] < k:
            raise ValueError(f"pool: kernel {tuple(kernel)} does not fit the padded input "
                             f"{tuple(x.shape[2:])}")
        x = x.unfold(2 + ax, k, s)  # appends this window axis last, so they stay in order
    return x


def _flip_negative_steps(a, index):
    """Rewrite slices with a negative step as flips plus positive-step slices."""
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    new, axis = [], 0
    flips = []
    for item in index:
        if item is Ellipsis:
            axis += a.ndim - consumed
            new.append(item)
            continue
        if item is None:
            new.append(item)
            continue
        if type(item) is slice and item.step is not None and item.step < 0:
            size = a.shape[axis]
            start, stop, step = item.indices(size)
            count = len(range(start, stop, step))
            flips.append(axis)
            # Element j of the result is a[start + j*step] = flipped[size-1-start - j*step].
            first = size - 1 - start
            new.append(slice(first, first + count * (-step), -step) if count else slice(0, 0))
        else:
            new.append(item)
        axis += 1
    return torch.flip(a, flips), tuple(new)


class _GradBoundary(torch.autograd.Function):
    """Identity forward; backward calls the Python ``vjp`` given as the first input."""

    @staticmethod
    def forward(vjp, *arrays):
        return tuple(a.view_as(a) for a in arrays)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.vjp = inputs[0]

    @staticmethod
    def backward(ctx, *cotangents):
        needed = list(ctx.needs_input_grad[1:])
        grads = ctx.vjp(list(cotangents), needed)
        return (None, *[g if n else None for g, n in zip(grads, needed)])


def _func_value_and_grad(fn, primals, has_aux):
    """:meth:`TorchBackend.value_and_grad` through ``torch.func.grad`` while ``torch.compile``
    traces: dynamo traces it into the step's graph, where ``torch.autograd.grad`` would
    break the graph in two."""
    diff = [i for i, p in enumerate(primals) if p.is_floating_point()]

    def inner(*values):
        args = list(primals)
        for i, v in zip(diff, values):
            args[i] = v
        out = fn(*args)
        value, aux = out if has_aux else (out, None)
        return value, (value, aux)

    grads = [torch.zeros_like(p) for p in primals]
    if diff:
        found, (value, aux) = torch.func.grad(inner, argnums=tuple(range(len(diff))),
                                              has_aux=True)(*(primals[i] for i in diff))
        for i, g in zip(diff, found):
            grads[i] = g
    else:
        value, (_, aux) = inner()
    return (value.detach() if isinstance(value, torch.Tensor) else value,
            _detach_tree(aux)), grads


def _detach_tree(x):
    if isinstance(x, torch.Tensor):
        return x.detach()
    if isinstance(x, (list, tuple)):
        return type(x)(_detach_tree(v) for v in x)
    return x


def _saturating_cast(a, target):
    """Float to integer truncating toward zero; out-of-range values saturate, NaN gives 0
    (a plain ``.to`` is undefined there and differs between CPU and CUDA)."""
    info = torch.iinfo(target)
    t = torch.trunc(a.float() if a.element_size() < 4 else a)
    # info.max + 1 is a power of two, exact in every float dtype.
    high, low = t >= float(info.max) + 1, t < float(info.min)
    out = torch.where(high | low | torch.isnan(t), torch.zeros_like(t), t).to(target)
    out = torch.where(high, torch.full_like(out, info.max), out)
    return torch.where(low, torch.full_like(out, info.min), out)
