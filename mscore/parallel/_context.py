"""The auto-parallel context: ``set_auto_parallel_context``, ``get_auto_parallel_context``,
``reset_auto_parallel_context`` and ``ParallelMode``, with MindSpore's keys, defaults and
errors.

mscore does data parallelism (``DATA_PARALLEL``; ``HYBRID_PARALLEL`` reduces gradients the
same way), with the optimizer-state sharding of ``enable_parallel_optimizer`` (configured by
``parallel_optimizer_config``) and gradient accumulation over ``grad_accumulation_step``
calls, and operator-level model parallelism (``SEMI_AUTO_PARALLEL``: the ``shard``
strategies of primitives; see docs/parallel.md). The options it does not implement
(strategy search, per-input dataset strategies) are refused with a
``ValueError`` that says so, rather than accepted and ignored. The context is process-wide,
as MindSpore's is.
"""
from __future__ import annotations

import numbers

from mscore import _state


class ParallelMode:
    """Parallel mode options (strings), as ``mindspore.ParallelMode``.

    ``STAND_ALONE``: one process. ``DATA_PARALLEL``: every process holds the whole model and
    a shard of each batch; gradients are all-reduced. ``HYBRID_PARALLEL``: as data parallel
    for the gradients (the user places the model parallelism by hand).
    ``SEMI_AUTO_PARALLEL``: the ``shard`` strategies of Primitives cut their operators and
    parameters over the ranks of the job (``mscore.ops._sharded_ops``); in one process,
    Primitives' and Cells' strategies lay arrays out over its devices (jax: GSPMD).
    ``AUTO_PARALLEL`` (MindSpore's strategy search) is not implemented.
    """

    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


# Modes whose train cells all-reduce gradients (MindSpore's TrainOneStepCell rule).
GRADIENT_REDUCING_MODES = (ParallelMode.DATA_PARALLEL, ParallelMode.HYBRID_PARALLEL)
_SUPPORTED_MODES = (ParallelMode.STAND_ALONE,) + GRADIENT_REDUCING_MODES + (
    ParallelMode.SEMI_AUTO_PARALLEL,)

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
_DEFAULT_ONLY = ("search_mode",)

# parallel_optimizer_config's keys and defaults (MindSpore's; the threshold is in KB).
_OPTIMIZER_CONFIG_DEFAULTS = {
    "gradient_accumulation_shard": False,
    "parallel_optimizer_threshold": 64,
    "optimizer_weight_shard_size": -1,
    "optimizer_level": "level1",
}
_optimizer_config = _state.section("parallel_optimizer_config", _OPTIMIZER_CONFIG_DEFAULTS)

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
                         f"{value!r} (MindSpore's strategy search) is not supported")
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
        raise ValueError("dataset_strategy: per-input shard strategies (tuples) are not "
                         "implemented; use 'data_parallel' (each rank reads its rows of the "
                         "batch) or 'full_batch'")
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


def _check_pipeline_stages(value):
    if isinstance(value, bool):
        raise TypeError(f"For 'set_auto_parallel_context', the argument 'pipeline_stages' must "
                        f"be int, but got the type : {type(value)}.")
    value = _check_int("pipeline_stages", value)
    if value < 1:
        raise ValueError(f"For 'set_auto_parallel_context', the argument 'pipeline_stages' "
                         f"should be greater or equal 1, but got the value of stages : "
                         f"{value}.")
    return value


def _check_positive_step(value):
    if isinstance(value, bool):
        raise TypeError(f"For 'grad_accumulation_step', the input value must be int and must > "
                        f"0, but got '{value}' with type 'bool'.")
    value = _check_int("grad_accumulation_step", value)
    if value <= 0:
        raise ValueError(f"For 'grad_accumulation_step', the input value must be int and must > "
                         f"0, but got '{value}' with type 'int'.")
    return value


def _check_config_int(name, value, minimum):
    relation = "> 0" if minimum == 1 else ">= 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        kind = "bool" if isinstance(value, bool) else type(value).__name__
        if isinstance(value, bool):
            raise TypeError(f"For '{name}', the input value must be int and must {relation}, "
                            f"but got '{value}' with type '{kind}'.")
        raise TypeError(f"For '{name}', the input value must be int, but got '{kind}'")
    if value < minimum:
        raise ValueError(f"For '{name}', the input value must be int and must {relation}, but "
                         f"got '{value}' with type 'int'.")
    return int(value)


def _check_optimizer_config(value):
    """MindSpore's checks of ``parallel_optimizer_config``, in its order; returns the config
    with every key (the defaults for those not given)."""
    if not isinstance(value, dict):
        raise _type_error("parallel_optimizer_config", dict, value)
    unknown = [k for k in value if k not in _OPTIMIZER_CONFIG_DEFAULTS]
    if unknown:
        raise ValueError(f"Unknown config: {unknown[:1]}")
    out = dict(_OPTIMIZER_CONFIG_DEFAULTS)
    level = value.get("optimizer_level")
    if "gradient_accumulation_shard" in value:
        shard = value["gradient_accumulation_shard"]
        if not isinstance(shard, bool):
            raise TypeError(f"For 'gradient_accumulation_shard', the "
                            f"'gradient_accumulation_shard' must be a bool, but got "
                            f"{type(shard).__name__}.")
        if level is not None and level != "level2":
            raise ValueError(f"The optimizer_level is set as {level}, thus cannot set "
                             f"grad_accumulation_shard as True.")
        out["gradient_accumulation_shard"] = shard
    if "parallel_optimizer_threshold" in value:
        out["parallel_optimizer_threshold"] = _check_config_int(
            "parallel_optimizer_threshold", value["parallel_optimizer_threshold"], 0)
    size = value.get("optimizer_weight_shard_size", -1)
    if size != -1 or isinstance(size, bool):
        out["optimizer_weight_shard_size"] = _check_config_int("optimizer_weight_shard_size",
                                                               size, 1)
    if level is not None:
        if level not in ("level1", "level2", "level3"):
            raise ValueError(f"Optimizer level should in ['level1', 'level2', 'level3'], but "
                             f"got {level}")
        if level == "level3":
            raise ValueError("parallel_optimizer_config: optimizer_level 'level3' (the "
                             "weights themselves sharded, ZeRO-3) is not supported; mscore "
                             "shards the optimizer state and master weights ('level1', "
                             "'level2')")
        out["optimizer_level"] = level
        if level == "level2":
            out["gradient_accumulation_shard"] = True
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
    "pipeline_stages": _check_pipeline_stages,
    "grad_accumulation_step": _check_positive_step,
    "parallel_optimizer_config": _check_optimizer_config,
}


def set_auto_parallel_context(**kwargs):
    """Set auto-parallel keys, e.g. ``parallel_mode=ParallelMode.DATA_PARALLEL,
    gradients_mean=True, device_num=2``.

    Keys: ``parallel_mode``, ``gradients_mean`` (divide the all-reduced gradients by the
    device count), ``device_num`` and ``global_rank`` (default: the job's size and rank),
    ``gradient_fp32_sync``, ``loss_repeated_mean``, ``parameter_broadcast``, ``full_batch``,
    ``dataset_strategy`` ('data_parallel' or 'full_batch'), ``all_reduce_fusion_config``
    (parameter indices where a new all-reduce bucket starts), ``strategy_ckpt_load_file``,
    ``strategy_ckpt_save_file``, ``enable_parallel_optimizer`` (shard the optimizer state
    and master weights over the ranks), ``parallel_optimizer_config`` (a dict:
    ``parallel_optimizer_threshold`` in KB, ``gradient_accumulation_shard``,
    ``optimizer_weight_shard_size``, ``optimizer_level``), ``grad_accumulation_step``
    (update once every that many calls, on the mean of their gradients),
    ``pipeline_stages`` (the stages ``Cell.pipeline_stage`` places cells on, one rank each;
    ``nn.PipelineCell`` runs them); ``search_mode`` only at its default. An unknown key is
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
            raise ValueError(f"{key}: mscore supports only {_DEFAULTS[key]!r} (strategy "
                             f"searches are not implemented), got {value!r}")
        checked[key] = value
    optimizer_config = checked.pop("parallel_optimizer_config", None)
    if optimizer_config is not None:
        _optimizer_config.clear()
        _optimizer_config.update(optimizer_config)
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
    _optimizer_config.clear()
    _optimizer_config.update(_OPTIMIZER_CONFIG_DEFAULTS)
    _is_set.clear()


def parallel_mode():
    """The current parallel mode (a :class:`ParallelMode` string)."""
    return _values["parallel_mode"]


def reduces_gradients():
    """True when train cells built now all-reduce their gradients (DATA_PARALLEL or
    HYBRID_PARALLEL)."""
    return _values["parallel_mode"] in GRADIENT_REDUCING_MODES


def shards_optimizer():
    """True when train cells built now shard the optimizer over the ranks: a
    gradient-reducing mode with ``enable_parallel_optimizer``."""
    return reduces_gradients() and _values["enable_parallel_optimizer"]


def optimizer_config():
    """The parallel optimizer's configuration (a copy, every key present).
    ``get_auto_parallel_context('parallel_optimizer_config')`` is refused, as in MindSpore."""
    return dict(_optimizer_config)


def grad_accumulation_step():
    """How many calls of a train cell make one update (1: every call)."""
    return _values["grad_accumulation_step"]


def effective_device_num():
    """The device count gradients are averaged over: 1 when stand-alone, else ``device_num``
    if the user set it, else the job's size (MindSpore's ``_get_device_num``)."""
    if _values["parallel_mode"] == ParallelMode.STAND_ALONE:
        return 1
    if "device_num" in _is_set:
        return _values["device_num"]
    job = _state.process.communication
    return 1 if job["collectives"] is None else job["env"].world_size


class parallel_mode_scope:
    """``with parallel_mode_scope(mode, pipeline_stages=None):`` runs with ``parallel_mode``
    set to ``mode`` (and ``pipeline_stages``, when given) and restores the previous values
    after (``AutoParallel``'s network runs so)."""

    def __init__(self, mode, pipeline_stages=None):
        self.values = {"parallel_mode": _check_parallel_mode(mode)}
        if pipeline_stages is not None:
            self.values["pipeline_stages"] = _check_pipeline_stages(pipeline_stages)
        self.saved = None

    def __enter__(self):
        self.saved = {k: _values[k] for k in self.values}
        _values.update(self.values)
        return self

    def __exit__(self, exc_type, exc, tb):
        _values.update(self.saved)
        return False


def pipeline_stages():
    """How many pipeline stages the ranks form (1: no pipeline)."""
    return _values["pipeline_stages"]


def full_batch():
    """True when every rank reads the whole batch (``full_batch=True`` or
    ``dataset_strategy='full_batch'``), False when each reads its rows of it."""
    return _values["full_batch"] or _values["dataset_strategy"] == "full_batch"
