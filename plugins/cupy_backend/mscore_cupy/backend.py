"""The CuPy backend: :class:`ArrayModuleBackend` over ``cupy``, plus what CUDA needs.

Everything that is plain array-module code (elementwise math, reductions, shape ops, the
im2col/GEMM convolution and strided-window pooling, which need no cuDNN) is inherited. This
class adds device selection, host transfer, scatter-add through CUDA atomics, a counter-based
random stream computed on the device, and the overflow check as one kernel over all arrays.

Streams: every op is queued on CuPy's *current* stream of the current device (the null stream
unless the caller entered a ``cupy.cuda.Stream``), so ops run in program order. Host reads
(:meth:`to_numpy`, :meth:`all_finite`) wait for that stream; :meth:`synchronize` waits for the
whole device.

For tests without a GPU the class also runs with ``xp=numpy`` standing in for CuPy: the code
that decides *what* runs on the device (the overflow-check table, the scatter dtype plan, the
random stream, argument validation) is the same, only the CUDA calls are replaced.
"""
from __future__ import annotations

import ctypes
import math
from collections import OrderedDict

import ml_dtypes
import numpy as np

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.common import dtype as mdt

# -- counter-based random stream (splitmix64) ----------------------------------------------------
# A state is an int64 array [seed, counter] on the device (int64 so that it is a dtype mscore
# knows and can live in a Parameter; the words are read as uint64). Draw k reads element i of
# the sequence mix(key(seed, counter) + (i + 1) * GOLDEN); the counter then moves on by one. All
# of it is elementwise array code, so it runs on the device without a host round trip and gives
# bit-identical uniforms under numpy.
_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_MIX1 = _U64(0xBF58476D1CE4E5B9)
_MIX2 = _U64(0x94D049BB133111EB)
_S30, _S27, _S31 = _U64(30), _U64(27), _U64(31)


def _mix(z):
    """The splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


def _precision(np_dtype):
    """Significand bits (with the implicit one) of a floating numpy dtype."""
    return int(ml_dtypes.finfo(np_dtype).nmant) + 1


# -- the fused overflow check ---------------------------------------------------------------------
# One launch covers every array: the table holds one row (pointer, element count, element width,
# exponent mask) per floating array; grid row y walks arrays y, y + gridDim.y, ...; inside an
# array the x blocks stride over the elements so that neighbouring threads read neighbouring
# words. A value is inf or nan exactly when all its exponent bits are set, which is one integer
# test for float16, bfloat16, float32 and float64 alike. One int flag is or-ed on the device and
# read once on the host.
_FINITE_KERNEL_NAME = "mscore_any_nonfinite"
_FINITE_KERNEL_SOURCE = r"""
template <typename W>
__device__ __forceinline__ int mscore_scan(const W* __restrict__ p, unsigned long long n,
                                           W mask, unsigned long long i,
                                           unsigned long long step) {
    int bad = 0;
    for (; i < n; i += step) {
        bad |= (p[i] & mask) == mask;
    }
    return bad;
}

extern "C" __global__ void mscore_any_nonfinite(const unsigned long long* __restrict__ table,
                                                int rows, int* __restrict__ flag) {
    const unsigned long long step = (unsigned long long)blockDim.x * gridDim.x;
    const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        const unsigned long long* row = table + 4 * (unsigned long long)r;
        const unsigned long long ptr = row[0], n = row[1], width = row[2], mask = row[3];
        int bad;
        if (width == 2) {
            bad = mscore_scan((const unsigned short*)ptr, n, (unsigned short)mask, first, step);
        } else if (width == 4) {
            bad = mscore_scan((const unsigned int*)ptr, n, (unsigned int)mask, first, step);
        } else {
            bad = mscore_scan((const unsigned long long*)ptr, n, mask, first, step);
        }
        if (bad) {
            atomicOr(flag, 1);
        }
    }
}
"""
_FINITE_THREADS = 256
_FINITE_MAX_BLOCKS_X = 1024
_FINITE_TABLE_CACHE = 8   # device copies of recent tables (the memory pool reuses pointers)

# Dtypes whose CUDA atomicAdd (behind cupy.add.at) accumulates as numpy's add.at does (int64
# through the unsigned 64-bit atomic: two's-complement addition gives the same bits). Narrower
# types are accumulated in a wider one and cast back, which gives numpy's results (modular for
# integers, logical or for bool; float16/bfloat16 round once instead of once per update).
_SCATTER_NATIVE = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.uint32,
                                                  np.int64, np.uint64))


def scatter_accumulator(np_dtype):
    """The dtype :meth:`CupyBackend.scatter_add` accumulates ``np_dtype`` in."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype in _SCATTER_NATIVE:
        return np_dtype
    if np_dtype == np.dtype(ml_dtypes.bfloat16) or np_dtype.kind == "f":
        return np.dtype(np.float32)
    return np.dtype(np.int32)   # bool, int8, int16, uint8, uint16


# Momentum SGD for one element (lr and m are 0-d arrays, broadcast by the kernel).
_MOMENTUM_KERNEL_BODY = """
T nv = m * v + g;
v_out = nv;
p_out = p - lr * (nesterov ? g + m * nv : nv);
"""
_MOMENTUM_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))
# Adam for one element (lr and wd are 0-d arrays; b1, b2, eps scalars of the same type).
_ADAM_KERNEL_BODY = """
T nm = b1 * m + (T(1) - b1) * g;
T nv = b2 * v + (T(1) - b2) * g * g;
T num = nesterov ? b1 * nm + (T(1) - b1) * g : nm;
T update = num / (sqrt(nv) + eps);
if (decay) {
    update += wd * p;
}
p_out = p - lr * update;
m_out = nm;
v_out = nv;
"""
_ADAM_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64))


class CupyBackend(ArrayModuleBackend):
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
        from .plugin import bfloat16_supported
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
        self._device_id = 0
        self.device = "GPU:0"
        if not self._host:
            self._use_device(0)

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

    # -- linear algebra ------------------------------------------------------------------------
    def matmul(self, a, b):
        """cuBLAS GEMM; float16 runs natively (float32 accumulation in cuBLAS), bfloat16 too
        where CuPy's GEMM takes it, otherwise through float32."""
        if self._host:
            return super().matmul(a, b)
        if a.dtype == np.dtype(ml_dtypes.bfloat16):
            if self._bf16_matmul is None:
                try:
                    out = self.xp.matmul(a, b)
                    self._bf16_matmul = True
                    return out
                except (TypeError, NotImplementedError, ValueError):
                    self._bf16_matmul = False
            if not self._bf16_matmul:
                return self.xp.matmul(a.astype(np.float32),
                                      b.astype(np.float32)).astype(a.dtype)
        return self.xp.matmul(a, b)

    def where(self, cond, x, y):
        out = self.xp.where(cond, x, y)
        if out.dtype != x.dtype and x.dtype == y.dtype:  # CuPy 14 widens bfloat16 here
            out = out.astype(x.dtype)
        return out

    # -- indexing ------------------------------------------------------------------------------
    def _add_at(self, out, index, updates):
        acc_dtype = scatter_accumulator(out.dtype)
        if acc_dtype == out.dtype:
            self._scatter(out, index, updates.astype(acc_dtype, copy=False))
            return
        acc = out.astype(acc_dtype)
        self._scatter(acc, index, updates.astype(acc_dtype))
        if out.dtype == np.bool_:
            out[...] = acc != 0
        else:
            out[...] = acc.astype(out.dtype)

    def _scatter(self, out, index, updates):
        self.xp.add.at(out, index, updates)   # CUDA atomicAdd under CuPy

    # -- random --------------------------------------------------------------------------------
    def rng_state(self, seed):
        """``int64[2] = [seed mod 2**63, 0]`` on the current device."""
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed: expected a non-negative int, got {seed!r}")
        return self.xp.asarray(np.array([int(seed) % (1 << 63), 0], dtype=np.int64))

    def _stream_bits(self, state, count):
        """``count`` uint64 words of the stream at ``state`` (no host round trip)."""
        if tuple(state.shape) != (2,) or state.dtype != np.int64:
            raise ValueError(f"state: expected an int64 array of shape (2,) from rng_state, "
                             f"got {state.dtype} {tuple(state.shape)}")
        words = state.view(np.uint64)
        key = _mix(_mix(words[0:1] + _GOLDEN) ^ (words[1:2] * _MIX1 + _MIX2))
        idx = self.xp.arange(1, count + 1, dtype=np.uint64)
        return _mix(key + idx * _GOLDEN)

    def _advance(self, state):
        nxt = state.copy()
        nxt[1:] += np.int64(1)
        return nxt

    def _float_target(self, dtype, op):
        if not getattr(dtype, "is_floating", False):
            raise TypeError(f"dtype: {op} draws floating values, got {dtype!r}")
        return self.native_dtype(dtype)

    @staticmethod
    def _unit(bits, precision):
        """Multiples of 2**-precision in [0, 1) from the top bits (exact in float64)."""
        return (bits >> _U64(64 - precision)).astype(np.float64) * (2.0 ** -precision)

    def random_uniform(self, state, shape, dtype):
        target = self._float_target(dtype, "random_uniform")
        shape = tuple(int(s) for s in shape)
        bits = self._stream_bits(state, math.prod(shape))
        # Rounded to the target's precision first, so the cast is exact and never reaches 1.
        values = self._unit(bits, _precision(target)).reshape(shape).astype(target)
        return values, self._advance(state)

    def random_normal(self, state, shape, dtype):
        target = self._float_target(dtype, "random_normal")
        shape = tuple(int(s) for s in shape)
        n = math.prod(shape)
        bits = self._stream_bits(state, 2 * n).reshape(n, 2)
        u1 = 1.0 - self._unit(bits[:, 0], 53)          # (0, 1]: the log stays finite
        u2 = self._unit(bits[:, 1], 53)
        xp = self.xp
        values = xp.sqrt(-2.0 * xp.log(u1)) * xp.cos((2.0 * math.pi) * u2)  # Box-Muller
        return values.reshape(shape).astype(target), self._advance(state)

    def adam_update(self, params, m, v, grads, lr, beta1, beta2, eps, nesterov,
                    weight_decay=None, inplace=False):
        """Adam with one fused elementwise kernel per parameter (float32/float64; the stand-in
        and other dtypes take the inherited version)."""
        params, m, v, grads = list(params), list(m), list(v), list(grads)
        if self._host or not params or params[0].dtype not in _ADAM_DTYPES:
            return super().adam_update(params, m, v, grads, lr, beta1, beta2, eps, nesterov,
                                       weight_decay, inplace)
        if self._adam_kernel is None:
            self._adam_kernel = self.xp.ElementwiseKernel(
                "T p, T m, T v, T g, T lr, T wd, T b1, T b2, T eps, bool nesterov, bool decay",
                "T p_out, T m_out, T v_out", _ADAM_KERNEL_BODY, "mscore_adam_update")
        decay = weight_decay is not None
        wd = weight_decay if decay else lr    # unread without decay
        new_p, new_m, new_v = [], [], []
        for p, mi, vi, g in zip(params, m, v, grads):
            outs = (p, mi, vi) if inplace else ()   # each element is read before written
            p_out, m_out, v_out = self._adam_kernel(p, mi, vi, g, lr, wd, beta1, beta2, eps,
                                                    bool(nesterov), decay, *outs)
            new_p.append(p_out)
            new_m.append(m_out)
            new_v.append(v_out)
        return new_p, new_m, new_v

    def addcmul(self, a, b, c):
        """``a + b * c`` as one fused elementwise kernel (broadcasting); the stand-in and
        dtypes the kernel does not cover take two passes."""
        if self._host or a.dtype not in _MOMENTUM_DTYPES or not a.dtype == b.dtype == c.dtype:
            return self.xp.add(a, self.xp.multiply(b, c))
        if self._addcmul_kernel is None:
            self._addcmul_kernel = self.xp.ElementwiseKernel(
                "T a, T b, T c", "T out", "out = a + b * c", "mscore_addcmul")
        return self._addcmul_kernel(a, b, c)

    # -- multi-array updates ---------------------------------------------------------------------
    def momentum_update(self, params, moments, grads, lr, momentum, nesterov, inplace=False):
        """Momentum SGD with one fused elementwise kernel per parameter (both results in one
        launch, written over the inputs with ``inplace``); the numpy stand-in and dtypes the
        kernel does not cover take the inherited four-pass version."""
        params, moments, grads = list(params), list(moments), list(grads)
        if self._host or not params or params[0].dtype not in _MOMENTUM_DTYPES:
            return super().momentum_update(params, moments, grads, lr, momentum, nesterov,
                                           inplace)
        if self._momentum_kernel is None:
            self._momentum_kernel = self.xp.ElementwiseKernel(
                "T p, T v, T g, T lr, T m, bool nesterov", "T p_out, T v_out",
                _MOMENTUM_KERNEL_BODY, "mscore_momentum_update")
        new_params, new_moments = [], []
        for p, v, g in zip(params, moments, grads):
            outs = (p, v) if inplace else ()   # each element is read before it is written
            p_out, v_out = self._momentum_kernel(p, v, g, lr, momentum, bool(nesterov), *outs)
            new_params.append(p_out)
            new_moments.append(v_out)
        return new_params, new_moments

    # -- overflow check ------------------------------------------------------------------------
    def finite_table(self, arrays):
        """``(table, keep)``: one uint64 row (pointer, count, width, exponent mask) per
        non-empty floating array, and the arrays the pointers belong to (contiguous copies of
        strided ones), which must stay alive until the check has run."""
        rows, keep = [], []
        xp = self.xp
        for a in arrays:
            if not isinstance(a, xp.ndarray):
                a = xp.asarray(a)
            elif not self._host and a.device.id != self._device_id:
                raise ValueError(f"arrays: all_finite runs on {self.device}, got an array on "
                                 f"GPU:{a.device.id}")
            rule = self._finite_rule.get(a.dtype)
            if rule is None or a.size == 0:   # integers and bool are always finite
                continue
            if not (a.flags.c_contiguous or a.flags.f_contiguous):
                a = xp.ascontiguousarray(a)
            keep.append(a)
            ptr = a.ctypes.data if self._host else a.data.ptr
            rows.append((ptr, a.size, rule[0], rule[1]))
        return np.array(rows, dtype=np.uint64).reshape(len(rows), 4), keep

    def all_finite(self, arrays):
        """True when no array holds inf or nan: one kernel launch over all of them and one
        host synchronisation (reading the flag), whatever their number and dtypes."""
        table, keep = self.finite_table(arrays)
        if len(table) == 0:
            return True
        if self._host:
            return not _scan_table_on_host(table)
        xp = self.xp
        device_table = self._device_table(table)
        flag = xp.zeros(1, dtype=np.int32)
        if self._finite_kernel is None:
            self._finite_kernel = xp.RawKernel(_FINITE_KERNEL_SOURCE, _FINITE_KERNEL_NAME)
        longest = int(table[:, 1].max())
        blocks_x = max(1, min(_FINITE_MAX_BLOCKS_X, -(-longest // (_FINITE_THREADS * 8))))
        blocks_y = min(len(table), 65535)
        self._finite_kernel((blocks_x, blocks_y), (_FINITE_THREADS,),
                            (device_table, np.int32(len(table)), flag))
        found = int(flag.get()[0])  # the one synchronisation; the pointers in keep were alive
        del keep
        return found == 0

    def _device_table(self, table):
        """The table on the device; a cache keyed by its bytes skips the upload when the
        memory pool hands out the same gradient buffers again (the usual training step)."""
        key = (self._device_id, table.tobytes())
        cached = self._finite_tables.get(key)
        if cached is not None:
            self._finite_tables.move_to_end(key)
            return cached
        device_table = self.xp.asarray(table)
        self._finite_tables[key] = device_table
        if len(self._finite_tables) > _FINITE_TABLE_CACHE:
            self._finite_tables.popitem(last=False)
        return device_table


def _scan_table_on_host(table):
    """What the kernel computes, over host memory: any element with all exponent bits set."""
    for ptr, count, width, mask in table.tolist():
        raw = (ctypes.c_char * (count * width)).from_address(ptr)
        words = np.frombuffer(raw, dtype=np.dtype(f"<u{width}"))
        m = words.dtype.type(mask)
        if np.any((words & m) == m):
            return True
    return False

