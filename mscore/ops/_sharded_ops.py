"""Primitives with shard strategies in a job of several processes (SEMI_AUTO_PARALLEL).

Each rank computes its piece of an operator, as MindSpore's compiler partitions it: the
strategy of the operator gives its device matrix (one dimension per cut axis of the
computation, the repeated calculations first) and which dimension cuts each input; the
inputs are brought to those pieces (a piece already held is used as it is, a replicated
value is sliced locally, anything else is all-gathered first), the primitive runs on the
pieces, and a cut contraction (MatMul's inner axis, a reduced axis, the rows of a
vocabulary-parallel Gather) is summed over the ranks at once (an all-reduce). The output
keeps its pieces (:class:`~mscore.ops._layout.ShardedTensor`) for the next operator with a
matching strategy.

Parameters keep their slices: the first time a strategy cuts a Parameter, the cut is
recorded and the whole Parameter is sliced on the fly; after the step (the optimizer's
update, or the compiled program that ran it) :func:`settle` replaces the Parameter and the
optimizer states cloned from it by this rank's slice, so ``param.asnumpy()`` is the slice,
as in MindSpore after compilation.
"""
from __future__ import annotations

import math
import weakref

from mscore import _state, dispatch
from mscore._state import thread as _thread
from mscore.common.parameter import Parameter, assign_all
from mscore.common.tensor import Tensor
from mscore.ops import _layout
from mscore.ops._layout import TensorLayout

call = dispatch.call

_ELEMENTWISE = frozenset((
    "Add", "Sub", "Mul", "Div", "RealDiv", "Maximum", "Minimum", "Pow", "Square", "Sqrt",
    "Rsqrt", "Exp", "Log", "Neg", "Abs", "ReLU", "ReLU6", "GeLU", "FastGeLU", "Sigmoid",
    "Tanh", "SiLU", "Softplus", "Erf", "Sin", "Cos", "Reciprocal", "LeakyReLU", "Elu",
    "SquaredDifference", "AddN", "BiasAdd", "Cast"))
_ALONG_AXIS = frozenset(("Softmax", "LogSoftmax"))
_REDUCTIONS = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max",
               "ReduceMin": "min"}
SUPPORTED = sorted(_ELEMENTWISE | _ALONG_AXIS | set(_REDUCTIONS)
                   | {"MatMul", "BatchMatMul", "Gather", "LayerNorm", "Transpose"})


class _Plan:
    """An operator's partition: its device matrix, the layout of each Tensor input, the
    layout of its (first) output, and what to do after the local computation."""

    def __init__(self, dev_matrix, inputs, output, partial=False, factor=1.0):
        self.dev_matrix = dev_matrix
        self.inputs = inputs            # one TensorLayout per Tensor input
        self.output = output            # TensorLayout of the output (its full shape)
        self.partial = partial          # the local results are partial sums
        self.factor = factor

    @property
    def repeat(self):
        return self.dev_matrix[0]


def _what(prim):
    return f"For '{prim.name}' with shard strategy {prim.attrs.get('in_strategy')}"


def _device_matrix(prim, dims, world):
    used = math.prod(dims)
    if used < 1 or world % used:
        raise ValueError(f"{_what(prim)}: the strategy uses {used} devices, which does not "
                         f"divide the {world} devices of the job")
    return (world // used,) + tuple(dims)


def _check_cuts(prim, shape, parts, index):
    if len(parts) != len(shape):
        raise ValueError(f"{_what(prim)}: input {index} has {len(shape)} dimensions (shape "
                         f"{tuple(shape)}) but its strategy {tuple(parts)} has {len(parts)}")
    for axis, (n, p) in enumerate(zip(shape, parts)):
        if p < 1 or n % p:
            raise ValueError(f"{_what(prim)}: dimension {axis} of input {index} (length {n}) "
                             f"cannot be cut into {p} equal pieces")


def _matmul(prim, shapes, strategy, world):
    (sa, sb), (a, b) = strategy, shapes
    batch = len(a) - 2
    if len(a) != len(b):
        raise ValueError(f"{_what(prim)}: both inputs must have the same number of "
                         f"dimensions, got shapes {tuple(a)} and {tuple(b)}")
    ta, tb = bool(getattr(prim, "transpose_a", False)), bool(getattr(prim, "transpose_b",
                                                                          False))
    si, ska = (sa[-1], sa[-2]) if ta else (sa[-2], sa[-1])
    skb, sj = (sb[-1], sb[-2]) if tb else (sb[-2], sb[-1])
    if ska != skb:
        raise ValueError(f"{_what(prim)}: the contracted dimension is cut into {ska} pieces "
                         f"in the first input and {skb} in the second; they must be equal")
    cuts = []
    for axis in range(batch):   # a batch axis of length 1 broadcasts (and is not cut)
        pa, pb = (1 if a[axis] == 1 else sa[axis]), (1 if b[axis] == 1 else sb[axis])
        if a[axis] != 1 and b[axis] != 1 and pa != pb:
            raise ValueError(f"{_what(prim)}: the batch dimensions must be cut alike in "
                             f"both inputs, got {tuple(sa[:batch])} and {tuple(sb[:batch])}")
        cuts.append(max(pa, pb))
    dev = _device_matrix(prim, tuple(cuts) + (si, ska, sj), world)
    bdims = tuple(range(1, batch + 1))
    i, k, j = batch + 1, batch + 2, batch + 3
    map_a = tuple(-1 if a[x] == 1 else x + 1 for x in range(batch)) + ((k, i) if ta else (i, k))
    map_b = tuple(-1 if b[x] == 1 else x + 1 for x in range(batch)) + ((j, k) if tb else (k, j))
    rows = a[-1] if ta else a[-2]
    cols = b[-2] if tb else b[-1]
    out = TensorLayout(dev, bdims + (i, j), tuple(max(a[x], b[x]) for x in range(batch))
                       + (rows, cols))
    return _Plan(dev, [TensorLayout(dev, map_a, a), TensorLayout(dev, map_b, b)], out,
                 partial=ska > 1)


def _elementwise(prim, shapes, strategy, world):
    ndim = max(len(s) for s in shapes)
    dims = [1] * ndim
    for index, (shape, parts) in enumerate(zip(shapes, strategy)):
        offset = ndim - len(shape)
        for axis, (n, p) in enumerate(zip(shape, parts)):
            if n == 1 and p != 1:
                raise ValueError(f"{_what(prim)}: dimension {axis} of input {index} has "
                                 f"length 1 (broadcast) and cannot be cut")
            if n != 1 and p != 1:
                if dims[offset + axis] not in (1, p):
                    raise ValueError(f"{_what(prim)}: the inputs cut dimension "
                                     f"{offset + axis} of the output differently")
                dims[offset + axis] = p
    for index, (shape, parts) in enumerate(zip(shapes, strategy)):
        offset = ndim - len(shape)
        for axis, (n, p) in enumerate(zip(shape, parts)):
            if n != 1 and p != dims[offset + axis]:
                raise ValueError(f"{_what(prim)}: dimension {axis} of input {index} is cut "
                                 f"into {p} pieces where the others cut it into "
                                 f"{dims[offset + axis]}; the strategies must agree")
    dev = _device_matrix(prim, dims, world)
    inputs = []
    for shape in shapes:
        offset = ndim - len(shape)
        inputs.append(TensorLayout(dev, tuple(-1 if n == 1 else offset + axis + 1
                                              for axis, n in enumerate(shape)), shape))
    out_shape = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for axis, n in enumerate(shape):
            out_shape[offset + axis] = max(out_shape[offset + axis], n)
    return _Plan(dev, inputs, TensorLayout(dev, tuple(range(1, ndim + 1)), out_shape))


def _along_axis(prim, shapes, strategy, world):
    axes = getattr(prim, "axis", -1)
    axes = axes if isinstance(axes, (tuple, list)) else (axes,)
    ndim = len(shapes[0])
    for axis in axes:
        if strategy[0][axis % ndim] != 1:
            raise ValueError(f"{_what(prim)}: the dimension it normalises over ({axis}) "
                             f"cannot be cut")
    return _elementwise(prim, shapes, strategy, world)


def _layer_norm(prim, shapes, strategy, world):
    x = shapes[0]
    begin_norm = getattr(prim, "begin_norm_axis", -1) % len(x)
    begin_params = getattr(prim, "begin_params_axis", -1) % len(x)
    parts = strategy[0]
    if any(p != 1 for p in parts[begin_norm:]):
        raise ValueError(f"{_what(prim)}: the normalised dimensions (from {begin_norm}) "
                         f"cannot be cut")
    for index in (1, 2):
        if tuple(strategy[index]) != tuple(parts[begin_params:]):
            raise ValueError(f"{_what(prim)}: the strategy of input {index} must be the "
                             f"input's strategy from dimension {begin_params}: "
                             f"{tuple(parts[begin_params:])}")
    dev = _device_matrix(prim, parts, world)
    x_map = tuple(range(1, len(x) + 1))
    p_map = x_map[begin_params:]
    return _Plan(dev, [TensorLayout(dev, x_map, x), TensorLayout(dev, p_map, shapes[1]),
                       TensorLayout(dev, p_map, shapes[2])], TensorLayout(dev, x_map, x))


def _reduction(prim, shapes, strategy, world, axis):
    kind = _REDUCTIONS[prim.name]
    x, parts = shapes[0], strategy[0]
    if axis is None or axis == () or axis == []:
        axes = tuple(range(len(x)))
    else:
        axes = tuple(a % len(x) for a in (axis if isinstance(axis, (tuple, list)) else
                                          (axis,)))
    cut = math.prod(parts[a] for a in axes)
    if cut > 1 and kind in ("max", "min"):
        raise NotImplementedError(f"{_what(prim)}: a {kind} over a cut dimension is not "
                                  f"supported; cut the other dimensions")
    dev = _device_matrix(prim, parts, world)
    x_map = tuple(range(1, len(x) + 1))
    keep = bool(getattr(prim, "keep_dims", False))
    out_map = tuple(-1 if a in axes else m for a, m in enumerate(x_map) if keep or a not in axes)
    out_shape = tuple(1 if a in axes else n for a, n in enumerate(x) if keep or a not in axes)
    return _Plan(dev, [TensorLayout(dev, x_map, x)], TensorLayout(dev, out_map, out_shape),
                 partial=cut > 1, factor=1.0 / cut if kind == "mean" else 1.0)


def _gather(prim, shapes, strategy, world, axis):
    params, indices = shapes
    if axis != 0 or len(params) != 2:
        raise NotImplementedError(f"{_what(prim)}: only a 2-d table gathered along axis 0 "
                                  f"(an embedding) can be cut")
    if any(p != 1 for p in strategy[1]):
        raise NotImplementedError(f"{_what(prim)}: the indices cannot be cut")
    rows, cols = strategy[0]
    dev = _device_matrix(prim, (rows, cols), world)
    out = TensorLayout(dev, (-1,) * len(indices) + (2,), tuple(indices) + (params[1],))
    return _Plan(dev, [TensorLayout(dev, (1, 2), params),
                       TensorLayout(dev, (-1,) * len(indices), indices)], out,
                 partial=rows > 1)


def _transpose(prim, shapes, strategy, world, perm):
    x, parts = shapes[0], strategy[0]
    if sorted(perm) != list(range(len(x))):
        raise ValueError(f"{_what(prim)}: {perm} is not a permutation of {len(x)} axes")
    dev = _device_matrix(prim, parts, world)
    x_map = tuple(range(1, len(x) + 1))
    return _Plan(dev, [TensorLayout(dev, x_map, x)],
                 TensorLayout(dev, tuple(x_map[p] for p in perm), tuple(x[p] for p in perm)))


def plan(prim, shapes, strategy, extra, world):
    """The partition of ``prim`` called on Tensors of ``shapes`` (``extra``: its other
    arguments) under ``strategy`` over ``world`` ranks."""
    name = prim.name
    if len(strategy) != len(shapes):
        raise ValueError(f"{_what(prim)}: the strategy has {len(strategy)} entries, the call "
                         f"has {len(shapes)} Tensor inputs")
    for index, (shape, parts) in enumerate(zip(shapes, strategy)):
        _check_cuts(prim, shape, parts, index)
    if name in ("MatMul", "BatchMatMul"):
        return _matmul(prim, shapes, strategy, world)
    if name in _ELEMENTWISE:
        return _elementwise(prim, shapes, strategy, world)
    if name in _ALONG_AXIS:
        return _along_axis(prim, shapes, strategy, world)
    if name == "LayerNorm":
        return _layer_norm(prim, shapes, strategy, world)
    if name in _REDUCTIONS:
        return _reduction(prim, shapes, strategy, world, extra[0] if extra else ())
    if name == "Transpose":
        return _transpose(prim, shapes, strategy, world, tuple(extra[0]) if extra else ())
    if name in ("Gather", "GatherV2"):
        return _gather(prim, shapes, strategy, world, extra[0] if extra else 0)
    raise NotImplementedError(f"{_what(prim)}: shard strategies of {name!r} across "
                              f"processes are not supported (supported: "
                              f"{', '.join(SUPPORTED)})")


def _cached_plan(prim, shapes, strategy, extra, world):
    """:func:`plan`, remembered on the primitive per call signature (a network calls each
    primitive with the same shapes every step)."""
    try:
        key = (tuple(shapes), strategy, tuple(extra), world)
        hash(key)
    except TypeError:
        return plan(prim, shapes, strategy, extra, world)
    plans = prim.__dict__.setdefault("_shard_plans", {})
    found = plans.get(key)
    if found is None:
        found = plans[key] = plan(prim, shapes, strategy, extra, world)
    return found


# -- running ---------------------------------------------------------------------------------------
def _input_piece(value, layout, repeat):
    """The piece of ``value`` (a Tensor) the operator computes with on this rank."""
    held = _layout.held_piece(value)
    if held is None:
        if isinstance(value, Parameter) and not layout.is_replicated():
            _record(value, layout)
        return _layout.enter_replicated(value._data, layout, repeat)
    piece, have = held
    if have.same_pieces(layout):
        return _layout.enter_piece(piece, layout, repeat)
    full = value._data if isinstance(value, _layout.ShardedTensor) else \
        _layout.to_replicated(piece, have)
    return _layout.enter_replicated(full, layout, repeat)


def full_shape(value):
    """The shape of the whole value of Tensor ``value`` (a held piece's layout says it)."""
    held = _layout.held_piece(value)
    return tuple(value.shape) if held is None else held[1].shape


def run(prim, strategy, args, kwargs):
    """``prim(*args, **kwargs)`` computed piecewise on this rank (see the module's text)."""
    if not _layout.across_processes():   # a job of one process: nothing to cut over
        return prim._compute_cast(args, kwargs)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    extra = [a for i, a in enumerate(args) if not isinstance(a, Tensor)]
    shapes = [full_shape(args[i]) for i in positions]
    world = _layout.job()[2]
    p = _cached_plan(prim, shapes, strategy, extra, world)
    if p.dev_matrix[0] == world:     # nothing cut: every rank computes the whole
        return prim._compute_cast(args, kwargs)
    local = list(args)
    for i, layout in zip(positions, p.inputs):
        local[i] = Tensor._wrap(_input_piece(args[i], layout, p.repeat))
    if prim.name in ("Gather", "GatherV2") and p.partial:
        out = _gather_rows(prim, local, p, kwargs)
    else:
        out = prim._compute_cast(tuple(local), kwargs)
    first = out[0] if isinstance(out, (tuple, list)) else out
    piece = first._data
    if p.partial:
        piece = _layout.reduce_partial(piece, p.output, p.repeat, p.factor)
    result = _layout.make_sharded(piece, p.output)
    if isinstance(out, (tuple, list)):   # LayerNorm's statistics: cut as the rows
        rest = [_layout.make_sharded(o._data, TensorLayout(
            p.dev_matrix, p.output.tensor_map, _full_shape(o, p.output))) for o in out[1:]]
        return type(out)([result] + rest)
    return result


def _full_shape(out, layout):
    local = dispatch.shape(out._data)
    return tuple(n * (1 if m < 0 else layout.dev_matrix[m])
                 for n, m in zip(local, layout.tensor_map))


def _gather_rows(prim, local, p, kwargs):
    """A vocabulary-parallel lookup: the rows this rank holds, zeros for the others (the sum
    over the ranks is the whole lookup)."""
    _, rank, _ = _layout.job()
    table, indices = local[0]._data, local[1]._data
    rows = p.inputs[0].local_shape[0]
    start = p.inputs[0].piece_index(rank)[0] * rows
    dtype = dispatch.dtype(indices)
    shifted = call("sub", indices, call("full", (), start, dtype))
    inside = call("logical_and", call("greater_equal", shifted, call("full", (), 0, dtype)),
                  call("less", shifted, call("full", (), rows, dtype)))
    safe = call("where", inside, shifted, call("full", (), 0, dtype))
    found = prim._compute_cast((Tensor._wrap(table), Tensor._wrap(safe)) + tuple(local[2:]),
                               kwargs)._data
    mask = call("reshape", inside, tuple(dispatch.shape(inside)) + (1,))
    zero = call("full", (), 0, dispatch.dtype(found))
    return Tensor._wrap(call("where", mask, found, zero))


# -- parameters keep their slices ------------------------------------------------------------------
# id(Parameter) -> (weakref, TensorLayout): Parameters cut by a strategy, not yet sliced
_pending = _state.section("sharded_parameters_pending", {})
# id(optimizer) -> weakref: every optimizer, whose states follow their Parameters' slices
_optimizers = _state.section("sharded_parameters_optimizers", {})


def register_optimizer(optimizer):
    """Remember ``optimizer``: :func:`settle` slices its states with its Parameters."""
    key = id(optimizer)
    _optimizers[key] = weakref.ref(optimizer, lambda _, key=key: _optimizers.pop(key, None))


def _record(param, layout):
    key = id(param)
    found = _pending.get(key)
    if found is None or found[0]() is not param:   # (an id a dead Parameter had is reused)
        _pending[key] = (weakref.ref(param), layout)


def cut_parameters(cell):
    """``{name: TensorLayout}`` of the Parameters of ``cell`` that hold this rank's slice
    (what a strategy file of the job records for them)."""
    return {p.name: p.__dict__["_shard_layout"] for p in cell.get_parameters()
            if p.__dict__.get("_shard_layout") is not None}


def has_pending():
    """True when some Parameter waits to be replaced by its slice."""
    return bool(_pending)


def can_settle():
    """True outside any trace or differentiation (a Parameter may change shape now)."""
    return not (_thread.compiled_depth or _thread.tracing_depth or _thread.hook_sessions
                or _thread.mutation_scopes)


def settle():
    """Replace each recorded Parameter, and the optimizer states cloned from it, by this
    rank's slice; returns how many arrays were sliced (compiled programs are dropped so the
    next call traces with the slices)."""
    _, rank, _ = _layout.job()
    done = 0
    entries = list(_pending.values())
    _pending.clear()
    states = {}
    cut = {id(ref()) for ref, _ in entries}
    for ref in list(_optimizers.values()):
        opt = ref()
        own = {} if opt is None else {id(q): q for q in opt.parameters}
        by_name = {q.name: q for q in own.values()}
        for s in () if opt is None else opt.get_parameters():
            if id(s) not in own:   # a state: "<state>.<parameter name>" of this optimizer's
                param = by_name.get(s.name.split(".", 1)[-1])
                if param is not None:
                    states.setdefault(id(param), []).append(s)
            elif id(s) in cut and not getattr(opt, "updates_elementwise", True):
                raise NotImplementedError(
                    f"{type(opt).__name__} takes a norm over each whole Parameter; with "
                    f"'{s.name}' cut over the ranks by a shard strategy each rank would see "
                    f"its slice only: use an element-wise optimizer (SGD, Momentum, Adam, "
                    f"AdamWeightDecay, ...)")
    for ref, layout in entries:
        param = ref()
        if param is None or param.__dict__.get("_shard_layout") is not None:
            continue
        targets = [param] + [s for s in states.get(id(param), ()) if s is not param]
        for t in targets:
            if tuple(t.shape) != layout.shape:
                continue
            assign_all((t,), (_layout.copy(call("getitem", t._data, layout.slices(rank))),))
            t.__dict__["_shard_layout"] = layout
            done += 1
    if done:
        _state.drop_compiled_programs()
    return done
