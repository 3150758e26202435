"""Global settings of dataset pipelines (MindSpore's ``mindspore.dataset.config``).

``set_seed(seed)`` fixes every shuffle, sampler and random transform of every pipeline;
without it the seed given to ``mscore.set_seed`` is used, and without either each process
draws its own (in a data-parallel job, rank 0 draws it for all, so that shards never
overlap). The other settings tune MindSpore's C++ engine (workers, shared memory, autotune,
...); mscore runs pipelines in the calling thread, so they are checked, stored and returned,
and change nothing else, except ``set_prefetch_size`` (batches the sink-mode thread keeps
ready), ``set_callback_timeout`` (how long a ``WaitedDSCallback`` waits) and
``set_multiprocessing_timeout_interval`` (how often a busy worker process is warned about);
``set_multiprocessing_timeout`` (mscore's own) bounds the time a worker may take on a row.
"""
from __future__ import annotations

import enum
import json
import os

import numpy as np

from mscore import _state as _process_state

__all__ = ["set_seed", "get_seed", "set_prefetch_size", "get_prefetch_size",
           "set_num_parallel_workers", "get_num_parallel_workers", "set_numa_enable",
           "get_numa_enable", "set_monitor_sampling_interval", "get_monitor_sampling_interval",
           "set_callback_timeout", "get_callback_timeout", "set_auto_num_workers",
           "get_auto_num_workers", "set_enable_shared_mem", "get_enable_shared_mem",
           "set_enable_autotune", "get_enable_autotune", "set_autotune_interval",
           "get_autotune_interval", "set_auto_offload", "get_auto_offload",
           "set_enable_watchdog", "get_enable_watchdog", "set_fast_recovery",
           "get_fast_recovery", "set_debug_mode", "get_debug_mode", "set_error_samples_mode",
           "get_error_samples_mode", "ErrorSamplesMode", "set_multiprocessing_timeout_interval",
           "get_multiprocessing_timeout_interval", "set_multiprocessing_timeout",
           "get_multiprocessing_timeout", "set_iterator_mode", "get_iterator_mode",
           "set_multiprocessing_start_method", "get_multiprocessing_start_method",
           "set_sending_batches", "set_dynamic_shape", "get_dynamic_shape", "set_video_backend",
           "get_video_backend", "load"]

_INT32_MAX = 2 ** 31 - 1
_UINT32_MAX = 2 ** 32 - 1


class ErrorSamplesMode(enum.IntEnum):
    """What a pipeline does with a row whose processing fails: ``RETURN`` (raise, the
    default), ``REPLACE`` / ``SKIP`` (accepted; mscore always raises)."""
    RETURN = 0
    REPLACE = 1
    SKIP = 2


_DEFAULTS = {"prefetch_size": 4, "num_parallel_workers": 8,
             "numa_enable": False, "monitor_sampling_interval": 1000, "callback_timeout": 60,
             "auto_num_workers": False, "enable_shared_mem": True, "enable_autotune": False,
             "autotune_interval": 0, "auto_offload": False, "enable_watchdog": True,
             "fast_recovery": True, "debug_mode": False, "error_samples_mode":
             ErrorSamplesMode.RETURN, "multiprocessing_timeout_interval": 300,
             "multiprocessing_timeout": 0.0,
             "iterator_mode": {"do_copy": False, "parallel_convert": False},
             "multiprocessing_start_method": "fork", "sending_batches": 0,
             "dynamic_shape": False, "video_backend": "CPU"}
_state = _process_state.section("dataset_config", _DEFAULTS)   # seeds: _process_state.process.seeds


def _int(value, name, low, high=_INT32_MAX):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} ({value!r})")
    if not low <= value <= high:
        raise ValueError(f"{name}: expected an int in [{low}, {high}], got {value}")
    return value


def _bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__} ({value!r})")
    return value


def set_seed(seed):
    """Seed the shuffles, samplers and random transforms of dataset pipelines."""
    _process_state.process.seeds.dataset_seed = _int(seed, "seed", 0, _UINT32_MAX)


def seed_is_set():
    """Whether a seed was given (``set_seed`` here, or ``mscore.set_seed``)."""
    seeds = _process_state.process.seeds
    return seeds.dataset_seed is not None or seeds.global_seed is not None


def get_seed():
    """The seed pipelines use: ``set_seed``'s, else ``mscore.set_seed``'s, else a fixed
    per-process random one (the same on every rank of a data-parallel job)."""
    seeds = _process_state.process.seeds
    if seeds.dataset_seed is not None:
        return seeds.dataset_seed
    if seeds.global_seed is not None:
        return int(seeds.global_seed) % 2 ** 32
    job = _process_state.process.communication
    if job["collectives"] is not None:
        return job["seed"]   # every rank of a job shuffles alike
    if seeds.dataset_fallback is None:
        seeds.dataset_fallback = int(np.random.SeedSequence().entropy % 2 ** 32)
    return seeds.dataset_fallback


def set_prefetch_size(size):
    """Batches the sink-mode background thread keeps ready ahead of the step."""
    _state["prefetch_size"] = _int(size, "size", 1)


def get_prefetch_size():
    """See :func:`set_prefetch_size` (default 4)."""
    return _state["prefetch_size"]


def set_num_parallel_workers(num):
    """MindSpore's default worker count per operation (stored; rows are read in the calling
    thread)."""
    _state["num_parallel_workers"] = _int(num, "num", 1)


def get_num_parallel_workers():
    """See :func:`set_num_parallel_workers` (default 8)."""
    return _state["num_parallel_workers"]


def set_callback_timeout(timeout):
    """Seconds a ``WaitedDSCallback`` waits for the training step (default 60)."""
    _state["callback_timeout"] = _int(timeout, "timeout", 1)


def get_callback_timeout():
    """See :func:`set_callback_timeout`."""
    return _state["callback_timeout"]


def _setting(name, check, doc):
    def setter(value):
        _state[name] = check(value)
    setter.__doc__ = f"{doc} (stored; mscore's pipeline does not use it)."
    setter.__name__ = f"set_{name}"

    def getter():
        return _state[name]
    getter.__doc__ = f"See :func:`set_{name}` (default {_DEFAULTS[name]!r})."
    getter.__name__ = f"get_{name}"
    return setter, getter


set_numa_enable, get_numa_enable = _setting(
    "numa_enable", lambda x: _bool(x, "numa_enable"), "Bind workers to NUMA nodes")
set_monitor_sampling_interval, get_monitor_sampling_interval = _setting(
    "monitor_sampling_interval", lambda x: _int(x, "interval", 1),
    "Milliseconds between performance samples")
set_auto_num_workers, get_auto_num_workers = _setting(
    "auto_num_workers", lambda x: _bool(x, "enable"), "Choose worker counts automatically")
set_enable_shared_mem, get_enable_shared_mem = _setting(
    "enable_shared_mem", lambda x: _bool(x, "enable"), "Pass rows between processes in shared "
    "memory")
set_autotune_interval, get_autotune_interval = _setting(
    "autotune_interval", lambda x: _int(x, "interval", 0), "Steps between autotune rounds")
set_auto_offload, get_auto_offload = _setting(
    "auto_offload", lambda x: _bool(x, "offload"), "Move transforms to the device")
set_enable_watchdog, get_enable_watchdog = _setting(
    "enable_watchdog", lambda x: _bool(x, "enable"), "Watch for stuck workers")
set_fast_recovery, get_fast_recovery = _setting(
    "fast_recovery", lambda x: _bool(x, "fast_recovery"), "Skip transforms when resuming")
set_multiprocessing_timeout_interval, get_multiprocessing_timeout_interval = _setting(
    "multiprocessing_timeout_interval", lambda x: _int(x, "interval", 1),
    "Seconds between warnings of a slow worker process")
set_multiprocessing_timeout_interval.__doc__ = (
    "Seconds between warnings that a worker process (``python_multiprocessing=True``) is "
    "still busy with one row (default 300); see :func:`set_multiprocessing_timeout` for a "
    "limit.")


def set_multiprocessing_timeout(seconds):
    """The most seconds a worker process (``python_multiprocessing=True``) may take on one
    row before the pass fails with a ``RuntimeError`` naming the operation, the row and the
    worker, and the workers are stopped; ``0`` (the default) waits as long as it takes, as
    MindSpore 2.10 does (it only warns, every :func:`set_multiprocessing_timeout_interval`
    seconds, as mscore does too). An option of mscore's, not MindSpore's."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or \
            not np.isfinite(seconds) or seconds < 0:
        raise ValueError(f"seconds: expected a finite number >= 0 (0: no limit), got "
                         f"{seconds!r}")
    _state["multiprocessing_timeout"] = float(seconds)


def get_multiprocessing_timeout():
    """See :func:`set_multiprocessing_timeout` (default 0: no limit)."""
    return _state["multiprocessing_timeout"]


set_dynamic_shape, get_dynamic_shape = _setting(
    "dynamic_shape", lambda x: _bool(x, "is_dynamic"), "Batches of changing shape in sink mode")


def set_enable_autotune(enable, filepath_prefix=None):
    """Tune the pipeline while it runs (stored; mscore's pipeline does not use it)."""
    _bool(enable, "enable")
    if filepath_prefix is not None and not isinstance(filepath_prefix, str):
        raise TypeError(f"filepath_prefix: expected a str, got {type(filepath_prefix).__name__}")
    _state["enable_autotune"] = enable


def get_enable_autotune():
    """See :func:`set_enable_autotune` (default False)."""
    return _state["enable_autotune"]


def set_debug_mode(debug_mode_flag, debug_hook_list=None):
    """Run the pipeline in debug mode (stored; mscore's pipeline always runs in the calling
    thread, where a debugger sees every operation)."""
    _bool(debug_mode_flag, "debug_mode_flag")
    if debug_hook_list is not None and not isinstance(debug_hook_list, list):
        raise TypeError(f"debug_hook_list: expected a list, got {type(debug_hook_list).__name__}")
    _state["debug_mode"] = debug_mode_flag


def get_debug_mode():
    """See :func:`set_debug_mode` (default False)."""
    return _state["debug_mode"]


def set_error_samples_mode(error_samples_mode):
    """What to do with a row whose processing fails (stored; mscore raises)."""
    if not isinstance(error_samples_mode, ErrorSamplesMode):
        raise TypeError(f"error_samples_mode: expected an ErrorSamplesMode, got "
                        f"{error_samples_mode!r}")
    _state["error_samples_mode"] = error_samples_mode


def get_error_samples_mode():
    """See :func:`set_error_samples_mode` (default ``ErrorSamplesMode.RETURN``)."""
    return _state["error_samples_mode"]


def set_iterator_mode(do_copy=False, parallel_convert=False):
    """How iterators hand out rows (stored)."""
    _state["iterator_mode"] = {"do_copy": _bool(do_copy, "do_copy"),
                               "parallel_convert": _bool(parallel_convert, "parallel_convert")}


def get_iterator_mode():
    """See :func:`set_iterator_mode`."""
    return dict(_state["iterator_mode"])


def set_multiprocessing_start_method(start_method="fork"):
    """How worker processes start (stored; mscore starts none)."""
    if start_method not in ("fork", "spawn"):
        raise ValueError(f"start_method: expected 'fork' or 'spawn', got {start_method!r}")
    _state["multiprocessing_start_method"] = start_method


def get_multiprocessing_start_method():
    """See :func:`set_multiprocessing_start_method`."""
    return _state["multiprocessing_start_method"]


def set_sending_batches(batch_num):
    """Batches sent to an Ascend device queue per epoch (stored)."""
    if not isinstance(batch_num, int) or isinstance(batch_num, bool):
        raise TypeError(f"batch_num: expected an int, got {type(batch_num).__name__}")
    _state["sending_batches"] = batch_num


def set_video_backend(backend):
    """Where videos are decoded (stored; mscore has no video sources)."""
    if backend not in ("CPU", "Ascend"):
        raise ValueError(f"backend: expected 'CPU' or 'Ascend', got {backend!r}")
    _state["video_backend"] = backend


def get_video_backend():
    """See :func:`set_video_backend`."""
    return _state["video_backend"]


_FILE_KEYS = {"numParallelWorkers": set_num_parallel_workers, "seed": set_seed,
              "prefetchSize": set_prefetch_size, "callbackTimeout": set_callback_timeout,
              "monitorSamplingInterval": set_monitor_sampling_interval}


def load(file):
    """Read settings from a JSON file (``{"numParallelWorkers": 4, "seed": 5, ...}``)."""
    if not isinstance(file, (str, os.PathLike)):
        raise TypeError(f"file: expected a path, got {type(file).__name__}")
    name = os.fspath(file)
    try:
        with open(name, encoding="utf-8") as f:
            settings = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{name}: cannot read the dataset config file ({exc})") from None
    if not isinstance(settings, dict):
        raise ValueError(f"{name}: expected a JSON object of settings")
    for key, value in settings.items():
        if key in _FILE_KEYS:
            try:
                _FILE_KEYS[key](value)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name}: {key}: {exc}") from None

