"""``LambdaCallback``: a callback made of plain functions."""
from __future__ import annotations

from mscore.train.callback._callback import Callback

__all__ = ["LambdaCallback"]

_HOOKS = ("on_train_epoch_begin", "on_train_epoch_end", "on_train_step_begin",
          "on_train_step_end", "on_train_begin", "on_train_end", "on_eval_epoch_begin",
          "on_eval_epoch_end", "on_eval_step_begin", "on_eval_step_end", "on_eval_begin",
          "on_eval_end")


def _nothing(run_context):
    return None


class LambdaCallback(Callback):
    """Each argument, when given, is a function ``f(run_context)`` called at that stage of
    ``Model.train`` / ``eval`` / ``fit``; the stages not given do nothing. (In ``Model.fit``,
    as in MindSpore, the evaluation stages of MindSpore's own callbacks, this one included,
    are not called.)"""

    def __init__(self, on_train_epoch_begin=None, on_train_epoch_end=None,
                 on_train_step_begin=None, on_train_step_end=None, on_train_begin=None,
                 on_train_end=None, on_eval_epoch_begin=None, on_eval_epoch_end=None,
                 on_eval_step_begin=None, on_eval_step_end=None, on_eval_begin=None,
                 on_eval_end=None):
        super().__init__()
        given = dict(locals())
        for name in _HOOKS:
            fn = given[name]
            if fn is None:
                fn = _nothing
            elif not callable(fn):
                raise TypeError(f"For 'LambdaCallback', the argument '{name}' must be callable, "
                                f"but got {type(fn).__name__}.")
            setattr(self, name, fn)
