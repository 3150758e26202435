"""The one door from the core to the active backend, at the level of native arrays.

``call("matmul", a, b)`` runs the active backend's op, or records it for the reference
autodiff when one of the arguments is being traced. Everything above (functional ops, VJP
rules, layers) goes through here, so swapping the backend swaps every computation.
"""
from __future__ import annotations

from mscore import context as _context
from mscore._state import process as _process
from mscore._state import thread as _thread
from mscore.autodiff import tracer as _tracer
from mscore.autodiff.tracer import Tracer as _Tracer
from mscore.plugin.mismatch import foreign_array_error

# name -> the reference autodiff's fused op of that name (or None); installed by
# mscore.autodiff.reference, the layer above that opens reference traces.
_reference_fused = None


def set_reference_fused(lookup):
    """Install ``lookup(name)``, which :func:`fused` answers with while this thread traces
    for the reference autodiff (called once by :mod:`mscore.autodiff.reference`)."""
    global _reference_fused
    _reference_fused = lookup


def autocast_policy():
    """The calling thread's op-level mixed-precision policy (set by
    :func:`mscore.amp.autocast`): a callable ``(op_name, args) -> args`` that casts floating
    inputs by the op's list, or None outside an autocast region."""
    return _thread.autocast_policy


def backend():
    """The active backend object."""
    return _process.backend or _context.current_backend()


def call(name, *args, **attrs):
    """Run primitive ``name`` of the active backend on native arrays (or tracers)."""
    b = _process.backend or _context.current_backend()
    thread = _thread
    policy = thread.autocast_policy
    if policy is not None:
        args = policy(name, args)
    try:
        if thread.tracing_depth and _tracer.has_tracer(args):
            return _tracer.record(b, name, args, attrs)
        return getattr(b, name)(*args, **attrs)
    except Exception as exc:
        _raise_if_foreign(b, name, [_tracer.unwrap(a) for a in args], exc)
        raise


# What amp's casts ask of the active backend, each asked once: [backend, {mscore dtype:
# (native dtype, the backend's float_caster for it)}, {native dtype: whether it is floating}].
_float_cast_memo: list = [None, {}, {}]


def recast_float(a, target):
    """``a`` cast to the floating dtype ``target`` when ``a`` is floating of another dtype,
    else None (``a`` is used as it is): amp's cast of a weight or an input, its dtype test and
    the cast in one call. Where this thread neither traces nor autocasts, the backend's
    ``float_caster`` is called with no Python frame between (this runs for every weight and
    input of a low-precision cell on every step)."""
    memo = _float_cast_memo
    thread = _thread
    if memo[0] is _process.backend and not thread.tracing_depth and \
            thread.autocast_policy is None and not thread.compiled_depth:
        try:   # subscripts, not dict.get: no call on the hot path
            native, cast = memo[1][target]
            have = a.dtype
            if have is native:
                return None
            if memo[2][have]:
                return cast(a)
            return None
        except (KeyError, AttributeError, TypeError):   # not asked yet
            pass
    have = dtype(a)
    if not (thread.compiled_depth or thread.tracing_depth):   # a native array, not traced
        _remember_float_cast(a, have, target)
    if have is target or not have.is_floating:
        return None
    return call("cast", a, target)


def _remember_float_cast(a, have, target):
    """Fill :data:`_float_cast_memo` with what :func:`recast_float` just asked, where the
    backend has a ``float_caster`` (one that overrides ``cast`` alone has none)."""
    b = _process.backend or _context.current_backend()
    caster, native_dtype = getattr(b, "float_caster", None), getattr(b, "native_dtype", None)
    if caster is None or native_dtype is None:
        return
    memo = _float_cast_memo
    if memo[0] is not b:
        memo[:] = [b, {}, {}]
    try:
        if target not in memo[1] and target.is_floating:
            memo[1][target] = (native_dtype(target), caster(target))
        memo[2][a.dtype] = have.is_floating
    except (AttributeError, TypeError):  # no hashable library dtype: asked every time
        pass


def shape(a):
    """The shape of a native array or tracer."""
    if isinstance(a, _Tracer):  # inlined unwrap: this runs on every op
        a = a.value
    b = _process.backend or _context.current_backend()
    try:
        return b.shape(a)
    except Exception as exc:
        _raise_if_foreign(b, "shape", [a], exc)
        raise


# The active backend's answers of ``dtype`` by native dtype object: an array's mscore dtype
# is a function of its library dtype alone, so it is asked once per dtype (the first list is
# the backend the memo was filled by; another backend starts afresh).
_dtype_memo: list = [None, {}]


def dtype(a):
    """The mscore dtype of a native array or tracer."""
    memo = _dtype_memo
    if memo[0] is _process.backend and not _thread.compiled_depth:
        try:
            return memo[1][a.dtype]  # the hot path: one dict lookup
        except (KeyError, AttributeError, TypeError):
            pass
    return _dtype_asked(a)


def same_dtype(a, b):
    """Whether native arrays ``a`` and ``b`` have the same mscore dtype (equal library
    dtypes answer without asking the backend)."""
    try:
        if a.dtype == b.dtype:
            return True
    except AttributeError:
        pass
    return dtype(a) is dtype(b)


def _dtype_asked(a):
    if isinstance(a, _Tracer):
        a = a.value
    b = _process.backend or _context.current_backend()
    try:
        out = b.dtype(a)
    except Exception as exc:
        _raise_if_foreign(b, "dtype", [a], exc)
        raise
    memo = _dtype_memo
    if _thread.compiled_depth:   # a program being traced: its tracer guards on what it reads
        return out
    if memo[0] is not b:
        memo[0], memo[1] = b, {}
    try:
        memo[1][a.dtype] = out
    except (AttributeError, TypeError):  # no hashable library dtype: ask every time
        pass
    return out


# Checks waiting longer than this many are run at once (a host read of their flags), so a
# loop that never reads a value still hears of a bad one.
MAX_DEFERRED_CHECKS = 64


def defer_check(check):
    """Run ``check()`` (it reads device values and raises on bad ones) at the next host read
    of any value (:func:`settle_checks`) instead of synchronising now."""
    pending = _thread.deferred_checks
    pending.append(check)
    if len(pending) >= MAX_DEFERRED_CHECKS:
        settle_checks()


def settle_checks():
    """Run the deferred checks of this thread (oldest first); the first that fails raises."""
    pending = _thread.deferred_checks
    if pending:
        _thread.deferred_checks = []
        for check in pending:
            check()


def _raise_if_foreign(b, op, values, exc):
    """After backend ``b`` failed on ``values``: if one is another backend's array (a network
    built before ``set_context(backend=...)``), raise the RuntimeError saying so instead."""
    error = foreign_array_error(b, op, values)
    if error is not None:
        raise error from exc


def fused(name):
    """The backend's fused op ``name`` or None. While the reference autodiff traces, the
    autodiff's own fused op of that name (one node with a closed-form VJP, see
    :mod:`mscore.autodiff.fused`); None inside an autocast region, whose per-op dtype lists
    apply to the composite's primitives."""
    b = _process.backend or _context.current_backend()
    thread = _thread
    if thread.autocast_policy is not None:
        return None
    if thread.tracing_depth and b.value_and_grad is None:
        return _reference_fused(name)
    return getattr(b, name, None)
