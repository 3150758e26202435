"""The auto-parallel context: ``set_auto_parallel_context``, ``get_auto_parallel_context``,
``reset_auto_parallel_context`` and ``ParallelMode``, with MindSpore's keys, defaults and
errors.

mscore does data parallelism (``DATA_PARALLEL``; ``HYBRID_PARALLEL`` reduces gradients the
same way). The model-parallel modes and options are refused with a ``ValueError`` that says
so, rather than accepted and ignored. The context is process-wide, as MindSpore's is.
"""
from __future__ import annotations

import numbers

from mscore import _state


class ParallelMode:
    """Parallel mode options (strings), as ``mindspore.ParallelMode``.

    ``STAND_ALONE``: one process. ``DATA_PARALLEL``: every process holds the whole model and
    a shard of each batch; gradients are all-reduced. ``HYBRID_PARALLEL``: as data parallel
    for the gradients (the user places the model parallelism by hand).
    ``SEMI_AUTO_PARALLEL`` and ``AUTO_PARALLEL`` are MindSpore's automatic model
    parallelism, which mscore does not implement.
    """

    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


# Modes whose train cells all-reduce gradients (MindSpore's TrainOneStepCell rule).
GRADIENT_REDUCING_MODES = (ParallelMode.DATA_PARALLEL, ParallelMode.HYBRID_PARALLEL)
_SUPPORTED_MODES = (ParallelMode.STAND_ALONE,) + GRADIENT_REDUCING_MODES

_DEFAULTS = {
    "parallel_mode": ParallelMode.STAND_ALONE,
    "gradients_mean": False,
    "device_num": 1,
    "global_rank": 0,
    "gradient_fp32_sync": True,
    "loss_repeated_mean": True,
    "parameter_broadcast": False,
    "full_batch": False,
    "dataset_strategy": "data_parallel",
    "all_reduce_fusion_config": [],
    "enable_parallel_optimizer": False,
    "strategy_ckpt_load_file": "",
    "strategy_ckpt_save_file": "",
    "search_mode": "recursive_programming",
    "pipeline_stages": 1,
    "grad_accumulation_step": 1,
}
# Keys whose only supported value is the default (model parallelism, pipelines, ...).
_DEFAULT_ONLY = ("enable_parallel_optimizer", "pipeline_stages", "grad_accumulation_step",
                 "search_mode")

_values = _state.section("auto_parallel_context", _DEFAULTS)
# keys the user set, as a dict key -> True (device_num/global_rank fall back to the job
# otherwise)
_is_set = _state.section("auto_parallel_context_set", {})


def _type_error(key, expected, value):
    return TypeError(f"The parameter '{key}' must be {expected}, but got {type(value)}")


def _check_bool(key, value):
    if not isinstance(value, bool):
        raise _type_error(key, bool, value)
    return value


def _check_str(key, value):
    if not isinstance(value, str):
        raise _type_error(key, str, value)
    return value


def _check_parallel_mode(value):
    _check_str("parallel_mode", value)
    if value not in ParallelMode.MODE_LIST:
        raise ValueError("The context configuration parameter 'parallel_mode' only support "
                         "'stand_alone', 'data_parallel', 'hybrid_parallel', "
                         f"'semi_auto_parallel' and 'auto_parallel', but got the value : "
                         f"{value}.")
    if value not in _SUPPORTED_MODES:
        raise ValueError(f"parallel_mode: mscore implements {', '.join(_SUPPORTED_MODES)}; "
                         f"{value!r} (MindSpore's automatic model parallelism) is not "
                         f"supported")
    return value


def _check_int(key, value):
    if not isinstance(value, numbers.Integral):
        raise _type_error(key, int, value)
    return int(value)


def _check_device_num(value):
    value = _check_int("device_num", value)
    if value < 1:
        raise ValueError(f"The context configuration parameter 'device_num' must be a "
                         f"positive integer, but got the value of device_num : {value}.")
    return value


def _check_global_rank(value):
    value = _check_int("global_rank", value)
    if not 0 <= value <= 4095:
        raise ValueError(f"The context configuration parameter 'global_rank' must be in "
                         f"[0, 4095], but got the value of global_rank : {value}.")
    return value


def _check_dataset_strategy(value):
    if isinstance(value, tuple):
        raise ValueError("dataset_strategy: per-input shard strategies (tuples) belong to "
                         "model parallelism, which mscore does not implement; use "
                         "'data_parallel' or 'full_batch'")
    _check_str("dataset_strategy", value)
    if value not in ("data_parallel", "full_batch"):
        raise ValueError(f"For 'set_auto_parallel_context', the argument 'dataset_strategy' "
                         f"must be 'full_batch' or 'data_parallel', but got the value : "
                         f"{value}.")
    return value


def _check_fusion_config(value):
    if not isinstance(value, list):
        raise _type_error("all_reduce_fusion_config", list, value)
    out = []
    for i in value:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral) or i <= 0:
            raise ValueError(f"all_reduce_fusion_config: expected increasing positive "
                             f"parameter indices, got {value!r}")
        out.append(int(i))
    if out != sorted(set(out)):
        raise ValueError(f"all_reduce_fusion_config: expected increasing positive parameter "
                         f"indices, got {value!r}")
    return out


_CHECKS = {
    "parallel_mode": _check_parallel_mode,
    "gradients_mean": lambda v: _check_bool("gradients_mean", v),
    "device_num": _check_device_num,
    "global_rank": _check_global_rank,
    "gradient_fp32_sync": lambda v: _check_bool("gradient_fp32_sync", v),
    "loss_repeated_mean": lambda v: _check_bool("loss_repeated_mean", v),
    "parameter_broadcast": lambda v: _check_bool("parameter_broadcast", v),
    "full_batch": lambda v: _check_bool("full_batch", v),
    "dataset_strategy": _check_dataset_strategy,
    "all_reduce_fusion_config": _check_fusion_config,
    "enable_parallel_optimizer": lambda v: _check_bool("enable_parallel_optimizer", v),
    "strategy_ckpt_load_file": lambda v: _check_str("strategy_ckpt_load_file", v),
    "strategy_ckpt_save_file": lambda v: _check_str("strategy_ckpt_save_file", v),
    "search_mode": lambda v: _check_str("search_mode", v),
    "pipeline_stages": lambda v: _check_int("pipeline_stages", v),
    "grad_accumulation_step": lambda v: _check_int("grad_accumulation_step", v),
}


def set_auto_parallel_context(**kwargs):
    """Set auto-parallel keys, e.g. ``parallel_mode=ParallelMode.DATA_PARALLEL,
    gradients_mean=True, device_num=2``.

    Keys: ``parallel_mode``, ``gradients_mean`` (divide the all-reduced gradients by the
    device count), ``device_num`` and ``global_rank`` (default: the job's size and rank),
    ``gradient_fp32_sync``, ``loss_repeated_mean``, ``parameter_broadcast``, ``full_batch``,
    ``dataset_strategy`` ('data_parallel' or 'full_batch'), ``all_reduce_fusion_config``
    (parameter indices where a new all-reduce bucket starts), ``strategy_ckpt_load_file``,
    ``strategy_ckpt_save_file``; ``enable_parallel_optimizer``, ``pipeline_stages``,
    ``grad_accumulation_step`` and ``search_mode`` only at their defaults. An unknown key is
    ``ValueError``, a wrong type ``TypeError``, a wrong value ``ValueError`` (MindSpore's
    messages). Nothing changes unless every key is valid.
    """
    checked = {}
    for key, value in kwargs.items():
        check = _CHECKS.get(key)
        if check is None:
            raise ValueError(f"Set context keyword {key} is not recognized!")
        value = check(value)
        if key in _DEFAULT_ONLY and value != _DEFAULTS[key]:
            raise ValueError(f"{key}: mscore supports only {_DEFAULTS[key]!r} (its value "
                             f"belongs to model parallelism, which mscore does not "
                             f"implement), got {value!r}")
        checked[key] = value
    _values.update(checked)
    _is_set.update(dict.fromkeys(checked, True))


def get_auto_parallel_context(attr_key):
    """The value of auto-parallel key ``attr_key`` (``ValueError`` for an unknown key)."""
    if attr_key not in _values:
        raise ValueError(f"Get context keyword {attr_key} is not recognized!")
    value = _values[attr_key]
    return list(value) if isinstance(value, list) else value


def reset_auto_parallel_context():
    """Every auto-parallel key back to its default (``parallel_mode`` 'stand_alone',
    ``gradients_mean`` False, ``device_num`` 1, ...)."""
    _values.clear()
    _values.update({k: (list(v) if isinstance(v, list) else v) for k, v in _DEFAULTS.items()})
    _is_set.clear()


def parallel_mode():
    """The current parallel mode (a :class:`ParallelMode` string)."""
    return _values["parallel_mode"]


def reduces_gradients():
    """True when train cells built now all-reduce their gradients (DATA_PARALLEL or
    HYBRID_PARALLEL)."""
    return _values["parallel_mode"] in GRADIENT_REDUCING_MODES


def effective_device_num():
    """The device count gradients are averaged over: 1 when stand-alone, else ``device_num``
    if the user set it, else the job's size (MindSpore's ``_get_device_num``)."""
    if _values["parallel_mode"] == ParallelMode.STAND_ALONE:
        return 1
    if "device_num" in _is_set:
        return _values["device_num"]
    job = _state.process.communication
    return 1 if job["collectives"] is None else job["env"].world_size


def effective_global_rank():
    """This process's rank for the parallel context: 0 when stand-alone, else
    ``global_rank`` if the user set it, else the job's rank."""
    if _values["parallel_mode"] == ParallelMode.STAND_ALONE:
        return 0
    if "global_rank" in _is_set:
        return _values["global_rank"]
    job = _state.process.communication
    return 0 if job["collectives"] is None else job["env"].rank
