"""``load_distributed_checkpoint``: load into one network the checkpoints the N ranks of a
job saved (one file per rank, in rank order); ``transform_checkpoints``: the same files
re-cut for another number of ranks (or none).

A parameter the training strategy file lays out (``build_searched_strategy``) is merged from
the ranks' slices with :func:`merge_sliced_parameter`; every other parameter is replicated,
as data parallelism keeps it: rank 0's value is taken after checking that every rank saved
the same one (a difference means a slice without a layout, which would otherwise load
silently wrong).
"""
from __future__ import annotations

import math
import os
import uuid

import numpy as np

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.parallel import get_auto_parallel_context
from mscore.train.serialization._checkpoint import (
    load_checkpoint,
    load_param_into_net,
    save_checkpoint,
)
from mscore.train.serialization._parallel import (
    checked_strategy,
    device_count,
    layout_fields,
    merge_sliced_parameter,
    slice_parameter,
)
from mscore.train.serialization._shard_identity import (
    IDENTITY_KEY,
    check_layouts,
    check_rank_files,
    identity_value,
    split_identity,
)

_FORMATS = ("ckpt", "safetensors")
_LOAD = "load_distributed_checkpoint"
_TRANSFORM = "transform_checkpoints"


def _check_filenames(checkpoint_filenames):
    if not isinstance(checkpoint_filenames, (list, tuple)):
        raise TypeError(f"For 'load_distributed_checkpoint', 'checkpoint_filenames' must be a "
                        f"list of file names in rank order, but got "
                        f"{type(checkpoint_filenames).__name__}")
    if not checkpoint_filenames:
        raise ValueError("For 'load_distributed_checkpoint', 'checkpoint_filenames' is empty")
    names = []
    for i, name in enumerate(checkpoint_filenames):
        if isinstance(name, os.PathLike):
            name = os.fspath(name)
        if not isinstance(name, str):
            raise TypeError(f"For 'load_distributed_checkpoint', checkpoint_filenames[{i}] "
                            f"must be a str, but got {type(name).__name__}")
        names.append(name)
    return names


def _check_unsupported(predict_strategy, dec_key, unified_safetensors_dir,
                       dst_safetensors_dir):
    if predict_strategy is not None:
        raise ValueError("For 'load_distributed_checkpoint', 'predict_strategy' (a sliced "
                         "layout for distributed prediction) needs model parallelism, which "
                         "mscore does not implement; pass None to load the whole parameters")
    if dec_key is not None:
        raise ValueError("For 'load_distributed_checkpoint', encrypted checkpoints "
                         "('dec_key') are not supported here; decrypt them first")
    if unified_safetensors_dir is not None or dst_safetensors_dir is not None:
        raise ValueError("For 'load_distributed_checkpoint', the safetensors save mode "
                         "('unified_safetensors_dir', 'dst_safetensors_dir') is not supported")


def _strategy(train_strategy_filename):
    """``(strategy, its file name)``; ``(None, None)`` without one."""
    if train_strategy_filename is None:
        train_strategy_filename = get_auto_parallel_context("strategy_ckpt_load_file") or None
    if train_strategy_filename is None:
        return None, None
    return checked_strategy(train_strategy_filename, _LOAD), train_strategy_filename


def _replicated(name, values, files):
    """Rank 0's entry after checking every rank saved the same one."""
    first = values[0]
    for value, path in zip(values[1:], files[1:]):
        if isinstance(first, Parameter) != isinstance(value, Parameter):
            raise ValueError(f"For 'load_distributed_checkpoint', {name!r} is a parameter in "
                             f"{files[0]!r} but not in {path!r}")
        if not isinstance(first, Parameter):
            if value != first:
                raise ValueError(f"For 'load_distributed_checkpoint', {name!r} is {first!r} in "
                                 f"{files[0]!r} but {value!r} in {path!r}")
            continue
        a, b = first.asnumpy(), value.asnumpy()
        if a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(a, b,
                                                                          equal_nan=True):
            raise ValueError(f"For 'load_distributed_checkpoint', parameter {name!r} differs "
                             f"between {files[0]!r} and {path!r} (shapes {a.shape} and "
                             f"{b.shape}), and the strategy file gives no layout to merge "
                             f"its slices; pass train_strategy_filename")
    return first


def _combined(name, values, op, files):
    """The rank-local sums of accumulation combined as the update reduces them."""
    arrays = [v.asnumpy() for v in values]
    for a, path in zip(arrays[1:], files[1:]):
        if a.shape != arrays[0].shape:
            raise ValueError(f"For '{_LOAD}', the accumulated gradient {name!r} has shape "
                             f"{a.shape} in {path!r} but {arrays[0].shape} in {files[0]!r}")
    total = np.sum([a.astype(np.float64) for a in arrays], axis=0)
    if op == "mean":
        total = total / len(arrays)
    return Parameter(Tensor(total.astype(arrays[0].dtype)), name=name,
                     requires_grad=values[0].requires_grad)


def _check_device_count(strategy, names, count, strategy_name, api):
    for name in names:
        devices = math.prod(layout_fields(strategy[name], name, "")[0])
        if devices != count:
            missing = "a rank's file is missing" if count < devices else "too many files"
            raise ValueError(f"For '{api}', the strategy file {strategy_name!r} lays out "
                             f"{name!r} over {devices} devices, but {count} rank files are "
                             f"given: {missing}")


def merge_rank_checkpoints(dicts, files, strategy, partial=None, strategy_name=None,
                           api=_LOAD):
    """One ``{name: Parameter}`` from the ranks' checkpoint dicts (see the module doc);
    ``partial``: ``{name: "mean" | "sum"}`` of rank-local accumulation sums."""
    partial = partial or {}
    names = list(dicts[0])
    for d, path in zip(dicts[1:], files[1:]):
        missing = [n for n in names if n not in d] + [n for n in d if n not in dicts[0]]
        if missing:
            raise ValueError(f"For 'load_distributed_checkpoint', {path!r} and {files[0]!r} "
                             f"hold different entries (e.g. {missing[0]!r})")
    if strategy is not None:
        _check_device_count(strategy, [n for n in names if n in strategy], len(dicts),
                            strategy_name, api)
    merged = {}
    for name in names:
        values = [d[name] for d in dicts]
        if strategy is not None and name in strategy:
            merged[name] = merge_sliced_parameter(values, strategy)
        elif name in partial and isinstance(values[0], Parameter):
            merged[name] = _combined(name, values, partial[name], files)
        else:
            merged[name] = _replicated(name, values, files)
    return merged


def read_rank_files(files, api, place, fmt="ckpt"):
    """The ranks' checkpoints ``files`` (rank ``r``'s at position ``r``) checked to be one
    job's: ``(dicts without the identity entries, identities)``."""
    loaded = [split_identity(load_checkpoint(path, format=fmt), path) for path in files]
    identities = [ident for _, ident in loaded]
    check_rank_files(identities, files, api, place)
    return [d for d, _ in loaded], identities


def load_distributed_checkpoint(network, checkpoint_filenames=None, predict_strategy=None,
                                train_strategy_filename=None, strict_load=False, dec_key=None,
                                dec_mode="AES-GCM", format="ckpt",
                                unified_safetensors_dir=None, dst_safetensors_dir=None,
                                rank_id=None, output_format="safetensors", name_map=None,
                                max_process_num=64, return_param_dict=False):
    """Load the checkpoints saved by the ranks of a job (``checkpoint_filenames``, in rank
    order) into ``network``.

    Parameters laid out in the training strategy file (``train_strategy_filename``, default
    the auto-parallel context's ``strategy_ckpt_load_file``) are merged from their slices;
    the others must be equal on every rank (data parallelism) and rank 0's are loaded.
    ``name_map`` renames checkpoint entries before loading; ``strict_load`` is
    :func:`load_param_into_net`'s. Returns the merged ``{name: Parameter}`` when
    ``return_param_dict``, else None.

    ``TypeError`` for malformed arguments; ``ValueError`` for a bad file (naming it), ranks
    whose files disagree, or options mscore does not support (``predict_strategy``,
    ``dec_key``, the safetensors save mode).
    """
    if not isinstance(network, Cell):
        raise TypeError(f"For 'load_distributed_checkpoint', 'network' must be a Cell, but got "
                        f"{type(network).__name__}")
    files = _check_filenames(checkpoint_filenames)
    _check_unsupported(predict_strategy, dec_key, unified_safetensors_dir, dst_safetensors_dir)
    if format not in _FORMATS:
        raise ValueError(f"For 'load_distributed_checkpoint', 'format' must be one of "
                         f"{_FORMATS}, but got {format!r}")
    if name_map is not None and not isinstance(name_map, dict):
        raise TypeError(f"For 'load_distributed_checkpoint', 'name_map' must be a dict, but got "
                        f"{type(name_map).__name__}")
    if not isinstance(return_param_dict, bool):
        raise TypeError(f"For 'load_distributed_checkpoint', 'return_param_dict' must be a "
                        f"bool, but got {type(return_param_dict).__name__}")
    strategy, strategy_name = _strategy(train_strategy_filename)
    dicts, identities = read_rank_files(
        files, _LOAD, lambda r: f"'checkpoint_filenames' lists the files in rank order "
                                f"(rank {r}'s at position {r}), as MindSpore maps them", format)
    identity = identities[0]
    check_layouts(identity, strategy, files[0], strategy_name, _LOAD)
    merged = merge_rank_checkpoints(dicts, files, strategy,
                                    identity["partial"] if identity else None, strategy_name)
    if name_map:
        merged = {name_map.get(k, k): v for k, v in merged.items()}
        for k, v in merged.items():
            if isinstance(v, Parameter):
                v.name = k
    params = {k: v for k, v in merged.items() if isinstance(v, Parameter)}
    load_param_into_net(network, params, strict_load=strict_load)
    return merged if return_param_dict else None


def _rank_file(directory, rank):
    """The checkpoint of ``rank`` in ``directory/rank_R`` (the last in lexicographic order,
    as MindSpore picks it)."""
    folder = os.path.join(directory, f"rank_{rank}")
    names = sorted(n for n in os.listdir(folder) if n.endswith((".ckpt", ".safetensors"))) \
        if os.path.isdir(folder) else []
    if not names:
        raise ValueError(f"For 'transform_checkpoints', no checkpoint of rank {rank} in "
                         f"{folder!r}")
    return os.path.join(folder, names[-1])


def _optional_strategy(path, name):
    if path is None:
        return None, None
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"For 'transform_checkpoints', '{name}' must be a str or None, but got "
                        f"{type(path).__name__}")
    return checked_strategy(path, _TRANSFORM), path


def _recut(name, value, dst, rank, partial):
    """Rank ``rank``'s entry ``name`` under ``dst``: its slice when ``dst`` lays it out; a
    rank-local sum whose ranks sum at the update on rank 0 only (zeros elsewhere)."""
    if dst is not None and name in dst:
        return Parameter(Tensor(np.ascontiguousarray(slice_parameter(
            value.asnumpy(), dst[name], rank, name))), name=name,
            requires_grad=value.requires_grad)
    if partial.get(name) == "sum" and rank != 0:
        return Parameter(Tensor(np.zeros_like(value.asnumpy())), name=name,
                         requires_grad=value.requires_grad)
    return value


def transform_checkpoints(src_checkpoints_dir, dst_checkpoints_dir, ckpt_prefix,
                          src_strategy_file=None, dst_strategy_file=None, process_num=1,
                          output_format="ckpt"):
    """Re-cut the checkpoints of a job for another layout: ``src_checkpoints_dir/rank_R/``
    holds rank R's file (the job's ranks are the devices of ``src_strategy_file``; one,
    ``rank_0``, when it is None: whole parameters), and
    ``dst_checkpoints_dir/rank_R/{ckpt_prefix}R.ckpt`` receives rank R's slices under
    ``dst_strategy_file`` (one whole checkpoint when None).

    Sliced parameters are merged with their source layouts, every other one must be equal on
    every rank. ``TypeError`` for arguments of the wrong type; ``ValueError`` for a missing
    rank file or folder, a bad strategy file, or layouts that cannot be re-cut.
    """
    for name, value in (("src_checkpoints_dir", src_checkpoints_dir),
                        ("dst_checkpoints_dir", dst_checkpoints_dir),
                        ("ckpt_prefix", ckpt_prefix)):
        if not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"For 'transform_checkpoints', '{name}' must be a str, but got "
                            f"{type(value).__name__}")
    src_dir, dst_dir = os.fspath(src_checkpoints_dir), os.fspath(dst_checkpoints_dir)
    if not os.path.isdir(src_dir) or not os.listdir(src_dir):
        raise ValueError("For 'transform_checkpoints', the 'src_checkpoints_dir' can not be "
                         "empty.")
    if isinstance(process_num, bool) or not isinstance(process_num, int) or process_num < 1:
        raise ValueError(f"For 'transform_checkpoints', 'process_num' must be a positive int, "
                         f"but got {process_num!r}")
    if output_format not in _FORMATS:
        raise ValueError(f"For 'transform_checkpoints', 'output_format' must be one of "
                         f"{_FORMATS}, but got {output_format!r}")
    src, src_name = _optional_strategy(src_strategy_file, "src_strategy_file")
    dst, _ = _optional_strategy(dst_strategy_file, "dst_strategy_file")
    files = [_rank_file(src_dir, r) for r in range(_device_count(src, src_name))]
    dicts, identities = read_rank_files(
        files, _TRANSFORM, lambda r: f"rank {r}'s file belongs in 'rank_{r}' (the folder "
                                     f"names the rank, as MindSpore maps them)")
    identity = identities[0]
    check_layouts(identity, src, files[0], src_name, _TRANSFORM)
    partial = identity["partial"] if identity else {}
    merged = merge_rank_checkpoints(dicts, files, src, partial, src_name, _TRANSFORM)
    ranks = _device_count(dst, dst_strategy_file)
    run = uuid.uuid4().hex[:16]
    outputs = []   # every rank's file is cut before the first is written
    for rank in range(ranks):
        params, extra = [], {}
        for name, value in merged.items():
            if isinstance(value, Parameter):
                params.append(_recut(name, value, dst, rank, partial))
            else:
                extra[name] = value
        if ranks > 1:   # the new files say who they are, as a job's would
            sliced = {n: dst[n] for n in merged if dst is not None and n in dst}
            kept = {n: op for n, op in partial.items() if n in merged and n not in sliced}
            extra[IDENTITY_KEY] = identity_value(rank, ranks, run, sliced, kept)
        outputs.append((rank, params, extra))
    for rank, params, extra in outputs:
        path = os.path.join(dst_dir, f"rank_{rank}", f"{os.fspath(ckpt_prefix)}{rank}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save_checkpoint(params, path, append_dict=extra or None, format=output_format)


def _device_count(strategy, strategy_name):
    try:
        return device_count(strategy)
    except ValueError as exc:
        raise ValueError(f"For '{_TRANSFORM}', the strategy file {strategy_name!r}: "
                         f"{exc}") from None
