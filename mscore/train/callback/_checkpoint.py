"""``CheckpointConfig`` and ``ModelCheckpoint``: save checkpoints while training."""
from __future__ import annotations

import inspect
import os
import re
import time

from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import check_bool, check_non_negative_int, step_in_epoch

__all__ = ["CheckpointConfig", "ModelCheckpoint"]

_FORMATS = ("ckpt", "safetensors")


class CheckpointConfig:
    """When to save checkpoints and how many to keep.

    Args:
        save_checkpoint_steps (int): save every this many steps (default 1). It takes
            precedence: ``save_checkpoint_seconds`` only counts when this is 0 or None.
        save_checkpoint_seconds (int): save every this many seconds (default 0: off).
        keep_checkpoint_max (int): keep at most this many files, removing the oldest
            (default 5).
        keep_checkpoint_per_n_minutes (int): instead of a maximum, keep one file per this
            many minutes (only when ``keep_checkpoint_max`` is 0 or None).
        integrated_save (bool): MindSpore's parallel option; passed to ``save_checkpoint``.
        async_save (bool): write the file in a background thread.
        saved_network (Cell): save this network instead of the train network.
        append_info (list): extra ``"epoch_num"`` / ``"step_num"`` entries or a dict of
            str -> number/str saved with the parameters.
        format (str): ``"ckpt"`` (MindSpore's protobuf, default) or ``"safetensors"``.

    At least one of the four counts must be non-zero, else ``ValueError``.
    """

    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False,
                 saved_network=None, append_info=None, format="ckpt", **kwargs):  # noqa: A002
        cls = "CheckpointConfig"
        if kwargs:
            raise ValueError(f"For '{cls}', unsupported argument(s) {sorted(kwargs)}.")
        if save_checkpoint_steps is not None:
            check_non_negative_int(save_checkpoint_steps, "save_checkpoint_steps", cls)
        if save_checkpoint_seconds is not None:
            check_non_negative_int(save_checkpoint_seconds, "save_checkpoint_seconds", cls)
        if keep_checkpoint_max is not None:
            check_non_negative_int(keep_checkpoint_max, "keep_checkpoint_max", cls)
        if keep_checkpoint_per_n_minutes is not None:
            check_non_negative_int(keep_checkpoint_per_n_minutes,
                                   "keep_checkpoint_per_n_minutes", cls)
        if saved_network is not None:
            from mscore.nn.cell import Cell
            if not isinstance(saved_network, Cell):
                raise TypeError(f"For '{cls}', the argument 'saved_network' must be a Cell, but "
                                f"got {type(saved_network).__name__}.")
        if not (save_checkpoint_steps or save_checkpoint_seconds or keep_checkpoint_max or
                keep_checkpoint_per_n_minutes):
            raise ValueError(f"For '{cls}', the input arguments 'save_checkpoint_steps', "
                             f"'save_checkpoint_seconds', 'keep_checkpoint_max' and "
                             f"'keep_checkpoint_per_n_minutes' can't be all None or 0.")
        if format not in _FORMATS:
            raise ValueError(f"For '{cls}', the argument 'format' must be one of {_FORMATS}, "
                             f"but got {format!r}.")
        self._save_checkpoint_steps = save_checkpoint_steps
        self._save_checkpoint_seconds = save_checkpoint_seconds
        if self._save_checkpoint_steps and self._save_checkpoint_steps > 0:
            self._save_checkpoint_seconds = None
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        if self._keep_checkpoint_max and self._keep_checkpoint_max > 0:
            self._keep_checkpoint_per_n_minutes = None
        elif not self._keep_checkpoint_per_n_minutes:
            self._keep_checkpoint_max = 1
        self._integrated_save = check_bool(integrated_save, "integrated_save", cls)
        self._async_save = check_bool(async_save, "async_save", cls)
        self._saved_network = saved_network
        self._append_info = _check_append_info(append_info)
        self._format = format

    @property
    def save_checkpoint_steps(self):
        """Steps between saves (None/0: not step based)."""
        return self._save_checkpoint_steps

    @property
    def save_checkpoint_seconds(self):
        """Seconds between saves (None when step based)."""
        return self._save_checkpoint_seconds

    @property
    def keep_checkpoint_max(self):
        """Files kept at most."""
        return self._keep_checkpoint_max

    @property
    def keep_checkpoint_per_n_minutes(self):
        """Keep one file per this many minutes (None when a maximum is used)."""
        return self._keep_checkpoint_per_n_minutes

    @property
    def integrated_save(self):
        """MindSpore's parallel-save flag."""
        return self._integrated_save

    @property
    def async_save(self):
        """Whether files are written in a background thread."""
        return self._async_save

    @property
    def saved_network(self):
        """The network saved instead of the train network, or None."""
        return self._saved_network

    @property
    def append_info(self):
        """Extra entries saved with the parameters."""
        return self._append_info

    @property
    def format(self):  # noqa: A003
        """``"ckpt"`` or ``"safetensors"``."""
        return self._format

    def get_checkpoint_policy(self):
        """The policy as a dict."""
        return {"save_checkpoint_steps": self.save_checkpoint_steps,
                "save_checkpoint_seconds": self.save_checkpoint_seconds,
                "keep_checkpoint_max": self.keep_checkpoint_max,
                "keep_checkpoint_per_n_minutes": self.keep_checkpoint_per_n_minutes,
                "saved_network": self.saved_network}


def _check_append_info(append_info):
    if append_info is None or append_info == []:
        return None
    if not isinstance(append_info, list):
        raise TypeError(f"For 'CheckpointConfig', the argument 'append_info' must be a list, "
                        f"but got {type(append_info).__name__}.")
    out = {}
    for item in append_info:
        if item in ("epoch_num", "step_num"):
            out[item] = 0
        elif isinstance(item, dict):
            for k, v in item.items():
                if not isinstance(k, str) or not isinstance(v, (int, float, str, bool)):
                    raise TypeError("For 'CheckpointConfig', the dict in 'append_info' must map "
                                    "str to int, float, bool or str.")
                out[k] = v
        else:
            raise ValueError(f"For 'CheckpointConfig', 'append_info' elements must be "
                             f"'epoch_num', 'step_num' or a dict, got {item!r}.")
    return out


def _parse_name(prefix, filename, suffix):
    """``(epoch, step)`` of ``{prefix}-{epoch}_{step}{suffix}``, or None."""
    m = re.fullmatch(re.escape(prefix) + r"-(\d+)_(\d+)" + re.escape(suffix), filename)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _unique_prefix(directory, prefix, suffix):
    """MindSpore renames the prefix to ``prefix_N`` when files of that prefix exist already,
    so a new run never overwrites or rotates away an old run's checkpoints."""
    used = -1
    pat = re.compile(re.escape(prefix) + r"(?:_(\d+))?-\d+_\d+" + re.escape(suffix))
    for name in os.listdir(directory):
        m = pat.fullmatch(name)
        if m:
            used = max(used, int(m.group(1)) if m.group(1) else 0)
    return prefix if used < 0 else f"{prefix}_{used + 1}"


class ModelCheckpoint(Callback):
    """Save the train network's parameters (optimizer state included) as
    ``{prefix}-{epoch}_{step}.ckpt`` in ``directory`` by the ``config`` policy, and once
    more at the end of training.

    Each file is written atomically and old files are removed only once the new one is
    complete (for ``async_save`` too: in the writer thread, right after it), so a process
    that dies while saving still leaves its previous checkpoint, and once a save completes
    at most ``keep_checkpoint_max`` files remain.

    Args:
        prefix (str): file name prefix, no ``/`` (default ``"CKP"``). If files of this prefix
            are already in the directory, ``_1``, ``_2``, ... is appended, as in MindSpore.
        directory (str): folder to save in, created if needed (default: current folder).
            In a data-parallel job of several processes each rank saves in its own
            sub-folder ``rank_R`` (call ``mscore.communication.init()`` first).
        config (CheckpointConfig): the policy (default ``CheckpointConfig()``).
    """

    def __init__(self, prefix="CKP", directory=None, config=None):
        super().__init__()
        if not isinstance(prefix, str) or not prefix or "/" in prefix or os.sep in prefix:
            raise ValueError(f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file "
                             f"name is invalid, it must be a non-empty string and does not "
                             f"contain '/', but got {prefix!r}.")
        if directory is not None and not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"For 'ModelCheckpoint', the argument 'directory' must be a path, "
                            f"but got {type(directory).__name__}.")
        if config is None:
            config = CheckpointConfig()
        elif not isinstance(config, CheckpointConfig):
            raise TypeError(f"For 'ModelCheckpoint', the type of argument 'config' should be "
                            f"'CheckpointConfig', but got {type(config).__name__}.")
        self._config = config
        from mscore.communication.management import rank_subdirectory
        self._directory = rank_subdirectory(os.path.abspath(
            os.fspath(directory) if directory is not None else os.getcwd()))
        os.makedirs(self._directory, exist_ok=True)
        self._suffix = "." + config.format
        self._prefix = _unique_prefix(self._directory, prefix, self._suffix)
        self._latest_ckpt_file_name = ""
        self._last_triggered_step = 0
        self._last_time = time.time()
        self._kept_per_minute = []  # (time saved, path) under keep_checkpoint_per_n_minutes
        self._threads = []

    @property
    def latest_ckpt_file_name(self):
        """Path of the newest checkpoint this callback wrote ("" before the first)."""
        return self._latest_ckpt_file_name

    @property
    def directory(self):
        """The folder checkpoints are written to."""
        return self._directory

    @property
    def prefix(self):
        """The file name prefix actually used (maybe with a ``_N`` suffix)."""
        return self._prefix

    def on_train_begin(self, run_context):
        """Remember where the run's step counter starts."""
        cb_params = run_context.original_args()
        self._last_triggered_step = cb_params.get("cur_step_num", 0) or 0
        self._last_time = time.time()

    def on_train_step_end(self, run_context):
        """Save when the policy says so."""
        self._save_ckpt(run_context.original_args())

    def on_train_end(self, run_context):
        """Save the last state (unless this step was just saved) and wait for async writes."""
        self._save_ckpt(run_context.original_args(), force=True)
        self._wait()

    def _due(self, cb_params, force):
        cfg = self._config
        if cfg.save_checkpoint_steps and cfg.save_checkpoint_steps > 0:
            return force or (cb_params.cur_step_num >=
                             self._last_triggered_step + cfg.save_checkpoint_steps)
        if cfg.save_checkpoint_seconds and cfg.save_checkpoint_seconds > 0:
            now = time.time()
            if force or now - self._last_time > cfg.save_checkpoint_seconds:
                self._last_time = now
                return True
            return False
        return force

    def _existing(self):
        found = []
        for name in os.listdir(self._directory):
            key = _parse_name(self._prefix, name, self._suffix)
            if key is not None:
                found.append((key, os.path.join(self._directory, name)))
        found.sort()
        return [p for _, p in found]

    def _rotate(self, newest):
        """Remove old files by the policy, once ``newest`` is complete on disk (never
        before: a save that dies must leave the previous checkpoint)."""
        cfg = self._config
        if cfg.keep_checkpoint_max and cfg.keep_checkpoint_max > 0:
            older = [p for p in self._existing() if p != newest]
            while older and len(older) + 1 > cfg.keep_checkpoint_max:
                _remove(older.pop(0))
        elif cfg.keep_checkpoint_per_n_minutes and cfg.keep_checkpoint_per_n_minutes > 0:
            # as MindSpore: of the older files written in the last n minutes keep only the
            # oldest, so one file per n minutes survives (plus the newest)
            window = cfg.keep_checkpoint_per_n_minutes * 60
            now = time.time()
            recent = sorted((t, p) for t, p in self._kept_per_minute
                            if now - t < window and p != newest)
            for _, p in recent[1:]:
                _remove(p)
            dropped = set(recent[1:])
            self._kept_per_minute = [tp for tp in self._kept_per_minute if tp not in dropped]
            self._kept_per_minute.append((now, newest))

    def _save_ckpt(self, cb_params, force=False):
        if cb_params.cur_step_num == self._last_triggered_step:
            return
        if not self._due(cb_params, force):
            return
        name = (f"{self._prefix}-{cb_params.cur_epoch_num}_{step_in_epoch(cb_params)}"
                f"{self._suffix}")
        path = os.path.join(self._directory, name)
        self._last_triggered_step = cb_params.cur_step_num
        network = self._config.saved_network or cb_params.get("train_network") \
            or cb_params.get("network")
        append = None
        if self._config.append_info is not None:
            append = dict(self._config.append_info)
            if "epoch_num" in append:
                append["epoch_num"] = cb_params.cur_epoch_num
            if "step_num" in append:
                append["step_num"] = cb_params.cur_step_num
        self._write(network, path, append)
        self._latest_ckpt_file_name = path
        cb_params["latest_ckpt_file"] = path
        cb_params["last_save_ckpt_step"] = cb_params.cur_step_num

    def _write(self, network, path, append):
        from mscore.train import serialization
        save = serialization.save_checkpoint
        params = inspect.signature(save).parameters
        kwargs = {}
        if "integrated_save" in params:
            kwargs["integrated_save"] = self._config.integrated_save
        if "async_save" in params:
            kwargs["async_save"] = self._config.async_save
        if append is not None:
            kwargs["append_dict"] = append
        if self._config.format != "ckpt":
            kwargs["format"] = self._config.format
        with serialization._checkpoint.after_checkpoint_written(self._rotate):
            save(network, path, **kwargs)

    def _wait(self):
        from mscore.train import serialization
        waiter = getattr(serialization, "wait_async_save", None)
        if self._config.async_save and callable(waiter):
            waiter()


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
