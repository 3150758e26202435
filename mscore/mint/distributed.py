"""``mindspore.mint.distributed``: PyTorch's ``torch.distributed`` spelling of the
collectives of :mod:`mscore.communication`.

As in PyTorch and MindSpore, results are written into the tensors given (``all_reduce``
changes ``tensor`` in place, ``all_gather`` fills ``tensor_list``) and each call returns a
handle when ``async_op`` is True, else None; a group is a name (None for the world), made by
:func:`new_group`. mscore's collectives complete before they return, so a handle's
``wait()`` does nothing. Every collective here is built from the backend contract's five
(all-reduce, all-gather, broadcast, reduce-scatter, barrier): ``gather``, ``scatter``,
``reduce`` and the all-to-all family move the whole group's data, where an engine's own
kernel would move a share of it.

Not offered: point-to-point transfers (``send``, ``recv``, ``isend``, ``irecv``, ``P2POp``,
``batch_isend_irecv``; the backend contract has no point-to-point transfer) and the object
collectives (``all_gather_object`` and the rest: they unpickle what other processes send).
"""
from __future__ import annotations

import hashlib
import numbers

import numpy as np

from mscore import ops
from mscore.common.tensor import Tensor
from mscore.communication import comm_func, management
from mscore.communication.comm_func import CommHandle
from mscore.communication.management import GlobalComm

__all__ = [
    "is_available", "is_initialized", "init_process_group", "destroy_process_group",
    "get_rank", "get_world_size", "new_group", "get_backend", "get_global_rank",
    "get_group_rank", "get_process_group_ranks", "all_reduce", "all_gather",
    "all_gather_into_tensor", "all_gather_into_tensor_uneven", "reduce_scatter",
    "reduce_scatter_tensor", "reduce_scatter_tensor_uneven", "broadcast", "barrier",
    "gather", "scatter", "reduce", "all_to_all", "all_to_all_single",
]

_REDUCE_OPS = ("sum", "prod", "min", "max", "avg")


# -- argument checks (MindSpore's messages) ----------------------------------------------------
def _group(group):
    if group is None:
        return GlobalComm.WORLD_COMM_GROUP
    if not isinstance(group, str):
        raise TypeError(f"The argument 'group' must be type of string, but got 'group' type : "
                        f"{type(group)}.")
    return group


def _async(async_op):
    if not isinstance(async_op, bool):
        raise TypeError(f"The argument 'async_op' must be a bool, but got {type(async_op)}.")
    return CommHandle() if async_op else None


def _tensor(value, api, what="input tensor"):
    if not isinstance(value, Tensor):
        raise TypeError(f"For {api}, the {what} must be tensor")
    return value


def _tensors(values, api):
    if not isinstance(values, (list, tuple)) or not all(isinstance(t, Tensor) for t in values):
        raise TypeError(f"For {api}, the tensor list must be a list of tensors")
    return list(values)


def _rank_arg(value, name, api):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For {api}, the {name} must be int")
    return int(value)


def _reduce_op(op, api):
    if not isinstance(op, str):
        raise TypeError(f"For {api}, the input op type must be str")
    if op not in _REDUCE_OPS:
        raise TypeError(f"For {api}, the input op value must be one of sum, prod, min, max, "
                        f"avg")
    return op


def _write(target, value):
    """``value`` into ``target`` in place (the target's dtype kept)."""
    target.assign_value(ops.cast(value, target.dtype) if value.dtype != target.dtype else value)


def _group_size(group):
    return management.get_group_size(group)


def _group_rank(group):
    return management.get_rank(group)


def _gathered(tensor, group):
    """Every member's ``tensor`` stacked along a new axis 0, in group-rank order."""
    flat, _ = comm_func.all_gather_into_tensor(ops.expand_dims(tensor, 0), group)
    return flat


def _member_of(global_rank, group, api):
    ranks = management.get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"For {api}, rank {global_rank} is not a member of group {group} "
                         f"(ranks {ranks})")
    return ranks.index(global_rank)


# -- the job and its groups ---------------------------------------------------------------------
def is_available():
    """True: mscore's collectives are always built in (whether a backend offers them is
    checked when the job is joined)."""
    return True


def is_initialized():
    """True once the job is joined (:func:`init_process_group`) and until it is left."""
    return management.is_initialized()


def init_process_group(backend="hccl", init_method=None, timeout=None, world_size=-1,
                       rank=-1, store=None, group_name="", pg_options=None, device_id=None):
    """Join the job this process was launched in (:func:`mscore.communication.init`, by the
    launcher's variables). ``backend`` is MindSpore's 'hccl' (the engine is then chosen by
    the device: NCCL on GPU, gloo on CPU) or mscore's engine names 'nccl', 'mccl', 'gloo';
    ``init_method``, ``store``, ``world_size`` and ``rank`` are not offered: the launcher
    (``mscore run``) sets the rendezvous."""
    if backend not in ("hccl", "nccl", "mccl", "gloo"):
        raise ValueError("Only support hccl now, please setting backend to hccl or using "
                         "default value")
    if init_method is not None and store is not None:
        raise ValueError("Only one of init_method and store is supported.")
    if init_method is not None or store is not None or world_size != -1 or rank != -1:
        raise ValueError("For 'init_process_group', init_method, store, world_size and rank "
                         "are set by the launcher (mscore run); leave them at their defaults")
    management.init(None if backend == "hccl" else backend)


def destroy_process_group(group=None):
    """Leave the job (the world group or None), or forget the group ``group``."""
    if group is None or group == GlobalComm.WORLD_COMM_GROUP:
        management.release()
        return
    if not isinstance(group, str):
        raise TypeError(f"For 'destroy_group', the argument 'group' must be type of string or "
                        f"None, but got 'group' type : {type(group)}.")
    management.destroy_group(group)


def get_rank(group=None):
    """This process's rank in ``group`` (the world when None)."""
    if group is not None and not isinstance(group, str):
        raise TypeError(f"For 'get_rank', the argument 'group' must be type of string, but "
                        f"got 'group' type : {type(group)}.")
    return management.get_rank(_group(group))


def get_world_size(group=None):
    """The number of processes in ``group`` (the world when None)."""
    if group is not None and not isinstance(group, str):
        raise TypeError(f"For 'get_world_size', the argument 'group' must be type of string, "
                        f"but got 'group' type : {type(group)}.")
    return management.get_group_size(_group(group))


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None):
    """The name of a new group of the global ``ranks`` (the world's name when None), made on
    every process of the job in the same order, as MindSpore names it
    (``<backend>_<size>_<sha1 of the ranks>``)."""
    if ranks is None:
        return GlobalComm.WORLD_COMM_GROUP
    if not isinstance(ranks, list):
        raise TypeError(f"ranks must be list, but got {type(ranks)}")
    ranks = sorted(ranks)
    backend = "hccl" if backend is None else backend
    if not isinstance(backend, str) or backend not in ("hccl", "mccl"):
        raise TypeError(f"the input backend must be hccl or mccl, but got {backend}")
    digest = hashlib.sha1(bytes("_".join(map(str, ranks)), "utf-8")).hexdigest()
    name = f"{backend}_{len(ranks)}_{digest}"
    management.create_group(name, ranks)
    return name


def get_backend(group=None):
    """The engine family of ``group``: 'hccl' for the world (MindSpore's answer), else the
    family its name carries."""
    if group is None:
        return "hccl"
    if not isinstance(group, str):
        raise TypeError(f"For 'get_backend', the argument 'group' must be type of string or "
                        f"None, but got 'group' type : {type(group)}.")
    return "mccl" if "mccl" in group else "hccl"


def get_global_rank(group, group_rank):
    """The global rank of member ``group_rank`` of ``group``."""
    if not isinstance(group_rank, int):
        raise TypeError(f"The group_rank argument must be integer, but got {type(group_rank)}.")
    if group is None or group == GlobalComm.WORLD_COMM_GROUP:
        return group_rank
    if not isinstance(group, str):
        raise TypeError(f"For 'get_global_rank', the argument 'group' must be type of string "
                        f"or None, but got 'group' type : {type(group)}.")
    return management.get_world_rank_from_group_rank(group, group_rank)


def get_group_rank(group, global_rank):
    """The rank inside ``group`` of the global rank ``global_rank``."""
    if not isinstance(global_rank, int):
        raise TypeError(f"The global_rank argument must be integer, but got "
                        f"{type(global_rank)}.")
    if group is not None and not isinstance(group, str):
        raise TypeError(f"For 'get_group_rank_from_world_rank', the argument 'group' must be "
                        f"type of string, but got 'group' type : {type(group)}.")
    return management.get_group_rank_from_world_rank(global_rank, _group(group))


def get_process_group_ranks(group=None):
    """The global ranks of ``group`` (the world when None), as a list."""
    if group is not None and not isinstance(group, str):
        raise TypeError(f"For 'get_process_group_ranks', the argument 'group' must be type of "
                        f"string or None, but got 'group' type : {type(group)}.")
    return management.get_process_group_ranks(_group(group))


# -- collectives --------------------------------------------------------------------------------
def _all_reduced(tensor, op, group):
    """``op`` of ``tensor`` over ``group`` (``prod`` as the product of the gathered values,
    which the contract's all-reduce does not offer)."""
    if op == "prod":
        return ops.prod(_gathered(tensor, group), 0)
    out, _ = comm_func.all_reduce(tensor, op, group)
    return out


def all_reduce(tensor, op="sum", group=None, async_op=False):
    """``op`` ('sum', 'prod', 'min', 'max', 'avg') of ``tensor`` over ``group``, written into
    ``tensor`` on every member."""
    _tensor(tensor, "all_reduce")
    op = _reduce_op(op, "all_reduce")
    group, handle = _group(group), _async(async_op)
    _write(tensor, _all_reduced(tensor, op, group))
    return handle


def reduce(tensor, dst, op="sum", group=None, async_op=False):
    """``op`` of ``tensor`` over ``group``, written into ``tensor`` on the global rank
    ``dst`` (the others' ``tensor`` is left as it was)."""
    _tensor(tensor, "reduce")
    dst = _rank_arg(dst, "dst", "reduce")
    op = _reduce_op(op, "reduce")
    group, handle = _group(group), _async(async_op)
    out = _all_reduced(tensor, op, group)
    if management.get_process_group_ranks(group)[_group_rank(group)] == dst:
        _write(tensor, out)
    return handle


def broadcast(tensor, src, group=None, async_op=False):
    """The global rank ``src``'s ``tensor`` written into ``tensor`` on every member."""
    _tensor(tensor, "broadcast")
    src = _rank_arg(src, "src", "broadcast")
    group, handle = _group(group), _async(async_op)
    _write(tensor, comm_func.broadcast(tensor, src, group))
    return handle


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every member of ``group`` has called ``barrier``."""
    group, handle = _group(group), _async(async_op)
    comm_func.barrier(group)
    return handle


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """The members' ``input_tensor`` concatenated along axis 0 in group-rank order, written
    into ``output_tensor``."""
    _tensor(output_tensor, "all_gather_into_tensor", "output tensor")
    _tensor(input_tensor, "all_gather_into_tensor")
    group, handle = _group(group), _async(async_op)
    out, _ = comm_func.all_gather_into_tensor(input_tensor, group)
    if out.shape != output_tensor.shape:
        raise ValueError(f"For all_gather_into_tensor, the output tensor's shape must be "
                         f"{out.shape}, but got {output_tensor.shape}")
    _write(output_tensor, out)
    return handle


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Each member's ``tensor`` written into ``tensor_list[member]`` on every member."""
    tensor_list = _tensors(tensor_list, "all_gather")
    _tensor(tensor, "all_gather")
    group, handle = _group(group), _async(async_op)
    if len(tensor_list) != _group_size(group):
        raise TypeError(f"For all_gather, the length of the tensor list must be the group "
                        f"size {_group_size(group)}, but got {len(tensor_list)}")
    stacked = _gathered(tensor, group)
    for i, target in enumerate(tensor_list):
        _write(target, stacked[i])
    return handle


def _uneven_gather(input, group):
    """The members' ``input`` (which may differ in their axis-0 length) concatenated along
    axis 0: each is padded to the longest, gathered, and cut back."""
    lengths = _gathered(Tensor(np.array(input.shape[0], np.int64)), group).asnumpy()
    longest = int(lengths.max())
    pad = longest - input.shape[0]
    padded = input if pad == 0 else ops.concat(
        [input, ops.zeros((pad,) + input.shape[1:], input.dtype)], 0)
    stacked = _gathered(padded, group)
    return ops.concat([stacked[i][:int(n)] for i, n in enumerate(lengths)], 0)


def all_gather_into_tensor_uneven(output, input, output_split_sizes=None, group=None,
                                  async_op=False):
    """As :func:`all_gather_into_tensor` where the members' axis-0 lengths may differ
    (``output_split_sizes``, when given, must list them)."""
    _tensor(output, "all_gather_into_tensor_uneven", "output tensor")
    _tensor(input, "all_gather_into_tensor_uneven")
    group, handle = _group(group), _async(async_op)
    out = _uneven_gather(input, group)
    if output_split_sizes is not None and sum(output_split_sizes) != out.shape[0]:
        raise ValueError(f"For all_gather_into_tensor_uneven, output_split_sizes "
                         f"{list(output_split_sizes)} do not add up to the gathered length "
                         f"{out.shape[0]}")
    _write(output, out)
    return handle


def reduce_scatter_tensor(output, input, op="sum", group=None, async_op=False):
    """``op`` of ``input`` over ``group``, axis 0 cut into equal blocks, member ``i``'s block
    written into its ``output``."""
    _tensor(output, "reduce_scatter_tensor", "output tensor")
    _tensor(input, "reduce_scatter_tensor")
    op = _reduce_op(op, "reduce_scatter_tensor")
    group, handle = _group(group), _async(async_op)
    if op == "prod":
        size, rank = _group_size(group), _group_rank(group)
        block = input.shape[0] // size
        out = _all_reduced(input, op, group)[rank * block:(rank + 1) * block]
    else:
        out, _ = comm_func.reduce_scatter_tensor(input, op, group)
    _write(output, out)
    return handle


def reduce_scatter(output, input_list, op="sum", group=None, async_op=False):
    """``op`` over ``group`` of each member's ``input_list[i]``, written into member ``i``'s
    ``output``."""
    _tensor(output, "reduce_scatter", "output tensor")
    input_list = _tensors(input_list, "reduce_scatter")
    if len(input_list) != _group_size(_group(group)):
        raise TypeError(f"For reduce_scatter, the length of the input list must be the group "
                        f"size {_group_size(_group(group))}, but got {len(input_list)}")
    return reduce_scatter_tensor(output, ops.concat(input_list, 0), op, group, async_op)


def reduce_scatter_tensor_uneven(output, input, input_split_sizes=None, op="sum",
                                 group=None, async_op=False):
    """``op`` of ``input`` over ``group``, axis 0 cut at ``input_split_sizes`` (equal blocks
    when None), member ``i``'s block written into its ``output``."""
    _tensor(output, "reduce_scatter_tensor_uneven", "output tensor")
    _tensor(input, "reduce_scatter_tensor_uneven")
    op = _reduce_op(op, "reduce_scatter_tensor_uneven")
    group, handle = _group(group), _async(async_op)
    size, rank = _group_size(group), _group_rank(group)
    sizes = _split_sizes(input_split_sizes, input.shape[0], size,
                         "reduce_scatter_tensor_uneven")
    start = sum(sizes[:rank])
    _write(output, _all_reduced(input, op, group)[start:start + sizes[rank]])
    return handle


def _split_sizes(sizes, length, members, api):
    if sizes is None or len(sizes) == 0:
        if length % members:
            raise ValueError(f"For {api}, axis 0 of length {length} cannot be cut into "
                             f"{members} equal blocks")
        return [length // members] * members
    sizes = [int(s) for s in sizes]
    if len(sizes) != members or sum(sizes) != length or min(sizes) < 0:
        raise ValueError(f"For {api}, the split sizes {sizes} must be {members} non-negative "
                         f"lengths adding up to {length}")
    return sizes


def gather(tensor, gather_list, dst=0, group=None, async_op=False):
    """Each member's ``tensor`` written into ``gather_list[member]`` on the global rank
    ``dst`` (the list is ignored elsewhere)."""
    _tensor(tensor, "gather")
    dst = _rank_arg(dst, "dst", "gather")
    group, handle = _group(group), _async(async_op)
    dst_index = _member_of(dst, group, "gather")
    stacked = _gathered(tensor, group)
    if _group_rank(group) == dst_index:
        gather_list = _tensors(gather_list, "gather")
        if len(gather_list) != _group_size(group):
            raise TypeError(f"For gather, the length of the gather list must be the group "
                            f"size {_group_size(group)}, but got {len(gather_list)}")
        for i, target in enumerate(gather_list):
            _write(target, stacked[i])
    return handle


def scatter(tensor, scatter_list, src=0, group=None, async_op=False):
    """``scatter_list[member]`` of the global rank ``src`` written into each member's
    ``tensor``."""
    _tensor(tensor, "scatter_tensor", "output tensor")
    src = _rank_arg(src, "src", "scatter_tensor")
    group, handle = _group(group), _async(async_op)
    src_index = _member_of(src, group, "scatter_tensor")
    size, rank = _group_size(group), _group_rank(group)
    if rank == src_index:
        scatter_list = _tensors(scatter_list, "scatter_tensor")
        if len(scatter_list) != size:
            raise TypeError(f"For scatter_tensor, the length of the scatter list must be the "
                            f"group size {size}, but got {len(scatter_list)}")
        blocks = ops.stack([ops.cast(t, tensor.dtype) for t in scatter_list], 0)
    else:
        blocks = ops.zeros((size,) + tensor.shape, tensor.dtype)
    _write(tensor, comm_func.broadcast(blocks, src, group)[rank])
    return handle


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Member ``j``'s ``input_tensor_list[i]`` written into member ``i``'s
    ``output_tensor_list[j]`` (the tensors may differ in shape)."""
    outputs = _tensors(output_tensor_list, "all_to_all")
    inputs = _tensors(input_tensor_list, "all_to_all")
    group, handle = _group(group), _async(async_op)
    size, rank = _group_size(group), _group_rank(group)
    if len(outputs) != size or len(inputs) != size:
        raise TypeError(f"For all_to_all, both tensor lists must hold the group size {size} "
                        f"tensors, but got {len(outputs)} and {len(inputs)}")
    for i in range(size):
        # every member takes part in each gather; only the destination keeps it
        row = _uneven_gather(ops.reshape(inputs[i], (-1,)), group)
        if i != rank:
            continue
        lengths = [o.size for o in outputs]
        if sum(lengths) != row.shape[0]:
            raise ValueError(f"For all_to_all, the output tensors hold {sum(lengths)} "
                             f"elements but {row.shape[0]} were sent to this rank")
        start = 0
        for j, target in enumerate(outputs):
            _write(target, ops.reshape(row[start:start + lengths[j]], target.shape))
            start += lengths[j]
    return handle


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """``input``'s axis 0 cut at ``input_split_sizes`` (equal blocks when None), block ``i``
    sent to member ``i``; the blocks received, in member order, written into ``output``
    (cut at ``output_split_sizes``)."""
    _tensor(output, "all_to_all_single", "output tensor")
    _tensor(input, "all_to_all_single")
    group, handle = _group(group), _async(async_op)
    size, rank = _group_size(group), _group_rank(group)
    sent = _split_sizes(input_split_sizes, input.shape[0], size, "all_to_all_single")
    table = _gathered(Tensor(np.array(sent, np.int64)), group).asnumpy()
    received = [int(table[j][rank]) for j in range(size)]
    if output_split_sizes is not None and len(output_split_sizes) and \
            [int(s) for s in output_split_sizes] != received:
        raise ValueError(f"For all_to_all_single, output_split_sizes "
                         f"{list(output_split_sizes)} do not match the sizes sent "
                         f"{received}")
    everything = _uneven_gather(input, group)
    offsets = np.concatenate([[0], np.cumsum(table.sum(axis=1))])
    pieces = []
    for j in range(size):
        start = int(offsets[j]) + int(table[j][:rank].sum())
        pieces.append(everything[start:start + received[j]])
    _write(output, ops.concat(pieces, 0))
    return handle
