"""Gradient freezing: each step trains only the later layers of the network, by a schedule.

:class:`GradientFreeze` splits the trainable parameters into blocks (a parameter whose name
holds 'bn' or 'bias' stays with the block before it; a block closes once it has 3
parameters) and makes ``param_groups`` nested groups: group ``i`` holds the blocks from
``i * stride`` to the end (``stride = blocks // param_groups``), so group 0 is the whole
network and later groups leave out more and more of its first layers. A schedule of group
indices says which group trains at each step: strategy 0 ("continuous") repeats
``0 ... 0 1 2 ... n-1`` with ``int(freeze_p * (n - 1) // (1 - freeze_p) + 0.5)`` zeros;
strategy 1 ("interval") draws, whenever fewer than a fraction ``1 - freeze_p`` of the steps
so far were frozen ones, a group at random (numpy's global generator, as MindSpore; earlier
groups likelier), and otherwise takes a whole-network step.

:class:`FreezeOpt` holds one optimizer per group (of the original optimizer's class and
arguments, states named ``boost_<i>...``), and :func:`freeze_cell` one train cell per group;
``BoostTrainOneStepCell`` runs the cell the schedule names. A frozen step differentiates only
the group's parameters, so the backward pass stops before the frozen layers.
"""
from __future__ import annotations

import numbers

import numpy as np

from mscore.boost.base import ParameterProcess
from mscore.boost.grad_accumulation import GradientAccumulation
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.optim.optimizer import Optimizer
from mscore.nn.wrap.grad_reducer import DistributedGradReducer
from mscore.ops import functional as F
from mscore.ops.grad import value_and_grad

__all__ = ["GradientFreeze", "FreezeOpt", "freeze_cell"]

CONTINUOUS_STRATEGY = 0
INTERVAL_STRATEGY = 1


class _Cells(Cell):
    """Cells registered under "0", "1", ... without renaming their parameters (the
    optimizers of FreezeOpt share the network's)."""

    def __init__(self, cells):
        super().__init__(auto_prefix=False)
        for i, cell in enumerate(cells):
            self._cells[str(i)] = cell

    def __getitem__(self, index):
        return list(self._cells.values())[index]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(list(self._cells.values()))


def _strategy_tensor(train_strategy):
    if isinstance(train_strategy, (tuple, list)):
        for item in train_strategy:
            if isinstance(item, bool) or not isinstance(item, numbers.Integral):
                raise ValueError("The element in train_strategy should be int number")
        return Tensor(np.asarray(train_strategy, np.int32))
    if isinstance(train_strategy, Tensor):
        if train_strategy.ndim != 1 or train_strategy.dtype is not mdt.int32:
            raise ValueError("When train_strategy is a Tensor, the dimension should be 1 and "
                             "the dtype should be int32")
        return train_strategy
    if train_strategy is None:
        return None
    raise TypeError("The specified 'train_strategy' should be None, tuple, list or Tensor")


class FreezeOpt(Cell):
    """An optimizer for gradient-freezing training: one optimizer per parameter group.

    ``FreezeOpt(opt, train_parameter_groups=None, train_strategy=None)``: ``opt`` is the
    optimizer to copy (class and arguments); ``train_parameter_groups`` a tuple/list of
    groups (each a tuple/list of Parameters or of parameter-group dicts; None: one group
    of all of ``opt``'s parameters); ``train_strategy`` the schedule of group indices (a
    list of ints or a 1-d int32 Tensor; needs the groups). ``opts`` holds the optimizers,
    whose states are named ``boost_<i>`` + the state's name. A per-step learning-rate list
    is split among the groups along the schedule, as in MindSpore.
    """

    def __init__(self, opt, train_parameter_groups=None, train_strategy=None):
        super().__init__(auto_prefix=False)
        if not isinstance(opt, Optimizer):
            raise TypeError(f"The first arg 'opt' must be an Optimizer instance, but got "
                            f"{type(opt)}")
        if train_strategy is not None and train_parameter_groups is None:
            raise ValueError("When the 'train_strategy' is specified, the value of "
                             "'train_parameter_groups' must also be specified")
        self.is_lars = False
        self.opt_class = type(opt)
        self.opt_init_args = dict(getattr(opt, "init_args", {}))
        object.__setattr__(self, "single_opt", opt)   # a template, not trained: unregistered
        self.parameters = opt.parameters
        self.learning_rate = getattr(opt, "init_learning_rate", None)
        self.dynamic_lr = opt.dynamic_lr
        if train_parameter_groups is None:
            self.groups_num = 1
            train_parameter_groups = (tuple(opt.parameters),)
        else:
            if not isinstance(train_parameter_groups, (tuple, list)):
                raise TypeError("The specified 'train_parameter_groups' should be tuple or list")
            self.groups_num = len(train_parameter_groups)
        self.train_strategy = _strategy_tensor(train_strategy)
        self._group_learning_rates()
        opts = []
        for index, params in enumerate(train_parameter_groups):
            if not isinstance(params, (tuple, list)):
                raise TypeError("The each element of 'train_parameter_groups' should be tuple "
                                "or list to store the Parameter")
            opts.append(self._new_optimizer(index, params))
        self.opts = _Cells(opts)

    def _group_learning_rates(self):
        self.dynamic_learning_rate = [[] for _ in range(self.groups_num)]
        if self.learning_rate is None:
            self.learning_rate = self.single_opt.learning_rate
            return
        if self.dynamic_lr and isinstance(self.learning_rate, list) and \
                isinstance(self.train_strategy, Tensor):
            strategy = [int(s) for s in self.train_strategy.asnumpy()]
            if len(self.learning_rate) <= len(strategy):
                for i, lr in enumerate(self.learning_rate):
                    self.dynamic_learning_rate[strategy[i]].append(lr)

    def _new_optimizer(self, index, params):
        lr = self.dynamic_learning_rate[index] or self.learning_rate
        opt = self.opt_class(params=params, learning_rate=lr, **self.opt_init_args)
        own = {id(p) for p in opt.parameters}
        prefix = f"boost_{index}"
        for param in opt.get_parameters():
            if id(param) not in own:
                param.name = prefix + param.name
        return opt

    def construct(self, gradients):
        raise RuntimeError("FreezeOpt is driven by BoostTrainOneStepCell (one optimizer per "
                           "parameter group, run by the freezing schedule); wrap the network "
                           "with mscore.boost.BoostTrainOneStepCell")


class _TrainFreezeCell(Cell):
    """One gradient-freezing train step: the loss and the gradients of ``optimizer``'s
    parameters only, reduced, then the optimizer (or gradient accumulation). Returns the
    loss."""

    def __init__(self, net, sens, grad, grad_reducer, use_grad_accumulation, optimizer,
                 max_accumulation_step=1):
        super().__init__(auto_prefix=False)
        self.net = net
        self.grad = grad
        self.grad_reducer = grad_reducer
        self.opt = optimizer
        self.parameters = optimizer.parameters
        self.sens = 1.0 if sens is None else float(sens)
        self.use_grad_accumulation = use_grad_accumulation
        self.max_accumulation_step = max_accumulation_step
        if use_grad_accumulation:
            self.grad_accumulation = GradientAccumulation(max_accumulation_step, optimizer)
        self._value_and_grad = value_and_grad(net, None, list(self.parameters))

    def construct(self, *inputs):
        loss, grads = self._value_and_grad(*inputs)
        if self.sens != 1.0:
            grads = tuple(F.mul(g, F.cast(Tensor(self.sens), g.dtype)) for g in grads)
        if self.grad_reducer is not None:
            grads = self.grad_reducer(grads)
        if self.use_grad_accumulation:
            return self.grad_accumulation(loss, grads)
        self.opt(grads)
        return loss


class GradientFreeze:
    r"""Gradient freezing: ``GradientFreeze(param_groups, freeze_type, freeze_p,
    total_steps)``; :meth:`freeze_generate` turns a network's optimizer into a
    :class:`FreezeOpt` with the groups and schedule (see the module docstring)."""

    def __init__(self, param_groups, freeze_type, freeze_p, total_steps):
        self._param_groups = param_groups
        self._freeze_type = freeze_type
        self._freeze_p = freeze_p
        self._total_steps = total_steps
        self.grad_reducer = None

    def split_parameters_groups(self, net, freeze_para_groups_number):
        """``freeze_para_groups_number`` nested groups of ``net``'s trainable parameters."""
        blocks, block = [], []
        for param in net.trainable_params():
            if "bn" in param.name or "bias" in param.name:
                block.append(param)
            elif len(block) >= 3:
                blocks.append(block)
                block = [param]
            else:
                block.append(param)
        if block:
            blocks.append(block)
        stride = len(blocks) // freeze_para_groups_number
        return [[p for b in blocks[i * stride:] for p in b]
                for i in range(freeze_para_groups_number)]

    def generate_freeze_index_sequence(self, parameter_groups_number, freeze_strategy,
                                       freeze_p, total_steps):
        """The schedule: the group index of each step, for ``int(total_steps * 1.01)``
        steps at least."""
        total = int(total_steps * 1.01)
        if parameter_groups_number <= 1:
            return [0] * total
        if freeze_strategy == CONTINUOUS_STRATEGY:
            zeros = int(freeze_p * (parameter_groups_number - 1) // (1 - freeze_p) + 0.5)
            cycle = [0] * zeros + list(range(1, parameter_groups_number))
            schedule = []
            while len(schedule) < total:
                schedule += cycle
            return schedule
        if freeze_strategy == INTERVAL_STRATEGY:
            groups = list(range(1, parameter_groups_number))
            weights = [g / sum(groups) for g in groups]
            choices = groups[::-1]       # weights[j] goes with choices[j]: earlier groups likelier
            schedule, unfrozen, frozen = [0], 1, 0
            while len(schedule) < total:
                if frozen / (unfrozen + frozen) < 1 - freeze_p:
                    schedule.append(int(np.random.choice(choices, p=weights)))
                    frozen += 1
                else:
                    schedule.append(0)
                    unfrozen += 1
            return schedule
        raise ValueError(f"Unsupported freezing training strategy '{freeze_strategy}'")

    def freeze_generate(self, network, optimizer):
        """``(network, FreezeOpt)``: the groups of ``network`` mapped onto ``optimizer``'s
        parameter groups, with the schedule."""
        groups = self.split_parameters_groups(network, self._param_groups)
        origin = getattr(optimizer, "init_params", {"params": list(optimizer.parameters)})
        groups = [ParameterProcess.generate_group_params(g, origin["params"]) for g in groups]
        schedule = self.generate_freeze_index_sequence(self._param_groups, self._freeze_type,
                                                       self._freeze_p, self._total_steps)
        return network, FreezeOpt(optimizer, groups, schedule)


def freeze_cell(reducer_flag, network, optimizer, sens, grad, use_grad_accumulation, mean=None,
                degree=None, max_accumulation_step=1):
    """The train cells of a :class:`FreezeOpt`, one per group (a tuple): each computes the
    loss of ``network`` and the gradients of its group, reduces them across the job when
    ``reducer_flag`` (``DistributedGradReducer`` with ``mean`` and ``degree``) and steps
    the group's optimizer (through gradient accumulation when ``use_grad_accumulation``).
    ``grad`` is accepted for MindSpore compatibility; mscore differentiates with one
    ``value_and_grad`` pass, so the forward runs once per step."""
    if not isinstance(optimizer, FreezeOpt):
        raise TypeError(f"For 'freeze_cell', 'optimizer' must be a FreezeOpt, got "
                        f"{type(optimizer).__name__}")
    cells = []
    for opt in optimizer.opts:
        reducer = None
        if reducer_flag:
            params = ParameterProcess().assign_parameter_group(list(opt.parameters))
            reducer = DistributedGradReducer(params, mean, degree)
        cells.append(_TrainFreezeCell(network, sens, grad, reducer, use_grad_accumulation, opt,
                                      max_accumulation_step))
    return tuple(cells)
