"""Optimizers: ``Optimizer``, ``Momentum``, ``SGD``, ``Adam``, ``AdamWeightDecay``,
``LazyAdam``, ``AdamOffload``, ``AdaMax``, ``Adagrad``, ``Adadelta``, ``ASGD``, ``FTRL``, ``Lamb``,
``LARS``, ``ProximalAdagrad``, ``RMSProp``, ``Rprop`` (each in the submodule MindSpore
has it in: ``mscore.nn.optim.rmsprop``, ``...ada_grad``, ...)."""
from mscore.nn.optim.adam import Adam, AdamOffload, AdamWeightDecay  # noqa: F401
from mscore.nn.optim.momentum import SGD, Momentum  # noqa: F401
from mscore.nn.optim.optimizer import Optimizer  # noqa: F401
from mscore.nn.optim.ada_grad import Adagrad  # noqa: F401
from mscore.nn.optim.adadelta import Adadelta  # noqa: F401
from mscore.nn.optim.adamax import AdaMax  # noqa: F401
from mscore.nn.optim.asgd import ASGD  # noqa: F401
from mscore.nn.optim.ftrl import FTRL  # noqa: F401
from mscore.nn.optim.lamb import Lamb  # noqa: F401
from mscore.nn.optim.lars import LARS  # noqa: F401
from mscore.nn.optim.lazyadam import LazyAdam  # noqa: F401
from mscore.nn.optim.proximal_ada_grad import ProximalAdagrad  # noqa: F401
from mscore.nn.optim.rmsprop import RMSProp  # noqa: F401
from mscore.nn.optim.rprop import Rprop  # noqa: F401

__all__ = ["Optimizer", "Momentum", "SGD", "Adam", "AdamWeightDecay", "LazyAdam", "AdamOffload", "AdaMax",
           "Adagrad", "Adadelta", "ASGD", "FTRL", "Lamb", "LARS", "ProximalAdagrad", "RMSProp",
           "Rprop"]
