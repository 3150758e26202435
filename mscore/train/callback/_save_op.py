"""The checkpoint hook of MindSpore's save operator (``_set_cur_net`` and
``_checkpoint_cb_for_save_op`` in ``mindspore.train.callback``): the operator hands the
parameters it saved as ``[{"name": ..., "data": Tensor}, ...]``, and the hook loads them into
the network registered last, once."""
import logging

import numpy as np

from mscore import _state
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.train.serialization import load_param_into_net

logger = logging.getLogger("mscore.callback")

# "network": the network the next save-operator callback updates, or None
_registered = _state.section("save_operator_network", {"network": None})


def _set_cur_net(net):
    """Register ``net`` (a Cell, or None) as the network the save operator's callback
    updates."""
    _registered["network"] = net


def _checkpoint_cb_for_save_op(parameter_list):
    """Load ``parameter_list`` (``[{"name": str, "data": Tensor}, ...]``, consumed) into the
    registered network with ``strict_load=True`` and forget the network.

    Returns False (with a warning, nothing loaded) when no network is registered, else True.
    """
    net = _registered["network"]
    if net is None:
        logger.warning("The current network is None: parameters are not updated.")
        return False
    params = {}
    while parameter_list:
        item = parameter_list.pop(0)
        name, data = item["name"], item["data"]
        value = data.asnumpy() if isinstance(data, Tensor) else np.asarray(data)
        params[name] = Parameter(Tensor(value), name=name)
    load_param_into_net(net, params, strict_load=True)
    _set_cur_net(None)
    return True
