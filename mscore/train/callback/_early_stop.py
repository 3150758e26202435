"""``EarlyStopping``: stop training when a monitored value stops improving."""
from __future__ import annotations

import warnings

import numpy as np

from mscore.common.tensor import Tensor
from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import (
    check_bool,
    check_int_or_float,
    check_non_negative_int,
    check_str,
    loss_value,
)

__all__ = ["EarlyStopping"]

#: Monitored names for which ``mode='auto'`` means smaller is better (MindSpore's list);
#: every other name is maximised.
SMALLER_IS_BETTER = ("hausdorff_distance", "mae", "mse", "loss", "perplexity",
                     "mean_surface_distance", "root_mean_square_distance", "eval_loss")


def monitor_value(cb_params, monitor, cls):
    """The monitored value as a float: ``'loss'`` is the training loss of the last step; any
    other name is looked up in the evaluation results of ``Model.fit`` (``'eval_loss'``,
    ``'acc'``, ...). None (with a warning) when it is not available; a value with more than
    one element is ``ValueError``."""
    if monitor == "loss":
        value = loss_value(cb_params.get("net_outputs"))
        candidates = {"loss"}
    else:
        results = cb_params.get("eval_results") or {}
        value = results.get(monitor)
        candidates = {"loss", *results}
    if value is None:
        warnings.warn(f"{cls} is conditioned on {monitor!r}, which is not available. "
                      f"Available choices are: {sorted(candidates)}", RuntimeWarning,
                      stacklevel=3)
        return None
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    arr = np.asarray(value, dtype=np.float64)
    if arr.size != 1:
        raise ValueError(f"{cls} only supports scalar monitor now; {monitor!r} has shape "
                         f"{arr.shape}.")
    return float(arr.reshape(()))


def check_mode(mode, cls):
    """``'auto'``, ``'min'`` or ``'max'``: ``TypeError`` for a non-str, ``ValueError``
    otherwise."""
    check_str(mode, "mode", cls)
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"For '{cls}', the argument 'mode' should be 'auto', 'min' or 'max', "
                         f"but got {mode!r}.")
    return mode


def minimises(mode, monitor):
    """Whether smaller monitored values are better under ``mode``."""
    return mode == "min" or (mode == "auto" and monitor in SMALLER_IS_BETTER)


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved by more than ``min_delta`` for
    ``patience`` epochs.

    After each training epoch the wait counter grows by one and is reset when the value
    improves on the best so far (and, with ``baseline``, also beats the baseline); when it
    reaches ``patience`` training stops. So ``patience=0`` stops after the first epoch.

    Args:
        monitor (str): ``'eval_loss'`` (default) or a metric of ``Model.fit``'s evaluation,
            or ``'loss'`` for the training loss of the epoch's last step.
        min_delta (float): the smallest change that counts as an improvement (its absolute
            value is used).
        patience (int): epochs without improvement before stopping.
        verbose (bool): print when stopping / restoring.
        mode (str): ``'min'``, ``'max'`` or ``'auto'`` (min for loss-like names: ``loss``,
            ``eval_loss``, ``mae``, ``mse``, ``perplexity`` and the distances; max
            otherwise).
        baseline (float): the value must also beat this for the wait to reset.
        restore_best_weights (bool): when stopping, put back the train network's parameters
            of the best epoch.
    """

    def __init__(self, monitor="eval_loss", min_delta=0, patience=0, verbose=False,
                 mode="auto", baseline=None, restore_best_weights=False):
        super().__init__()
        cls = "EarlyStopping"
        self.monitor = check_str(monitor, "monitor", cls)
        self.min_delta = abs(check_int_or_float(min_delta, "min_delta", cls))
        self.patience = check_non_negative_int(patience, "patience", cls)
        self.verbose = check_bool(verbose, "verbose", cls)
        self.mode = check_mode(mode, cls)
        self.baseline = None if baseline is None else check_int_or_float(baseline, "baseline",
                                                                         cls)
        self.restore_best_weights = check_bool(restore_best_weights, "restore_best_weights",
                                               cls)
        self._minimise = minimises(self.mode, self.monitor)
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf if self._minimise else -np.inf
        self.best_weights = None

    def is_improvement(self, current, reference):
        """Whether ``current`` beats ``reference`` by more than ``min_delta``."""
        if self._minimise:
            return current < reference - self.min_delta
        return current > reference + self.min_delta

    def on_train_begin(self, run_context):
        """Reset the state."""
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf if self._minimise else -np.inf
        self.best_weights = None

    @staticmethod
    def _snapshot(network):
        return None if network is None else \
            [(p, p.asnumpy().copy()) for p in network.get_parameters()]

    def on_train_epoch_end(self, run_context):
        """Compare the monitored value with the best so far; request a stop when due."""
        cb_params = run_context.original_args()
        current = monitor_value(cb_params, self.monitor, "EarlyStopping")
        if current is None:
            return
        network = cb_params.get("train_network")
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self._snapshot(network)
        self.wait += 1
        if self.is_improvement(current, self.best):
            self.best = current
            if self.restore_best_weights:
                self.best_weights = self._snapshot(network)
            if self.baseline is None or self.is_improvement(current, self.baseline):
                self.wait = 0
        if self.wait >= self.patience:
            self.stopped_epoch = cb_params.get("cur_epoch_num")
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch.")
                for param, value in self.best_weights:
                    param.set_data(Tensor(value))

    def on_train_end(self, run_context):
        """Report the epoch training stopped at."""
        if self.stopped_epoch and self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch:05d}: early stopping")
