"""The parallel optimizer (``enable_parallel_optimizer=True`` in DATA_PARALLEL /
HYBRID_PARALLEL mode): the optimizer state is sharded over the ranks, ZeRO-style.

Each sharded parameter is cut along axis 0 into ``N`` equal slices (``N`` the group's size;
a parameter whose first dimension does not divide by ``N`` stays whole, as in MindSpore);
rank ``r`` owns slice ``r`` (its *master shard*) and the optimizer state of that slice only,
so a rank's checkpoint holds slices a strategy file describes. A step:

1. :class:`ShardedGradReducer` reduce-scatters the gradients (one collective per bucket of
   one dtype): rank ``r`` receives the sum (or mean) of slice ``r`` of every gradient;
   parameters left whole are all-reduced as in plain data parallelism;
2. :class:`ParallelOptimizer` takes its master shards from the current weights, runs an
   optimizer of the user's kind over them (built from the arguments the user's optimizer
   recorded, so its states are ``1/N`` of the size) and all-gathers the updated pieces back
   into the full weights (one collective per bucket).

A parameter stays whole (replicated, its state too) when it is smaller than
``parallel_optimizer_threshold`` KB, has ``parallel_optimizer=False`` or is
``layerwise_parallel``. The collectives are the backend's (:mod:`mscore.plugin.collectives`:
``reduce_scatter`` and ``all_gather``), eagerly and inside a compiled GRAPH_MODE step.

The master shards are this rank's rows of the current weights for the length of a step
(a view where the engine has views); between steps they hold no buffer and are not state:
no Parameter a cell reaches, nothing saved. What a rank holds is the whole weights and
``1/N`` of their optimizer state (``tests/sharded_memory_worker.py`` measures the storages).

The user's optimizer object keeps its parameters (the full weights) and shares the sharded
optimizer's states, learning rate and step counter, so checkpoints and callbacks see one
optimizer. The full weights stay on every rank (the forward pass needs them):
``optimizer_level='level3'`` (sharded weights) is not offered.
"""
from __future__ import annotations

import inspect

import numpy as np

from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common.tensor import Tensor
from mscore.communication import management
from mscore.communication.management import GlobalComm
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.wrap.accumulation import ACCUMULATION_PREFIX, ReduceAndStep, accumulation_sums
from mscore.nn.wrap.grad_reducer import DEFAULT_BUCKET_CAP_MB, DistributedGradReducer, plan_buckets
from mscore.parallel import _context

SHARD_PREFIX = "opt_shard"


class ShardPlan:
    """How the parameters of an optimizer are cut over ``size`` ranks: along axis 0, rank
    ``r`` owning rows ``r * d0 / size`` to ``(r + 1) * d0 / size`` (MindSpore's rule: a
    parameter whose first dimension does not divide by the number of ranks stays whole).

    ``sharded[i]``: parameter ``i`` is cut; ``piece[i]``: the number of elements of each
    rank's slice; ``buckets``: lists of sharded positions of one dtype, each one collective.
    """

    def __init__(self, params, size, rank, threshold_kb, bucket_cap_mb=DEFAULT_BUCKET_CAP_MB):
        self.size = int(size)
        self.rank = int(rank)
        self.shapes = [tuple(p.shape) for p in params]
        self.numels = [int(np.prod(s, dtype=np.int64)) for s in self.shapes]
        self.sharded = [self.size > 1 and p.parallel_optimizer and not p.layerwise_parallel
                        and len(s) > 0 and s[0] % self.size == 0
                        and n * p.dtype.itemsize >= threshold_kb * 1024
                        for p, s, n in zip(params, self.shapes, self.numels)]
        self.piece = [n // self.size for n in self.numels]
        positions = [i for i, s in enumerate(self.sharded) if s]
        local = plan_buckets([self.numels[i] for i in positions],
                             [params[i].dtype for i in positions],
                             int(bucket_cap_mb * 2 ** 20))
        self.buckets = [[positions[j] for j in bucket] for bucket in local]

    def slice_shape(self, i):
        """The shape of each rank's slice of parameter ``i``."""
        shape = self.shapes[i]
        return (shape[0] // self.size,) + shape[1:]

    def local_piece(self, i, native):
        """This rank's slice of parameter ``i`` (shape :meth:`slice_shape`)."""
        rows = self.shapes[i][0] // self.size
        return call("getitem", native, (slice(self.rank * rows, (self.rank + 1) * rows),))

    def rows(self, i, native):
        """Parameter ``i`` laid out as ``(size, piece)``: row ``r`` is rank ``r``'s slice."""
        return call("reshape", native, (self.size, self.piece[i]))

    def whole(self, i, rows):
        """The parameter of shape ``shapes[i]`` from its ``(size, piece)`` rows."""
        return call("reshape", rows, self.shapes[i])

    def state_bytes(self, optimizer):
        """Bytes of ``optimizer``'s state Parameters (every ParameterTuple but its
        ``parameters``): what one rank holds."""
        total = 0
        for name, tup in optimizer._param_tuples.items():
            if name != "parameters":
                total += sum(int(np.prod(p.shape, dtype=np.int64)) * p.dtype.itemsize
                             for p in tup)
        return total


def _join_columns(rows_list):
    """``(size, sum of pieces)``: the ``(size, piece)`` arrays side by side, flat."""
    joined = rows_list[0] if len(rows_list) == 1 else call("concat", rows_list, 1)
    return call("reshape", joined, (-1,))


def _split_pieces(flat, pieces):
    out, offset = [], 0
    for n in pieces:
        out.append(call("getitem", flat, (slice(offset, offset + n),)))
        offset += n
    return out


class ShardedGradReducer(Cell):
    """``reducer(grads)``: for each parameter of the plan, its piece of the reduced gradient
    (reduce-scattered) when sharded, the whole all-reduced gradient otherwise — the
    gradients the :class:`ParallelOptimizer` takes. ``mean`` divides by ``degree``."""

    def __init__(self, params, plan, mean, degree, group=GlobalComm.WORLD_COMM_GROUP):
        super().__init__(auto_prefix=False)
        self.plan = plan
        self.group = group
        self.replicated = DistributedGradReducer(params, mean, degree, group=group)
        # the whole-gradient reducer leaves the sharded gradients to the reduce-scatter
        self.replicated.reduced = tuple(r and not s for r, s in
                                        zip(self.replicated.reduced, plan.sharded))
        self.mean = mean
        self.degree = degree

    def broadcast_once(self, cell):
        """Rank 0's parameters on every rank before the first step."""
        self.replicated.broadcast_once(cell)

    def construct(self, grads):
        out = list(self.replicated(tuple(grads)))
        plan = self.plan
        coll = management.collectives()
        handle = management.group_handle(self.group)
        op = "mean" if self.mean and self.degree == plan.size else "sum"
        rescale = self.mean and op == "sum" and self.degree != 1
        for bucket in plan.buckets:
            rows = [plan.rows(i, out[i]._data) for i in bucket]
            mine = coll.reduce_scatter(_join_columns(rows), op, handle)
            if rescale:
                inverse = call("full", (), 1.0 / self.degree, out[bucket[0]].dtype)
                mine = call("mul", mine, inverse)
            for i, piece in zip(bucket, _split_pieces(mine, [plan.piece[i] for i in bucket])):
                out[i] = Tensor._wrap(call("reshape", piece, plan.slice_shape(i)))
        return tuple(out)


def _rebuild(optimizer, mapped):
    """An optimizer of ``optimizer``'s class and arguments over the parameters ``mapped``
    (``{id(parameter): replacement}``), from the arguments it recorded when built."""
    init_params = getattr(optimizer, "init_params", None)
    init_args = getattr(optimizer, "init_args", None)
    if init_params is None or init_args is None:
        raise TypeError(f"enable_parallel_optimizer: the optimizer {type(optimizer).__name__} "
                        f"did not record its arguments (an nn.Optimizer subclass records "
                        f"them); it cannot be sharded")
    params = init_params["params"]

    def swap(p):
        return mapped.get(id(p), p)
    if params and isinstance(params[0], dict):
        params = [{k: ([swap(p) for p in v] if k in ("params", "order_params") else v)
                   for k, v in group.items()} for group in params]
    else:
        params = [swap(p) for p in params]
    lr = optimizer.init_learning_rate
    if lr is None:   # a schedule: the same Cell
        lr = optimizer.learning_rate
    kwargs = dict(init_args)
    signature = inspect.signature(type(optimizer).__init__)
    for name, parameter in signature.parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:   # recorded as one dict
            kwargs.update(kwargs.pop(name, None) or {})
        elif parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            kwargs.pop(name, None)
    return type(optimizer)(params=params, learning_rate=lr, **kwargs)


class ParallelOptimizer(Cell):
    """``ParallelOptimizer(optimizer, plan)``; ``cell(grads)`` with the gradients of
    :class:`ShardedGradReducer`: the optimizer step on this rank's pieces, then the updated
    pieces all-gathered into the full weights. ``inner`` is the sharded optimizer,
    ``plan`` the :class:`ShardPlan`."""

    def __init__(self, optimizer, plan, group=GlobalComm.WORLD_COMM_GROUP):
        super().__init__(auto_prefix=False)
        self.plan = plan
        self.group = group
        # a ParameterTuple: the weights this cell assigns are reached through it (a compiled
        # program holding this cell but not the network threads them)
        self.weights = ParameterTuple(optimizer.parameters)
        shards, mapped = [], {}
        for i, p in enumerate(self.weights):
            if plan.sharded[i]:
                shard = Parameter(Tensor._wrap(plan.local_piece(i, p._data)), name=p.name,
                                  requires_grad=False)
                shard.parallel_optimizer = False
                shards.append(shard)
                mapped[id(p)] = shard
        self.inner = _rebuild(optimizer, mapped)
        order = [mapped.get(id(p), p) for p in self.weights]
        if [id(p) for p in self.inner.parameters] != [id(p) for p in order]:
            raise RuntimeError("enable_parallel_optimizer: the sharded optimizer keeps its "
                               "parameters in another order than the optimizer it replaces")
        for s in shards:   # the states took the weights' names; the shards get their own
            s.name = f"{SHARD_PREFIX}.{s.name}"
            s._step_scratch = True
            _release(s)
        # The shards are views of the weights for the length of a step, not state: a plain
        # tuple keeps them out of the Parameters a cell reaches (checkpoints, compiled
        # programs, the broadcast) and between steps they hold no buffer.
        self.inner.parameters = tuple(self.inner.parameters)
        self.shards = tuple(shards)
        _share_state(optimizer, self.inner)

    def construct(self, grads):
        plan = self.plan
        for i, (w, p) in enumerate(zip(self.weights, self.inner.parameters)):
            if plan.sharded[i]:   # the master shard: this rank's rows of the current weight
                p._assign(plan.local_piece(i, w._data))
        self.inner(tuple(grads))
        coll = management.collectives()
        handle = management.group_handle(self.group)
        params = self.inner.parameters
        for bucket in plan.buckets:
            pieces = [call("reshape", params[i]._data, (-1,)) for i in bucket]
            local = pieces[0] if len(pieces) == 1 else call("concat", pieces, 0)
            gathered = coll.all_gather(local, handle)
            rows = call("reshape", gathered, (plan.size, -1))
            offset = 0
            for i in bucket:
                n = plan.piece[i]
                columns = call("getitem", rows, (slice(None), slice(offset, offset + n)))
                self.weights[i]._assign(plan.whole(i, columns))
                offset += n
        for shard in self.shards:
            _release(shard)
        return True

    def state_bytes(self):
        """Bytes of optimizer state this rank holds."""
        return self.plan.state_bytes(self.inner)

    def sliced_parameters(self):
        """``{name: (whole shape, number of slices)}`` of the Parameters this rank holds a
        slice of (axis 0 cut in ``plan.size``): the optimizer states of sharded weights."""
        plan, params = self.plan, self.inner.parameters
        out = {}
        for _name, tup in self.inner._param_tuples.items():
            if len(tup) != len(params):
                continue   # not one state per parameter
            for i, p in enumerate(tup):
                if plan.sharded[i] and tuple(p.shape) == plan.slice_shape(i):
                    out[p.name] = (plan.shapes[i], plan.size)
        return out


def _release(shard):
    """Let ``shard`` hold no buffer until the next step assigns it (an empty array of its
    dtype)."""
    shard._assign(call("full", (0,), 0, shard.dtype))


def _share_state(user, inner):
    """Point ``user``'s state ParameterTuples, learning rate and step counter at
    ``inner``'s, so the user's optimizer reports (and saves) what is trained and its
    full-size states are freed."""
    for name in list(user._param_tuples):
        if name != "parameters" and name in inner._param_tuples:
            setattr(user, name, getattr(inner, name))
    for name in ("global_step", "learning_rate"):
        if isinstance(getattr(user, name, None), (Parameter, Cell)):
            setattr(inner, name, getattr(user, name))


def train_cell_update(optimizer):
    """``(reducer, optimizer)`` a train cell built now uses: in DATA_PARALLEL /
    HYBRID_PARALLEL mode a :class:`~mscore.nn.DistributedGradReducer` and the user's
    optimizer, or with ``enable_parallel_optimizer`` a :class:`ShardedGradReducer` and a
    :class:`ParallelOptimizer`; stand-alone ``(None, optimizer)``."""
    if not _context.reduces_gradients():
        return None, optimizer
    mean = _context.get_auto_parallel_context("gradients_mean")
    degree = _context.effective_device_num()
    params = list(optimizer.parameters)
    if not _context.shards_optimizer():
        return DistributedGradReducer(params, mean, degree), optimizer
    config = _context.optimizer_config()
    size = management.get_group_size()
    wanted = config["optimizer_weight_shard_size"]
    if wanted not in (-1, size):
        raise NotImplementedError(f"parallel_optimizer_config: optimizer_weight_shard_size "
                                  f"{wanted}: mscore shards over the whole job (-1 or {size})")
    plan = ShardPlan(params, size, management.get_rank(), config["parallel_optimizer_threshold"])
    return (ShardedGradReducer(params, plan, mean, degree),
            ParallelOptimizer(optimizer, plan))


def accumulation_plan(weights, reducer, optimizer):
    """``(sums, micro_reducer, update)`` of a train cell accumulating gradients: with the
    parallel optimizer and ``gradient_accumulation_shard`` (``optimizer_level='level2'``)
    every call reduce-scatters its gradients (``micro_reducer``) into sums of this rank's
    slices and ``update`` is the optimizer alone; otherwise whole sums, no reduction per
    call, and ``update`` reduces then steps."""
    if isinstance(reducer, ShardedGradReducer) and \
            _context.optimizer_config()["gradient_accumulation_shard"]:
        plan = reducer.plan
        sums = []
        for i, w in enumerate(weights):
            shape = plan.slice_shape(i) if plan.sharded[i] else tuple(w.shape)
            sums.append(Parameter(Tensor._wrap(call("full", shape, 0.0, w.dtype)),
                                  name=f"{ACCUMULATION_PREFIX}.{w.name}",
                                  requires_grad=False))
        return ParameterTuple(sums), reducer, optimizer
    return accumulation_sums(weights), None, ReduceAndStep(reducer, optimizer)
