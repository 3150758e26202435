"""The CuPy backend's fused optimizer updates as elementwise CUDA kernels."""
from __future__ import annotations

import numpy as np

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


class CupyFused:
    """``adam_update``, ``addcmul`` and ``momentum_update``."""

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
