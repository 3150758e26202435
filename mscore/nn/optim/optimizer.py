"""``nn.Optimizer``: the base of every optimizer, with MindSpore's semantics.

An optimizer is a Cell (``auto_prefix=False``) holding the parameters it updates
(``self.parameters``, a ``ParameterTuple``), its states (``ParameterTuple`` clones such as
``moments``), the learning rate (a ``learning_rate`` Parameter, or a
:class:`~mscore.nn.learning_rate_schedule.LearningRateSchedule` for dynamic rates) and a
``global_step`` Parameter. ``optimizer(grads)`` updates everything through
``Parameter._assign``, so the stateless/compiled path sees every change.

Learning rates: a float; a list / 1-d Tensor of per-step rates (the last one stays once the
list is used up); a ``LearningRateSchedule``. ``global_step`` advances on every step (as in
MindSpore 2.x); the rate of a step is read before it advances.

Weight decay (MindSpore semantics): without parameter groups it applies to every parameter
whose name contains neither 'beta' nor 'gamma' (normalisation parameters); in a group it
applies to every parameter of the group, with the group's ``weight_decay`` or, when the group
has none, the optimizer's. Gradients are divided by ``loss_scale`` first, then
``weight_decay * param`` is added.

Parameter groups: a list of dicts with 'params' and optionally 'lr', 'weight_decay',
'grad_centralization' (a bool) and one 'order_params' entry (the order in which the optimizer
keeps the parameters).

Gradient centralization (MindSpore's group key, used by ``mscore.boost``): the gradient of a
flagged parameter with at least 2 dimensions whose second dimension is a multiple of 16 has
its mean over every axis but the first subtracted, after weight decay.

Every optimizer records how it was built, as MindSpore's ``opt_init_args_register`` does:
``init_params`` (``{"params": ...}``), ``init_learning_rate`` (None for a schedule) and
``init_args`` (the other constructor arguments), so ``mscore.boost`` can build one of the same
kind over other parameters.

This module holds the class, its construction and the preparation of a step (gradients
unscaled, decayed and centralized; the rates of the step); the checks of the constructor's
arguments are in :mod:`mscore.nn.optim.optimizer_arguments`, MindSpore's helper attributes and
properties in :mod:`mscore.nn.optim.optimizer_attributes`.
"""
from __future__ import annotations

import numbers
import operator
from itertools import repeat

import numpy as np

from mscore import dispatch
from mscore._state import in_compiled
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer.container import CellList
from mscore.nn.learning_rate_schedule import LearningRateSchedule
from mscore.nn.optim.optimizer_arguments import (
    OptimizerArguments,
    centralization_flags,
    default_decay_filter,
    recording_init,
)
from mscore.nn.optim.optimizer_attributes import MindSporeOptimizerAttributes, settable_target
from mscore.ops import _sharded_ops
from mscore.ops.functional import native_addcmul
from mscore.ops.multi_tensor import divide_all

__all__ = ["Optimizer", "settable_target"]

_wrap = Tensor._wrap
_data_of = operator.attrgetter("_data")
_library_dtype = operator.attrgetter("dtype")


def _same_library_dtypes(arrays, others):
    """Whether the native ``arrays`` have the library dtypes of ``others``, pairwise (False
    where an array has no ``dtype`` to compare)."""
    try:
        return list(map(_library_dtype, arrays)) == list(map(_library_dtype, others))
    except AttributeError:
        return False


def _one_library_dtype(arrays):
    """Whether the native ``arrays`` share one library dtype (False where one has no
    hashable ``dtype``)."""
    try:
        return len(set(map(_library_dtype, arrays))) == 1
    except (AttributeError, TypeError):
        return False


class Optimizer(OptimizerArguments, MindSporeOptimizerAttributes, Cell):
    """Base class of optimizers: ``Optimizer(learning_rate, parameters, weight_decay=0.0,
    loss_scale=1.0)``. Subclasses implement ``construct(gradients)`` with the helpers below.
    """

    _decay_in_grads = True   # False: the subclass applies decoupled decay itself
    _centralizes = True      # False: the subclass ignores 'grad_centralization' (MindSpore's)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = recording_init(cls.__dict__["__init__"])

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        cls = type(self).__name__
        if isinstance(loss_scale, bool) or not isinstance(loss_scale, numbers.Real):
            raise TypeError(f"For '{cls}', the type of 'loss_scale' should be 'float', but got "
                            f"type '{type(loss_scale).__name__}'.")
        if not loss_scale > 0 or not np.isfinite(loss_scale):
            raise ValueError(f"For '{cls}', the 'loss_scale' must be a positive finite float, "
                             f"but got {loss_scale!r}")
        self.loss_scale = float(loss_scale)
        self.need_scale = self.loss_scale != 1.0
        default_wd = self._weight_decay_arg(weight_decay)
        groups = self._groups(parameters)
        self.is_group = groups is not None
        if groups is None:
            params = self._param_list(parameters)
            ordered = False
            self._check_lr(learning_rate)
            lr_of = [0] * len(params)
            lrs = [learning_rate]
            decay = [default_wd if default_decay_filter(p) else 0.0 for p in params]
            self.is_group_lr = False
        else:
            params, lr_of, lrs, decay, ordered = self._from_groups(groups, learning_rate,
                                                                   default_wd)
            self.is_group_lr = len(lrs) > 1
        names = [p.name for p in params]
        if len(set(map(id, params))) != len(params):
            raise ValueError(f"For '{cls}', the same Parameter appears more than once")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"For '{cls}', parameter names must be unique, got duplicates "
                             f"{dup}; give the parameters distinct names")
        self.parameters = ParameterTuple(params)
        self.grad_centralization_flags = centralization_flags(groups, params)
        self._lr_of = lr_of
        self.is_group_params_ordered = ordered
        # Learning rates: one entry per group (a single one without groups).
        lr_cells = []
        for i, lr in enumerate(lrs):
            name = "learning_rate" if len(lrs) == 1 else f"learning_rate_group_{i}"
            lr_cells.append(self._make_lr(lr, name))
        self.dynamic_lr = any(isinstance(x, LearningRateSchedule) for x in lr_cells)
        if len(lr_cells) == 1:
            self.learning_rate = lr_cells[0]
        else:
            fixed = [x for x in lr_cells if isinstance(x, Parameter)]
            if fixed:
                self.group_lr_params = ParameterTuple(fixed)
            scheds = [x for x in lr_cells if isinstance(x, Cell)]
            if scheds:
                self.group_lr_schedules = CellList(scheds)
            self.learning_rate = tuple(lr_cells)
        self._lr_list = lr_cells
        # Weight decay: a float or a schedule-like Cell per parameter (0.0 = none).
        self.dynamic_weight_decay = any(isinstance(d, Cell) for d in decay)
        wd_cells = []
        for d in decay:
            if isinstance(d, Cell) and all(d is not c for c in wd_cells):
                wd_cells.append(d)
        if wd_cells:
            self.weight_decay_cells = CellList(wd_cells)
        self._decay = decay
        self.decay_flags = tuple(isinstance(d, Cell) or d > 0 for d in decay)
        self.exec_weight_decay = any(self.decay_flags)
        self.weight_decay = default_wd
        if self.is_group:
            self.group_weight_decay = tuple(decay)
        self.global_step = Parameter(Tensor(np.zeros((1,), np.int32)), name="global_step",
                                     requires_grad=False)
        self._mindspore_attributes()
        _sharded_ops.register_optimizer(self)

    # True when the update of each element depends on that element's values only, so that a
    # rank holding a slice of a Parameter (SEMI_AUTO_PARALLEL) can update it alone.
    updates_elementwise = True

    def __call__(self, *args, **kwargs):
        out = Cell.__call__(self, *args, **kwargs)
        if _sharded_ops.has_pending() and _sharded_ops.can_settle():
            _sharded_ops.settle()   # the update done, parameters and states keep their slices
        return out

    # -- what subclasses use -------------------------------------------------------------------
    def _state(self, prefix, init="zeros"):
        """A ParameterTuple of per-parameter states named ``prefix.<param name>``."""
        states = self.parameters.clone(prefix=prefix, init=init)
        for s in states:
            s.requires_grad = False
        return states

    def _step_lrs(self):
        """``(learning rates, dynamic weight decays)`` of this step (read at the current
        ``global_step``): one native float32 scalar per group, and ``{id(cell): scalar}``
        for weight-decay Cells. Nothing is kept on ``self``: inside a compiled step these
        values are symbolic."""
        step = self.global_step
        out = []
        for lr in self._lr_list:
            if isinstance(lr, Parameter):
                out.append(lr._data)
            else:
                value = lr(_wrap(step._data))
                out.append(call("reshape", call("cast", value._data, mdt.float32), ()))
        wd_now = {}
        if self.dynamic_weight_decay:
            for d in self._decay:
                if isinstance(d, Cell) and id(d) not in wd_now:
                    v = d(_wrap(step._data))
                    wd_now[id(d)] = call("reshape", call("cast", v._data, mdt.float32), ())
        return out, wd_now

    def _advance_step(self):
        """``global_step += 1``: every optimizer step counts, as in MindSpore 2.x (a
        schedule reads the step before it advances)."""
        step = self.global_step
        step._assign(call("add", step._data, call("full", (1,), 1, mdt.int32)))

    def get_lr(self):
        """The learning rate at the current ``global_step`` (a float32 Tensor; a tuple with
        one per parameter when groups have their own rates). Changes nothing: a step
        advances ``global_step`` itself (MindSpore 2.x; a custom optimizer does it with
        ``self.assignadd(self.global_step, self.global_step_increase_tensor)``)."""
        lrs = [_wrap(x) for x in self._step_lrs()[0]]
        if self.is_group_lr:
            return tuple(lrs[k] for k in self._lr_of)
        return lrs[0]

    def get_lr_parameter(self, param):
        """The learning-rate Parameter or schedule of ``param`` (a list for a list)."""
        if isinstance(param, (list, tuple)):
            return [self.get_lr_parameter(p) for p in param]
        if not isinstance(param, Parameter):
            raise TypeError(f"param: expected a Parameter or a list of them, got "
                            f"{type(param).__name__}")
        for i, p in enumerate(self.parameters):
            if p is param:
                return self._lr_list[self._lr_of[i]]
        raise ValueError(f"param: {param.name!r} is not updated by this optimizer")

    def _grads_list(self, gradients):
        cls = type(self).__name__
        if isinstance(gradients, Tensor):
            gradients = (gradients,)
        if not isinstance(gradients, (tuple, list)):
            raise TypeError(f"For '{cls}', 'gradients' must be a tuple of Tensors, got "
                            f"{type(gradients).__name__}")
        if len(gradients) != len(self.parameters):
            raise ValueError(f"For '{cls}', expected {len(self.parameters)} gradients (one per "
                             f"parameter), got {len(gradients)}")
        # (not while a program is traced: the tracer does not follow attrgetter)
        if not in_compiled() and all(map(isinstance, gradients, repeat(Tensor))):
            out = list(map(_data_of, gradients))
            if _same_library_dtypes(out, map(_data_of, self.parameters)):
                return out   # the usual step: no casts, no Python frame per gradient
        out = []
        same = dispatch.same_dtype
        for p, g in zip(self.parameters, gradients):
            if not isinstance(g, Tensor):
                raise TypeError(f"For '{cls}', gradients must be Tensors, got "
                                f"{type(g).__name__}")
            d = g._data
            if not same(d, p._data):
                d = call("cast", d, p.dtype)
            out.append(d)
        return out

    def _prepare(self, gradients):
        """Native gradients unscaled and with weight decay added, and native learning rates
        per parameter in the parameter's dtype."""
        grads = self._grads_list(gradients)
        lrs, wd_now = self._step_lrs()
        self._advance_step()
        consts = _Consts()
        consts.group_lrs = lrs
        consts.wd_now = wd_now
        if self.need_scale:
            grads = divide_all(grads, consts.get(self.loss_scale, mdt.float32))
        if self.exec_weight_decay and self._decay_in_grads:
            grads = [self._decayed(i, p, g, consts) for i, (p, g) in
                     enumerate(zip(self.parameters, grads))]
        if self._centralizes and any(self.grad_centralization_flags):
            grads = [_centralized(g) if flag else g
                     for g, flag in zip(grads, self.grad_centralization_flags)]
        return grads, self._rate_per_parameter(lrs, consts), consts

    def _rate_per_parameter(self, lrs, consts):
        """Each parameter's learning rate (of ``lrs``, one per group) in its dtype; the rate
        is cast once when every parameter shares one rate and one dtype."""
        params, lr_of = self.parameters, self._lr_of
        dtype_of = dispatch.dtype
        if params and not in_compiled() and len(set(lr_of)) == 1 and \
                _one_library_dtype(map(_data_of, params)):
            return [consts.cast(lrs[lr_of[0]], dtype_of(params[0]._data))] * len(params)
        return [consts.cast(lrs[k], dtype_of(p._data)) for k, p in zip(lr_of, params)]

    def _decayed(self, i, p, g, consts):
        wd = self._decay_scalar(i, p, consts)
        return g if wd is None else native_addcmul(g, p._data, wd)

    def _decay_scalar(self, i, p, consts):
        """The weight decay of parameter ``i`` as a 0-d array of its dtype, None without."""
        d = self._decay[i]
        if isinstance(d, Cell):
            return consts.cast(consts.wd_now[id(d)], p.dtype)
        return consts.get(d, p.dtype) if d > 0 else None

    def decay_weight(self, gradients):
        """Gradients with ``weight_decay * param`` added where decay applies (Tensors); a
        dynamic weight decay is taken at the current ``global_step``."""
        consts = _Consts()
        consts.wd_now = self._step_lrs()[1]
        grads = self._grads_list(gradients)
        return tuple(_wrap(self._decayed(i, p, g, consts))
                     for i, (p, g) in enumerate(zip(self.parameters, grads)))

    def gradients_centralization(self, gradients):
        """Gradients with gradient centralization applied where the parameter's group asks
        for it (Tensors): the mean over every axis but the first is subtracted from a
        gradient with at least 2 dimensions whose second dimension is a multiple of 16."""
        grads = self._grads_list(gradients)
        return tuple(_wrap(_centralized(g) if flag else g)
                     for g, flag in zip(grads, self.grad_centralization_flags))

    def scale_grad(self, gradients):
        """Gradients divided by ``loss_scale`` (Tensors)."""
        if not self.need_scale:
            return tuple(gradients)
        consts = _Consts()
        return tuple(_wrap(call("mul", g, consts.get(1.0 / self.loss_scale, p.dtype)))
                     for p, g in zip(self.parameters, self._grads_list(gradients)))

    def construct(self, gradients):
        """Updates the parameters from ``gradients``: each optimizer defines it."""
        raise NotImplementedError(f"{type(self).__name__}.construct is not defined")

    def extend_repr(self):
        """The number of updated parameters, for ``repr``."""
        return f"params={len(self.parameters)}"


def _centralized(g):
    """Native gradient ``g`` minus its mean over every axis but the first, when it has at
    least 2 dimensions and a second dimension that is a multiple of 16 (MindSpore's rule);
    else ``g``."""
    shape = dispatch.shape(g)
    if len(shape) < 2 or shape[1] % 16:
        return g
    axes = tuple(range(1, len(shape)))
    count = 1
    for d in shape[1:]:
        count *= int(d)
    total = call("sum", g, axes, True)
    mean = call("mul", total, call("full", (), 1.0 / count, dispatch.dtype(g)))
    return call("sub", g, mean)


class _Consts:
    """Scalar native arrays made once per step and dtype (the backend needs operands of one
    dtype, so a float32 learning rate meets a float64 parameter as a float64 scalar)."""

    def __init__(self):
        self._made = {}
        self.group_lrs = []
        self.wd_now = {}

    def get(self, value, dtype):
        key = (value, dtype.name)
        out = self._made.get(key)
        if out is None:
            out = self._made[key] = call("full", (), value, dtype)
        return out

    def cast(self, native, dtype):
        key = (id(native), dtype.name)
        hit = self._made.get(key)
        if hit is None:
            out = native if dispatch.dtype(native) is dtype else call("cast", native, dtype)
            hit = self._made[key] = (native, out)  # holding native keeps its id() unique
        return hit[1]

    def negated(self, native):
        """``-native`` (a 0-d learning rate), made once per step."""
        key = (id(native), "neg")
        hit = self._made.get(key)
        if hit is None:
            hit = self._made[key] = (native, call("neg", native))
        return hit[1]
