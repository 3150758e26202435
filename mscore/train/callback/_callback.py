"""Callback base class, RunContext and the internal callback list (MindSpore 2.x interface)."""
from __future__ import annotations

__all__ = ["Callback", "RunContext", "CallbackParam", "CallbackList"]

_STAGES = ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end")


class CallbackParam(dict):
    """The ``cb_params`` object: a dict whose keys are also readable/writable as attributes.

    ``run_context.original_args()`` returns one; ``cb_params.cur_step_num`` and
    ``cb_params["cur_step_num"]`` are the same value, and a callback may add its own fields.
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"cb_params has no field {name!r}") from None

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None


class RunContext:
    """Information about the running train/eval loop, passed to every callback method.

    Args:
        original_args (dict): the ``cb_params`` of the run; returned by :meth:`original_args`.

    A callback stops the loop with :meth:`request_stop`; the loop checks
    :meth:`get_stop_requested` after each step and each epoch.
    """

    def __init__(self, original_args):
        if not isinstance(original_args, dict):
            raise TypeError(f"RunContext: 'original_args' must be a dict, got "
                            f"{type(original_args).__name__}")
        if not isinstance(original_args, CallbackParam):
            original_args = CallbackParam(original_args)
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self):
        """Return the ``cb_params`` object (a dict with attribute access) of the run."""
        return self._original_args

    def request_stop(self):
        """Ask the train/eval loop to stop after the current step."""
        self._stop_requested = True

    def get_stop_requested(self):
        """Return True when a callback called :meth:`request_stop`."""
        return self._stop_requested


class Callback:
    """Base class of callbacks: override the ``on_train_*`` / ``on_eval_*`` methods.

    The default ``on_train_*`` and ``on_eval_*`` methods call the legacy names (``begin``,
    ``epoch_begin``, ``step_begin``, ``step_end``, ``epoch_end``, ``end``), so a callback
    written for MindSpore 1.x works unchanged. A callback is also a context manager that
    :class:`~mscore.train.Model` enters before a run and exits after it.

    Example:
        >>> class PrintInfo(Callback):
        ...     def step_end(self, run_context):
        ...         cb_params = run_context.original_args()
        ...         print(cb_params.cur_epoch_num, cb_params.cur_step_num)
    """

    def __enter__(self):
        return self

    def __exit__(self, *err):
        return None

    # legacy names
    def begin(self, run_context):
        """Called once before the network runs."""

    def epoch_begin(self, run_context):
        """Called before each epoch."""

    def epoch_end(self, run_context):
        """Called after each epoch."""

    def step_begin(self, run_context):
        """Called before each step."""

    def step_end(self, run_context):
        """Called after each step."""

    def end(self, run_context):
        """Called once after the run."""

    # MindSpore 2.x names
    def on_train_begin(self, run_context):
        """Called once before training; defaults to :meth:`begin`."""
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context):
        """Called before each training epoch; defaults to :meth:`epoch_begin`."""
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context):
        """Called after each training epoch; defaults to :meth:`epoch_end`."""
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context):
        """Called before each training step; defaults to :meth:`step_begin`."""
        self.step_begin(run_context)

    def on_train_step_end(self, run_context):
        """Called after each training step; defaults to :meth:`step_end`."""
        self.step_end(run_context)

    def on_train_end(self, run_context):
        """Called once after training; defaults to :meth:`end`."""
        self.end(run_context)

    def on_eval_begin(self, run_context):
        """Called once before evaluation; defaults to :meth:`begin`."""
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context):
        """Called before the evaluation epoch; defaults to :meth:`epoch_begin`."""
        self.epoch_begin(run_context)

    def on_eval_epoch_end(self, run_context):
        """Called after the evaluation epoch; defaults to :meth:`epoch_end`."""
        self.epoch_end(run_context)

    def on_eval_step_begin(self, run_context):
        """Called before each evaluation step; defaults to :meth:`step_begin`."""
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context):
        """Called after each evaluation step; defaults to :meth:`step_end`."""
        self.step_end(run_context)

    def on_eval_end(self, run_context):
        """Called once after evaluation; defaults to :meth:`end`."""
        self.end(run_context)


def _flatten_callbacks(callbacks):
    if callbacks is None:
        return []
    if isinstance(callbacks, Callback):
        return [callbacks]
    if isinstance(callbacks, (list, tuple)):
        out = []
        for cb in callbacks:
            if not isinstance(cb, Callback):
                raise TypeError("When the 'callbacks' is a list, the elements in 'callbacks' "
                                "must be Callback functions.")
            out.append(cb)
        return out
    raise TypeError("The 'callbacks' is not a Callback or a list of Callback.")


class CallbackList(Callback):
    """Calls a list of callbacks in order, and enters/exits them as context managers.

    Used by :class:`~mscore.train.Model`; a user normally passes a plain list instead.
    """

    def __init__(self, callbacks):
        self._callbacks = _flatten_callbacks(callbacks)
        self._entered = []

    @property
    def callbacks(self):
        """The callbacks, in call order."""
        return list(self._callbacks)

    def __enter__(self):
        for cb in self._callbacks:
            cb.__enter__()
            self._entered.append(cb)
        return self

    def __exit__(self, *err):
        while self._entered:
            self._entered.pop().__exit__(*err)
        return None


def _make_dispatch(name):
    def dispatch(self, run_context):
        for cb in self._callbacks:
            getattr(cb, name)(run_context)
    dispatch.__name__ = name
    dispatch.__doc__ = f"Call ``{name}`` on every callback in order."
    return dispatch


_NEW_STYLE = tuple(f"on_{phase}_{stage}" for phase in ("train", "eval") for stage in _STAGES)
for _name in _STAGES + _NEW_STYLE:
    setattr(CallbackList, _name, _make_dispatch(_name))
del _name
