"""``History``: the network outputs and evaluation metrics of every epoch."""
from __future__ import annotations

import numpy as np

from mscore.common.tensor import Tensor
from mscore.train.callback._callback import Callback

__all__ = ["History"]


def _epoch_output(net_outputs):
    """The mean of the step's (first) output as a numpy scalar, as MindSpore records it; a
    value that is not a Tensor is kept as it is."""
    out = net_outputs
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], Tensor):
        out = out[0]
    if isinstance(out, Tensor):
        return np.mean(out.asnumpy())
    return out


class History(Callback):
    """Records, at the end of each epoch, the network output of its last step (its mean, a
    numpy scalar) as ``history['net_output']`` and, in ``Model.fit`` epochs that evaluate,
    each metric under its name.

    ``epoch`` is ``{"epoch": [1, 2, ...]}`` (reset when a run begins); ``history`` keeps
    growing over several runs, as in MindSpore. Like MindSpore's it uses the legacy hooks
    ``begin`` / ``epoch_end``, so ``Model.eval(callbacks=[history])`` records the evaluation
    epoch too.
    """

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = None

    def begin(self, run_context):
        """Start a fresh epoch list."""
        self.epoch = {"epoch": []}

    def epoch_end(self, run_context):
        """Append this epoch's values."""
        cb_params = run_context.original_args()
        if self.epoch is None:
            self.epoch = {"epoch": []}
        self.epoch["epoch"].append(cb_params.get("cur_epoch_num", 1))
        current = {"net_output": _epoch_output(cb_params.get("net_outputs"))}
        metrics = cb_params.get("metrics")
        if metrics:
            current.update(metrics)
        for key, value in current.items():
            self.history.setdefault(key, []).append(value)
