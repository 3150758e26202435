"""Low-precision copies of master weights, made once while the master value stays the same.

Amp's O2/O3 networks keep float32 Parameters and cast them where a cell computes in float16
or bfloat16 (:meth:`mscore.nn.Cell.cast_param`). Within one value of a Parameter the cast is
the same every time, so it is made once: eval and predict loops reuse the copy from batch to
batch, and a weight used twice in a step (tied embeddings, an unrolled recurrent cell) is
cast once. A copy is valid while ``param._data`` is the very array it was made from (every
change of a Parameter replaces that array); :meth:`Parameter._assign` also drops it, so a
stale copy is not kept alive.

Inside a differentiated call (``value_and_grad``) or a trace for export the cast is part of
the recorded program: the copies live in a dict of that call only (:func:`scoped_copies`), so
a copy made eagerly before never stands in for the recorded cast. Inside a compiled program
outside such a call nothing is cached (a traced value must not outlive its trace).
"""
from __future__ import annotations

import contextlib

from mscore._state import in_compiled
from mscore._state import thread as _thread

_ATTR = "_cast_copy"   # the eager copy's key in its Parameter's __dict__


def drop_cast_copies(params):
    """Drop the eager low-precision copies of ``params``' values (the values changed: every
    assignment of a Parameter calls this)."""
    for p in params:
        d = p.__dict__
        if _ATTR in d:
            del d[_ATTR]


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


def cast_param(param, dtype, make):
    """``make(param, dtype)`` (the cast of ``param`` to ``dtype``), or the copy made from the
    same value."""
    data = param._data
    copies = _thread.cast_copies
    if copies is None:
        if in_compiled():
            return make(param, dtype)
        copies = param.__dict__
        key = _ATTR
    else:
        key = id(param)
    hit = copies.get(key)
    if hit is not None and hit[0] is data and hit[1] is dtype:
        return hit[2]
    out = make(param, dtype)
    copies[key] = (data, dtype, out)
    return out
