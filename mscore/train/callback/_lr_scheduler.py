"""``LearningRateScheduler``: change the learning rate after every training step."""
from __future__ import annotations

import math

import numpy as np

from mscore.train.callback._callback import Callback
from mscore.train.callback._lr_plateau import assign_lr, fixed_lr_parameter

__all__ = ["LearningRateScheduler"]


class LearningRateScheduler(Callback):
    """After each training step, set the optimizer's learning rate to
    ``learning_rate_function(lr, cur_step_num)``.

    ``lr`` is the current value as a Python float (read as MindSpore does, through the
    shortest decimal text of the float32 value, so ``0.1`` and not ``0.10000000149``), and
    ``cur_step_num`` counts steps across epochs from 1. The optimizer needs one fixed learning
    rate (a Parameter); the new value is stored in its dtype.

    Example:
        >>> def halve_every_100(lr, step):
        ...     return lr * 0.5 if step % 100 == 0 else lr
        >>> model.train(10, ds, callbacks=[LearningRateScheduler(halve_every_100)])
    """

    def __init__(self, learning_rate_function):
        super().__init__()
        if not callable(learning_rate_function):
            raise TypeError(f"For 'LearningRateScheduler', the argument "
                            f"'learning_rate_function' must be callable, but got "
                            f"{type(learning_rate_function).__name__}.")
        self.learning_rate_function = learning_rate_function

    def step_end(self, run_context):
        """Apply the function to the current learning rate."""
        cb_params = run_context.original_args()
        lr_param = fixed_lr_parameter(cb_params.get("optimizer"), "LearningRateScheduler")
        lr = float(np.array2string(lr_param.asnumpy().reshape(())))
        new_lr = self.learning_rate_function(lr, cb_params.get("cur_step_num"))
        if not math.isclose(lr, new_lr, rel_tol=1e-10):
            assign_lr(lr_param, new_lr)
