"""``EarlyStopping``: stop training when a monitored value stops improving."""
from __future__ import annotations

import warnings

import numpy as np

from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import check_bool, check_non_negative_int, check_number, \
    loss_value

__all__ = ["EarlyStopping"]


def monitor_value(cb_params, monitor, cls):
    """The monitored value: ``'loss'`` is the training loss of the last step; any other name
    is looked up in the evaluation results of ``Model.fit`` (``'eval_loss'``, ``'accuracy'``,
    ...). None (with a warning) when it is not available."""
    if monitor == "loss":
        value = loss_value(cb_params.get("net_outputs"))
        candidates = ["loss"]
    else:
        results = cb_params.get("eval_results") or {}
        value = results.get(monitor)
        candidates = sorted(results)
    if value is None:
        warnings.warn(f"{cls} is conditioned on {monitor!r}, which is not available. "
                      f"Available choices are: {candidates}", RuntimeWarning, stacklevel=3)
        return None
    arr = np.asarray(value, dtype=np.float64)
    if arr.size != 1:
        raise ValueError(f"For '{cls}', the monitored value {monitor!r} must be a scalar, got "
                         f"shape {arr.shape}")
    return float(arr.reshape(()))


def _check_mode(mode, cls):
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"For '{cls}', the argument 'mode' must be 'auto', 'min' or 'max', but "
                         f"got {mode!r}.")
    return mode


def _check_monitor(monitor, cls):
    if not isinstance(monitor, str) or not monitor:
        raise TypeError(f"For '{cls}', the argument 'monitor' must be a non-empty str, but got "
                        f"{monitor!r}.")
    return monitor


class EarlyStopping(Callback):
    """Stop when ``monitor`` has not improved by more than ``min_delta`` for ``patience``
    epochs.

    Args:
        monitor (str): ``'eval_loss'`` (default) or a metric name of ``Model.fit``'s
            evaluation, or ``'loss'`` for the training loss.
        min_delta (float): the smallest change that counts as an improvement.
        patience (int): epochs without improvement before stopping.
        verbose (bool): print when stopping / restoring.
        mode (str): ``'min'``, ``'max'`` or ``'auto'`` (max for names containing ``acc``).
        baseline (float): stop unless the value beats this.
        restore_best_weights (bool): put back the weights of the best epoch when stopping.
    """

    def __init__(self, monitor="eval_loss", min_delta=0, patience=0, verbose=False,
                 mode="auto", baseline=None, restore_best_weights=False):
        super().__init__()
        cls = "EarlyStopping"
        self.monitor = _check_monitor(monitor, cls)
        self.min_delta = abs(check_number(min_delta, "min_delta", cls))
        self.patience = check_non_negative_int(patience, "patience", cls)
        self.verbose = check_bool(verbose, "verbose", cls)
        self.mode = _check_mode(mode, cls)
        self.baseline = None if baseline is None else check_number(baseline, "baseline", cls)
        self.restore_best_weights = check_bool(restore_best_weights, "restore_best_weights",
                                               cls)
        maximise = self.mode == "max" or (self.mode == "auto" and "acc" in self.monitor)
        self._better = (lambda a, b: a - self.min_delta > b) if maximise else \
            (lambda a, b: a + self.min_delta < b)
        self._worst = -np.inf if maximise else np.inf
        self._reset()

    def _reset(self):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = self._worst if self.baseline is None else self.baseline
        self.best_weights = None

    def on_train_begin(self, run_context):
        """Reset the state."""
        self._reset()

    def on_train_epoch_end(self, run_context):
        """Compare the monitored value with the best so far; request a stop when due."""
        cb_params = run_context.original_args()
        current = monitor_value(cb_params, self.monitor, "EarlyStopping")
        if current is None:
            return
        network = cb_params.get("train_network") or cb_params.get("network")
        if self._better(current, self.best):
            self.best = current
            self.wait = 0
            if self.restore_best_weights and network is not None:
                self.best_weights = [(p, p.asnumpy().copy()) for p in network.get_parameters()]
        else:
            self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = cb_params.cur_epoch_num
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch.")
                from mscore.common.tensor import Tensor
                for p, value in self.best_weights:
                    p.set_data(Tensor(value))

    def on_train_end(self, run_context):
        """Report the epoch training stopped at."""
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch:05d}: early stopping")
