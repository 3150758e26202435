"""Optimizers: ``Optimizer``, ``Momentum``, ``SGD``, ``Adam``, ``AdamWeightDecay``,
``LazyAdam``, ``AdamOffload``, ``AdaMax``, ``Adagrad``, ``Adadelta``, ``ASGD``, ``FTRL``, ``Lamb``,
``LARS``, ``ProximalAdagrad``, ``RMSProp``, ``Rprop`` (each in the submodule MindSpore
has it in: ``mscore.nn.optim.rmsprop``, ``...ada_grad``, ...)."""
from mscore.nn.optim.adam import Adam, AdamOffload, AdamWeightDecay
from mscore.nn.optim.momentum import SGD, Momentum
from mscore.nn.optim.optimizer import Optimizer
from mscore.nn.optim.ada_grad import Adagrad
from mscore.nn.optim.adadelta import Adadelta
from mscore.nn.optim.adamax import AdaMax
from mscore.nn.optim.asgd import ASGD
from mscore.nn.optim.ftrl import FTRL
from mscore.nn.optim.lamb import Lamb
from mscore.nn.optim.lars import LARS
from mscore.nn.optim.lazyadam import LazyAdam
from mscore.nn.optim.proximal_ada_grad import ProximalAdagrad
from mscore.nn.optim.rmsprop import RMSProp
from mscore.nn.optim.rprop import Rprop

__all__ = ["Optimizer", "Momentum", "SGD", "Adam", "AdamWeightDecay", "LazyAdam", "AdamOffload",
           "AdaMax", "Adagrad", "Adadelta", "ASGD", "FTRL", "Lamb", "LARS", "ProximalAdagrad",
           "RMSProp", "Rprop"]
