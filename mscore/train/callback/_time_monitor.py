"""``TimeMonitor``: print the time of each epoch and of its average step."""
from __future__ import annotations

import time

from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import check_bool

__all__ = ["TimeMonitor"]


class TimeMonitor(Callback):
    """Print ``Train epoch time: 123.456 ms, per step time: 1.234 ms`` after each epoch
    (``Eval epoch time: ...`` after an evaluation, in ``Model.eval`` and in ``Model.fit``).

    Args:
        data_size (int): steps per epoch, used only when the run does not know its epoch
            length (then the steps seen are used if it is not a positive int).
        data_time (bool): also report the time spent waiting for the data of each training
            step, as `` (data time: 0.123 ms)``.
    """

    def __init__(self, data_size=None, data_time=False):
        super().__init__()
        self.data_size = data_size
        self.data_time = check_bool(data_time, "data_time", "TimeMonitor")
        self.epoch_time = time.time()
        self.data_time_sum = 0.0
        self.data_time_start = 0.0
        self._steps = 0
        self.last_epoch_ms = None
        self.last_step_ms = None

    @staticmethod
    def _sink(run_context):
        return bool(run_context.original_args().get("dataset_sink_mode", False))

    def epoch_begin(self, run_context):
        """Start the epoch clock (training and evaluation)."""
        self.epoch_time = time.time()
        self._steps = 0
        if self.data_time and not self._sink(run_context):
            self.data_time_sum = 0.0
            self.data_time_start = time.time()

    def on_train_step_begin(self, run_context):
        """Count the time since the previous step ended as data time."""
        self._steps += 1
        if self.data_time and not self._sink(run_context):
            self.data_time_sum += time.time() - self.data_time_start

    def on_train_step_end(self, run_context):
        """Remember when the step ended."""
        if self.data_time and not self._sink(run_context):
            self.data_time_start = time.time()

    def on_eval_step_begin(self, run_context):
        """Count the evaluation steps (for runs of unknown length)."""
        self._steps += 1

    def _step_count(self, cb_params):
        batch_num = cb_params.get("batch_num")
        if isinstance(batch_num, int) and not isinstance(batch_num, bool) and batch_num > 0:
            return batch_num
        size = self.data_size
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            return size
        return self._steps or 1

    def epoch_end(self, run_context):
        """Print the epoch and per-step times."""
        epoch_ms = (time.time() - self.epoch_time) * 1000
        cb_params = run_context.original_args()
        steps = self._step_count(cb_params)
        mode = str(cb_params.get("mode", ""))
        step_ms = epoch_ms / steps
        self.last_epoch_ms, self.last_step_ms = epoch_ms, step_ms
        line = f"{mode.title()} epoch time: {epoch_ms:5.3f} ms, per step time: {step_ms:5.3f} ms"
        if self.data_time and not self._sink(run_context) and mode == "train":
            line += f" (data time: {self.data_time_sum * 1000 / steps:5.3f} ms)"
        print(line, flush=True)
