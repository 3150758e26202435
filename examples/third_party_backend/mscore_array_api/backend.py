"""The primitive op set of mscore written against the Python array API standard.

Every method takes and returns ``array_api_strict`` arrays. Where the standard has no such
operation (convolution, pooling, padding, integer-array indexing with slices, scatter-add, erf)
the op is composed from standard ones; only index bookkeeping (and erf) touches the host.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from mscore.common import dtype as mdt
from mscore.plugin.backend import Backend
from mscore.plugin.rules import sign_of_nan_and_zeros_positive


class ArrayAPIBackend(Backend):
    """mscore's primitive ops over an array API namespace (``array_api_strict``)."""

    name = "array_api_strict"

    def __init__(self, xp=None):
        super().__init__()
        if xp is None:
            import array_api_strict as xp
        self.xp = xp
        self._dtypes = [(mdt.float32, xp.float32), (mdt.float64, xp.float64),
                        (mdt.int8, xp.int8), (mdt.int16, xp.int16), (mdt.int32, xp.int32),
                        (mdt.int64, xp.int64), (mdt.uint8, xp.uint8), (mdt.bool_, xp.bool)]

    # -- dtypes ------------------------------------------------------------------------
    def native_dtype(self, dtype):
        """The namespace's dtype for an mscore DType (TypeError when not supported)."""
        for ms_dt, native in self._dtypes:
            if ms_dt is dtype:
                return native
        raise TypeError(f"dtype: {dtype} is not supported by the array_api_strict backend "
                        f"(the array API standard has no such type)")

    def dtype(self, a):
        for ms_dt, native in self._dtypes:
            if a.dtype == native:
                return ms_dt
        raise TypeError(f"array_api_strict backend: unknown array dtype {a.dtype}")

    # -- creation and transfer -----------------------------------------------------------
    def from_numpy(self, array, dtype=None):
        array = np.asarray(array)
        target = mdt.from_numpy_dtype(array.dtype) if dtype is None else dtype
        native = self.native_dtype(target)
        return self.xp.asarray(np.array(array, dtype=target.np_dtype, copy=True), dtype=native)

    def to_numpy(self, a):
        return np.array(np.from_dlpack(a), copy=True)

    def full(self, shape, value, dtype):
        dt = dtype if isinstance(dtype, mdt.DType) else mdt.as_dtype(dtype)
        value = bool(value) if dt.is_bool else (int(value) if dt.is_integer else float(value))
        return self.xp.full(tuple(shape), value, dtype=self.native_dtype(dt))

    def arange(self, start, stop, step, dtype):
        return self.xp.arange(start, stop, step, dtype=self.native_dtype(dtype))

    def shape(self, a):
        return tuple(a.shape)

    def cast(self, a, dtype):
        native = self.native_dtype(dtype)
        if a.dtype == native:
            return a
        if self.xp.isdtype(a.dtype, "real floating") and self.xp.isdtype(native, "integral"):
            return self._saturating_cast(a, native)
        return self.xp.astype(a, native)

    def _saturating_cast(self, a, native):
        """Float to integer: truncate, saturate at the integer range, NaN to 0 (the contract;
        the array API leaves out-of-range casts undefined)."""
        xp = self.xp
        info = xp.iinfo(native)
        t = xp.trunc(a)
        high, low, nan = t >= float(info.max) + 1, t < float(info.min), xp.isnan(t)
        out = xp.astype(xp.where(high | low | nan, xp.zeros_like(t), t), native)
        out = xp.where(high, xp.full_like(out, info.max), out)
        return xp.where(low, xp.full_like(out, info.min), out)

    # -- elementwise -----------------------------------------------------------------------
    def neg(self, a): return self.xp.negative(a)
    def abs(self, a): return self.xp.abs(a)
    def exp(self, a): return self.xp.exp(a)
    def log(self, a): return self.xp.log(a)
    def sqrt(self, a): return self.xp.sqrt(a)
    def sin(self, a): return self.xp.sin(a)
    def cos(self, a): return self.xp.cos(a)
    def tanh(self, a): return self.xp.tanh(a)

    def sign(self, a):
        """-1, 0 or 1; a float NaN or either zero gives +0 (MindSpore's sign; the array API's
        gives NaN for NaN)."""
        xp = self.xp
        out = xp.sign(a)
        if not xp.isdtype(out.dtype, "real floating"):
            return out
        return sign_of_nan_and_zeros_positive(xp, out)

    def floor(self, a): return self.xp.floor(a)
    def ceil(self, a): return self.xp.ceil(a)
    def logical_not(self, a): return self.xp.logical_not(a)
    def isfinite(self, a): return self.xp.isfinite(a)

    def erf(self, a):
        # Not in the array API standard: computed on the host, exactly rounded per element.
        host = self.to_numpy(a).astype(np.float64)
        values = np.vectorize(math.erf, otypes=[np.float64])(host) if host.size else host
        return self.xp.asarray(values.astype(host.dtype), dtype=a.dtype)

    def add(self, a, b): return self.xp.add(a, b)
    def sub(self, a, b): return self.xp.subtract(a, b)
    def mul(self, a, b): return self.xp.multiply(a, b)
    def pow(self, a, b): return self.xp.pow(a, b)
    def maximum(self, a, b): return self.xp.maximum(a, b)
    def minimum(self, a, b): return self.xp.minimum(a, b)
    def equal(self, a, b): return self.xp.equal(a, b)
    def not_equal(self, a, b): return self.xp.not_equal(a, b)
    def less(self, a, b): return self.xp.less(a, b)
    def less_equal(self, a, b): return self.xp.less_equal(a, b)
    def greater(self, a, b): return self.xp.greater(a, b)
    def greater_equal(self, a, b): return self.xp.greater_equal(a, b)
    def logical_and(self, a, b): return self.xp.logical_and(a, b)
    def logical_or(self, a, b): return self.xp.logical_or(a, b)

    def div(self, a, b):
        xp = self.xp
        if xp.isdtype(a.dtype, "integral"):
            # Integer division truncates toward zero (MindSpore's Div), from floor division
            # of the magnitudes, taken unsigned: abs(MIN) wraps to MIN in the signed dtype.
            dtype = a.dtype
            magnitude = {xp.int8: xp.uint8, xp.int16: xp.uint16, xp.int32: xp.uint32,
                         xp.int64: xp.uint64}.get(dtype, dtype)
            q = xp.floor_divide(xp.astype(xp.abs(a), magnitude), xp.astype(xp.abs(b), magnitude))
            return xp.multiply(xp.astype(q, dtype), xp.multiply(xp.sign(a), xp.sign(b)))
        return xp.divide(a, b)

    def where(self, cond, x, y):
        return self.xp.where(cond, x, y)

    # -- reductions ------------------------------------------------------------------------
    def sum(self, a, axis, keepdims):
        return self.xp.sum(a, axis=axis, keepdims=keepdims, dtype=a.dtype)

    def max(self, a, axis, keepdims):
        return self.xp.max(a, axis=axis, keepdims=keepdims)

    def min(self, a, axis, keepdims):
        return self.xp.min(a, axis=axis, keepdims=keepdims)

    def all(self, a, axis, keepdims):
        return self.xp.all(a, axis=axis, keepdims=keepdims)

    def any(self, a, axis, keepdims):
        return self.xp.any(a, axis=axis, keepdims=keepdims)

    def argmax(self, a, axis):
        return self.xp.astype(self.xp.argmax(a, axis=axis), self.xp.int64)

    def argmin(self, a, axis):
        return self.xp.astype(self.xp.argmin(a, axis=axis), self.xp.int64)

    # -- shape -----------------------------------------------------------------------------
    def reshape(self, a, shape): return self.xp.reshape(a, tuple(shape))
    def transpose(self, a, perm): return self.xp.permute_dims(a, tuple(perm))
    def broadcast_to(self, a, shape): return self.xp.broadcast_to(a, tuple(shape))

    def concat(self, arrays, axis):
        return self.xp.concat(list(arrays), axis=axis)

    def pad(self, a, pad_width, value):
        if not any(lo or hi for lo, hi in pad_width):
            return a
        shape = tuple(s + lo + hi for s, (lo, hi) in zip(a.shape, pad_width))
        out = self.full(shape, value, self.dtype(a))
        out[tuple(slice(lo, lo + s) for s, (lo, _) in zip(a.shape, pad_width))] = a
        return out

    # -- indexing --------------------------------------------------------------------------
    def _is_array(self, item):
        return hasattr(item, "dtype") and hasattr(item, "shape")

    def _plan(self, shape, index):
        """Flat positions of ``x[index]`` for an ``x`` of ``shape``, computed on the host
        from the indices alone (numpy's advanced-indexing rules)."""
        host = tuple(self.to_numpy(i) if self._is_array(i) else i for i in index)
        return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)[host]

    def getitem(self, a, index):
        if not any(self._is_array(i) for i in index):
            if Ellipsis not in index:
                index = tuple(index) + (Ellipsis,)  # the standard wants every axis named
            return a[index]
        flat = self._plan(a.shape, index)
        taken = self.xp.take(self.xp.reshape(a, (-1,)), self.xp.asarray(flat.reshape(-1)),
                             axis=0)
        return self.xp.reshape(taken, flat.shape)

    def scatter_add(self, a, index, updates):
        xp = self.xp
        flat = self._plan(a.shape, index)
        upd = xp.reshape(xp.broadcast_to(updates, flat.shape), (-1,))
        positions = flat.reshape(-1)
        unique, inverse = np.unique(positions, return_inverse=True)
        if unique.size == positions.size:   # no repeats: a permutation of the updates
            sums = xp.take(upd, xp.asarray(np.argsort(inverse)), axis=0)
        else:                               # repeats accumulate: one-hot rows sum them
            onehot = (inverse[None, :] == np.arange(unique.size)[:, None])
            sums = xp.matmul(xp.asarray(onehot.astype(self.to_numpy(upd).dtype)), upd)
        lookup = np.full(math.prod(a.shape), unique.size, dtype=np.int64)
        lookup[unique] = np.arange(unique.size)
        padded = xp.concat([sums, xp.zeros((1,), dtype=a.dtype)])
        added = xp.take(padded, xp.asarray(lookup), axis=0)
        return xp.reshape(xp.add(xp.reshape(a, (-1,)), added), a.shape)

    # -- linear algebra ------------------------------------------------------------------
    def matmul(self, a, b):
        return self.xp.matmul(a, b)

    # -- convolution and pooling ------------------------------------------------------------
    @staticmethod
    def _out_size(spatial, kernel, stride, dilation):
        out = tuple((s - d * (k - 1) - 1) // st + 1
                    for s, k, st, d in zip(spatial, kernel, stride, dilation))
        if any(o <= 0 for o in out):
            raise ValueError(f"conv/pool: kernel {tuple(kernel)} (dilation "
                             f"{tuple(dilation)}) does not fit the padded input "
                             f"{tuple(spatial)}")
        return out

    @staticmethod
    def _window(offset, dilation, stride, out):
        """The strided slice of the padded input read by kernel position ``offset``."""
        return (slice(None), slice(None)) + tuple(
            slice(o * d, o * d + st * (m - 1) + 1, st)
            for o, d, st, m in zip(offset, dilation, stride, out))

    def conv(self, x, w, stride, padding, dilation, groups):
        xp = self.xp
        x = self.pad(x, ((0, 0), (0, 0)) + tuple(padding), 0)
        n, _ = x.shape[:2]
        o, cg = w.shape[:2]
        kernel = tuple(w.shape[2:])
        nd = len(kernel)
        out = self._out_size(x.shape[2:], kernel, stride, dilation)
        g, og, p = groups, o // groups, math.prod(out)
        wg = xp.reshape(w, (g, og, cg) + kernel)
        acc = None
        for offset in itertools.product(*(range(k) for k in kernel)):
            cols = xp.reshape(x[self._window(offset, dilation, stride, out)], (n, g, cg, p))
            cols = xp.reshape(xp.permute_dims(cols, (1, 2, 0, 3)), (g, cg, n * p))
            term = xp.matmul(wg[(slice(None),) * 3 + offset], cols)      # (g, og, n*p)
            acc = term if acc is None else xp.add(acc, term)
        res = xp.reshape(acc, (g, og, n) + out)
        res = xp.permute_dims(res, (2, 0, 1) + tuple(range(3, 3 + nd)))
        return xp.reshape(res, (n, o) + out)

    def conv_transpose(self, x, w, stride, padding, output_padding, dilation, groups):
        xp = self.xp
        n, cin = x.shape[:2]
        kernel = tuple(w.shape[2:])
        nd = len(kernel)
        og, g = w.shape[1], groups
        # Spread the input by the stride, pad by the kernel's reach, then a plain conv with
        # the spatially flipped, in/out-swapped weight.
        spread = tuple((s - 1) * st + 1 for s, st in zip(x.shape[2:], stride))
        xd = xp.zeros((n, cin) + spread, dtype=x.dtype)
        xd[(slice(None), slice(None)) + tuple(slice(None, None, st) for st in stride)] = x
        pads, crops = [], []
        for k, d, (lo, hi), op in zip(kernel, dilation, padding, output_padding):
            reach = d * (k - 1)
            plo, phi = reach - lo, reach - hi + op
            pads.append((max(plo, 0), max(phi, 0)))
            crops.append((max(-plo, 0), max(-phi, 0)))
        xd = self.pad(xd, ((0, 0), (0, 0)) + tuple(pads), 0)
        if any(lo or hi for lo, hi in crops):
            xd = xd[(slice(None), slice(None)) + tuple(
                slice(lo, xd.shape[2 + i] - hi) for i, (lo, hi) in enumerate(crops))]
        cg = cin // g
        wt = xp.reshape(w, (g, cg, og) + kernel)
        wt = xp.permute_dims(wt, (0, 2, 1) + tuple(range(3, 3 + nd)))
        wt = xp.flip(xp.reshape(wt, (g * og, cg) + kernel), axis=tuple(range(2, 2 + nd)))
        return self.conv(xd, wt, (1,) * nd, ((0, 0),) * nd, tuple(dilation), g)

    def max_pool(self, x, kernel, stride, padding):
        xp = self.xp
        low = -math.inf if xp.isdtype(x.dtype, "real floating") else xp.iinfo(x.dtype).min
        x = self.pad(x, ((0, 0), (0, 0)) + tuple(padding), low)
        ones = (1,) * len(kernel)
        out = self._out_size(x.shape[2:], kernel, stride, ones)
        acc = None
        for offset in itertools.product(*(range(k) for k in kernel)):
            win = x[self._window(offset, ones, stride, out)]
            acc = win if acc is None else xp.maximum(acc, win)
        return acc

    def avg_pool(self, x, kernel, stride, padding, count_include_pad):
        xp = self.xp
        pad = ((0, 0), (0, 0)) + tuple(padding)
        xpad = self.pad(x, pad, 0)
        ones = (1,) * len(kernel)
        out = self._out_size(xpad.shape[2:], kernel, stride, ones)
        total = None
        for offset in itertools.product(*(range(k) for k in kernel)):
            win = xpad[self._window(offset, ones, stride, out)]
            total = win if total is None else xp.add(total, win)
        if count_include_pad:
            return xp.divide(total, self.full((), float(math.prod(kernel)), self.dtype(x)))
        valid = self.pad(xp.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype), pad, 0)
        count = None
        for offset in itertools.product(*(range(k) for k in kernel)):
            win = valid[self._window(offset, ones, stride, out)]
            count = win if count is None else xp.add(count, win)
        return xp.divide(total, count)

    # -- random streams: numpy's Generator on the host, the state a small int64 array -----
    def rng_state(self, seed):
        return self.xp.asarray(np.array([seed, 0], dtype=np.int64))

    def _draw(self, state, shape, dtype, normal):
        s = self.to_numpy(state)
        gen = np.random.default_rng([int(s[0]), int(s[1])])
        values = gen.standard_normal(tuple(shape)) if normal else gen.random(tuple(shape))
        nxt = self.xp.asarray(np.array([s[0], s[1] + 1], dtype=np.int64))
        return self.from_numpy(values, dtype), nxt

    def random_uniform(self, state, shape, dtype):
        values, nxt = self._draw(state, shape, dtype, normal=False)
        # Rounding to float32 can turn 0.99999999 into 1.0; keep the [0, 1) promise.
        one = np.ones((), dtype=dtype.np_dtype)
        below_one = self.full((), float(np.nextafter(one, np.zeros_like(one))), dtype)
        return self.xp.minimum(values, below_one), nxt

    def random_normal(self, state, shape, dtype):
        return self._draw(state, shape, dtype, normal=True)

    # -- device and overflow check ------------------------------------------------------------
    def all_finite(self, arrays):
        xp = self.xp
        flags = [xp.all(xp.isfinite(a)) for a in arrays]
        if not flags:
            return True
        return bool(xp.all(xp.stack(flags)))  # one host transfer for all arrays
