"""Collective operations on Tensors, as ``mindspore.communication.comm_func``.

They run on the active backend's collectives (see :mod:`mscore.plugin.collectives`): eagerly
in PYNATIVE mode and inside a compiled GRAPH_MODE step alike, so a Cell's ``construct`` may
call them. ``async_op=True`` is accepted for MindSpore compatibility; the operation has
completed when the call returns and the handle's ``wait()`` does nothing.
"""
from __future__ import annotations

import numbers

from mscore.common.tensor import Tensor
from mscore.communication import management
from mscore.communication.management import GlobalComm


class ReduceOp:
    """Reductions of :func:`all_reduce`: ``SUM``, ``MAX``, ``MIN``, ``AVG`` (the mean over
    the group). MindSpore's ``PROD`` is not offered by every engine and is refused."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"
    AVG = "avg"


_OPS = {ReduceOp.SUM: "sum", ReduceOp.MAX: "max", ReduceOp.MIN: "min", ReduceOp.AVG: "mean"}


class CommHandle:
    """The handle of an ``async_op=True`` call; the work is already done."""

    def wait(self):
        """Return at once: mscore's collectives complete before they return."""


def _check_tensor(tensor, api):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"For '{api}', the input must be a Tensor, but got "
                        f"{type(tensor).__name__}")


def _check_async(async_op, api):
    if not isinstance(async_op, bool):
        raise TypeError(f"For '{api}', 'async_op' must be a bool, but got "
                        f"{type(async_op).__name__}")
    return CommHandle() if async_op else None


def _handle(group, api):
    if not isinstance(group, str):
        raise TypeError(f"For '{api}', the argument 'group' must be type of string, but got "
                        f"'group' type : {type(group)}.")
    return management.group_handle(group)


def all_reduce(tensor, op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP, async_op=False):
    """``(reduced tensor, handle)``: ``op`` ('sum', 'max', 'min', 'avg') of ``tensor`` over
    ``group``, the same on every member; ``handle`` is None unless ``async_op``."""
    _check_tensor(tensor, "all_reduce")
    if not isinstance(op, str):
        raise TypeError(f"For 'all_reduce', 'op' must be a str, but got {type(op).__name__}")
    if op not in _OPS:
        raise ValueError(f"For 'all_reduce', 'op' must be one of {sorted(_OPS)}, but got "
                         f"{op!r}")
    handle = _check_async(async_op, "all_reduce")
    group_handle = _handle(group, "all_reduce")
    out = management.collectives().all_reduce(tensor._data, _OPS[op], group_handle)
    return Tensor._wrap(out), handle


def broadcast(tensor, src=0, group=GlobalComm.WORLD_COMM_GROUP):
    """Global rank ``src``'s ``tensor`` on every member of ``group``."""
    _check_tensor(tensor, "broadcast")
    if isinstance(src, bool) or not isinstance(src, numbers.Integral):
        raise TypeError(f"For 'broadcast', 'src' must be an int, but got {type(src).__name__}")
    group_handle = _handle(group, "broadcast")
    if int(src) not in management.get_process_group_ranks(group):
        raise ValueError(f"For 'broadcast', 'src' {src} is not a member of group {group}")
    out = management.collectives().broadcast(tensor._data, int(src), group_handle)
    return Tensor._wrap(out)


def all_gather_into_tensor(tensor, group=GlobalComm.WORLD_COMM_GROUP, async_op=False):
    """``(gathered, handle)``: the members' tensors concatenated along axis 0 in group-rank
    order (shape ``(N * x_1, x_2, ...)`` for N members, as ``ops.AllGather``)."""
    _check_tensor(tensor, "all_gather_into_tensor")
    handle = _check_async(async_op, "all_gather_into_tensor")
    group_handle = _handle(group, "all_gather_into_tensor")
    out = management.collectives().all_gather(tensor._data, group_handle)
    return Tensor._wrap(out), handle


def reduce_scatter_tensor(tensor, op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP,
                          async_op=False):
    """``(block, handle)``: ``op`` of ``tensor`` over ``group``, axis 0 split into equal
    blocks, member ``i`` keeping block ``i`` (shape ``(x_1 / N, x_2, ...)`` for N members,
    as ``ops.ReduceScatter``)."""
    _check_tensor(tensor, "reduce_scatter_tensor")
    if not isinstance(op, str):
        raise TypeError(f"For 'reduce_scatter_tensor', 'op' must be a str, but got "
                        f"{type(op).__name__}")
    if op not in _OPS:
        raise ValueError(f"For 'reduce_scatter_tensor', 'op' must be one of {sorted(_OPS)}, "
                         f"but got {op!r}")
    handle = _check_async(async_op, "reduce_scatter_tensor")
    group_handle = _handle(group, "reduce_scatter_tensor")
    out = management.collectives().reduce_scatter(tensor._data, _OPS[op], group_handle)
    return Tensor._wrap(out), handle


def barrier(group=GlobalComm.WORLD_COMM_GROUP):
    """Wait until every member of ``group`` has called ``barrier`` (eager only)."""
    management.collectives().barrier(_handle(group, "barrier"))
