"""``History``: the network outputs and evaluation metrics of every epoch."""
from __future__ import annotations

from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import loss_value

__all__ = ["History"]


class History(Callback):
    """Records, after each training epoch, the mean of the step output (the loss) as
    ``history['net_output']`` and, in ``Model.fit``, each evaluation metric; ``epoch`` lists
    the epoch numbers."""

    def __init__(self):
        super().__init__()
        self.epoch = []
        self.history = {}

    def on_train_begin(self, run_context):
        """Start a fresh record."""
        self.epoch = []
        self.history = {}

    def on_train_epoch_end(self, run_context):
        """Append this epoch's values."""
        cb_params = run_context.original_args()
        self.epoch.append(cb_params.get("cur_epoch_num", len(self.epoch) + 1))
        current = {"net_output": loss_value(cb_params.get("net_outputs"))}
        metrics = cb_params.get("metrics")
        if metrics:
            current.update(metrics)
        for key, value in current.items():
            self.history.setdefault(key, []).append(value)
