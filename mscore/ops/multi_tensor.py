"""Updates of many arrays at once: gradient scaling and the momentum optimizers' step.

Each helper uses the backend's list op when it has one (``foreach_div``, ``momentum_update``:
``torch._foreach_*`` multi-tensor calls, one fused kernel per parameter on CuPy) and a loop
over the core's per-array ops otherwise, so the Python work per parameter stays in the
backend where it can be batched. Everything works on native arrays and returns new ones.
"""
from __future__ import annotations

import sys

from mscore import dispatch
from mscore.dispatch import call


def divide_all(arrays, scalar):
    """``[a / scalar for a in arrays]``; ``scalar`` is a 0-d native array (any floating
    dtype: each result keeps its array's dtype). A division, not a product with the
    reciprocal: the reciprocal of a large loss scale can be subnormal (flushed to zero)."""
    arrays = list(arrays)
    if not arrays:
        return []
    fused = dispatch.fused("foreach_div")
    if fused is not None:
        return list(fused(arrays, scalar))
    as_dtype = {}
    out = []
    for a in arrays:
        dt = dispatch.dtype(a)
        s = as_dtype.get(dt)
        if s is None:
            s = as_dtype[dt] = scalar if dispatch.dtype(scalar) is dt else \
                call("cast", scalar, dt)
        out.append(call("div", a, s))
    return out


def unscale_and_check(arrays, scale):
    """``(arrays / scale, finite)`` with ``finite`` a Python bool (no inf/nan in the
    results), at the price of one host synchronisation: the backend's fused
    ``unscale_check`` (one pass, as ``torch.amp.GradScaler`` unscales) or
    :func:`divide_all` and the backend's ``all_finite``. Eager use only (a compiled program
    checks on the device)."""
    arrays = list(arrays)
    backend = dispatch.backend()
    fused = dispatch.fused("unscale_check")
    if fused is not None and arrays:
        out, finite = fused(arrays, scale)
        return list(out), bool(backend.to_numpy(finite))
    out = divide_all(arrays, scale)
    return out, bool(backend.all_finite(out))


def momentum_update(params, moments, grads, lr, momentum, nesterov, inplace=False):
    """``(new params, new moments)`` of momentum SGD over lists of one dtype:
    ``v = momentum * v + g``; ``p -= lr * v`` (Nesterov: ``p -= lr * (g + momentum * v)``).
    ``lr`` and ``momentum`` are 0-d native arrays of the parameters' dtype. ``inplace``: no
    one else holds ``params`` and ``moments``, so the backend may write the results into
    them (no new arrays: no allocation and no page faults on the host)."""
    fused = dispatch.fused("momentum_update")
    if fused is not None:
        new_params, new_moments = fused(list(params), list(moments), list(grads), lr, momentum,
                                        bool(nesterov), bool(inplace))
        return list(new_params), list(new_moments)
    from mscore.ops.functional import native_addcmul
    neg_lr = call("neg", lr)  # the core's ops make new arrays: ``inplace`` is not needed
    new_params, new_moments = [], []
    for p, v, g in zip(params, moments, grads):
        nv = native_addcmul(g, v, momentum)   # one fused pass where the backend has addcmul
        step = native_addcmul(g, nv, momentum) if nesterov else nv
        new_moments.append(nv)
        new_params.append(native_addcmul(p, step, neg_lr))
    return new_params, new_moments


_getrefcount = getattr(sys, "getrefcount", None)
# sys.getrefcount(param._data) when only the Parameter holds the array: its slot plus the
# argument of the call.
_SOLE_OWNER_REFS = 2


def solely_owned(*params):
    """True when nothing but its Parameter holds each Parameter's array (no Tensor from
    ``value()``, no open MutationScope, no cached cast, no second Parameter), so updating it
    in place changes nothing anyone can see. False where refcounts are unknown (not CPython)."""
    if _getrefcount is None:
        return False
    return all(_getrefcount(p._data) <= _SOLE_OWNER_REFS for p in params)
