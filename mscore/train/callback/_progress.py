"""``ProgressBar``: a tqdm progress bar per epoch (off unless you add it)."""
from __future__ import annotations

import sys

from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import check_bool, check_positive_int, loss_value

__all__ = ["ProgressBar"]


class ProgressBar(Callback):
    """A terminal progress bar for each training epoch (and the evaluation pass) showing
    the loss, via ``tqdm``. Add it to ``callbacks`` (or pass ``--progress`` to
    ``mscore demo``) to turn it on.

    Args:
        update_every (int): refresh the loss shown every this many steps.
        leave (bool): keep each finished bar on screen.
        file: the stream (default ``sys.stderr``).
    """

    def __init__(self, update_every=1, leave=True, file=None):
        super().__init__()
        self.update_every = check_positive_int(update_every, "update_every", "ProgressBar")
        self.leave = check_bool(leave, "leave", "ProgressBar")
        self.file = file
        self._bar = None

    def _open(self, total, desc):
        try:
            from tqdm.auto import tqdm
        except ImportError as e:  # pragma: no cover - tqdm is a dependency
            raise ImportError("ProgressBar needs tqdm: pip install tqdm") from e
        self._close()
        self._bar = tqdm(total=total if total and total > 0 else None, desc=desc,
                         leave=self.leave, file=self.file or sys.stderr, unit="step",
                         dynamic_ncols=True)

    def _close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def on_train_epoch_begin(self, run_context):
        """Open the epoch's bar."""
        cb = run_context.original_args()
        total = (cb.get("initial_epoch") or 0) + (cb.get("epoch_num") or 0)
        self._open(cb.get("batch_num"), f"epoch {cb.cur_epoch_num}/{total or '?'}")

    def on_train_step_end(self, run_context):
        """Advance the bar; show the loss."""
        if self._bar is None:
            return
        self._bar.update(1)
        cb = run_context.original_args()
        if cb.cur_step_num % self.update_every == 0:
            value = loss_value(cb.get("net_outputs"))
            if value is not None:
                self._bar.set_postfix(loss=f"{value:.4f}", refresh=False)

    def on_train_epoch_end(self, run_context):
        """Close the epoch's bar, with the evaluation metrics of ``fit`` if any."""
        metrics = run_context.original_args().get("metrics")
        if self._bar is not None and metrics:
            self._bar.set_postfix({k: (f"{v:.4f}" if isinstance(v, float) else v)
                                   for k, v in metrics.items()}, refresh=True)
        self._close()

    def on_eval_epoch_begin(self, run_context):
        """Open the evaluation bar."""
        self._open(run_context.original_args().get("batch_num"), "eval")

    def on_eval_step_end(self, run_context):
        """Advance the evaluation bar."""
        if self._bar is not None:
            self._bar.update(1)

    def on_eval_epoch_end(self, run_context):
        """Close the evaluation bar."""
        self._close()

    def on_train_end(self, run_context):
        """Close any bar left open (a stop request)."""
        self._close()

    def __exit__(self, *err):
        self._close()
        return None
