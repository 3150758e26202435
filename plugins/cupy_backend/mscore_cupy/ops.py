"""The CuPy backend's primitives beyond the array-module ones: matmul and where details,
scatter-add through CUDA atomics, and the overflow check as one kernel over all arrays."""
from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np

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


class CupyOps:
    """``matmul``, ``where``, scatter-add and the fused overflow check."""

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
