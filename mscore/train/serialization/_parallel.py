"""Model-parallel slices: ``build_searched_strategy`` and ``merge_sliced_parameter``.

A parameter's layout (``ParallelLayouts`` in ``node_strategy.proto``) says how it was cut:

* ``dev_matrix``: the device arrangement, e.g. ``[2, 4]`` for 8 devices; device ``rank`` sits
  at ``numpy.unravel_index(rank, dev_matrix)`` (the last axis varies fastest);
* ``tensor_map``: one entry per tensor axis, ``-1`` when the axis is whole, otherwise the
  device-matrix axis it is cut along, counted from the right (``m`` means axis
  ``len(dev_matrix) - 1 - m``); devices that differ only along unused device axes hold copies;
* ``param_split_shape``: for an uneven cut, the size along axis 0 of each slice (slices
  numbered row-major over the cut axes);
* ``field``: when positive, the wide-and-deep "field" layout of a 2-d table: every device holds
  ``field`` row blocks, and the whole table is field block 0 of every device, then field
  block 1 of every device, and so on.
"""
from __future__ import annotations

import math
import os

import numpy as np

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.wrap.accumulation import AccumulateGrads
from mscore.nn.wrap.parallel_optimizer import ParallelOptimizer, ShardedGradReducer
from mscore.ops._sharded_ops import cut_parameters
from mscore.parallel import _context
from mscore.train.proto import node_strategy_pb2
from mscore.train.serialization._atomic import atomic_write
from mscore.train.serialization._reading import read_bounded


class MissingLayoutError(KeyError, ValueError):
    """``merge_sliced_parameter``: the parameter has no layout in ``strategy``. MindSpore
    raises ``KeyError`` here; as a bad argument value it is a ``ValueError`` too, so either
    ``except`` catches it."""

    def __str__(self):  # KeyError would show the message in quotes
        return str(self.args[0]) if self.args else ""


def build_searched_strategy(strategy_filename):
    """Read a parallel strategy file: ``{parameter name: ParallelLayouts message}``.

    A missing, empty or malformed file, or one without sliced parameters, is a
    ``ValueError``; a non-str name is a ``TypeError``.
    """
    from google.protobuf.message import DecodeError
    if isinstance(strategy_filename, os.PathLike):
        strategy_filename = os.fspath(strategy_filename)
    if not isinstance(strategy_filename, str):
        raise TypeError(f"strategy_filename: expected a str, got "
                        f"{type(strategy_filename).__name__}")
    if not os.path.isfile(strategy_filename):
        raise ValueError(f"strategy_filename: no such strategy file: {strategy_filename!r}")
    data = read_bounded(strategy_filename, "build_searched_strategy")
    if not data:
        raise ValueError(f"strategy_filename: the strategy file {strategy_filename!r} is empty")
    msg = node_strategy_pb2.ParallelStrategyMap()
    try:
        msg.ParseFromString(data)
        strategy = {}
        for item in msg.parallel_layout_item:
            if not isinstance(item.param_name, str):  # protobuf gives bytes if not UTF-8
                raise ValueError("a param_name is not valid UTF-8 text")
            _check_tensor_map(item.param_name, item.parallel_layouts)
            earlier = strategy.get(item.param_name)
            if earlier is not None and earlier != item.parallel_layouts:
                raise ValueError(f"the parameter {item.param_name!r} has two different "
                                 f"layouts (dev_matrix {_dims(earlier.dev_matrix)} and "
                                 f"{_dims(item.parallel_layouts.dev_matrix)}, tensor_map "
                                 f"{_dims(earlier.tensor_map)} and "
                                 f"{_dims(item.parallel_layouts.tensor_map)})")
            strategy[item.param_name] = item.parallel_layouts
    except (DecodeError, ValueError, TypeError, RuntimeError) as exc:
        raise ValueError(f"build_searched_strategy: {strategy_filename!r} is not a valid "
                         f"strategy file: {exc}") from None
    if not strategy:
        raise ValueError(f"build_searched_strategy: the strategy file {strategy_filename!r} "
                         f"has no sliced parameter")
    return strategy


def _dims(repeated):
    return [[int(d) for d in entry.dim] for entry in repeated]


def checked_strategy(path, api):
    """:func:`build_searched_strategy` of ``path`` with every layout complete (a dev_matrix,
    a tensor_map, positive device counts): ``ValueError`` naming the file otherwise."""
    strategy = build_searched_strategy(path)
    for name, layout in strategy.items():
        try:
            layout_fields(layout, name, "")
        except ValueError as exc:
            reason = str(exc).removeprefix("merge_sliced_parameter: ")
            raise ValueError(f"For '{api}', the strategy file {path!r} is not usable: "
                             f"{reason}") from None
    return strategy


def _check_tensor_map(name, layout):
    """A tensor_map may cut two tensor axes along one device axis only if it is -1 (whole):
    a repeated entry describes no layout (the slices would not tile the tensor)."""
    for tensor_map in layout.tensor_map:
        cut = [int(d) for d in tensor_map.dim if int(d) != -1]
        if len(cut) != len(set(cut)):
            raise ValueError(f"the tensor_map {[int(d) for d in tensor_map.dim]} of {name!r} "
                             f"cuts two axes along one device axis")


def layout_fields(layout, name, where):
    """``(dev_matrix, tensor_map, param_split_shape, field)`` of a ``ParallelLayouts``
    message as lists of ints; ``ValueError`` (prefixed by ``where``) when incomplete."""
    try:
        return _layout_fields(layout, name)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}" if where else str(exc)) from None


def _layout_fields(layout, name):
    for part in ("dev_matrix", "tensor_map"):
        if not len(getattr(layout, part)):
            raise ValueError(f"merge_sliced_parameter: the layout of {name!r} has no {part}")
    try:
        dev_matrix = [int(d) for d in layout.dev_matrix[0].dim]
        tensor_map = [int(d) for d in layout.tensor_map[0].dim]
        split = [int(d) for d in layout.param_split_shape[0].dim] \
            if len(layout.param_split_shape) else []
        field = int(layout.field)
    except (AttributeError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(f"merge_sliced_parameter: the layout of {name!r} in strategy is "
                         f"incomplete or malformed ({type(exc).__name__}: {exc})") from None
    try:
        _check_tensor_map(name, layout)
    except ValueError as exc:
        raise ValueError(f"merge_sliced_parameter: {exc}") from None
    if not dev_matrix or any(d <= 0 for d in dev_matrix):
        raise ValueError(f"merge_sliced_parameter: the dev_matrix of {name!r} must hold "
                         f"positive sizes, got {dev_matrix}")
    return dev_matrix, tensor_map, split, field


def _merge_with_layout(arrays, name, layout, even):
    dev_matrix, tensor_map, split_shape, field = _layout_fields(layout, name)
    device_count = math.prod(dev_matrix)
    if len(arrays) != device_count:
        raise ValueError(f"merge_sliced_parameter: the dev_matrix {dev_matrix} of {name!r} "
                         f"has {device_count} devices, got {len(arrays)} slices")
    ndim = arrays[0].ndim
    if field > 0:
        if not even or ndim != 2:
            raise ValueError(f"merge_sliced_parameter: a field layout needs 2-d slices of one "
                             f"shape for {name!r}")
        rows, cols = arrays[0].shape
        if rows % field:
            raise ValueError(f"merge_sliced_parameter: {rows} rows per slice of {name!r} do "
                             f"not divide into field={field} blocks")
        stacked = np.stack(arrays).reshape(device_count, field, rows // field, cols)
        return stacked.transpose(1, 0, 2, 3).reshape(-1, cols)
    if len(tensor_map) != ndim:
        raise ValueError(f"merge_sliced_parameter: the tensor_map {tensor_map} of {name!r} "
                         f"needs one entry per axis of its {ndim}-d slices")
    k = len(dev_matrix)
    splits = []
    for m in tensor_map:
        if m == -1:
            splits.append(1)
        elif 0 <= m < k:
            splits.append(dev_matrix[k - 1 - m])
        else:
            raise ValueError(f"merge_sliced_parameter: tensor_map entry {m} of {name!r} is "
                             f"outside the {k}-d dev_matrix")
    if not split_shape and not even:
        raise ValueError(f"merge_sliced_parameter: the slices of {name!r} must all have one "
                         f"shape when the layout cuts evenly (no param_split_shape)")
    slice_count = math.prod(splits)
    if split_shape and len(split_shape) != slice_count:
        raise ValueError(f"merge_sliced_parameter: param_split_shape of {name!r} should have "
                         f"{slice_count} entries, got {len(split_shape)}")
    blocks = {}
    for rank, arr in enumerate(arrays):
        coord = np.unravel_index(rank, dev_matrix)
        index = tuple(0 if m == -1 else int(coord[k - 1 - m]) for m in tensor_map)
        if split_shape:
            flat = int(np.ravel_multi_index(index, splits)) if splits else 0
            if arr.shape[0] != split_shape[flat]:
                raise ValueError(f"merge_sliced_parameter: slice {flat} of {name!r} should "
                                 f"have {split_shape[flat]} rows, got {arr.shape[0]}")
        copy = blocks.setdefault(index, (rank, arr))
        if copy[0] != rank and not (copy[1].shape == arr.shape and
                                    np.array_equal(copy[1], arr, equal_nan=True)):
            raise ValueError(f"merge_sliced_parameter: devices {copy[0]} and {rank} hold the "
                             f"same slice of {name!r} under its layout, but their values "
                             f"differ")

    def assemble(prefix):
        axis = len(prefix)
        if axis == ndim:
            return blocks[prefix][1]
        parts = [assemble(prefix + (j,)) for j in range(splits[axis])]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=axis)

    return assemble(())


def merge_sliced_parameter(sliced_parameters, strategy=None):
    """Merge the slices of one parameter (a list of Parameters in rank order) into a whole
    Parameter. Without ``strategy`` the slices are joined along axis 0; with ``strategy``
    (from :func:`build_searched_strategy`) the parameter's layout places each slice.

    ``TypeError`` when the slices are not a list of Parameters or strategy is not a dict,
    ``ValueError`` when they do not fit together, and :class:`MissingLayoutError` (both a
    ``KeyError``, as in MindSpore, and a ``ValueError``) when the parameter is not in
    ``strategy``.
    """
    if not isinstance(sliced_parameters, list):
        raise TypeError(f"sliced_parameters: expected a list of Parameters, got "
                        f"{type(sliced_parameters).__name__}")
    if not sliced_parameters:
        raise ValueError("sliced_parameters: the list is empty")
    if strategy is not None and not isinstance(strategy, dict):
        raise TypeError(f"strategy: expected a dict or None, got {type(strategy).__name__}")
    for i, p in enumerate(sliced_parameters):
        if not isinstance(p, Parameter):
            raise TypeError(f"sliced_parameters[{i}]: expected a Parameter, got "
                            f"{type(p).__name__}")
    first = sliced_parameters[0]
    name, shape = first.name, tuple(first.shape)
    even = True
    arrays = []
    for i, p in enumerate(sliced_parameters):
        s = tuple(p.shape)
        if p.name != name or len(s) != len(shape) or s[1:] != shape[1:]:
            raise ValueError(f"sliced_parameters[{i}]: every slice needs the name {name!r}, "
                             f"{len(shape)} dims and shape {shape[1:]} after axis 0; got "
                             f"{p.name!r} with shape {s}")
        if p.dtype is not first.dtype:
            raise ValueError(f"sliced_parameters[{i}]: dtype {p.dtype} differs from the first "
                             f"slice's {first.dtype}")
        even = even and s == shape
        arrays.append(np.asarray(p.asnumpy()))
    if not shape:
        raise ValueError("sliced_parameters: 0-d parameters cannot be merged")
    if not strategy:
        merged = np.concatenate(arrays, axis=0)
    else:
        if name not in strategy:
            known = sorted(strategy)
            raise MissingLayoutError(f"strategy: parameter {name!r} of sliced_parameters is "
                                     f"not a key of strategy (its keys: {known[:5]}"
                                     f"{'...' if len(known) > 5 else ''})")
        merged = _merge_with_layout(arrays, name, strategy[name], even)
    return Parameter(Tensor(np.ascontiguousarray(merged)), name=name,
                     requires_grad=first.requires_grad,
                     layerwise_parallel=first.layerwise_parallel)


def sliced_layouts(cell):
    """``{name: (whole shape, slices)}`` of the Parameters ``cell`` holds as this rank's
    slice along axis 0: the parallel optimizer's states of sharded weights, and the
    accumulated gradients when they are reduce-scattered every call (``optimizer_level``
    'level2')."""
    out = {}
    for _, sub in cell.cells_and_names():
        if isinstance(sub, ParallelOptimizer):
            out.update(sub.sliced_parameters())
        elif isinstance(sub, AccumulateGrads) and isinstance(sub.reducer, ShardedGradReducer):
            plan = sub.reducer.plan
            out.update({s.name: (plan.shapes[i], plan.size) for i, s in enumerate(sub.sums)
                        if plan.sharded[i]})
    return out


def layouts_of_cell(cell):
    """``{name: ParallelLayouts}`` of the slices ``cell`` holds: the parallel optimizer's
    (:func:`sliced_layouts`, cut along axis 0) and the Parameters and optimizer states a
    shard strategy cut (SEMI_AUTO_PARALLEL across processes, any layout)."""
    out = {}
    for name, (shape, slices) in sliced_layouts(cell).items():
        layout = node_strategy_pb2.ParallelLayouts()
        axis0_layout(layout, len(shape), slices)
        out[name] = layout
    for name, tensor_layout in cut_parameters(cell).items():
        layout = node_strategy_pb2.ParallelLayouts()
        strategy_layout(layout, tensor_layout)
        out[name] = layout
    return out


def axis0_layout(layout, ndim, slices):
    """Fill ``layout`` (a ``ParallelLayouts`` message) for a tensor of ``ndim`` axes cut
    along axis 0 into ``slices`` equal parts over ``slices`` devices (the parallel
    optimizer's sharding)."""
    layout.dev_matrix.add().dim.extend([slices])
    layout.tensor_map.add().dim.extend([0] + [-1] * (ndim - 1))
    layout.field = 0
    layout.opt_weight_shard_step = 1
    layout.opt_weight_shard_size = slices


def strategy_layout(layout, tensor_layout):
    """Fill ``layout`` (a ``ParallelLayouts`` message) with a shard strategy's cut of a
    Parameter (a :class:`~mscore.ops._layout.TensorLayout`), in the strategy file's terms."""
    dev_matrix, tensor_map = tensor_layout.mindspore_layout()
    layout.dev_matrix.add().dim.extend(dev_matrix)
    layout.tensor_map.add().dim.extend(tensor_map)
    layout.field = 0
    layout.opt_weight_shard_step = 0   # not sharded by the optimizer
    layout.opt_weight_shard_size = 0


def write_strategy_file(path, layouts):
    """Write MindSpore's strategy file (``node_strategy.proto``) at ``path``, atomically:
    ``layouts`` is ``{name: ParallelLayouts}``."""
    msg = node_strategy_pb2.ParallelStrategyMap()
    msg.current_stage = 0
    for name in sorted(layouts):
        item = msg.parallel_layout_item.add()
        item.param_name = name
        item.parallel_layouts.CopyFrom(layouts[name])
    data = msg.SerializeToString()
    atomic_write(path, lambda f: f.write(data))


def save_job_strategy(cell):
    """When ``strategy_ckpt_save_file`` is set and ``cell`` (what ``save_checkpoint``
    saves) is a Cell holding slices (:func:`layouts_of_cell`), write their layouts there.
    Every rank's are the same: with a sharded optimizer rank 0 writes them; with Parameters
    cut by shard strategies every rank does (atomically), as each MindSpore rank writes the
    strategy file it compiled, often under a name of its own."""
    path = _context.get_auto_parallel_context("strategy_ckpt_save_file")
    if not path or not isinstance(cell, Cell):
        return
    layouts = layouts_of_cell(cell)
    if not layouts:
        return
    sharded = [sub for _, sub in cell.cells_and_names() if isinstance(sub, ParallelOptimizer)]
    if cut_parameters(cell) or not sharded or sharded[0].plan.rank == 0:
        write_strategy_file(path, layouts)


def slice_parameter(whole, layout, rank, name):
    """Device ``rank``'s slice of the numpy array ``whole`` under ``layout`` (an even cut
    without a field layout: the inverse of :func:`merge_sliced_parameter`)."""
    dev_matrix, tensor_map, split_shape, field = _layout_fields(layout, name)
    if field > 0 or split_shape:
        raise ValueError(f"transform: the layout of {name!r} is a field or uneven cut, which "
                         f"cannot be re-sliced here")
    if len(tensor_map) != whole.ndim:
        raise ValueError(f"transform: the tensor_map {tensor_map} of {name!r} needs one entry "
                         f"per axis of its {whole.ndim}-d value")
    k = len(dev_matrix)
    coord = np.unravel_index(rank, dev_matrix)
    index = []
    for axis, m in enumerate(tensor_map):
        if m == -1:
            index.append(slice(None))
            continue
        parts = dev_matrix[k - 1 - m]
        if whole.shape[axis] % parts:
            raise ValueError(f"transform: axis {axis} of {name!r} ({whole.shape[axis]}) does "
                             f"not divide into {parts} slices")
        size = whole.shape[axis] // parts
        j = int(coord[k - 1 - m])
        index.append(slice(j * size, (j + 1) * size))
    return whole[tuple(index)]


def device_count(strategy):
    """The number of devices a strategy's layouts span (1 for None)."""
    if not strategy:
        return 1
    counts = {math.prod(int(d) for d in layout.dev_matrix[0].dim)
              for layout in strategy.values()}
    if len(counts) != 1:
        raise ValueError(f"transform: the strategy's layouts span different device counts "
                         f"{sorted(counts)}")
    return counts.pop()
