"""The CuPy backend's one-kernel ops for the hot path of a train step.

The fused ``relu``, the kernels :mod:`mscore.autodiff.kernels` defines (``relu_backward``,
``sparse_nll_rows``, ``sparse_xent_grad``; that module holds each one's definition and its
composite) and the class-label check of cross entropy (:func:`mscore.ops.nn.loss.
class_label_check`, likewise): one elementwise CUDA kernel per call for the dtypes listed (the
label check: one kernel and one reduction), so that a train step of an MLP launches about as
many kernels as a hand-written CuPy step. The numpy stand-in and other dtypes run the same
formula as array-module code (several passes).
"""
from __future__ import annotations

import numpy as np

_RELU_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_XENT_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64))

# (name, in_params, out_params, body) of each kernel, compiled on first use.
_KERNELS = {
    "relu": ("T x", "T y", "y = x > T(0) ? x : T(0)"),
    "relu_backward": ("T g, T out", "T dx", "dx = out > T(0) ? g : T(0)"),
    # One thread per row: the loss of row i and whether it counts.
    "sparse_nll_rows": (
        "raw T sh, T s, I t, int64 ignore, int64 c", "T loss, T valid",
        """
        const long long label = (long long)t;
        const bool counted = label != ignore;
        const T picked = (label >= 0 && label < c) ? sh[i * c + label] : T(0);
        loss = counted ? T(log(s) - picked) : T(0);
        valid = counted ? T(1) : T(0);
        """),
    # One thread per logit; the output is C-contiguous (M, C), so i % c is the column.
    "sparse_xent_grad": (
        "T e, T s, I t, T valid, T scale, int64 c", "T out",
        "out = (e / s - ((long long)(i % c) == (long long)t ? T(1) : T(0))) * (valid * scale)"),
    # One thread per label: out-of-range labels (other than the ignored one) become 0.
    "class_label_check": (
        "I t, int64 classes, I ignore, bool has_ignore", "I checked, bool bad",
        """
        const bool outside = (long long)t < 0 || (long long)t >= classes;
        bad = outside && !(has_ignore && t == ignore);
        checked = bad ? I(0) : t;
        """),
}


class CupyKernels:
    """``relu``, ``relu_backward``, ``sparse_nll_rows``, ``sparse_xent_grad`` and
    ``class_label_check``."""

    def _kernel(self, name):
        kernel = self._elementwise.get(name)
        if kernel is None:
            in_params, out_params, body = _KERNELS[name]
            kernel = self._elementwise[name] = self.xp.ElementwiseKernel(
                in_params, out_params, body, f"mscore_{name}")
        return kernel

    def _on_device(self, dtypes, *arrays):
        """True when the arrays share one dtype of ``dtypes`` and a CUDA kernel can run."""
        return not self._host and arrays[0].dtype in dtypes and \
            all(a.dtype == arrays[0].dtype for a in arrays)

    def relu(self, x):
        """``max(x, 0)`` with 0 for NaN (the composite's ``where(x > 0, x, 0)``)."""
        if self._on_device(_RELU_DTYPES, x):
            return self._kernel("relu")(x)
        return self.where(x > 0, x, x.dtype.type(0))

    def relu_backward(self, g, out):
        """``where(out > 0, g, 0)``."""
        if self._on_device(_RELU_DTYPES, g, out):
            return self._kernel("relu_backward")(g, out)
        return self.where(out > 0, g, g.dtype.type(0))

    def sparse_nll_rows(self, sh, s, target, ignore_index):
        """``(loss, valid)`` of each row of ``sh`` (M, C) with ``s`` (M, 1) and class indices
        ``target`` (M,)."""
        m, c = sh.shape
        if self._on_device(_XENT_DTYPES, sh, s):
            return self._kernel("sparse_nll_rows")(
                self.xp.ascontiguousarray(sh), s.reshape(m), target, int(ignore_index), c)
        xp = self.xp
        zero = sh.dtype.type(0)
        inside = (target >= 0) & (target < c)
        picked = xp.where(inside, sh[xp.arange(m), xp.where(inside, target, 0)], zero)
        counted = target != ignore_index
        loss = xp.where(counted, xp.log(s.reshape(m)) - picked, zero)
        return loss.astype(sh.dtype, copy=False), counted.astype(sh.dtype)

    def sparse_xent_grad(self, e, s, target, valid, scale):
        """``(e / s - onehot(target)) * valid * scale`` for ``e`` (M, C), ``s`` and
        ``valid`` (M, 1), ``scale`` 0-d or (M, 1)."""
        m, c = e.shape
        t = target.reshape(m, 1)
        if self._on_device(_XENT_DTYPES, e, s, valid, scale):
            return self._kernel("sparse_xent_grad")(e, s, t, valid, scale, c)
        hot = (t == self.xp.arange(c, dtype=t.dtype).reshape(1, c)).astype(e.dtype)
        return (e / s - hot) * (valid * scale)

    def class_label_check(self, labels, classes, ignore_index):
        """``(checked, bad)``: ``labels`` with those outside ``[0, classes)`` (other than
        ``ignore_index``; None: none ignored) replaced by 0, and whether there were any."""
        if not self._host:
            ignore = labels.dtype.type(0 if ignore_index is None else ignore_index)
            checked, bad = self._kernel("class_label_check")(labels, classes, ignore,
                                                             ignore_index is not None)
            return checked, bad.any()
        xp = self.xp
        bad = (labels < 0) | (labels >= classes)
        if ignore_index is not None:
            bad &= labels != labels.dtype.type(ignore_index)
        return xp.where(bad, labels.dtype.type(0), labels), xp.any(bad)
