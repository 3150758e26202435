"""Quantization utilities (MindSpore 1.x's ``mindspore.train.quant.quant_utils``)."""
from __future__ import annotations

import numpy as np

from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell

# The parameter kinds a float checkpoint can give a quantized network, matched by the last
# component of the quantized network's parameter path.
_KINDS = ("weight", "bias", "gamma", "beta", "moving_mean", "moving_variance", "minq", "maxq")


def _value_array(value, key):
    if isinstance(value, Tensor):
        return value.asnumpy()
    if isinstance(value, np.ndarray):
        return value
    raise TypeError(f"params_dict: the value of {key!r} must be a Tensor, Parameter or numpy "
                    f"array, got {type(value).__name__}")


def load_nonquant_param_into_quant_net(quant_model, params_dict, quant_new_params=None):
    """Load the parameters of a float network (``params_dict``, e.g. from
    :func:`mscore.load_checkpoint`) into the quantization-aware ``quant_model``.

    As in MindSpore 1.x, parameters are matched by kind and order, not by name: the i-th
    parameter of ``quant_model`` whose path ends in ``weight`` (``bias``, ``gamma``,
    ``beta``, ``moving_mean``, ``moving_variance``, ``minq``, ``maxq``) takes the i-th entry
    of ``params_dict`` whose name ends so; one left without a source keeps its value. A
    parameter of another kind (such as ``step``) raises ``ValueError`` unless its last path
    component is listed in ``quant_new_params``. A shape mismatch is ``ValueError`` and
    nothing is changed in that case.
    """
    if not isinstance(quant_model, Cell):
        raise TypeError(f"quant_model: expected a Cell, got {type(quant_model).__name__}")
    if not isinstance(params_dict, dict):
        raise TypeError(f"params_dict: expected a dict, got {type(params_dict).__name__}")
    if quant_new_params is not None:
        if not isinstance(quant_new_params, (list, tuple)) or not all(
                isinstance(n, str) for n in quant_new_params):
            raise TypeError(f"quant_new_params: expected a list of str or None, got "
                            f"{quant_new_params!r}")
    sources = {kind: iter([(k, v) for k, v in params_dict.items()
                           if isinstance(k, str) and k.endswith(kind)]) for kind in _KINDS}
    plan = []
    for name, param in quant_model.parameters_and_names():
        kind = name.split(".")[-1]
        if kind not in sources:
            if quant_new_params is not None and kind in quant_new_params:
                continue
            raise ValueError(f"load_nonquant_param_into_quant_net: no parameter of the float "
                             f"network matches {name!r}; list {kind!r} in quant_new_params "
                             f"if it is new in the quantized network")
        source = next(sources[kind], None)
        if source is None:
            continue
        key, value = source
        array = _value_array(value, key)
        if tuple(array.shape) != tuple(param.shape):
            raise ValueError(f"load_nonquant_param_into_quant_net: {key!r} has shape "
                             f"{tuple(array.shape)}, but {name!r} has shape {param.shape}")
        plan.append((param, array))
    for param, array in plan:
        param.set_data(Tensor(array, dtype=param.dtype))
