"""``load_param_into_net``: put loaded values into a network's parameters."""
from __future__ import annotations

import logging

import numpy as np

from mscore import dispatch
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.train.serialization._args import _check_bool, _check_flag
from mscore.train.serialization._shard_identity import check_into_net

logger = logging.getLogger("mscore.serialization")

_FLOATS = frozenset((mdt.float16, mdt.bfloat16, mdt.float32, mdt.float64))
_INTS = frozenset((mdt.int8, mdt.int16, mdt.int32, mdt.int64))


def _update_param(param, new, strict_load):
    """Give ``param`` the value of ``new`` (a Tensor/Parameter), checking shape and dtype."""
    new_shape, shape = tuple(new.shape), tuple(param.shape)
    if new_shape != shape:
        raise RuntimeError(f"For 'load_param_into_net', {param.name} in the argument 'net' "
                           f"should have the same shape as {param.name} in the argument "
                           f"'parameter_dict'. But got its shape {shape} in the argument "
                           f"'net' and shape {new_shape} in the argument 'parameter_dict'."
                           f"May you need to check whether the checkpoint you loaded is "
                           f"correct or the batch size and so on in the 'net' and "
                           f"'parameter_dict' are same.")
    arr = np.asarray(new.asnumpy())
    if new.dtype is not param.dtype:
        pair = {new.dtype, param.dtype}
        if strict_load or not (pair <= _FLOATS or pair <= _INTS):
            raise RuntimeError(f"For 'load_param_into_net', {param.name} in the argument "
                               f"'net' should have the same type as {param.name} in the "
                               f"argument 'parameter_dict'. but got its type "
                               f"{param.dtype.tensor_type} in the argument 'net' and type "
                               f"{new.dtype.tensor_type} in the argument 'parameter_dict'."
                               f"May you need to check whether the checkpoint you loaded is "
                               f"correct.")
        arr = arr.astype(param.dtype.np_dtype)
    param._assign(dispatch.backend().from_numpy(arr))


def load_param_into_net(net, parameter_dict, strict_load=False, remove_redundancy=False):
    """Load ``parameter_dict`` (``{name: Parameter}``, e.g. from :func:`load_checkpoint`)
    into the parameters of ``net`` with the same ``Parameter.name``.

    Returns ``(param_not_load, ckpt_not_load)`` as MindSpore 2.x does: the network's
    parameter names that got no value, and the dict's names that were not used. A shape
    mismatch is a ``RuntimeError`` naming the parameter (MindSpore's words); a dtype
    mismatch converts float to float and int to int unless ``strict_load``, and is a
    ``RuntimeError`` otherwise. Without
    ``strict_load``, names that differ by one common prefix (``"net." + name``, or the
    other way round) still match. ``remove_redundancy`` only matters for model-parallel
    files and is accepted.
    """
    if not isinstance(net, Cell):
        raise TypeError(f"net: expected a Cell, got {type(net).__name__}")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"parameter_dict: expected a dict of name -> Parameter, got "
                        f"{type(parameter_dict).__name__}")
    _check_bool(strict_load, "strict_load")
    _check_flag(remove_redundancy, "remove_redundancy", "load_param_into_net")
    for key, value in parameter_dict.items():
        if not isinstance(key, str):
            raise TypeError(f"parameter_dict: keys must be str, got {type(key).__name__}")
        if not isinstance(value, (Tensor, str)):
            raise TypeError(f"parameter_dict[{key!r}]: expected a Parameter, got "
                            f"{type(value).__name__}")
    check_into_net(net, parameter_dict)   # a rank's sliced checkpoint: its own rank's
    params = [p for _, p in net.parameters_and_names()]
    used, param_not_load = set(), []
    for param in params:
        new = parameter_dict.get(param.name)
        if isinstance(new, Tensor):
            _update_param(param, new, strict_load)
            used.add(param.name)
        else:
            param_not_load.append(param)
    if param_not_load and not strict_load:
        param_not_load = _load_with_prefix(param_not_load, parameter_dict, used, strict_load)
    names_not_load = [p.name for p in param_not_load]
    ckpt_not_load = [k for k in parameter_dict if k not in used]
    if names_not_load:
        logger.warning("load_param_into_net: %d parameter(s) of the network were not loaded: "
                       "%s", len(names_not_load), names_not_load)
    return names_not_load, ckpt_not_load


def _load_with_prefix(missing, parameter_dict, used, strict_load):
    """Match the parameters still missing when the dict's names are ``prefix + name`` for one
    common prefix (or the network's names carry a prefix the dict lacks)."""
    keys = [k for k, v in parameter_dict.items() if isinstance(v, Tensor) and k not in used]
    for param in missing:
        for key in keys:
            if key != param.name and key.endswith(param.name):
                mapping = _prefix_map(missing, keys, key[:-len(param.name)], add=True)
            elif key != param.name and param.name.endswith(key):
                mapping = _prefix_map(missing, keys, param.name[:-len(key)], add=False)
            else:
                continue
            if mapping:
                for p, k in mapping:
                    _update_param(p, parameter_dict[k], strict_load)
                    used.add(k)
                done = {id(p) for p, _ in mapping}
                return [p for p in missing if id(p) not in done]
    return missing


def _prefix_map(missing, keys, prefix, add):
    keyset = set(keys)
    pairs = []
    for p in missing:
        if add:
            k = prefix + p.name
        else:
            k = p.name[len(prefix):] if p.name.startswith(prefix) else None
        if k is not None and k in keyset:
            pairs.append((p, k))
    return pairs
