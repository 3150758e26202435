"""Low-precision copies of master weights, made once while the master value stays the same.

Amp's O2/O3 networks keep float32 Parameters and cast them where a cell computes in float16
or bfloat16 (:meth:`mscore.nn.Cell.cast_param`). Within one value of a Parameter the cast is
the same every time, so it is made once: eval and predict loops reuse the copy from batch to
batch, and a weight used twice in a step (tied embeddings, an unrolled recurrent cell) is
cast once. A copy is valid while ``param._data`` is the very array it was made from and the
Parameter was not assigned since: every assignment, in place or not
(:func:`mscore.common.parameter.assign_all`), drops it.

The eager copies live in ``_state.process.cast_copies`` (``id(param) -> (array, dtype, copy,
weak reference to param)``; the reference's callback drops the entry with its Parameter), so
:func:`mscore._state.reset` forgets them all and an assignment where no copy exists costs one test.

Inside a differentiated call (``value_and_grad``) or a trace for export the cast is part of
the recorded program: the copies live in a dict of that call only (:func:`scoped_copies`), so
a copy made eagerly before never stands in for the recorded cast. Inside a compiled program
outside such a call nothing is cached (a traced value must not outlive its trace).
"""
from __future__ import annotations

import contextlib
import weakref

from mscore._state import in_compiled
from mscore._state import process as _process
from mscore._state import thread as _thread
from mscore.common.tensor import Tensor
from mscore.dispatch import recast_float


def drop_cast_copies(params):
    """Drop the eager low-precision copies of ``params``' values (the values changed: every
    assignment of a Parameter calls this)."""
    copies = _process.cast_copies
    if copies:   # a training step's copies are scoped: usually there is nothing to drop
        for p in params:
            copies.pop(id(p), None)


@contextlib.contextmanager
def scoped_copies():
    """Casts made in the block are cached for the block only, and copies made outside it are
    not used (nothing is cached inside a compiled program, where the program itself holds
    each cast once)."""
    if in_compiled():
        yield
        return
    outer = _thread.cast_copies
    _thread.cast_copies = {}
    try:
        yield
    finally:
        _thread.cast_copies = outer


def cast_param(param, dtype):
    """``param`` (a Parameter) as a Tensor of the floating ``dtype``: itself when it is not
    floating or already has that dtype, else its cast, made once per value."""
    data = param._data
    copies = _thread.cast_copies
    if copies is None:
        return _eager_copy(param, data, dtype)
    key = id(param)
    if key in copies:   # a weight used twice in the call (``in``: no call when it is not)
        hit = copies[key]
        if hit[0] is data and hit[1] is dtype:
            return hit[2]
    native = recast_float(data, dtype)
    if native is None:
        return param
    out = object.__new__(Tensor)   # Tensor._wrap inlined: once per cast weight per step
    out._data = native
    copies[key] = (data, dtype, out)
    return out


def recast_tensor(t, dtype):
    """The Tensor ``t`` in the floating ``dtype``: itself when it is not floating or already
    has that dtype, else its cast (made every time: amp's casts of inputs and outputs)."""
    native = recast_float(t._data, dtype)
    return t if native is None else Tensor._wrap(native)


def _eager_copy(param, data, dtype):
    if in_compiled():
        return recast_tensor(param, dtype)
    copies = _process.cast_copies
    key = id(param)
    hit = copies.get(key)
    if hit is not None and hit[0] is data and hit[1] is dtype:
        return hit[2]
    native = recast_float(data, dtype)
    if native is None:
        return param
    out = Tensor._wrap(native)
    copies[key] = (data, dtype, out, weakref.ref(param, lambda _, k=key: copies.pop(k, None)))
    return out
