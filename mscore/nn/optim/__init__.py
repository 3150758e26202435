"""Optimizers: ``Optimizer``, ``Momentum``, ``SGD``, ``Adam``, ``AdamWeightDecay``."""
from mscore.nn.optim.adam import Adam, AdamWeightDecay  # noqa: F401
from mscore.nn.optim.momentum import SGD, Momentum  # noqa: F401
from mscore.nn.optim.optimizer import Optimizer  # noqa: F401

__all__ = ["Optimizer", "Momentum", "SGD", "Adam", "AdamWeightDecay"]
