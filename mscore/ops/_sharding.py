"""Shard strategies of ``Primitive.shard`` and ``Cell.shard``: MindSpore's checks, and their
effect in SEMI_AUTO_PARALLEL mode in one process (across the processes of a job, primitives
run through :mod:`mscore.ops._sharded_ops`).

A strategy gives, for each input, one int per axis: how many equal pieces the axis is cut
into over the devices (``((1, 1), (1, 2))`` for ``MatMul``: ``a`` whole, ``b``'s columns
cut in two — a column-parallel layer; ``((1, 2), (2, 1))``: a row-parallel one, whose
partial products the compiler sums). In SEMI_AUTO_PARALLEL mode the inputs are laid out that
way through the backend's ``shard`` hook (jax: ``NamedSharding`` over this process's
devices, eagerly placed and, inside a compiled step, a sharding constraint that XLA's GSPMD
partitioner follows, inserting the collectives itself). In every other mode a strategy is
recorded and changes nothing, as in MindSpore.
"""
from __future__ import annotations

import numbers

from mscore import _state, dispatch
from mscore.common.tensor import Tensor
from mscore.ops import _layout
from mscore.parallel import _context

_MODEL_PARALLEL_MODES = ("semi_auto_parallel",)
# how many network entries (batch_entry) are open: only the outermost gathers the batch
_entry = _state.section("semi_auto_batch_entry", {"depth": 0})


def check_strategy(value, name, owner):
    """``value`` (a tuple of tuples of ints) as MindSpore checks it in ``shard``; returns it
    with plain ints."""
    if not isinstance(value, tuple):
        raise TypeError(f"{name} must be tuple type, but got:{type(value)}")
    out = []
    for element in value:
        if not isinstance(element, tuple):
            raise TypeError(f"The element of strategy must be tuple/Layout type, but "
                            f"got:{type(element)}")
        for v in element:
            if not isinstance(v, numbers.Integral):
                raise TypeError(f"The {name}: {value} of {owner} is not valid, the value of "
                                f"strategy must be int type, but got:{type(v)}")
        out.append(tuple(int(v) for v in element))
    return tuple(out)


def across_processes():
    """True when the strategies cut arrays over the processes of a job (more than one rank
    joined)."""
    return _layout.across_processes()


def in_job():
    """True when this process joined a job (``init()``): :mod:`mscore.ops._sharded_ops`
    runs the primitives with strategies then (a job of one process computes them whole)."""
    return _layout.in_job()


def strategies_apply():
    """True when shard strategies lay inputs out (SEMI_AUTO_PARALLEL mode)."""
    return _context.parallel_mode() in _MODEL_PARALLEL_MODES


def lay_out(tensor, parts, what):
    """``tensor`` laid out as ``parts`` (one int per axis) over this process's devices."""
    if len(parts) != len(tensor.shape):
        raise ValueError(f"{what}: the strategy {parts} has {len(parts)} entries, the input "
                         f"has {len(tensor.shape)} axes (shape {tuple(tensor.shape)})")
    for axis, (p, n) in enumerate(zip(parts, tensor.shape)):
        if p < 1 or n % p:
            raise ValueError(f"{what}: axis {axis} of length {n} cannot be cut into {p} "
                             f"equal pieces (strategy {parts})")
    backend = dispatch.backend()
    if backend.shard is None:
        raise NotImplementedError(
            f"{what}: SEMI_AUTO_PARALLEL shard strategies in one process need a backend "
            f"that lays arrays out over devices; the {backend.name!r} backend does not "
            f"(supported: jax, through GSPMD over this process's devices, e.g. XLA_FLAGS="
            f"--xla_force_host_platform_device_count=2 on a CPU). Across the processes of a "
            f"job (communication.init(), e.g. 'mscore run --worker_num=2'), the strategies "
            f"of primitives run on every backend with collectives")
    if all(p == 1 for p in parts):
        return tensor
    return Tensor._wrap(backend.shard(tensor._data, tuple(parts)))


def lay_out_inputs(args, strategy, what):
    """``args`` with each Tensor laid out by its entry of ``strategy`` (one per Tensor)."""
    tensors = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if len(strategy) != len(tensors):
        raise ValueError(f"{what}: the strategy has {len(strategy)} entries, the call has "
                         f"{len(tensors)} Tensor inputs")
    out = list(args)
    for i, parts in zip(tensors, strategy):
        out[i] = lay_out(args[i], parts, what)
    return tuple(out)


class batch_entry:
    """``with batch_entry(args) as whole:`` — at the entry of a network run in
    SEMI_AUTO_PARALLEL mode across processes (``AutoParallel``, a top-level compiled call):
    unless ``full_batch`` (or ``dataset_strategy='full_batch'``) says every rank reads the
    whole batch, each rank's Tensor arguments are its rows of the global batch, so ``whole``
    holds them all-gathered along axis 0 (MindSpore's ``dataset_strategy='data_parallel'``);
    otherwise ``whole`` is ``args``. Nested entries pass their arguments through.
    ``full_batch`` (True/False) overrides the context's setting (``AutoParallel``'s
    ``dataset_strategy``)."""

    def __init__(self, args, full_batch=None):
        self.args = args
        self.full_batch = full_batch   # None: the auto-parallel context's setting

    def __enter__(self):
        args = self.args
        whole = _context.full_batch() if self.full_batch is None else self.full_batch
        if not _entry["depth"] and strategies_apply() and across_processes() and not whole:
            coll = _layout.job()[0]
            args = tuple(Tensor._wrap(coll.all_gather(a._data, None))
                         if isinstance(a, Tensor) else a for a in args)
        _entry["depth"] += 1
        return args

    def __exit__(self, exc_type, exc, tb):
        _entry["depth"] -= 1
        return False
