"""``LossMonitor``: print the loss every few steps; stop on NaN/Inf."""
from __future__ import annotations

import math

from mscore.communication import management
from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import check_non_negative_int, loss_display, loss_value
from mscore.train.callback._utils import step_in_epoch as _step_in_epoch

__all__ = ["LossMonitor"]


def _rank_label():
    """``"rank: R, "`` in a data-parallel job of several processes, else ``""``."""
    if management.is_initialized() and management.get_group_size() > 1:
        return f"rank: {management.get_rank()}, "
    return ""


class LossMonitor(Callback):
    """Print ``epoch: 1 step: 2, loss is 1.0925388092041016`` every ``per_print_times`` steps
    (counted across epochs; ``step`` is the step inside the epoch). 0 prints nothing. In a
    data-parallel job of several processes the line starts with the rank: ``rank: 1,
    epoch: 1 step: 2, loss is ...`` (the loss of that rank's shard).

    A NaN or infinite loss raises ``ValueError`` and so ends training. In ``Model.fit`` it
    also prints the evaluation result at the end of each evaluated epoch.
    """

    def __init__(self, per_print_times=1):
        super().__init__()
        self._per_print_times = check_non_negative_int(per_print_times, "per_print_times",
                                                       "LossMonitor")
        self._last_print_time = 0

    def on_train_begin(self, run_context):
        """Align the print cadence with the first step of this run."""
        cb_params = run_context.original_args()
        self._last_print_time = cb_params.get("cur_step_num", 0) or 0

    def step_end(self, run_context):
        """Check the loss and print it when due."""
        cb_params = run_context.original_args()
        outputs = cb_params.get("net_outputs")
        value = loss_value(outputs)
        cur_step = cb_params.cur_step_num
        step_in_epoch = _step_in_epoch(cb_params)
        if value is not None and (math.isnan(value) or math.isinf(value)):
            raise ValueError(f"epoch: {cb_params.cur_epoch_num} step: {step_in_epoch}. "
                             f"Invalid loss {value}, terminating training.")
        if self._per_print_times and cur_step <= self._last_print_time:
            # the step counter went back (a resumed run): realign
            self._last_print_time = cur_step - 1
        if self._per_print_times and cur_step - self._last_print_time >= self._per_print_times:
            self._last_print_time = cur_step
            print(f"{_rank_label()}epoch: {cb_params.cur_epoch_num} step: {step_in_epoch}, "
                  f"loss is {str(loss_display(outputs))}", flush=True)

    def on_train_epoch_end(self, run_context):
        """In ``Model.fit``: print the evaluation metrics of this epoch."""
        cb_params = run_context.original_args()
        metrics = cb_params.get("metrics")
        if metrics:
            print(f"Eval result: epoch {cb_params.cur_epoch_num}, metrics: {metrics}",
                  flush=True)
