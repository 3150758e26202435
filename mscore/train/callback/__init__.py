"""Callbacks for :class:`mscore.train.Model` (MindSpore 2.x interface).

``Callback`` and ``RunContext`` are always importable; the concrete callbacks load from their
submodules on first use. The private names MindSpore's own tests import from here
(``_InternalCallbackParam``, ``_CallbackManager``, ``_CheckpointManager``,
``_chg_ckpt_file_name_if_same_exist``) are the classes and function mscore itself uses;
``_set_cur_net``/``_checkpoint_cb_for_save_op`` are MindSpore's save-operator hook.
"""
import importlib

from mscore.train.callback._callback import Callback, CallbackList, CallbackParam, RunContext
from mscore.train.callback._checkpoint_manager import (
    CheckpointManager as _CheckpointManager)

_InternalCallbackParam = CallbackParam
_CallbackManager = CallbackList

_LAZY = {
    "LossMonitor": "mscore.train.callback._loss_monitor",
    "TimeMonitor": "mscore.train.callback._time_monitor",
    "ModelCheckpoint": "mscore.train.callback._checkpoint",
    "CheckpointConfig": "mscore.train.callback._checkpoint",
    "EarlyStopping": "mscore.train.callback._early_stop",
    "ReduceLROnPlateau": "mscore.train.callback._lr_plateau",
    "LambdaCallback": "mscore.train.callback._lambda",
    "History": "mscore.train.callback._history",
    "ProgressBar": "mscore.train.callback._progress",
    "BackupAndRestore": "mscore.train.callback._backup_restore",
    "OnRequestExit": "mscore.train.callback._on_request_exit",
    "LearningRateScheduler": "mscore.train.callback._lr_scheduler",
    "SummaryCollector": "mscore.train.summary.collector",
    "_chg_ckpt_file_name_if_same_exist": "mscore.train.callback._checkpoint",
    "_set_cur_net": "mscore.train.callback._save_op",
    "_checkpoint_cb_for_save_op": "mscore.train.callback._save_op",
}

__all__ = ["Callback", "RunContext", "CallbackList", "CallbackParam",
           *(name for name in _LAZY if not name.startswith("_"))]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mscore.train.callback' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})
