"""``TimeMonitor``: print the time of each epoch and of its average step."""
from __future__ import annotations

import time

from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import check_bool, check_positive_int

__all__ = ["TimeMonitor"]


class TimeMonitor(Callback):
    """Print ``Train epoch time: 123.456 ms, per step time: 1.234 ms`` after each epoch.

    ``data_size`` is the steps per epoch used when the run does not know it; with
    ``data_time=True`` the time spent waiting for data before each step is reported too.
    """

    def __init__(self, data_size=None, data_time=False):
        super().__init__()
        if data_size is not None:
            check_positive_int(data_size, "data_size", "TimeMonitor")
        self.data_size = data_size
        self.data_time = check_bool(data_time, "data_time", "TimeMonitor")
        self.epoch_time = time.time()
        self._data_wait = 0.0
        self._last_step_end = None
        self.last_epoch_ms = None
        self.last_step_ms = None

    def on_train_epoch_begin(self, run_context):
        """Start the epoch clock."""
        self.epoch_time = time.time()
        self._data_wait = 0.0
        self._steps = 0
        self._last_step_end = self.epoch_time

    def on_train_step_begin(self, run_context):
        """Account the time since the previous step as data time."""
        now = time.time()
        if self._last_step_end is not None:
            self._data_wait += now - self._last_step_end

    def on_train_step_end(self, run_context):
        """Remember when the step ended."""
        self._last_step_end = time.time()
        self._steps = getattr(self, "_steps", 0) + 1

    def on_train_epoch_end(self, run_context):
        """Print the epoch and per-step times."""
        epoch_ms = (time.time() - self.epoch_time) * 1000
        cb_params = run_context.original_args()
        steps = self.data_size
        batch_num = cb_params.get("batch_num")
        if isinstance(batch_num, int) and batch_num > 0:
            steps = batch_num
        if not steps:
            steps = getattr(self, "_steps", 0) or 1  # unknown epoch length: the steps seen
        mode = str(cb_params.get("mode", "train")).title()
        self.last_epoch_ms, self.last_step_ms = epoch_ms, epoch_ms / steps
        msg = f"{mode} epoch time: {epoch_ms:5.3f} ms, per step time: {epoch_ms / steps:5.3f} ms"
        if self.data_time:
            msg += f", data time per step: {self._data_wait * 1000 / steps:5.3f} ms"
        print(msg, flush=True)
