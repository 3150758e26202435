"""Updates of many arrays at once: gradient scaling, the overflow check and the optimizers'
steps (momentum SGD, Adam).

Each helper uses the backend's list op when it has one (``foreach_div``, ``momentum_update``,
``adam_update``, ``unscale_check``:
``torch._foreach_*`` multi-tensor calls, one fused kernel per parameter on CuPy) and a loop
over the core's per-array ops otherwise, so the Python work per parameter stays in the
backend where it can be batched. Everything works on native arrays and returns new ones.
"""
from __future__ import annotations

import sys
from operator import attrgetter

from mscore import dispatch
from mscore.common import dtype as mstype
from mscore.dispatch import call
from mscore.ops.math.elementwise import native_addcmul


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
    scalar_dtype = dispatch.dtype(scalar)
    as_dtype = {}
    out = []
    for a in arrays:
        dt = dispatch.dtype(a)
        if dt is not scalar_dtype and dt.itemsize <= scalar_dtype.itemsize:
            # A narrower array is divided in a dtype holding both and rounded once: the
            # scalar cast to it could overflow (a float32 loss scale of 65536 is inf in
            # float16); float16 and bfloat16 meet in float32.
            work = scalar_dtype if dt.itemsize < scalar_dtype.itemsize else mstype.float32
            s = as_dtype.get(work)
            if s is None:
                s = as_dtype[work] = scalar if scalar_dtype is work else \
                    call("cast", scalar, work)
            out.append(call("cast", call("div", call("cast", a, work), s), dt))
            continue
        s = as_dtype.get(dt)
        if s is None:   # a wider array holds the scalar exactly
            s = as_dtype[dt] = scalar if scalar_dtype is dt else call("cast", scalar, dt)
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
        finite = bool(backend.to_numpy(finite))
    else:
        out = divide_all(arrays, scale)
        finite = bool(backend.all_finite(out))
    dispatch.settle_checks()   # synchronised anyway: deferred checks raise before an update
    return list(out), finite


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
_data_of = attrgetter("_data")


def solely_owned(*params):
    """True when nothing but its Parameter holds each Parameter's array (no Tensor from
    ``value()``, no open MutationScope, no cached cast, no second Parameter), so updating it
    in place changes nothing anyone can see. False where refcounts are unknown (not CPython)."""
    if _getrefcount is None:
        return False
    # C maps: no Python step per parameter (the mapped array is held by the Parameter and,
    # while getrefcount reads it, by the map: the same count as a loop's temporary)
    return max(map(_getrefcount, map(_data_of, params)), default=0) <= _SOLE_OWNER_REFS


def adam_update(params, m, v, grads, lr, beta1, beta2, eps, nesterov, weight_decay=None,
                inplace=False):
    """``(new params, new m, new v)`` of Adam over lists of one dtype:
    ``m = beta1 m + (1 - beta1) g``, ``v = beta2 v + (1 - beta2) g^2``,
    ``p -= lr * (n / (sqrt(v) + eps) + weight_decay * p)`` with ``n = m`` (Nesterov:
    ``beta1 m + (1 - beta1) g``). ``lr`` and ``weight_decay`` (or None) are 0-d native
    arrays of the parameters' dtype; the betas and ``eps`` are Python floats. ``inplace`` as
    in :func:`momentum_update`."""
    fused = dispatch.fused("adam_update")
    if fused is not None:
        out = fused(list(params), list(m), list(v), list(grads), lr, float(beta1),
                    float(beta2), float(eps), bool(nesterov), weight_decay, bool(inplace))
        return tuple(list(o) for o in out)
    dt = dispatch.dtype(lr)
    consts = {}

    def c(value):
        hit = consts.get(value)
        if hit is None:
            hit = consts[value] = call("full", (), value, dt)
        return hit
    neg_lr = call("neg", lr)
    new_p, new_m, new_v = [], [], []
    for p, mi, vi, g in zip(params, m, v, grads):
        nm = native_addcmul(call("mul", mi, c(beta1)), g, c(1.0 - beta1))
        nv = native_addcmul(call("mul", vi, c(beta2)), call("mul", g, g), c(1.0 - beta2))
        num = native_addcmul(call("mul", nm, c(beta1)), g, c(1.0 - beta1)) if nesterov \
            else nm
        update = call("div", num, call("add", call("sqrt", nv), c(eps)))
        if weight_decay is not None:
            update = native_addcmul(update, p, weight_decay)
        new_m.append(nm)
        new_v.append(nv)
        new_p.append(native_addcmul(p, update, neg_lr))
    return new_p, new_m, new_v
