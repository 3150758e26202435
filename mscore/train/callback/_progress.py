"""``ProgressBar``: a tqdm progress bar per epoch; ``Model.train`` adds one by default when
stderr is a terminal (see :func:`default_progress_bars`)."""
from __future__ import annotations

import os
import sys

from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import check_bool, check_positive_int, loss_value

__all__ = ["ProgressBar", "default_progress_bars"]

_SHOW_CHOICES = (True, False, "auto")
PROGRESS_ENV = "MSCORE_PROGRESS"


class ProgressBar(Callback):
    """A terminal progress bar for each training epoch (and the evaluation pass) showing
    the loss, via ``tqdm``. ``Model.train`` shows one by default when stderr is a terminal
    (``MSCORE_PROGRESS=never`` turns that off); a ``ProgressBar`` in ``callbacks`` replaces
    that default.

    While a bar is on a terminal, lines printed to stdout (``LossMonitor``) are written
    above the bar instead of through it.

    Args:
        update_every (int): refresh the loss shown every this many steps.
        leave (bool): keep each finished bar on screen.
        file: the stream (default ``sys.stderr``).
        show (bool or str): True: always; False: never (a way to turn the default bar off
            for one call); ``"auto"``: when the stream is a terminal.
    """

    def __init__(self, update_every=1, leave=True, file=None, show=True):
        super().__init__()
        self.update_every = check_positive_int(update_every, "update_every", "ProgressBar")
        self.leave = check_bool(leave, "leave", "ProgressBar")
        if show not in _SHOW_CHOICES or isinstance(show, int) and not isinstance(show, bool):
            raise ValueError(f"For 'ProgressBar', show: expected True, False or 'auto', got "
                             f"{show!r}")
        self.file = file
        self.show = show
        self._bar = None
        self._stdout = None

    def _stream(self):
        return self.file or sys.stderr

    def _shown(self):
        if self.show == "auto":
            return _is_terminal(self._stream())
        return self.show

    def _open(self, total, desc):
        if not self._shown():
            return
        try:
            from tqdm.auto import tqdm
        except ImportError as e:  # pragma: no cover - tqdm is a dependency
            raise ImportError("ProgressBar needs tqdm: pip install tqdm") from e
        self._close()
        self._write_stdout_above_the_bar()
        self._bar = tqdm(total=total if total and total > 0 else None, desc=desc,
                         leave=self.leave, file=self._stream(), unit="step",
                         dynamic_ncols=True)

    def _write_stdout_above_the_bar(self):
        """Route prints to a terminal stdout above the bar while bars are open, so they do
        not land at the end of the bar's line (only when both streams are terminals)."""
        if self._stdout is not None or not (_is_terminal(sys.stdout) and
                                            _is_terminal(self._stream())):
            return
        self._stdout = sys.stdout
        sys.stdout = _LinesAboveBar(self._stdout, self)

    def _close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def _restore_stdout(self):
        if self._stdout is not None:
            if isinstance(sys.stdout, _LinesAboveBar) and sys.stdout.progress is self:
                sys.stdout.write_pending()
                sys.stdout = self._stdout
            self._stdout = None

    def on_train_epoch_begin(self, run_context):
        """Open the epoch's bar."""
        cb = run_context.original_args()
        total = (cb.get("initial_epoch") or 0) + (cb.get("epoch_num") or 0)
        self._open(cb.get("batch_num"), f"epoch {cb.cur_epoch_num}/{total or '?'}")

    def on_train_step_end(self, run_context):
        """Advance the bar; show the loss."""
        if self._bar is None:
            return
        cb = run_context.original_args()
        if cb.cur_step_num % self.update_every == 0:
            value = loss_value(cb.get("net_outputs"))
            if value is not None:   # before the update, which draws: this step's loss
                self._bar.set_postfix(loss=f"{value:.4f}", refresh=False)
        self._bar.update(1)

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
        self._restore_stdout()

    def __exit__(self, *err):
        self._close()
        self._restore_stdout()
        return None


def _is_terminal(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class _LinesAboveBar:
    """``sys.stdout`` while a :class:`ProgressBar` draws on the same terminal through
    another stream (stderr): each complete line clears the bar, is written and flushed, and
    the bar is drawn again below it. (``tqdm.write`` clears only bars on the stream it
    writes to.) A partial line waits for its end."""

    def __init__(self, stream, progress):
        self._stream = stream
        self.progress = progress
        self._pending = ""

    def write(self, text):
        """Buffer ``text``; write its complete lines above the bar."""
        self._pending += text
        if "\n" in self._pending:
            lines, self._pending = self._pending.rsplit("\n", 1)
            bar = self.progress._bar
            if bar is not None:
                bar.clear()
            self._stream.write(lines + "\n")
            self._stream.flush()
            if bar is not None:
                bar.refresh()
        return len(text)

    def write_pending(self):
        """Write a partial line still waiting (when the bars are done)."""
        if self._pending:
            self._stream.write(self._pending)
            self._pending = ""
        self._stream.flush()

    def flush(self):
        """Flush the stream (a partial line waits for its end)."""
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _tqdm_installed():
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def default_progress_bars(callbacks):
    """The progress bar ``Model.train`` adds to ``callbacks``: ``[ProgressBar(show="auto")]``
    when none of them is a ``ProgressBar``, tqdm is installed and ``MSCORE_PROGRESS`` is not
    ``never`` (``always``: shown even when stderr is no terminal); else ``[]``."""
    setting = os.environ.get(PROGRESS_ENV, "auto").strip().lower() or "auto"
    if setting not in ("auto", "always", "never"):
        raise ValueError(f"{PROGRESS_ENV}: expected auto, always or never, got "
                         f"{os.environ[PROGRESS_ENV]!r}")
    if setting == "never" or any(isinstance(cb, ProgressBar) for cb in callbacks):
        return []
    if setting == "auto" and not _is_terminal(sys.stderr) or not _tqdm_installed():
        return []
    return [ProgressBar(show=True if setting == "always" else "auto")]
