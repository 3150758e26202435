"""``ReduceLROnPlateau``: lower the learning rate when a monitored value stalls."""
from __future__ import annotations

import numpy as np

from mscore.train.callback._callback import Callback
from mscore.train.callback._early_stop import _check_mode, _check_monitor, monitor_value
from mscore.train.callback._utils import check_bool, check_non_negative_int, check_number

__all__ = ["ReduceLROnPlateau"]


class ReduceLROnPlateau(Callback):
    """Multiply the optimizer's learning rate by ``factor`` when ``monitor`` has not improved
    by more than ``min_delta`` for ``patience`` epochs; never below ``min_lr``; then wait
    ``cooldown`` epochs before counting again.

    The optimizer's ``learning_rate`` must be a fixed value (a Parameter), not a schedule.
    ``monitor``, ``mode`` and ``verbose`` are as in :class:`EarlyStopping`.
    """

    def __init__(self, monitor="eval_loss", factor=0.1, patience=10, verbose=False,
                 mode="auto", min_delta=1e-4, cooldown=0, min_lr=0):
        super().__init__()
        cls = "ReduceLROnPlateau"
        self.monitor = _check_monitor(monitor, cls)
        self.factor = check_number(factor, "factor", cls)
        if not 0.0 <= self.factor < 1.0:
            raise ValueError(f"For '{cls}', the argument 'factor' must be in [0, 1), but got "
                             f"{factor}.")
        self.patience = check_non_negative_int(patience, "patience", cls)
        self.verbose = check_bool(verbose, "verbose", cls)
        self.mode = _check_mode(mode, cls)
        self.min_delta = abs(check_number(min_delta, "min_delta", cls))
        self.cooldown = check_non_negative_int(cooldown, "cooldown", cls)
        self.min_lr = check_number(min_lr, "min_lr", cls)
        if self.min_lr < 0:
            raise ValueError(f"For '{cls}', the argument 'min_lr' must be >= 0, but got "
                             f"{min_lr}.")
        maximise = self.mode == "max" or (self.mode == "auto" and "acc" in self.monitor)
        self._better = (lambda a, b: a > b + self.min_delta) if maximise else \
            (lambda a, b: a < b - self.min_delta)
        self._worst = -np.inf if maximise else np.inf
        self._reset()

    def _reset(self):
        self.best = self._worst
        self.wait = 0
        self.cooldown_counter = 0

    def on_train_begin(self, run_context):
        """Reset the state and check the optimizer has a fixed learning rate."""
        self._reset()
        self._lr_parameter(run_context.original_args())

    @staticmethod
    def _lr_parameter(cb_params):
        from mscore.common.parameter import Parameter
        optimizer = cb_params.get("optimizer")
        if optimizer is None:
            network = cb_params.get("train_network")
            optimizer = getattr(network, "optimizer", None)
        if optimizer is None:
            raise ValueError("ReduceLROnPlateau needs a Model with an optimizer")
        lr = getattr(optimizer, "learning_rate", None)
        if not isinstance(lr, Parameter) or lr.size != 1:
            raise ValueError("ReduceLROnPlateau does not support dynamic learning rate and "
                             "group learning rate now.")
        return lr

    def on_train_epoch_end(self, run_context):
        """Update the plateau counters and lower the learning rate when due."""
        cb_params = run_context.original_args()
        current = monitor_value(cb_params, self.monitor, "ReduceLROnPlateau")
        if current is None:
            return
        lr_param = self._lr_parameter(cb_params)
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._better(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(lr_param.asnumpy().reshape(()))
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    from mscore.common.tensor import Tensor
                    lr_param.set_data(Tensor(np.full(lr_param.shape, new,
                                                     dtype=lr_param.asnumpy().dtype)))
                    if self.verbose:
                        print(f"Epoch {cb_params.cur_epoch_num:05d}: ReduceLROnPlateau reducing "
                              f"learning rate to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0
