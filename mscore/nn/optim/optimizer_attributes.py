"""What MindSpore's ``nn.Optimizer`` gives the code that subclasses or inspects it.

:class:`MindSporeOptimizerAttributes` (a base of
:class:`~mscore.nn.optim.optimizer.Optimizer`) sets the helper attributes MindSpore's
subclasses use (``assignadd``, ``map_``, ``hyper_map``, ...) and holds MindSpore's
properties and inspection methods (``unique``, ``target``, ``get_weight_decay``, ...).
``settable_target`` is the ``target`` property of the optimizers MindSpore lets a user move
to the host.
"""
from __future__ import annotations

import numpy as np

from mscore import context
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.ops.composite import HyperMap, Map
from mscore.ops.operations import AssignAdd

_wrap = Tensor._wrap


class MindSporeOptimizerAttributes:
    """MindSpore's helper attributes, properties and inspection methods of an optimizer (a
    base of ``Optimizer``; they read the state ``Optimizer.__init__`` sets)."""

    def _mindspore_attributes(self):
        """The helpers MindSpore's Optimizer gives its subclasses, as plain attributes (a
        subclass may replace them): ``assignadd``, ``global_step_increase_tensor``,
        ``map_``/``map_reverse``, ``hyper_map``/``hyper_map_reverse``, ``reciprocal_scale``,
        ``param_length`` and ``dynamic_decay_flags``."""
        self.assignadd = AssignAdd()
        self.global_step_increase_tensor = Tensor(np.ones((1,), np.int32))
        self.map_ = Map()
        self.map_reverse = Map(None, True)
        self.hyper_map = HyperMap()
        self.hyper_map_reverse = HyperMap(None, True)
        self.reciprocal_scale = Tensor(np.float32(1.0 / self.loss_scale))
        self.param_length = len(self.parameters)
        self.dynamic_decay_flags = tuple(isinstance(d, Cell) for d in self._decay) \
            if self.is_group else isinstance(self.weight_decay, Cell)

    @property
    def _parameters(self):
        """The updated parameters (MindSpore's name for ``parameters``)."""
        return self.parameters

    @_parameters.setter
    def _parameters(self, value):
        self.parameters = value

    @property
    def unique(self):
        """Whether gradients of sparse lookups are de-duplicated (accepted; mscore's
        gradients are dense)."""
        return self.__dict__.get("_unique", True)

    @unique.setter
    def unique(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"For 'Optimizer', the property 'unique' must be bool, but got "
                            f"{type(value)}")
        self.__dict__["_unique"] = value

    @property
    def target(self):
        """The device the update runs on (the context's ``device_target``)."""
        return self._target_name()

    @target.setter
    def target(self, value):
        raise NotImplementedError(f"For '{type(self).__name__}', the property 'target' cannot "
                                  f"be set")

    def _target_name(self):
        return self.__dict__.get("_target", context.get_context("device_target"))

    def _set_base_target(self, value):
        cls = type(self).__name__
        if not isinstance(value, str):
            raise TypeError(f"For '{cls}', the property 'target' must be string, but got "
                            f"{type(value)}")
        if value not in ("CPU", "Ascend", "GPU"):
            raise ValueError(f"For '{cls}', the property 'target' must be one of ['CPU', "
                             f"'Ascend', 'GPU'], but got {value}")
        current = self._target_name()
        if value not in (current, "CPU"):   # a device build can still run on the host
            raise ValueError(f"For '{cls}', the property 'target' cannot be set to {value!r} in "
                             f"the {current!r} environment.")
        self.__dict__["_target"] = value

    def get_weight_decay(self):
        """The weight decay of this step: a float32 Tensor (a tuple with one per parameter
        when the parameters are grouped); a dynamic one is read at ``global_step``."""
        wd_now = self._step_lrs()[1]

        def value(d):
            if isinstance(d, Cell):
                return _wrap(wd_now[id(d)])
            return Tensor(np.float32(d))
        if self.is_group:
            return tuple(value(d) for d in self._decay)
        return value(self.weight_decay)

    def flatten_gradients(self, gradients):
        """``gradients`` unchanged."""
        return gradients


# The optimizers MindSpore lets a user move to the host (Adam, FTRL, ProximalAdagrad) take
# ``target = settable_target`` in place of the base class's read-only property.
settable_target = property(
    MindSporeOptimizerAttributes._target_name, MindSporeOptimizerAttributes._set_base_target,
    doc="Where MindSpore runs the update ('CPU', 'GPU' or 'Ascend'); accepted and recorded, "
        "the backend decides here.")
