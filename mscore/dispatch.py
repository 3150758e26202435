"""The one door from the core to the active backend, at the level of native arrays.

``call("matmul", a, b)`` runs the active backend's op, or records it for the reference
autodiff when one of the arguments is being traced. Everything above (functional ops, VJP
rules, layers) goes through here, so swapping the backend swaps every computation.
"""
from __future__ import annotations

from mscore import context as _context
from mscore.autodiff import tracer as _tracer
from mscore.autodiff.tracer import Tracer as _Tracer


# Set by mscore.amp.autocast while an op-level ("auto") mixed-precision region runs:
# a callable (op_name, args) -> args that casts floating inputs by the op's list.
autocast_policy = None


def backend():
    """The active backend object."""
    return _context._active or _context.current_backend()


def call(name, *args, **attrs):
    """Run primitive ``name`` of the active backend on native arrays (or tracers)."""
    b = _context._active or _context.current_backend()
    if autocast_policy is not None:
        args = autocast_policy(name, args)
    if _tracer.active_depth and _tracer.has_tracer(args):
        return _tracer.record(b, name, args, attrs)
    return getattr(b, name)(*args, **attrs)


def shape(a):
    """The shape of a native array or tracer."""
    if isinstance(a, _Tracer):  # inlined unwrap: this runs on every op
        a = a.value
    return (_context._active or _context.current_backend()).shape(a)


def dtype(a):
    """The mscore dtype of a native array or tracer."""
    if isinstance(a, _Tracer):
        a = a.value
    return (_context._active or _context.current_backend()).dtype(a)


def fused(name):
    """The backend's fused op ``name`` or None. While the reference autodiff traces, the
    autodiff's own fused op of that name (one node with a closed-form VJP, see
    :mod:`mscore.autodiff.fused`); None inside an autocast region, whose per-op dtype lists
    apply to the composite's primitives."""
    b = backend()
    if autocast_policy is not None:
        return None
    if _tracer.active_depth and b.value_and_grad is None:
        from mscore.autodiff.fused import reference_op
        return reference_op(name)
    return getattr(b, name, None)
