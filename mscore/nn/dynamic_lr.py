"""``mindspore.nn.dynamic_lr``: learning-rate lists computed ahead of training (the
functions live in :mod:`mscore.nn.learning_rate_schedule`)."""
from mscore.nn.learning_rate_schedule import (  # noqa: F401
    cosine_decay_lr, exponential_decay_lr, piecewise_constant_lr, polynomial_decay_lr,
    warmup_lr)

__all__ = ["piecewise_constant_lr", "exponential_decay_lr", "cosine_decay_lr",
           "polynomial_decay_lr", "warmup_lr"]
