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

A differentiated function called step after step casts the same weights each time, one cast
per weight per step (each step's weights are new values). A :class:`CastPlan` given to
:func:`scoped_copies` remembers which Parameters were cast, to which dtype, and makes those
casts up front on the next call, all of one dtype in one batch call: each layer's
``cast_param`` then finds its copy made. A Parameter the function stops casting is still cast
up front (one unused copy per call); one it starts casting joins the plan.
"""
from __future__ import annotations

import contextlib
from itertools import repeat
from operator import attrgetter

from mscore._state import in_compiled
from mscore._state import process as _process
from mscore._state import thread as _thread

_ATTR = "_cast_copy"   # the eager copy's key in its Parameter's __dict__
_data_of = attrgetter("_data")
_dtype_attr = attrgetter("dtype")   # the library's dtype of an array (or tracer)


class CastPlan:
    """The weight casts one differentiated function made on its last call, made again up
    front, in batches, when the next call's :func:`scoped_copies` opens.

    ``cast_all(arrays, dtype)`` returns the Tensors of ``arrays`` cast to the floating
    ``dtype`` in that order, or None when they cannot be made up front (each is then cast
    where it is used, as without a plan).
    """

    __slots__ = ("cast_all", "_groups", "_size", "_learned_at")

    def __init__(self, cast_all):
        self.cast_all = cast_all
        self._groups = ()   # ((dtype, [params], [native dtypes they had]), ...)
        self._size = 0      # the scope's dict size when learned
        self._learned_at = 0   # _process.compute_dtype_changes when learned

    def fill(self, copies):
        """Put the planned casts of the Parameters' current values into ``copies``."""
        if self._learned_at != _process.compute_dtype_changes:   # cells' dtypes changed
            self._groups, self._size = (), 0
            return
        for dtype, params, had in self._groups:
            values = list(map(_data_of, params))
            if list(map(_dtype_attr, values)) != had:   # set_data changed a dtype
                self._size = 0   # learn afresh
                continue
            made = self.cast_all(values, dtype)
            if made is not None:
                copies.update(zip(map(id, params), zip(values, repeat(dtype), made, params)))

    def learn(self, copies):
        """Plan the casts found in ``copies`` (a scope's dict) when it holds new ones."""
        if len(copies) <= self._size and self._learned_at == _process.compute_dtype_changes:
            return
        groups = {}
        for entry in copies.values():
            groups.setdefault(entry[1], []).append(entry[3])
        self._groups = tuple((d, params, list(map(_dtype_attr, map(_data_of, params))))
                             for d, params in groups.items())
        self._size = len(copies)
        self._learned_at = _process.compute_dtype_changes


def drop_cast_copies(params):
    """Drop the eager low-precision copies of ``params``' values (the values changed: every
    assignment of a Parameter calls this)."""
    for p in params:
        d = p.__dict__
        if _ATTR in d:
            del d[_ATTR]


@contextlib.contextmanager
def scoped_copies(plan=None):
    """Casts made in the block are cached for the block only, and copies made outside it are
    not used (nothing is cached inside a compiled program, where the program itself holds
    each cast once). ``plan``: a :class:`CastPlan` that makes its casts as the block opens
    and learns the block's casts as it closes."""
    if in_compiled():
        yield
        return
    outer = _thread.cast_copies
    copies = _thread.cast_copies = {}
    if plan is not None:
        plan.fill(copies)
    try:
        yield
        if plan is not None:
            plan.learn(copies)
    finally:
        _thread.cast_copies = outer


def cast_param(param, dtype, make):
    """``make(param, dtype)`` (the cast of ``param`` to ``dtype``, or ``param`` itself where
    none is needed), or the copy made from the same value."""
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
    if out is not param:   # ``make`` gives the Parameter itself where no cast is needed
        # a scope's entries also name their Parameter (what a CastPlan learns)
        copies[key] = (data, dtype, out) if key is _ATTR else (data, dtype, out, param)
    return out
