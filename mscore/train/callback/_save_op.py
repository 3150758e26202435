"""The checkpoint hook of MindSpore's save operator (``_set_cur_net`` and
``_checkpoint_cb_for_save_op`` in ``mindspore.train.callback``): the operator hands the
parameters it saved as ``[{"name": ..., "data": Tensor}, ...]``, and the hook loads them into
the network registered last, once."""
import logging

import numpy as np

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.train.serialization import load_param_into_net

logger = logging.getLogger("mscore.callback")

_cur_net = None     # the network the next save-operator callback updates


def _set_cur_net(net):
    """Register ``net`` (a Cell, or None) as the network the save operator's callback
    updates."""
    global _cur_net
    _cur_net = net


def _checkpoint_cb_for_save_op(parameter_list):
    """Load ``parameter_list`` (``[{"name": str, "data": Tensor}, ...]``, consumed) into the
    registered network with ``strict_load=True`` and forget the network.

    Returns False (with a warning, nothing loaded) when no network is registered, else True.
    """
    if _cur_net is None:
        logger.warning("The current network is None: parameters are not updated.")
        return False
    params = {}
    while parameter_list:
        item = parameter_list.pop(0)
        name, data = item["name"], item["data"]
        value = data.asnumpy() if isinstance(data, Tensor) else np.asarray(data)
        params[name] = Parameter(Tensor(value), name=name)
    load_param_into_net(_cur_net, params, strict_load=True)
    _set_cur_net(None)
    return True
