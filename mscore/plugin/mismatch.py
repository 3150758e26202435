"""Arrays of one backend handed to another: the error that says so.

Tensors and Parameters hold native arrays of the backend that was active when they were
made; ``set_context(backend=...)`` does not move them. A network built before a switch then
reaches the new backend's ops with the old backend's arrays, and the new library fails in its
own words (``'numpy.ndarray' object has no attribute 'detach'``). The doors to the backend
(:mod:`mscore.dispatch`, ``value_and_grad``) call :func:`foreign_array_error` when a backend
call fails; it recognises the arrays of another built backend and returns the error to raise
instead: a ``RuntimeError`` (MindSpore's type for a tensor on the wrong device) naming both
backends and how to move the values. The check costs nothing until something has failed.

Where the new library accepts the old arrays (jax takes numpy arrays), nothing fails and the
values move over at the first update; the numbers are the same.
"""
from __future__ import annotations

import functools

import numpy as np

from mscore.plugin.registry import get_registry


@functools.cache
def _array_type(backend):
    """The type of the native arrays ``backend`` makes, or None if it cannot tell (cached:
    backends live as long as the process)."""
    try:
        return type(backend.from_numpy(np.zeros(1, np.float32)))
    except Exception:  # a backend that cannot even make an array: nothing to compare with
        return None


def _arrays(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _arrays(v)
        else:
            yield v


def foreign_array_error(active, op, values):
    """A ``RuntimeError`` describing the first of ``values`` (arrays, or lists/tuples of
    them) that belongs to a built backend other than ``active``, or None when there is none.
    ``op`` names what failed (an op name, ``value_and_grad``, ...)."""
    others = [(name, _array_type(b)) for name, b in get_registry().built().items()
              if b is not active]
    own = _array_type(active)
    for a in _arrays(values):
        if a is None or (own is not None and isinstance(a, own)):
            continue
        for name, kind in others:
            if kind is not None and kind is not own and isinstance(a, kind):
                return RuntimeError(_message(op, a, name, active.name))
    return None


def _message(op, array, owner, active):
    kind = f"{type(array).__module__}.{type(array).__name__}"
    return (f"op {op!r}: got an array of backend {owner!r} ({kind}), but the active backend "
            f"is {active!r}. Tensors and Parameters keep the arrays of the backend that was "
            f"active when they were made; set_context(backend=...) does not move them. Select "
            f"the backend before building the network. To carry trained values over, save them "
            f"under the old backend and load them into a network built under the new one: "
            f"ms.set_context(backend={owner!r}); ms.save_checkpoint(net, 'net.ckpt'); "
            f"ms.set_context(backend={active!r}); net = <build the network>; "
            f"ms.load_checkpoint('net.ckpt', net)")
