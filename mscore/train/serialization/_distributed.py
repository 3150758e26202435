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

import os

import numpy as np

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.train.serialization._checkpoint import load_checkpoint, load_param_into_net, \
    save_checkpoint
from mscore.train.serialization._parallel import build_searched_strategy, device_count, \
    merge_sliced_parameter, slice_parameter
from mscore.nn.cell import Cell
from mscore.parallel import get_auto_parallel_context

_FORMATS = ("ckpt", "safetensors")


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
    if train_strategy_filename is None:
        train_strategy_filename = get_auto_parallel_context("strategy_ckpt_load_file") or None
    return None if train_strategy_filename is None else \
        build_searched_strategy(train_strategy_filename)


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


def merge_rank_checkpoints(dicts, files, strategy):
    """One ``{name: Parameter}`` from the ranks' checkpoint dicts (see the module doc)."""
    names = list(dicts[0])
    for d, path in zip(dicts[1:], files[1:]):
        missing = [n for n in names if n not in d] + [n for n in d if n not in dicts[0]]
        if missing:
            raise ValueError(f"For 'load_distributed_checkpoint', {path!r} and {files[0]!r} "
                             f"hold different entries (e.g. {missing[0]!r})")
    merged = {}
    for name in names:
        values = [d[name] for d in dicts]
        if strategy is not None and name in strategy:
            merged[name] = merge_sliced_parameter(values, strategy)
        else:
            merged[name] = _replicated(name, values, files)
    return merged


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
    strategy = _strategy(train_strategy_filename)
    dicts = [load_checkpoint(path, format=format) for path in files]
    merged = merge_rank_checkpoints(dicts, files, strategy)
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
        return None
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"For 'transform_checkpoints', '{name}' must be a str or None, but got "
                        f"{type(path).__name__}")
    return build_searched_strategy(path)


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
    src = _optional_strategy(src_strategy_file, "src_strategy_file")
    dst = _optional_strategy(dst_strategy_file, "dst_strategy_file")
    files = [_rank_file(src_dir, r) for r in range(device_count(src))]
    merged = merge_rank_checkpoints([load_checkpoint(f) for f in files], files, src)
    for rank in range(device_count(dst)):
        params, extra = [], {}
        for name, value in merged.items():
            if not isinstance(value, Parameter):
                extra[name] = value
                continue
            if dst is not None and name in dst:
                value = Parameter(Tensor(np.ascontiguousarray(slice_parameter(
                    value.asnumpy(), dst[name], rank, name))), name=name,
                    requires_grad=value.requires_grad)
            params.append(value)
        path = os.path.join(dst_dir, f"rank_{rank}", f"{os.fspath(ckpt_prefix)}{rank}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save_checkpoint(params, path, append_dict=extra or None, format=output_format)
