"""``ckpt_to_safetensors`` / ``safetensors_to_ckpt``: convert checkpoint files between the
two formats (MindSpore 2.10's functions and checks)."""
from __future__ import annotations

import os
import re

from mscore.train.serialization._checkpoint import load_checkpoint, save_checkpoint

__all__ = ["ckpt_to_safetensors", "safetensors_to_ckpt"]

_SUFFIX = {"ckpt": ".ckpt", "safetensors": ".safetensors"}


def _check_args(func, file_path, save_path, name_map, file_name_regex, processes_num):
    if isinstance(file_path, os.PathLike):
        file_path = os.fspath(file_path)
    if not isinstance(file_path, str):
        raise TypeError(f"For {func}, 'file_path' must be a str path, but got "
                        f"{type(file_path).__name__}")
    if not (os.path.isdir(file_path) or os.path.isfile(file_path)):
        raise ValueError(f"For {func}, the input path must be a valid path or file, but got "
                         f"{file_path!r}")
    if isinstance(save_path, os.PathLike):
        save_path = os.fspath(save_path)
    if save_path is not None and not isinstance(save_path, str):
        raise TypeError(f"For {func}, 'save_path' must be a str path or None, but got "
                        f"{type(save_path).__name__}")
    if save_path and os.path.splitext(save_path)[1]:
        raise ValueError(f"For {func}, the save_path must be a directory, but got "
                         f"{save_path!r}")
    if name_map is not None and not isinstance(name_map, dict):
        raise ValueError(f"For {func}, the type of 'name_map' must be a dict, but got "
                         f"{type(name_map).__name__}")
    if file_name_regex is not None and not isinstance(file_name_regex, str):
        raise TypeError(f"For {func}, 'file_name_regex' must be a str or None, but got "
                        f"{type(file_name_regex).__name__}")
    if isinstance(processes_num, bool) or not isinstance(processes_num, int):
        raise TypeError(f"For {func}, 'processes_num' must be an int, but got "
                        f"{type(processes_num).__name__}")
    if processes_num < 1:
        raise ValueError(f"For {func}, 'processes_num' must be >= 1, but got {processes_num}")
    return file_path, save_path


def _convert_file(src, dst, name_map, src_format, dst_format):
    params = load_checkpoint(src, format=src_format)
    if name_map is not None:
        params = {name_map.get(name, name): value for name, value in params.items()}
    save_checkpoint(params, dst, format=dst_format)


def _tasks_in_rank_folders(func, file_path, save_path, file_name_regex, src_suffix):
    """(source, destination folder, file name) for the files of the ``rank*`` sub-folders."""
    rank_dirs = sorted(d for d in os.listdir(file_path)
                       if d.startswith("rank") and os.path.isdir(os.path.join(file_path, d)))
    if not rank_dirs:
        raise ValueError(f"For '{func}', no directories starting with 'rank' found in "
                         f"{file_path!r}.")
    tasks = []
    for rank_dir in rank_dirs:
        src_dir = os.path.join(file_path, rank_dir)
        dst_dir = src_dir if save_path is None else os.path.join(save_path, rank_dir)
        for name in sorted(os.listdir(src_dir)):
            if name.endswith(src_suffix) and (file_name_regex is None or
                                              re.search(file_name_regex, name)):
                tasks.append((os.path.join(src_dir, name), dst_dir, name))
    return tasks


def _convert(func, file_path, save_path, name_map, file_name_regex, processes_num,
             src_format, dst_format):
    file_path, save_path = _check_args(func, file_path, save_path, name_map, file_name_regex,
                                       processes_num)
    src_suffix, dst_suffix = _SUFFIX[src_format], _SUFFIX[dst_format]
    if os.path.isdir(file_path):
        tasks = _tasks_in_rank_folders(func, file_path, save_path, file_name_regex, src_suffix)
    else:
        if not file_path.endswith(src_suffix):
            raise ValueError(f"For {func}, the input file must be a {src_suffix} file, but got "
                             f"{file_path!r}")
        if file_name_regex is not None and not re.findall(file_name_regex, file_path):
            raise ValueError(f"For {func}, the input file does not match the regular "
                             f"expression.")
        tasks = [(file_path, save_path or os.path.dirname(os.path.abspath(file_path)),
                  os.path.basename(file_path))]
    for src, dst_dir, name in tasks:
        os.makedirs(dst_dir, exist_ok=True)
        dst = os.path.join(dst_dir, name[:-len(src_suffix)] + dst_suffix)
        _convert_file(src, dst, name_map, src_format, dst_format)


def ckpt_to_safetensors(file_path, save_path=None, name_map=None, file_name_regex=None,
                        processes_num=1):
    """Convert ``.ckpt`` files to ``.safetensors``.

    ``file_path`` is one ``.ckpt`` file (written beside it, or into the folder ``save_path``)
    or a folder whose ``rank*`` sub-folders hold the files (written into the same sub-folders
    of ``save_path``, or beside the files). ``name_map`` renames parameters (old -> new);
    ``file_name_regex`` selects files (``re.search``). ``processes_num`` is accepted; the
    files are converted one after another. Encrypted checkpoints cannot be converted.
    """
    _convert("ckpt_to_safetensors", file_path, save_path, name_map, file_name_regex,
             processes_num, "ckpt", "safetensors")


def safetensors_to_ckpt(file_path, save_path=None, name_map=None, file_name_regex=None,
                        processes_num=1):
    """Convert ``.safetensors`` files to ``.ckpt``; the arguments are those of
    :func:`ckpt_to_safetensors`."""
    _convert("safetensors_to_ckpt", file_path, save_path, name_map, file_name_regex,
             processes_num, "safetensors", "ckpt")
