"""MindSpore's ``mindspore.mint.optim``: PyTorch-style optimizers (``AdamW``, ``Adam``,
``SGD``) on mscore's optimizers (``optimizer(grads)`` updates the parameters)."""
from mscore.mint.optim import adam, adamw, fused_adamw, sgd
from mscore.mint.optim.adam import Adam
from mscore.mint.optim.adamw import AdamW
from mscore.mint.optim.fused_adamw import FusedAdamW
from mscore.mint.optim.sgd import SGD

__all__ = ["AdamW", "Adam", "SGD", "FusedAdamW"]
