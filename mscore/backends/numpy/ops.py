"""The primitive ops over a numpy-like array module ``xp``.

Convolution and pooling are written with strided windows and GEMM (im2col), so they need
nothing but ``xp.lib.stride_tricks.as_strided`` and ``xp.matmul``.
"""
from __future__ import annotations

import math

import numpy as np

from mscore.plugin.rules import (
    check_window_fits,
    divide_toward_zero,
    erf_polynomial,
    floor_divide_edges,
    is_half_precision,
    sign_of_nan_and_zeros_positive,
)


class ArrayModuleOps:
    """The primitive op set implemented once over ``self.xp``."""

    # -- elementwise -------------------------------------------------------------------
    def neg(self, a): return self.xp.negative(a)
    def abs(self, a): return self.xp.abs(a)
    def exp(self, a): return self.xp.exp(a)
    def log(self, a): return self.xp.log(a)
    def sqrt(self, a): return self.xp.sqrt(a)
    def sin(self, a): return self.xp.sin(a)
    def cos(self, a): return self.xp.cos(a)
    def tanh(self, a): return self.xp.tanh(a)

    def sign(self, a):
        """-1, 0 or 1; a float NaN or either zero gives +0 (MindSpore's sign; numpy gives
        NaN, and -0 in bfloat16)."""
        out = self.xp.sign(a)
        if a.dtype.kind in "iub":
            return out
        return sign_of_nan_and_zeros_positive(self.xp, out)

    def floor(self, a): return self.xp.floor(a)
    def ceil(self, a): return self.xp.ceil(a)
    def logical_not(self, a): return self.xp.logical_not(a)
    def isfinite(self, a): return self.xp.isfinite(a)

    def erf(self, a):
        special = self._special_erf
        if special is None:
            special = lambda v: erf_polynomial(self.xp, v)  # noqa: E731
        if is_half_precision(a.dtype.itemsize):  # computed in float32, rounded once
            return special(a.astype(np.float32)).astype(a.dtype)
        return special(a)

    def add(self, a, b): return self.xp.add(a, b)
    def sub(self, a, b): return self.xp.subtract(a, b)
    def mul(self, a, b): return self.xp.multiply(a, b)
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
        if a.dtype.kind in "iub":
            return self._int_div(a, b)
        return self.xp.true_divide(a, b)

    def _int_div(self, a, b):
        """Integer division truncating toward zero (``rules.divide_toward_zero``)."""
        if a.dtype.kind == "b":
            return self._int_div(a.astype(np.int8), b.astype(np.int8)).astype(a.dtype)
        with np.errstate(over="ignore"):       # -MIN wraps to MIN, as the contract says
            return divide_toward_zero(a, b, trunc_divide=self._trunc_divide,
                                      where=self.xp.where, negative=self.xp.negative)

    def _trunc_divide(self, a, b):
        """``a / b`` truncated toward zero for divisors other than 0 and -1."""
        q = self.xp.floor_divide(a, b)
        # Floor is one below truncation for an inexact negative quotient.
        return q + ((a - q * b != 0) & ((a < 0) != (b < 0))).astype(q.dtype)

    def int_floor_divide(self, a, b):
        """Integer floor division (the fused op): the library's ``floor_divide``, one call
        when no divisor is 0 or -1; those get the contract's answers
        (``rules.floor_divide_edges``)."""
        xp = self.xp
        info = np.iinfo(a.dtype)
        with np.errstate(divide="ignore", over="ignore"):   # x // 0 and MIN // -1: patched
            q = xp.floor_divide(a, b)
            return floor_divide_edges(a, b, q, int_min=a.dtype.type(info.min),
                                      int_max=a.dtype.type(info.max), where=xp.where,
                                      negative=xp.negative, any_true=lambda m: bool(m.any()))

    def pow(self, a, b):
        return self.xp.power(a, b)

    def where(self, cond, x, y):
        return self.xp.where(cond, x, y)

    # -- reductions --------------------------------------------------------------------
    def sum(self, a, axis, keepdims):
        if a.dtype.kind in "fV" and is_half_precision(a.dtype.itemsize):
            # Half precision: accumulate in float32 and round once, as torch, jax and GPU
            # kernels do; numpy adds float16 rows one by one in float16, which overflows
            # (and loses bits) where the true sum fits (found by `mscore compare` at O2).
            return self.xp.sum(a, axis=axis, keepdims=keepdims,
                               dtype=np.float32).astype(a.dtype)
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
        return self.xp.argmax(a, axis=axis).astype(np.int64)

    def argmin(self, a, axis):
        return self.xp.argmin(a, axis=axis).astype(np.int64)

    # -- shape -------------------------------------------------------------------------
    def reshape(self, a, shape): return self.xp.reshape(a, shape)
    def transpose(self, a, perm): return self.xp.transpose(a, perm)
    def broadcast_to(self, a, shape): return self.xp.broadcast_to(a, shape)

    def concat(self, arrays, axis):
        return self.xp.concatenate(list(arrays), axis=axis)

    def pad(self, a, pad_width, value):
        if not any(lo or hi for lo, hi in pad_width):
            return a
        return self.xp.pad(a, pad_width, mode="constant", constant_values=value)

    # -- indexing ----------------------------------------------------------------------
    def getitem(self, a, index):
        return a[index]

    def scatter_add(self, a, index, updates):
        out = a.copy()
        if any(hasattr(i, "dtype") for i in index):
            self._add_at(out, index, updates)
        else:  # basic indexing: no repeated positions, plain in-place add is exact
            out[index] += updates
        return out

    def _add_at(self, out, index, updates):
        self.xp.add.at(out, index, updates)

    # -- linear algebra ------------------------------------------------------------------
    def matmul(self, a, b):
        if a.dtype.kind in "fV" and is_half_precision(a.dtype.itemsize):
            # Half precision: accumulate in float32 and round once, as GPU tensor cores do;
            # numpy has no BLAS kernels for float16/bfloat16 either.
            return self.xp.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
        return self.xp.matmul(a, b)

    # -- convolution ---------------------------------------------------------------------
    def _windows(self, x, kernel, stride, dilation):
        """A strided view (N, C, *out, *kernel) of the windows of an already-padded ``x``."""
        spatial = x.shape[2:]
        out = tuple((s - d * (k - 1) - 1) // st + 1
                    for s, k, st, d in zip(spatial, kernel, stride, dilation))
        check_window_fits(spatial, kernel, dilation)
        st = x.strides
        strides = st[:2] + tuple(s * t for s, t in zip(st[2:], stride)) + \
            tuple(s * d for s, d in zip(st[2:], dilation))
        return self._as_strided(x, x.shape[:2] + out + tuple(kernel), strides), out

    def conv(self, x, w, stride, padding, dilation, groups):
        xp = self.xp
        x = self.pad(x, ((0, 0), (0, 0)) + tuple(padding), 0)
        n, c = x.shape[:2]
        o, cg = w.shape[:2]
        kernel = w.shape[2:]
        nd = len(kernel)
        win, out = self._windows(xp.ascontiguousarray(x), kernel, stride, dilation)
        g = groups
        win = win.reshape((n, g, cg) + out + kernel)
        # (g, n, *out, cg, *kernel): the im2col matrix of each group.
        perm = (1, 0) + tuple(range(3, 3 + nd)) + (2,) + tuple(range(3 + nd, 3 + 2 * nd))
        cols = xp.transpose(win, perm).reshape(g, n * math.prod(out), cg * math.prod(kernel))
        wmat = w.reshape(g, o // g, cg * math.prod(kernel))
        res = self.matmul(cols, xp.transpose(wmat, (0, 2, 1)))  # (g, n*P, o/g)
        res = res.reshape((g, n) + out + (o // g,))
        perm = (1, 0, 2 + nd) + tuple(range(2, 2 + nd))
        return xp.ascontiguousarray(xp.transpose(res, perm)).reshape((n, o) + out)

    def conv_transpose(self, x, w, stride, padding, output_padding, dilation, groups):
        xp = self.xp
        n, cin = x.shape[:2]
        spatial = x.shape[2:]
        kernel = w.shape[2:]
        nd = len(kernel)
        og = w.shape[1]
        g = groups
        # Spread the input by the stride (stride-1 zeros between elements).
        dil_shape = tuple((s - 1) * st + 1 for s, st in zip(spatial, stride))
        xd = xp.zeros((n, cin) + dil_shape, dtype=x.dtype)
        xd[(slice(None), slice(None)) + tuple(slice(None, None, st) for st in stride)] = x
        pads, crops = [], []
        for k, d, (lo, hi), op in zip(kernel, dilation, padding, output_padding):
            full = d * (k - 1)
            plo, phi = full - lo, full - hi + op
            pads.append((max(plo, 0), max(phi, 0)))
            crops.append((max(-plo, 0), max(-phi, 0)))
        xd = self.pad(xd, ((0, 0), (0, 0)) + tuple(pads), 0)
        if any(lo or hi for lo, hi in crops):
            xd = xd[(slice(None), slice(None)) +
                    tuple(slice(lo, xd.shape[2 + i] - hi) for i, (lo, hi) in enumerate(crops))]
        # Weight (cin, og, *k) -> (g*og, cin/g, *k), flipped in space.
        cg = cin // g
        wt = w.reshape((g, cg, og) + kernel)
        wt = xp.transpose(wt, (0, 2, 1) + tuple(range(3, 3 + nd))).reshape((g * og, cg) + kernel)
        wt = wt[(slice(None), slice(None)) + (slice(None, None, -1),) * nd]
        return self.conv(xd, xp.ascontiguousarray(wt), (1,) * nd, ((0, 0),) * nd, dilation, g)

    # -- pooling -----------------------------------------------------------------------
    def max_pool(self, x, kernel, stride, padding):
        low = -np.inf if x.dtype.kind in "fV" else np.iinfo(x.dtype).min  # V: bfloat16
        x = self.pad(x, ((0, 0), (0, 0)) + tuple(padding), low)
        win, _ = self._windows(self.xp.ascontiguousarray(x), kernel, stride, (1,) * len(kernel))
        nd = len(kernel)
        return win.max(axis=tuple(range(-nd, 0)))

    def avg_pool(self, x, kernel, stride, padding, count_include_pad):
        xp = self.xp
        nd = len(kernel)
        axes = tuple(range(-nd, 0))
        pad = ((0, 0), (0, 0)) + tuple(padding)
        acc_dtype = np.float32 if is_half_precision(x.dtype.itemsize) else x.dtype
        xpad = xp.ascontiguousarray(self.pad(x, pad, 0)).astype(acc_dtype, copy=False)
        win, out = self._windows(xpad, kernel, stride, (1,) * nd)
        total = win.sum(axis=axes)
        if count_include_pad:
            res = total / math.prod(kernel)
        else:
            ones = self.pad(xp.ones((1, 1) + x.shape[2:], dtype=acc_dtype), pad, 0)
            cwin, _ = self._windows(xp.ascontiguousarray(ones), kernel, stride, (1,) * nd)
            res = total / cwin.sum(axis=axes)
        return res.astype(x.dtype)

    # -- overflow check ------------------------------------------------------------------
    def all_finite(self, arrays):
        return all(bool(self.xp.isfinite(a).all()) for a in arrays)

    def expected_overflow(self):
        """numpy's floating-point warnings off (overflow, invalid, divide) for the block;
        numpy keeps that state per thread, so other threads keep theirs."""
        errstate = getattr(self.xp, "errstate", None)
        if errstate is None:  # an array module without numpy's error states (CuPy)
            return super().expected_overflow()
        return errstate(over="ignore", invalid="ignore", divide="ignore")
