"""``AutoBoost``: the boost level and configuration, and the network/optimizer rewrite.

Levels (MindSpore 2.10): O0 changes nothing; O1 turns on less BN and gradient freezing; O2
adds adaptive summation (AdaSum, which acts only in a data-parallel job of enough groups).
``boost_config_dict`` (a dict, as loaded from MindSpore's JSON file) refines it:

* ``"boost"``: ``"mode"`` -- "auto" (the level), "manual" (the level, then each feature named
  here), "enable_all", "disable_all"; the features are ``less_bn``, ``grad_freeze``,
  ``adasum``, ``grad_accumulation``, ``dim_reduce``, ``loss_scale_group``;
* ``"common"``: ``gradient_split_groups`` (parameter indices where a new communication group
  starts), ``device_number`` (devices per server group, default 8);
* one section per feature, read only when the feature is on: ``"less_bn"`` (``fn_flag``,
  ``gc_flag``), ``"grad_freeze"`` (``param_groups``, ``freeze_type``, ``freeze_p``,
  ``total_steps``), ``"grad_accumulation"`` (``grad_accumulation_step``), ``"dim_reduce"``
  (``rho``, ``gamma``, ``alpha``, ``sigma``, ``n_components``, ``pca_mat_path``,
  ``weight_load_dir``, ``timeout``). Unknown keys are ignored, as in MindSpore.

Unlike MindSpore's, ``AutoBoost`` is not a process-wide singleton and never changes its level
table: each object holds its own configuration. The train cells read the configuration of the
AutoBoost that rewrote their optimizer, else the one this thread made last
(:func:`current`).
"""
from __future__ import annotations

import copy
import numbers

from mscore import _state
from mscore.boost.base import OptimizerProcess, ParameterProcess
from mscore.boost.dim_reduce import prepare_dim_reduce
from mscore.boost.grad_freeze import FreezeOpt, GradientFreeze
from mscore.boost.less_batch_normalization import LessBN
from mscore.common._errors import TypeAttributeError
from mscore.nn.cell import Cell

__all__ = ["AutoBoost"]

_MODES = ["auto", "manual", "enable_all", "disable_all"]
_FEATURES = ("less_bn", "grad_freeze", "adasum", "grad_accumulation", "dim_reduce",
             "loss_scale_group")
_LEVELS = {
    "O0": dict.fromkeys(_FEATURES, False),
    "O1": dict(dict.fromkeys(_FEATURES, False), less_bn=True, grad_freeze=True),
    "O2": dict(dict.fromkeys(_FEATURES, False), less_bn=True, grad_freeze=True, adasum=True),
}

BOOST_LEVELS = tuple(_LEVELS)   # the boost_level values ('O0', 'O1', 'O2')

_active = _state.boost_active   # the AutoBoost made last in this context


def check_boost_level(level):
    """``level`` if it is one of :data:`BOOST_LEVELS`, else MindSpore's ValueError (of
    ``Model`` and ``build_train_network``)."""
    if not isinstance(level, str) or level not in BOOST_LEVELS:
        raise ValueError(f"The 'boost_level' should be in : {list(BOOST_LEVELS)}, but got "
                         f"{level}.")
    return level


def current():
    """The AutoBoost this thread made last (an O0 one when none was made)."""
    made = _active.get()
    return made if made is not None else AutoBoost("O0")


def level_config(level):
    """A copy of the feature switches of ``level`` ('O0', 'O1', 'O2')."""
    return copy.deepcopy(_LEVELS[level])


def _number(value, name, kind=numbers.Real, positive=False):
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an int" if kind is numbers.Integral else "a number"
        raise TypeError(f"boost_config_dict: '{name}' must be {what}, got "
                        f"{type(value).__name__}")
    if positive and value <= 0:
        raise ValueError(f"boost_config_dict: '{name}' must be positive, got {value}")
    return value


def _flag(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"boost_config_dict: '{name}' must be a bool, got "
                        f"{type(value).__name__}")
    return value


def _optional_path(value, name):
    if value is not None and not isinstance(value, str):
        raise TypeError(f"boost_config_dict: '{name}' must be a str or None, got "
                        f"{type(value).__name__}")
    return value


def _split_groups(value):
    if isinstance(value, bool) or not isinstance(value, (list, int)):
        raise ValueError(f"gradient_groups `{value}` is not in (list, int)")
    return [value] if isinstance(value, int) else list(value)


# key -> (attribute, checker)
_SETTINGS = {
    "fn_flag": ("_fn_flag", _flag),
    "gc_flag": ("_gc_flag", _flag),
    "param_groups": ("_param_groups",
                     lambda v, n: _number(v, n, numbers.Integral, positive=True)),
    "freeze_type": ("_freeze_type", lambda v, n: _number(v, n, numbers.Integral)),
    "freeze_p": ("_freeze_p", _number),
    "total_steps": ("_total_steps", lambda v, n: _number(v, n, numbers.Integral)),
    "device_number": ("device_number",
                      lambda v, n: _number(v, n, numbers.Integral, positive=True)),
    "gradient_split_groups": ("gradient_groups", lambda v, n: _split_groups(v)),
    "grad_accumulation_step": ("grad_accumulation_step",
                               lambda v, n: _number(v, n, numbers.Integral)),
    "rho": ("rho", _number), "gamma": ("gamma", _number), "alpha": ("alpha", _number),
    "sigma": ("sigma", _number),
    "n_components": ("n_components", lambda v, n: _number(v, n, numbers.Integral, True)),
    "pca_mat_path": ("pca_mat_path", _optional_path),
    "weight_load_dir": ("weight_load_dir", _optional_path),
    "timeout": ("timeout", _number),
}


class AutoBoost:
    """Automatic acceleration of a network's training (MindSpore's ``boost.AutoBoost``).

    ``AutoBoost(level="O0", boost_config_dict="")``: an unknown level is O0 (as in
    MindSpore); ``boost_config_dict`` is described in the module docstring. A mode other than
    "auto", "manual", "enable_all" and "disable_all" is ``ValueError``.
    """

    def __init__(self, level="O0", boost_config_dict=""):
        if not isinstance(level, str) or level not in _LEVELS:
            level = "O0"
        if boost_config_dict is None:
            boost_config_dict = ""
        if boost_config_dict != "" and not isinstance(boost_config_dict, dict):
            # MindSpore fails on the value's missing .items(): both types catch this one
            raise TypeAttributeError(f"boost_config_dict: expected a dict (json.load the JSON "
                                     f"file), got {type(boost_config_dict).__name__}")
        self.level = level
        self.boost_config_dict = boost_config_dict
        self._fn_flag = True
        self._gc_flag = True
        self._param_groups = 10
        self._freeze_type = 1
        self._freeze_p = 0.7
        self._total_steps = 65536
        self.gradient_groups = None
        self.device_number = 8
        self.grad_accumulation_step = 1
        self.rho = 0.55
        self.gamma = 0.9
        self.alpha = 0.001
        self.sigma = 0.4
        self.n_components = 32
        self.pca_mat_path = None
        self.weight_load_dir = None
        self.local_pca_mat_path = None
        self.timeout = 1800
        self.boost_config = self._configuration(level, boost_config_dict)
        self._param_processer = ParameterProcess()
        _active.set(self)

    # -- configuration ---------------------------------------------------------------------------
    def _configuration(self, level, config_dict):
        switches = level_config(level)
        if not config_dict:
            return switches
        section = config_dict.get("boost", {})
        mode = section.get("mode", "auto") if isinstance(section, dict) else "auto"
        if mode not in _MODES:
            raise ValueError(f"The boost mode must be in {_MODES}, but got {mode}")
        if mode == "manual":
            for key, value in section.items():
                if key in switches:
                    switches[key] = _flag(value, key)
        elif mode == "enable_all":
            switches = dict.fromkeys(switches, True)
        elif mode == "disable_all":
            switches = dict.fromkeys(switches, False)
        self._apply_sections(config_dict, switches)
        return switches

    def _apply_sections(self, config_dict, switches):
        """Read "common" and the section of every feature that is on."""
        for key, section in config_dict.items():
            if not (key == "common" or switches.get(key)) or not isinstance(section, dict):
                continue
            for name, value in section.items():
                setting = _SETTINGS.get(name)
                if setting is not None:
                    attribute, check = setting
                    setattr(self, attribute, check(value, name))

    # -- the rewrite -----------------------------------------------------------------------------
    def network_auto_process_train(self, network, optimizer):
        """``(network, optimizer)`` for training at this configuration: less BN wraps the
        network in :class:`~mscore.boost.LessBN` and rebuilds the optimizer with gradient
        centralization groups; gradient freezing makes a :class:`~mscore.boost.FreezeOpt`;
        AdaSum marks the optimizer (``optimizer.adasum = True``)."""
        if not isinstance(network, Cell):
            raise TypeError(f"network: expected a Cell, got {type(network).__name__}")
        if self.boost_config.get("dim_reduce"):
            return prepare_dim_reduce(self, network, optimizer)
        if self.boost_config.get("less_bn"):
            network = LessBN(network, fn_flag=self._fn_flag)
            process = OptimizerProcess(optimizer)
            groups = self._param_processer.assign_parameter_group(network.trainable_params(),
                                                                  self.gradient_groups)
            process.origin_params = ParameterProcess.generate_group_params(
                groups, process.origin_params)
            if self._gc_flag:
                process.add_grad_centralization(network)
            optimizer = process.generate_new_optimizer()
        if self.boost_config.get("grad_freeze"):
            freeze = GradientFreeze(self._param_groups, self._freeze_type, self._freeze_p,
                                    self._total_steps)
            network, optimizer = freeze.freeze_generate(network, optimizer)
        if self.boost_config.get("adasum"):
            optimizer.adasum = True
        object.__setattr__(optimizer, "_auto_boost", self)
        return network, optimizer

    def network_auto_process_eval(self, network):
        """The network for evaluation at this configuration (wrapped in LessBN with less
        BN on)."""
        if self.boost_config.get("dim_reduce"):
            return network
        if self.boost_config.get("less_bn"):
            network = LessBN(network)
        return network

    def __repr__(self):
        on = [k for k, v in self.boost_config.items() if v]
        return f"AutoBoost(level={self.level!r}, features={on})"


def _already_boosted(network, optimizer):
    return (getattr(optimizer, "_auto_boost", None) is not None
            or isinstance(optimizer, FreezeOpt) or isinstance(network, LessBN))


def boost_for_training(network, optimizer, level, config=""):
    """``(network, optimizer)`` rewritten for boost ``level`` ('O0' changes nothing; a
    network and optimizer that AutoBoost already rewrote, or a FreezeOpt / LessBN the user
    made, are left as they are)."""
    if level == "O0" or _already_boosted(network, optimizer):
        return network, optimizer
    return AutoBoost(level, config).network_auto_process_train(network, optimizer)


def boost_model(network, optimizer, eval_network, level, config):
    """What ``Model(..., boost_level=level, boost_config_dict=config)`` trains and evaluates:
    ``(network, optimizer, eval_network)`` (MindSpore's ``Model._build_boost_network``, but
    boosting whenever there is an optimizer, with or without metrics)."""
    auto = AutoBoost(level, config)
    if auto.level not in ("O1", "O2"):
        return network, optimizer, eval_network
    if optimizer is None:
        import warnings
        warnings.warn("In boost mode, the optimizer must be defined.", RuntimeWarning,
                      stacklevel=4)     # the line that built the Model
        return network, optimizer, eval_network
    network, optimizer = auto.network_auto_process_train(network, optimizer)
    if eval_network is not None:
        eval_network = auto.network_auto_process_eval(eval_network)
    return network, optimizer, eval_network
