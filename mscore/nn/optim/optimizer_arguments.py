"""The constructor arguments of an optimizer: checks and records them.

:class:`OptimizerArguments` (a base of :class:`~mscore.nn.optim.optimizer.Optimizer`) checks
the parameters, parameter groups, learning rates and weight decays an optimizer is built with,
with MindSpore's exception types and messages, and turns a learning rate into the Parameter
or schedule the optimizer keeps. :func:`recording_init` wraps a subclass's ``__init__`` so the
optimizer records how it was built (``init_params``, ``init_learning_rate``, ``init_args``),
as MindSpore's ``opt_init_args_register`` does.
"""
from __future__ import annotations

import functools
import inspect
import numbers

import numpy as np

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.learning_rate_schedule import LearningRateSchedule, _IteratorLearningRate


def default_decay_filter(param):
    """Whether weight decay applies to ``param`` without parameter groups: its name holds
    neither 'beta' nor 'gamma' (normalisation parameters)."""
    return "beta" not in param.name and "gamma" not in param.name


def recording_init(init):
    """``init`` that first records the constructor's arguments (the outermost call only, so
    a subclass calling ``super().__init__`` keeps its own)."""
    try:
        signature = inspect.signature(init)
    except (TypeError, ValueError):
        return init

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        if "_init_recorded" not in self.__dict__:
            object.__setattr__(self, "_init_recorded", True)
            try:
                bound = signature.bind(self, *args, **kwargs)
            except TypeError:
                pass    # the constructor itself reports the bad call
            else:
                params = bound.arguments.get("params")
                if params is not None and not isinstance(params, (list, tuple, dict)) \
                        and iter(params) is params:
                    # an iterator (net.get_parameters()): keep a list, for both
                    bound.arguments["params"] = list(params)
                    args, kwargs = bound.args[1:], bound.kwargs
                _record_init_args(self, bound)
        return init(self, *args, **kwargs)
    return wrapper


def _record_init_args(opt, bound):
    bound.apply_defaults()
    args = dict(bound.arguments)
    args.pop("self", None)
    if "params" in args:
        object.__setattr__(opt, "init_params", {"params": args.pop("params")})
    if "learning_rate" in args:
        lr = args.pop("learning_rate")
        if isinstance(lr, Tensor):
            lr = lr.asnumpy().tolist()
        object.__setattr__(opt, "init_learning_rate", None if isinstance(lr, Cell) else lr)
    object.__setattr__(opt, "init_args", args)


def _is_rate_list(lr):
    """Whether ``lr`` is a per-step list of rates (a list, tuple or 1-d Tensor)."""
    return isinstance(lr, (list, tuple)) or (isinstance(lr, Tensor) and lr.ndim == 1)


def centralization_flags(groups, params):
    """Per parameter: does its group ask for gradient centralization."""
    if groups is None:
        return tuple(False for _ in params)
    flagged = {id(p) for g in groups if g.get("grad_centralization") and "params" in g
               for p in g["params"]}
    return tuple(id(p) in flagged for p in params)


class OptimizerArguments:
    """The checks of an optimizer's constructor arguments (a base of ``Optimizer``): the
    parameter list, the parameter groups, the learning rates and the weight decays."""

    _GROUP_KEYS = ("params", "lr", "weight_decay", "order_params", "grad_centralization")

    def _weight_decay_arg(self, wd, name="weight_decay"):
        cls = type(self).__name__
        if isinstance(wd, Cell):
            return wd
        if isinstance(wd, bool) or not isinstance(wd, numbers.Real):
            raise TypeError(f"For '{cls}', '{name}' must be a float, an int or a Cell, got "
                            f"{type(wd).__name__}")
        if not wd >= 0 or not np.isfinite(wd):
            raise ValueError(f"For '{cls}', '{name}' must be >= 0, got {wd}")
        return float(wd)

    def _param_list(self, params):
        cls = type(self).__name__
        if params is None:
            raise ValueError(f"For '{cls}', the argument 'params' can not be None.")
        if isinstance(params, Parameter):
            raise TypeError(f"For '{cls}', 'params' must be a list of Parameters (for example "
                            f"net.trainable_params()), got a single Parameter")
        try:
            params = list(params)
        except TypeError:
            raise TypeError(f"For '{cls}', 'params' must be a list of Parameters or of group "
                            f"dicts, got {type(params).__name__}") from None
        if not params:
            raise ValueError(f"For '{cls}', 'params' must not be empty")
        for p in params:
            if not isinstance(p, Parameter):
                raise TypeError(f"For '{cls}', every element of 'params' must be a Parameter, "
                                f"got {type(p).__name__}")
        return params

    def _groups(self, parameters):
        if isinstance(parameters, (list, tuple)) and parameters and \
                all(isinstance(g, dict) for g in parameters):
            return list(parameters)
        if isinstance(parameters, (list, tuple)) and any(isinstance(g, dict) for g in parameters):
            raise TypeError(f"For '{type(self).__name__}', 'params' must be all Parameters or "
                            f"all group dicts")
        return None

    def _from_groups(self, groups, default_lr, default_wd):
        cls = type(self).__name__
        params, lr_of, lrs, decay = [], [], [], []
        order = None
        default_slot = None
        for g in groups:
            unknown = set(g) - set(self._GROUP_KEYS)
            if unknown:
                raise KeyError(f"For '{cls}', the key in group params must be one of in "
                               f"{list(self._GROUP_KEYS)}, but got {sorted(unknown)}.")
            if not isinstance(g.get("grad_centralization", False), bool):
                raise TypeError(f"For '{cls}', the 'grad_centralization' of a group must be a "
                                f"bool, got {type(g['grad_centralization']).__name__}")
            if "order_params" in g:
                if order is not None:
                    raise ValueError(f"For '{cls}', 'order_params' may appear only once")
                order = self._param_list(g["order_params"])
                if set(g) - {"order_params"}:
                    raise ValueError(f"For '{cls}', the 'order_params' group must hold only "
                                     f"'order_params'")
                continue
            if "params" not in g:
                raise ValueError(f"For '{cls}', every group needs a 'params' key")
            ps = self._param_list(g["params"])
            if "lr" in g:
                self._check_lr(g["lr"])
                lrs.append(g["lr"])
                k = len(lrs) - 1
            else:
                if default_slot is None:
                    self._check_lr(default_lr)
                    lrs.append(default_lr)
                    default_slot = len(lrs) - 1
                k = default_slot
            wd = self._weight_decay_arg(g["weight_decay"]) if "weight_decay" in g \
                else default_wd
            for p in ps:
                if any(q.name == p.name for q in params):
                    raise RuntimeError(f"For '{cls}', the {p.name} parameter already exists, it "
                                       f"does not support repeated setting. Please check whether "
                                       f"the optimizer parameter has been set multiple times.")
                params.append(p)
                lr_of.append(k)
                decay.append(wd)
        if order is not None:
            index = {id(p): i for i, p in enumerate(params)}
            missing = [p.name for p in order if id(p) not in index]
            if missing or len(order) != len(params):
                raise ValueError(f"For '{cls}', 'order_params' must hold exactly the grouped "
                                 f"parameters; unknown or missing: {missing}")
            perm = [index[id(p)] for p in order]
            params = [params[i] for i in perm]
            lr_of = [lr_of[i] for i in perm]
            decay = [decay[i] for i in perm]
        if not params:
            raise ValueError(f"For '{cls}', the parameter groups hold no parameters")
        self._check_lr_lengths(default_lr, lrs)
        return params, lr_of, lrs, decay, order is not None

    def _check_lr_lengths(self, default_lr, lrs):
        """Per-step rate lists of the groups must be as long as each other and as the
        optimizer's own (MindSpore's rule)."""
        lengths = {len(x) for x in [default_lr, *lrs] if _is_rate_list(x)}
        if len(lengths) > 1:
            raise ValueError(f"For '{type(self).__name__}', the Tensor type dynamic learning rate "
                             f"in group must be the same size as the argument 'learning_rate'.")

    def _check_lr(self, lr):
        cls = type(self).__name__
        if isinstance(lr, bool):
            raise TypeError(f"For '{cls}', 'learning_rate' must be a float, a list, a Tensor or "
                            f"a LearningRateSchedule, got bool")
        if isinstance(lr, numbers.Real):
            if not lr >= 0 or not np.isfinite(lr):
                raise ValueError(f"For '{cls}', 'learning_rate' must be >= 0, got {lr}")
            return
        if isinstance(lr, Tensor):
            if lr.ndim > 1:
                raise ValueError(f"For '{cls}', a Tensor 'learning_rate' must be 0-d or 1-d, got "
                                 f"shape {lr.shape}")
            if not lr.dtype.is_floating:
                raise TypeError(f"For '{cls}', a Tensor 'learning_rate' must be floating "
                                f"point, got {lr.dtype}")
            return
        if isinstance(lr, str):
            raise ValueError(f"For '{cls}', 'learning_rate' must be a float, a list, a Tensor or "
                             f"a LearningRateSchedule: could not convert string to float: {lr!r}")
        if isinstance(lr, (LearningRateSchedule, list, tuple)):
            return
        raise TypeError(f"For '{cls}', 'learning_rate' must be a float, a list, a Tensor or a "
                        f"LearningRateSchedule, got {type(lr).__name__}")

    def _make_lr(self, lr, name):
        if isinstance(lr, LearningRateSchedule):
            return lr
        if isinstance(lr, Tensor) and lr.ndim == 0:
            lr = float(lr.asnumpy())
        if isinstance(lr, numbers.Real):
            return Parameter(Tensor(np.float32(lr)), name=name, requires_grad=False)
        return _IteratorLearningRate(lr, name)
