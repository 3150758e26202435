"""``ReduceLROnPlateau``: lower the learning rate when a monitored value stalls."""
from __future__ import annotations

import numpy as np

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.train.callback._callback import Callback
from mscore.train.callback._early_stop import check_mode, minimises, monitor_value
from mscore.train.callback._utils import (
    check_bool,
    check_int_or_float,
    check_non_negative_int,
    check_str,
)

__all__ = ["ReduceLROnPlateau"]


def _check_factor(factor, cls):
    if isinstance(factor, bool) or not isinstance(factor, float):
        raise TypeError(f"For '{cls}', the argument 'factor' must be float, but got "
                        f"{type(factor).__name__}.")
    if not 0.0 < factor < 1.0:
        raise ValueError(f"For '{cls}', the argument 'factor' must be in range of (0.0, 1.0), "
                         f"but got {factor}.")
    return factor


def fixed_lr_parameter(optimizer, cls):
    """The optimizer's learning rate Parameter; ``ValueError`` when the learning rate is a
    schedule or per group."""
    lr = getattr(optimizer, "learning_rate", None)
    if not isinstance(lr, Parameter) or lr.size != 1:
        raise ValueError(f"{cls} does not support dynamic learning rate and group learning "
                         f"rate now.")
    return lr


def assign_lr(lr_param, value):
    """Set the learning-rate Parameter to ``value`` in its own dtype."""
    dtype = lr_param.asnumpy().dtype
    lr_param.set_data(Tensor(np.full(lr_param.shape, value, dtype=dtype)))


class ReduceLROnPlateau(Callback):
    """Multiply the optimizer's learning rate by ``factor`` when ``monitor`` has not improved
    by more than ``min_delta`` for ``patience`` epochs, never going below ``min_lr``; then
    wait ``cooldown`` epochs before counting again.

    Args:
        monitor (str): as in :class:`EarlyStopping` (default ``'eval_loss'``).
        factor (float): the multiplier, in (0, 1).
        patience (int): epochs without improvement before lowering.
        verbose (bool): print each change.
        mode (str): ``'auto'``, ``'min'`` or ``'max'``, as in :class:`EarlyStopping`.
        min_delta (float): the smallest change that counts as an improvement.
        cooldown (int): epochs to wait after a change.
        min_lr (float): the lower bound of the learning rate.

    The optimizer's ``learning_rate`` must be one fixed value (a Parameter), not a schedule
    or per-group values: ``ValueError`` at the end of the first epoch otherwise.
    """

    def __init__(self, monitor="eval_loss", factor=0.1, patience=10, verbose=False,
                 mode="auto", min_delta=1e-4, cooldown=0, min_lr=0):
        super().__init__()
        cls = "ReduceLROnPlateau"
        self.monitor = check_str(monitor, "monitor", cls)
        self.factor = _check_factor(factor, cls)
        self.patience = check_non_negative_int(patience, "patience", cls)
        self.verbose = check_bool(verbose, "verbose", cls)
        self.mode = check_mode(mode, cls)
        self.min_delta = abs(check_int_or_float(min_delta, "min_delta", cls))
        self.cooldown = check_non_negative_int(cooldown, "cooldown", cls)
        self.min_lr = check_int_or_float(min_lr, "min_lr", cls)
        self._minimise = minimises(self.mode, self.monitor)
        self.cooldown_counter = 0
        self.wait = 0
        self.best = np.inf if self._minimise else -np.inf

    def is_improvement(self, current, reference):
        """Whether ``current`` beats ``reference`` by more than ``min_delta``."""
        if self._minimise:
            return current < reference - self.min_delta
        return current > reference + self.min_delta

    def on_train_begin(self, run_context):
        """Reset the state."""
        self.cooldown_counter = 0
        self.wait = 0
        self.best = np.inf if self._minimise else -np.inf

    def on_train_epoch_end(self, run_context):
        """Update the plateau counters and lower the learning rate when due."""
        cb_params = run_context.original_args()
        lr_param = fixed_lr_parameter(cb_params.get("optimizer"), "ReduceLROnPlateau")
        current = monitor_value(cb_params, self.monitor, "ReduceLROnPlateau")
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = lr_param.asnumpy().reshape(())
                if old > self.min_lr:
                    # the product in the parameter's precision, as MindSpore's Tensor maths
                    new = max(old * old.dtype.type(self.factor), self.min_lr)
                    new = old.dtype.type(new)
                    assign_lr(lr_param, new)
                    if self.verbose:
                        print(f"Epoch {cb_params.get('cur_epoch_num'):05d}: ReduceLROnPlateau "
                              f"reducing learning rate to {new}.")
                self.cooldown_counter = self.cooldown
                self.wait = 0
