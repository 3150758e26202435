"""``OptimizerProcess`` and ``ParameterProcess``: rebuilding an optimizer over new parameter
groups (gradient centralization, communication groups), as MindSpore's boost does."""
from __future__ import annotations

import warnings

from mscore.boost.less_batch_normalization import CommonHeadLastFN
from mscore.common.parameter import Parameter
from mscore.nn.layer.conv import Conv2d
from mscore.nn.optim.optimizer import Optimizer

__all__ = ["OptimizerProcess", "ParameterProcess"]

_NO_GC_NAMES = ("beta", "gamma", "bias")


def _group_copy(group, params):
    """A copy of parameter group ``group`` holding ``params`` (the other keys shallow)."""
    new = {k: v for k, v in group.items() if k != "params"}
    new["params"] = params
    return new


def _as_list(params):
    if params is not None and not isinstance(params, list):
        params = list(params)
    if not params:
        raise ValueError("Optimizer got an empty parameter list.")
    if not isinstance(params[0], (dict, Parameter)):
        raise TypeError("Only a list of Parameter or dict can be supported.")
    return params


class OptimizerProcess:
    """Rebuild an optimizer of the same class and arguments over new parameter groups, with
    gradient-centralization groups added.

    ``OptimizerProcess(opt)``; ``origin_params`` holds the groups to build with (the
    optimizer's own ``params`` at first), ``add_grad_centralization(network)`` splits each
    group into a centralised and a plain one, ``generate_new_optimizer()`` builds it.
    """

    def __init__(self, opt):
        if not isinstance(opt, Optimizer):
            raise TypeError(f"For 'OptimizerProcess', 'opt' must be an Optimizer, got "
                            f"{type(opt).__name__}")
        self.is_lars = False
        self.single_opt = opt
        self.opt_class = type(opt)
        self.opt_init_args = dict(getattr(opt, "init_args", {}))
        self.learning_rate = getattr(opt, "init_learning_rate", None)
        self.origin_params = getattr(opt, "init_params", {"params": list(opt.parameters)})[
            "params"]

    @staticmethod
    def build_params_dict(network):
        """``{id(parameter): the cell that holds it}`` over ``network``."""
        owners = {}
        for _, cell in network.cells_and_names():
            for param in cell.get_parameters(expand=False):
                owners[id(param)] = cell
        return owners

    @staticmethod
    def build_gc_params_group(params_dict, parameters):
        """Each group of ``parameters`` split into one with ``grad_centralization`` (weights:
        no 'beta'/'gamma'/'bias' in the name, not of a grouped convolution nor of a
        CommonHeadLastFN) and one without; 'order_params' groups stay."""
        groups = []
        for group in parameters:
            if "order_params" in group:
                groups.append(group)
                continue
            centralised, plain = [], []
            for param in group["params"]:
                owner = params_dict.get(id(param))
                excluded = any(n in param.name for n in _NO_GC_NAMES) or \
                    (isinstance(owner, Conv2d) and owner.group > 1) or \
                    isinstance(owner, CommonHeadLastFN)
                (plain if excluded else centralised).append(param)
            if centralised:
                new = _group_copy(group, centralised)
                new["grad_centralization"] = True
                groups.append(new)
            if plain:
                groups.append(_group_copy(group, plain))
        return groups

    def add_grad_centralization(self, network):
        """Split ``origin_params`` into centralised and plain groups (a flat list of
        Parameters stays as it is, with a warning: only groups can be centralised)."""
        owners = OptimizerProcess.build_params_dict(network)
        parameters = _as_list(self.origin_params)
        if isinstance(parameters[0], Parameter):
            warnings.warn("Only group parameters support gradient centralization.",
                          RuntimeWarning, stacklevel=2)
            return
        self.origin_params = OptimizerProcess.build_gc_params_group(owners, parameters)

    def generate_new_optimizer(self):
        """A new optimizer of the original class and arguments over ``origin_params``."""
        if self.learning_rate is None:
            self.learning_rate = self.single_opt.learning_rate
        return self.opt_class(params=self.origin_params, learning_rate=self.learning_rate,
                              **self.opt_init_args)


class ParameterProcess:
    """Parameter groups for boost: ``generate_group_params`` maps new parameters onto an
    optimizer's groups by name, ``assign_parameter_group`` numbers communication groups
    (``comm_fusion``)."""

    def __init__(self):
        self._parameter_indices = 1

    @staticmethod
    def generate_group_params(parameters, origin_params):
        """``parameters`` arranged as ``origin_params`` is: one ``{"params": parameters}``
        group for a flat list, else each group keeps its settings with its parameters
        replaced by the same-named ones of ``parameters``; parameters no group names go into
        one more group with the settings of the group that has the most keys."""
        origin = _as_list(origin_params)
        if isinstance(origin[0], Parameter):
            return [{"params": parameters}]
        return ParameterProcess._generate_new_group_params(parameters, origin)

    @staticmethod
    def _generate_new_group_params(parameters, origin):
        names = [p.name for p in parameters]
        by_name = dict(zip(names, parameters))
        left = list(names)
        groups = []
        richest, most_keys = None, 0
        for group in origin:
            if "order_params" in group:
                groups.append(dict(group, order_params=parameters))
                continue
            kept = []
            for param in group["params"]:
                if param.name in by_name:
                    kept.append(by_name[param.name])
                    if param.name in left:
                        left.remove(param.name)
            groups.append(_group_copy(group, kept))
            if len(group) > most_keys:
                most_keys, richest = len(group), group
        if left:
            extra = [by_name[n] for n in left]
            groups.append(_group_copy(richest, extra) if richest is not None
                          else {"params": extra})
        return groups

    def assign_parameter_group(self, parameters, split_point=None):
        """Set ``comm_fusion`` on each parameter: a new group starts at each index of
        ``split_point`` (default: half way). Returns ``parameters``."""
        if not isinstance(parameters, (list, tuple)) or not parameters:
            return parameters
        splits = split_point if split_point else [len(parameters) // 2]
        for i, param in enumerate(parameters):
            if i in splits:
                self._parameter_indices += 1
            param.comm_fusion = self._parameter_indices
        return parameters
