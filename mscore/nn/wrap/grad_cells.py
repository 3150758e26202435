"""Wrapper cells around differentiation and micro-batches: ``nn.ForwardValueAndGrad``,
``nn.WithGradCell``, ``nn.GradAccumulationCell``, ``nn.ParameterUpdate`` (MindSpore has them
in ``mindspore.nn.wrap.cell_wrapper``)."""
from __future__ import annotations

import types

from mscore.common.parameter import Parameter, ParameterTuple
from mscore.nn.cell import Cell
from mscore.nn.wrap.loss_cell import WithLossCell
from mscore.ops import functional as F
from mscore.ops.grad import value_and_grad


def _check_flag(value, name, cls):
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls}', the type of '{name}' must be bool, but got "
                        f"'{type(value)}'")
    return value


def _grad_fn(fn, n_inputs, weights, get_all, get_by_list, sens_param):
    """``value_and_grad`` of ``fn`` shaped like ``GradOperation(get_all, get_by_list,
    sens_param)``'s gradients for ``n_inputs`` inputs."""
    if get_all:
        position = tuple(range(n_inputs)) if n_inputs else None
    elif get_by_list:
        position = None
    else:
        position = 0
    return value_and_grad(fn, position, weights if get_by_list else None,
                          sens_param=sens_param)


class ForwardValueAndGrad(Cell):
    """``(network(*inputs), gradients)`` in one pass, the gradients as
    ``GradOperation(get_all, get_by_list, sens_param)`` gives them: with respect to the
    first input (default), every input (``get_all``), ``weights`` (``get_by_list``), or
    both. With ``sens_param`` the last input is the sensitivity (the output's cotangent).

    ``ForwardValueAndGrad(network, weights=None, get_all=False, get_by_list=False,
    sens_param=False)``.
    """

    def __init__(self, network, weights=None, get_all=False, get_by_list=False,
                 sens_param=False):
        super().__init__(auto_prefix=False)
        cls = "ForwardValueAndGrad"
        if not isinstance(network, (Cell, types.FunctionType, types.MethodType)):
            raise TypeError(f"For '{cls}', the argument 'network' must be cell, function type "
                            f"or method type, but got '{type(network)}'")
        _check_flag(get_all, "get_all", cls)
        _check_flag(get_by_list, "get_by_list", cls)
        if get_by_list and not isinstance(weights, (ParameterTuple, tuple, list)):
            raise TypeError(f"For '{cls}', when 'get_by_list' is set to True, the argument "
                            f"'weights' must be Parameters array, but got '{type(weights)}'")
        self.network = network
        if isinstance(network, Cell):
            network.set_grad()
        self.weights = weights
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param

    def construct(self, *inputs):
        n = len(inputs) - 1 if self.sens_param else len(inputs)
        fn = _grad_fn(self.network, n, self.weights, self.get_all, self.get_by_list,
                      bool(self.sens_param))
        return fn(*inputs)


class WithGradCell(Cell):
    """The gradients of ``loss_fn(network(data), label)`` (or of ``network(*inputs)`` when
    ``loss_fn`` is None) with respect to the network's trainable parameters, scaled by
    ``sens`` when one is given.

    ``WithGradCell(network, loss_fn=None, sens=None)``; returns a tuple of gradients.
    """

    def __init__(self, network, loss_fn=None, sens=None):
        super().__init__(auto_prefix=False)
        self.network = network
        self.loss_fn = loss_fn
        self.weights = ParameterTuple(network.trainable_params())
        self.sens = sens
        self.network_with_loss = network if loss_fn is None else WithLossCell(network, loss_fn)
        self.network_with_loss.set_train()

    def construct(self, *inputs):
        if self.sens is None:
            fn = value_and_grad(self.network_with_loss, None, self.weights)
            return fn(*inputs)[1]
        fn = value_and_grad(self.network_with_loss, None, self.weights, sens_param=True)
        return fn(*inputs, self.sens)[1]


class GradAccumulationCell(Cell):
    """``network`` run on ``micro_size`` equal slices of the batch (axis 0 of every input),
    the outputs summed: differentiating it accumulates the gradients of the micro-batches.

    ``GradAccumulationCell(network, micro_size)``; the batch size must be a multiple of
    ``micro_size`` (``ValueError``).
    """

    def __init__(self, network, micro_size):
        super().__init__(auto_prefix=False)
        cls = "GradAccumulationCell"
        if not isinstance(network, Cell):
            raise TypeError(f"For '{cls}', the argument 'network' must cell type, but got the "
                            f"type : {type(network)}.")
        if isinstance(micro_size, bool) or not isinstance(micro_size, int):
            raise TypeError(f"For '{cls}', the argument 'micro_size' must be integer, but got "
                            f"the type : {type(micro_size)}.")
        if micro_size <= 0:
            raise ValueError(f"For '{cls}', the argument 'micro_size' must be large than 0, "
                             f"but got {micro_size}.")
        self.network = network
        self.micro_size = micro_size

    def construct(self, *inputs):
        total = None
        for i in range(self.micro_size):
            out = self.network(*self._micro_batch(i, inputs))
            total = out if total is None else F.add(total, out)
        return total

    def _micro_batch(self, i, inputs):
        out = []
        for x in inputs:
            n = x.shape[0]
            if n % self.micro_size:
                raise ValueError(f"For 'GradAccumulationCell', the batch size {n} of an input "
                                 f"must be divisible by 'micro_size' {self.micro_size}")
            size = n // self.micro_size
            out.append(x[i * size:(i + 1) * size])
        return tuple(out)


class ParameterUpdate(Cell):
    """``ParameterUpdate(param)(x)`` assigns ``x`` to ``param`` and returns ``x`` (to set a
    parameter, such as a learning rate, from outside a compiled step)."""

    def __init__(self, param):
        super().__init__(auto_prefix=False)
        if not isinstance(param, Parameter):
            raise TypeError(f"For 'ParameterUpdate', 'param' must be 'Parameter', but got "
                            f"{type(param)}.")
        self._param = param

    def construct(self, x):
        F.assign(self._param, x)
        return x
