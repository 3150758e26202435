"""``DSCallback``: a callback told of a ``map`` operation's progress (``ds.map(...,
callbacks=[cb])``), and ``WaitedDSCallback``, which is also a training callback and lets the
pipeline wait for the training step before preparing the next one.

A pipeline step is one row through the ``map``; ``step_size`` calls the step methods every
``step_size`` rows (steps 1, 1 + step_size, ...). The run context has ``cur_epoch_num``,
``cur_step_num_in_epoch`` and ``cur_step_num`` (across epochs), as in MindSpore. mscore runs
the pipeline in the thread that asks for rows, so the calls of one step come together
(``ds_step_begin`` then ``ds_step_end``), where MindSpore's worker threads may run ahead.
"""
from __future__ import annotations

import threading

from mscore.dataset import config
from mscore.train.callback._callback import Callback

__all__ = ["DSCallback", "WaitedDSCallback", "DSRunContext", "CallbackRunner"]

_METHODS = ("ds_begin", "ds_epoch_begin", "ds_epoch_end", "ds_step_begin", "ds_step_end")


def _check_step_size(step_size):
    if not isinstance(step_size, int) or isinstance(step_size, bool):
        raise TypeError(f"step_size: expected an int, got {type(step_size).__name__}")
    if not 1 <= step_size <= 2 ** 31 - 1:
        raise ValueError(f"step_size: expected an int in [1, 2147483647], got {step_size}")
    return step_size


class DSRunContext:
    """Where the pipeline is: ``cur_epoch_num`` (from 1), ``cur_step_num_in_epoch`` and
    ``cur_step_num`` (from 1; 0 before the first step)."""

    def __init__(self):
        self.cur_epoch_num = 0
        self.cur_step_num_in_epoch = 0
        self.cur_step_num = 0


class DSCallback:
    """Base class of dataset callbacks: override any of ``ds_begin``, ``ds_epoch_begin``,
    ``ds_epoch_end``, ``ds_step_begin``, ``ds_step_end`` (each gets a
    :class:`DSRunContext`).

    >>> class Progress(ds.DSCallback):
    ...     def ds_epoch_end(self, ds_run_context):
    ...         print("epoch", ds_run_context.cur_epoch_num, "read")
    >>> data = data.map(transform, callbacks=Progress())
    """

    def __init__(self, step_size=1):
        self.step_size = _check_step_size(step_size)

    def ds_begin(self, ds_run_context):
        """Called once, before the pipeline's first row."""

    def ds_epoch_begin(self, ds_run_context):
        """Called before each epoch."""

    def ds_epoch_end(self, ds_run_context):
        """Called after each epoch."""

    def ds_step_begin(self, ds_run_context):
        """Called before every ``step_size``-th row."""

    def ds_step_end(self, ds_run_context):
        """Called after every ``step_size``-th row."""

    def _overridden(self):
        """The callback methods this object overrides (at least one is needed)."""
        base = WaitedDSCallback if isinstance(self, WaitedDSCallback) else DSCallback
        names = ("sync_epoch_begin", "sync_step_begin") if base is WaitedDSCallback else _METHODS
        found = [n for n in names if getattr(type(self), n) is not getattr(base, n)]
        if not found:
            raise AttributeError("Inheriting Callback class without overriding any methods, "
                                 "check the usage of user defined Callback.")
        return found


class WaitedDSCallback(Callback, DSCallback):
    """A dataset callback synchronised with training: before epoch ``k > 1`` (step ``n >
    step_size``) of the pipeline it waits until training epoch ``k - 1`` (the previous step)
    has ended, then calls ``sync_epoch_begin`` (``sync_step_begin``) with the training run
    context. Pass it to both ``map(..., callbacks=cb)`` and ``Model.train(...,
    callbacks=cb)``; ``step_size`` is usually the batch size.

    When the pipeline runs in the training thread itself (``dataset_sink_mode=False``), the
    previous step has always ended when the next rows are asked for, so nothing waits.
    """

    def __init__(self, step_size=1):
        super().__init__()
        self.step_size = _check_step_size(step_size)
        self.step_event = threading.Event()
        self.step_run_context = None
        self.epoch_event = threading.Event()
        self.epoch_run_context = None
        self.training_ended = False
        self._training_thread = None

    def sync_epoch_begin(self, train_run_context, ds_run_context):
        """Called before a pipeline epoch, once the previous training epoch has ended."""

    def sync_step_begin(self, train_run_context, ds_run_context):
        """Called before a pipeline step, once the previous training step has ended."""

    def _wait(self, event, what):
        if self.training_ended or threading.get_ident() == self._training_thread:
            event.clear()
            return
        if not event.wait(timeout=config.get_callback_timeout()):
            raise RuntimeError(f"{what} timed out after {config.get_callback_timeout()} "
                               f"second(s)")
        event.clear()

    def epoch_end(self, run_context):
        """Training callback: releases the pipeline's wait in ``ds_epoch_begin``."""
        self._training_thread = threading.get_ident()
        self.epoch_run_context = run_context
        self.epoch_event.set()

    def step_end(self, run_context):
        """Training callback: releases the pipeline's wait in ``ds_step_begin``."""
        self._training_thread = threading.get_ident()
        self.step_run_context = run_context
        self.step_event.set()

    def end(self, run_context):
        """Training callback: training is over; the pipeline waits no more."""
        self.training_ended = True
        self.epoch_end(run_context)
        self.step_end(run_context)

    def ds_epoch_begin(self, ds_run_context):
        if ds_run_context.cur_epoch_num > 1:
            self._wait(self.epoch_event, "ds_epoch_begin")
            self.sync_epoch_begin(self.epoch_run_context, ds_run_context)

    def ds_step_begin(self, ds_run_context):
        if ds_run_context.cur_step_num > self.step_size:
            self._wait(self.step_event, "ds_step_begin")
            self.sync_step_begin(self.step_run_context, ds_run_context)


class CallbackRunner:
    """Calls a ``map``'s dataset callbacks as its rows pass (one runner per pipeline run)."""

    def __init__(self, callbacks):
        self.callbacks = [(cb, cb._overridden()) for cb in callbacks]
        self.context = DSRunContext()
        self._started = False

    def _call(self, name, step=None):
        for cb, methods in self.callbacks:
            if isinstance(cb, WaitedDSCallback):
                wanted = {"ds_epoch_begin": "sync_epoch_begin",
                          "ds_step_begin": "sync_step_begin"}.get(name)
                if wanted not in methods:
                    continue
            elif name not in methods:
                continue
            if step is not None and (step - 1) % cb.step_size:
                continue
            getattr(cb, name)(self.context)

    def epoch_begin(self, epoch):
        if not self.callbacks:
            return
        if not self._started:
            self._started = True
            self._call("ds_begin")
        self.context.cur_epoch_num += 1
        self.context.cur_step_num_in_epoch = 0
        self._call("ds_epoch_begin")

    def step_begin(self):
        if self.callbacks:
            self.context.cur_step_num_in_epoch += 1
            self.context.cur_step_num += 1
            self._call("ds_step_begin", self.context.cur_step_num_in_epoch)

    def step_end(self):
        if self.callbacks:
            self._call("ds_step_end", self.context.cur_step_num_in_epoch)

    def epoch_end(self):
        if self.callbacks:
            self._call("ds_epoch_end")
