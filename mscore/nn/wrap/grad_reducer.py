"""Data-parallel gradient reduction: ``nn.DistributedGradReducer`` and what the train cells
use around it (overflow agreement, the parameter broadcast before the first step).

The gradients are all-reduced in *buckets*: gradients of one dtype are flattened and joined
until a bucket would pass ``bucket_cap_mb`` (25 MB, as torch's DDP), and each bucket is one
collective of the backend (:mod:`mscore.plugin.collectives`), in PYNATIVE mode and inside
the compiled GRAPH_MODE step alike. ``all_reduce_fusion_config`` of the auto-parallel
context (parameter indices) starts new buckets where it says instead. Parameters marked
``layerwise_parallel`` hold a different slice on each rank and are neither reduced nor
broadcast, as in MindSpore.
"""
from __future__ import annotations

import numbers

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor, copier
from mscore.communication import management
from mscore.communication.management import GlobalComm
from mscore.dispatch import backend, call
from mscore.nn.cell import Cell
from mscore.parallel import _context

DEFAULT_BUCKET_CAP_MB = 25


def plan_buckets(sizes, dtypes, cap_bytes, boundaries=()):
    """Buckets of positions: consecutive entries of one dtype up to ``cap_bytes`` each (an
    entry larger than the cap alone), a new bucket at every index in ``boundaries``.

    ``sizes`` are element counts, ``dtypes`` mscore DTypes; returns a list of index lists in
    which every bucket holds one dtype and the order within a dtype is kept.
    """
    segments, start = [], 0
    for b in list(boundaries) + [len(sizes)]:
        if b > start:
            segments.append(range(start, min(b, len(sizes))))
            start = b
    capped = not boundaries   # explicit boundaries replace the size cap (MindSpore's rule)
    buckets = []
    for segment in segments:
        open_by_dtype = {}
        for i in segment:
            nbytes = sizes[i] * dtypes[i].itemsize
            current = open_by_dtype.get(dtypes[i])
            if current is not None and capped and current[1] + nbytes > cap_bytes:
                current = None
            if current is None:
                current = open_by_dtype[dtypes[i]] = [[], 0]
                buckets.append(current)
            current[0].append(i)
            current[1] += nbytes
    return [indices for indices, _ in buckets]


def _flatten(arrays):
    flat = [call("reshape", a, (-1,)) for a in arrays]
    return flat[0] if len(flat) == 1 else call("concat", flat, 0)


def _unflatten(flat, shapes):
    out, offset = [], 0
    for shape in shapes:
        n = _numel(shape)
        piece = call("getitem", flat, (slice(offset, offset + n),))
        out.append(call("reshape", piece, tuple(shape)))
        offset += n
    return out


class DistributedGradReducer(Cell):
    """All-reduce the gradients of ``parameters`` across the job (data parallelism).

    ``DistributedGradReducer(parameters, mean=None, degree=None, fusion_type=1,
    group=GlobalComm.WORLD_COMM_GROUP, bucket_cap_mb=25)``; ``reducer(grads)`` returns the
    summed gradients (one per parameter, same order), divided by ``degree`` when ``mean``.
    ``mean`` defaults to the auto-parallel context's ``gradients_mean``, ``degree`` to the
    group's size. Needs ``mscore.communication.init()`` first (``RuntimeError`` otherwise);
    ``degree`` must be a positive int (``ValueError``, MindSpore's message).
    """

    def __init__(self, parameters, mean=None, degree=None, fusion_type=1,
                 group=GlobalComm.WORLD_COMM_GROUP, bucket_cap_mb=DEFAULT_BUCKET_CAP_MB):
        super().__init__(auto_prefix=False)
        params = list(parameters)
        for i, p in enumerate(params):
            if not isinstance(p, Parameter):
                raise TypeError(f"For 'DistributedGradReducer', parameters[{i}] must be a "
                                f"Parameter, but got {type(p).__name__}")
        if mean is None:
            mean = _context.get_auto_parallel_context("gradients_mean")
        if not isinstance(mean, bool):
            raise TypeError(f"For 'DistributedGradReducer', 'mean' must be a bool or None, but "
                            f"got {type(mean).__name__}")
        if degree is not None and (isinstance(degree, bool) or
                                   not isinstance(degree, numbers.Integral) or degree <= 0):
            raise ValueError(f"For 'DistributedGradReducer', parameter 'degree' in "
                             f"DistributedGradReducer should large than 0 and be int, "
                             f"degree: {degree}.")
        if not isinstance(bucket_cap_mb, numbers.Real) or bucket_cap_mb <= 0:
            raise ValueError(f"For 'DistributedGradReducer', 'bucket_cap_mb' must be a "
                             f"positive number, but got {bucket_cap_mb!r}")
        if not management.is_initialized():
            raise RuntimeError("For 'DistributedGradReducer', the communication is not "
                               "initialised: call mscore.communication.init() first (in a "
                               "script started by 'mscore run', torchrun or srun)")
        self.group = group
        management.group_handle(group)   # an unknown group fails here, not at the first step
        self.mean = mean
        self.degree = int(degree) if degree is not None else management.get_group_size(group)
        self.fusion_type = fusion_type
        self.bucket_cap_bytes = int(bucket_cap_mb * 2 ** 20)
        self.reduced = tuple(not p.layerwise_parallel for p in params)
        self._plans = {}
        self._broadcast_done = False

    def bucket_plan(self, grads):
        """The buckets (lists of gradient positions) ``grads`` are reduced in."""
        shapes = tuple(g.shape for g in grads)
        dtypes = tuple(g.dtype for g in grads)
        key = (shapes, dtypes)
        plan = self._plans.get(key)
        if plan is None:
            wanted = [i for i, r in enumerate(self.reduced) if r and i < len(grads)]
            sizes = [_numel(shapes[i]) for i in wanted]
            boundaries = [sum(1 for i in wanted if i < b)
                          for b in _context.get_auto_parallel_context("all_reduce_fusion_config")]
            local = plan_buckets(sizes, [dtypes[i] for i in wanted], self.bucket_cap_bytes,
                                 boundaries)
            plan = self._plans[key] = [[wanted[j] for j in bucket] for bucket in local]
        return plan

    def bytes_per_step(self, grads):
        """The bytes of gradients this reducer all-reduces for ``grads``."""
        return sum(_numel(grads[i].shape) * grads[i].dtype.itemsize
                   for bucket in self.bucket_plan(grads) for i in bucket)

    def construct(self, grads):
        grads = tuple(grads)
        if len(grads) != len(self.reduced):
            raise ValueError(f"For 'DistributedGradReducer', expected {len(self.reduced)} "
                             f"gradients (one per parameter), got {len(grads)}")
        coll = management.collectives()
        handle = management.group_handle(self.group)
        size = management.get_group_size(self.group)
        # the engine averages over the group itself when degree is the group's size
        op = "mean" if self.mean and self.degree == size else "sum"
        rescale = self.mean and op == "sum" and self.degree != 1
        out = list(grads)
        for bucket in self.bucket_plan(grads):
            arrays = [grads[i]._data for i in bucket]
            if size > 1:   # the sum (and mean) of one is itself
                arrays = _all_reduce_bucket(coll, arrays, [grads[i].shape for i in bucket],
                                            op, handle)
            if rescale:
                inverse = call("full", (), 1.0 / self.degree, grads[bucket[0]].dtype)
                arrays = [call("mul", a, inverse) for a in arrays]
            for i, a in zip(bucket, arrays):
                out[i] = Tensor._wrap(a)
        return tuple(out)

    def broadcast_once(self, cell):
        """Before ``cell``'s first step: give every Parameter it reaches rank 0's value
        (weights, optimizer state, loss scale), once."""
        if self._broadcast_done:
            return
        broadcast_parameters(list(cell.get_parameters()), group=self.group)
        self._broadcast_done = True


def _all_reduce_bucket(coll, arrays, shapes, op, handle):
    """The reduced ``arrays`` of one bucket, in one collective: the engine's own coalesced
    all-reduce when it has one, else one all-reduce of the arrays joined into one."""
    if coll.all_reduce_coalesced is not None:
        return list(coll.all_reduce_coalesced(arrays, op, handle))
    total = coll.all_reduce(_flatten(arrays), op, handle)
    return _unflatten(total, shapes)


def _numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def broadcast_parameters(parameters, root=0, group=GlobalComm.WORLD_COMM_GROUP,
                         bucket_cap_mb=DEFAULT_BUCKET_CAP_MB):
    """Give every Parameter (but ``layerwise_parallel`` ones) global rank ``root``'s value,
    in buckets of one dtype; eager (call it outside compiled steps)."""
    params = [p for p in parameters if not p.layerwise_parallel]
    if not params or management.get_group_size(group) == 1:
        return
    coll = management.collectives()
    handle = management.group_handle(group)
    sizes = [_numel(p.shape) for p in params]
    dtypes = [p.dtype for p in params]
    own = copier(backend())
    for bucket in plan_buckets(sizes, dtypes, int(bucket_cap_mb * 2 ** 20)):
        flat = _flatten([params[i]._data for i in bucket])
        value = coll.broadcast(flat, root, handle)
        # each Parameter gets a buffer of its own: a view would keep the whole bucket alive
        # for as long as any Parameter of it is not reassigned (a learning rate, a weight
        # updated in place)
        for i, piece in zip(bucket, _unflatten(value, [params[i].shape for i in bucket])):
            params[i]._assign(own(piece))
        del flat, value


def agree_overflow(overflow, group=GlobalComm.WORLD_COMM_GROUP):
    """A bool Tensor, True on every rank when ``overflow`` is True on any rank (an all-reduce
    max of the flag), so that all ranks skip the step together."""
    if management.get_group_size(group) == 1:
        return overflow
    coll = management.collectives()
    flag = call("cast", overflow._data, mdt.float32)
    total = coll.all_reduce(flag, "max", management.group_handle(group))
    return Tensor._wrap(call("greater", total, call("full", (), 0.0, mdt.float32)))
