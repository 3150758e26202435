"""``ModelCheckpoint``: save checkpoints while training (``CheckpointConfig`` is in
:mod:`._checkpoint_config` and re-exported here)."""
from __future__ import annotations

import logging
import os
import socket
import tempfile
import time

from mscore import _state
from mscore.communication.management import rank_subdirectory
from mscore.train import serialization
from mscore.train.callback._callback import Callback
from mscore.train.callback._checkpoint_config import CheckpointConfig
from mscore.train.callback._checkpoint_manager import CheckpointManager
from mscore.train.callback._utils import step_in_epoch

__all__ = ["CheckpointConfig", "ModelCheckpoint"]

logger = logging.getLogger("mscore.callback")
_BREAKPOINT = "_breakpoint.ckpt"
_CHECKPOINT_SUFFIXES = (".ckpt", ".safetensors")
_CLAIM_SUFFIX = ".mscore-claim"   # ".{prefix}.mscore-claim": a prefix taken by a live run
_CLAIM_ATTEMPTS = 100
_LOCK_NAME = ".mscore-prefix.lock"   # held while a process chooses its prefix
_LOCK_WAIT_S = 30


def unique_prefix(directory, prefix, breakpoints=False):
    """The prefix a new run uses in ``directory``: MindSpore 2.10's rule, so a new run never
    overwrites or rotates away an earlier run's files.

    Among the checkpoint files (``.ckpt`` / ``.safetensors``, ``*_breakpoint.ckpt`` left out;
    with ``breakpoints`` only those) a file counts when its name starts with ``prefix``
    followed by a character that is not a letter. If a ``-`` follows right away the new
    prefix needs at least ``_1``; if the text between that character and the first ``-`` is
    a number N, at least ``_{N+1}``. So with ``net-1_1.ckpt`` and ``net_3-2_2.ckpt`` the new
    prefix is ``net_4``; ``network-1_1.ckpt`` or ``net_x-1_1.ckpt`` leave ``net``.
    """
    suffix_num = 0
    size = len(prefix)
    for filename in os.listdir(directory):
        if filename.endswith(_CLAIM_SUFFIX) and filename.startswith("."):
            if breakpoints or not _claimed_by_another(os.path.join(directory, filename)):
                continue
            filename = filename[1:-len(_CLAIM_SUFFIX)] + "-.ckpt"  # counts as a file of it
        is_breakpoint = filename.endswith(_BREAKPOINT)
        if breakpoints != is_breakpoint:
            continue
        if not breakpoints and os.path.splitext(filename)[1] not in _CHECKPOINT_SUFFIXES:
            continue
        if not filename.startswith(prefix) or len(filename) <= size or \
                filename[size].isalpha():
            continue
        dash = filename.find("-", size)
        if dash == size:
            suffix_num = max(suffix_num, 1)
        elif dash > size:
            number = filename[size + 1:dash]
            if number.isdigit():
                suffix_num = max(suffix_num, int(number) + 1)
    return f"{prefix}_{suffix_num}" if suffix_num else prefix


def _claim_record():
    return f"{socket.gethostname()} {os.getpid()}\n"


def _claimed_by_another(path):
    """Whether the claim file ``path`` is held by another live process. A claim of this
    process does not count (inside one process MindSpore's rule alone decides), nor one whose
    process on this host has ended; an unreadable or foreign-host claim counts."""
    try:
        with open(path, encoding="utf-8") as f:
            host, pid = f.read().split()
        pid = int(pid)
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True
    if host != socket.gethostname():
        return True
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def claim_prefix(directory, prefix):
    """``(prefix, claim file or None)``: :func:`unique_prefix`, made safe against another
    process choosing at the same moment. The name is claimed by creating the hidden file
    ``.{prefix}.mscore-claim`` atomically (a hard link of a complete record, which fails when
    the name exists); a live claim of another process counts as a checkpoint file of its
    prefix, so two trainings starting together in one folder get ``CKP`` and ``CKP_1``. The
    caller removes the claim once its first checkpoint file holds the prefix.

    The choices of processes starting together are taken one at a time under the folder's
    lock file, so they get the names a sequence of runs would (``CKP``, ``CKP_1``, ...):
    choosing at once, a process that saw another's ``CKP_1`` claim would have to give up
    ``CKP`` (MindSpore's rule counts past the highest number). A lock held longer than
    ``_LOCK_WAIT_S`` (another host's run on a shared folder that ended without removing
    it) is not waited for: the claims alone still keep the prefixes apart."""
    record = _claim_record()
    lock = os.path.join(directory, _LOCK_NAME)
    locked = _wait_for_lock(lock, record)
    try:
        for _ in range(_CLAIM_ATTEMPTS):
            candidate = unique_prefix(directory, prefix)
            path = os.path.join(directory, f".{candidate}{_CLAIM_SUFFIX}")
            if _take_claim(path, record) and unique_prefix(directory, prefix) == candidate:
                return candidate, path
            if os.path.exists(path) and not _claimed_by_another(path):
                _remove(path)  # ours after all, but the name was taken meanwhile: choose again
    finally:
        if locked:
            release_claim(lock)
    raise RuntimeError(f"For 'ModelCheckpoint', no free prefix for {prefix!r} could be claimed "
                       f"in {directory} after {_CLAIM_ATTEMPTS} attempts")


def _wait_for_lock(lock, record):
    """Take the lock file ``lock`` (a claim like a prefix's, so one left by an ended process
    is taken over); False when it is still held by another after ``_LOCK_WAIT_S``."""
    deadline = time.monotonic() + _LOCK_WAIT_S
    while not _take_claim(lock, record):
        if time.monotonic() > deadline:
            logger.warning("ModelCheckpoint: %s is held by another process for more than "
                           "%d s; choosing the prefix without it", lock, _LOCK_WAIT_S)
            return False
        time.sleep(0.002)
    return True


def release_claim(path):
    """Remove the claim file ``path`` if this process holds it."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() != _claim_record():
                return
    except OSError:
        return
    _remove(path)


_held_claims = _state.process.prefix_claims   # this process's prefix claims, given up at exit


@_state.finisher("prefix_claims")
def release_held_claims():
    """Give up every prefix claim this process still holds (at exit, after the pending
    checkpoint saves completed, and in ``mscore._state.reset()``)."""
    while _held_claims:
        release_claim(_held_claims.pop())


def _take_claim(path, record):
    """Create the claim file ``path`` holding ``record`` (False when another holds it); a
    claim left by an ended process is replaced."""
    fd, tmp = tempfile.mkstemp(prefix=".mscore-claim-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(record)
        try:
            os.link(tmp, path)
            return True
        except FileExistsError:
            if _claimed_by_another(path):
                return False
            os.replace(tmp, path)  # an ended process's claim, or this process's own
            tmp = None
            with open(path, encoding="utf-8") as f:
                return f.read() == record
        except OSError:  # no hard links here: exclusive creation, then the record
            try:
                with open(path, "x", encoding="utf-8") as f:
                    f.write(record)
                return True
            except FileExistsError:
                return not _claimed_by_another(path)
    finally:
        if tmp is not None:
            _remove(tmp)


def _chg_ckpt_file_name_if_same_exist(directory, prefix, exception=False):
    """MindSpore's name for :func:`unique_prefix` (``exception``: among the
    ``*_breakpoint.ckpt`` files only); a callable ``prefix`` or ``directory`` is decided at
    each step, so ``prefix`` comes back unchanged."""
    if callable(prefix) or callable(directory):
        return prefix
    return unique_prefix(directory, prefix, breakpoints=exception)


def _make_directory(path):
    """``path`` absolute (its ``rank_R`` sub-folder in a job of several processes) and
    created: ``TypeError`` for a non-path, ``ValueError`` for an empty one (MindSpore's
    checks)."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"For 'ModelCheckpoint', the argument 'directory' must be a str path "
                        f"or a callable, but got {type(path).__name__}.")
    if not path.strip():
        raise ValueError("For 'ModelCheckpoint', the argument 'directory' is invalid, it "
                         "should be non-blank.")
    path = rank_subdirectory(os.path.abspath(path))
    os.makedirs(path, exist_ok=True)
    return path


#: The longest ``prefix`` (in UTF-8 bytes): ``-{epoch}_{step}_breakpoint.ckpt`` and a
#: ``_N`` renaming must still fit the 255-byte file-name limit of common file systems.
MAX_PREFIX_BYTES = 200


def _check_prefix(prefix, from_callable=False):
    if isinstance(prefix, str) and "\0" in prefix:
        raise ValueError(f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file "
                         f"name must not contain a NUL character, but got {prefix!r}.")
    if isinstance(prefix, str) and len(prefix.encode("utf-8", "surrogatepass")) > \
            MAX_PREFIX_BYTES:
        raise ValueError(f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file "
                         f"name is {len(prefix.encode('utf-8', 'surrogatepass'))} bytes long; "
                         f"at most {MAX_PREFIX_BYTES} leave room for '-EPOCH_STEP.ckpt' "
                         f"within the 255-byte file-name limit, but got {prefix[:40]!r}...")
    if isinstance(prefix, str) and "/" not in prefix and os.sep not in prefix:
        return prefix
    if from_callable:
        raise ValueError(f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file "
                         f"name is callable, it must return a string that does not contain "
                         f"'/', but got {prefix!r}.")
    raise ValueError(f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file name is "
                     f"invalid, it must be callable or string that does not contain '/', but "
                     f"got {prefix!r}.")


class ModelCheckpoint(Callback):
    """Save the train network's parameters (optimizer state included) as
    ``{prefix}-{epoch}_{step}.ckpt`` in ``directory`` by the ``config`` policy, and once
    more at the end of training (``step`` counts inside the epoch).

    Each file is written atomically and old files are removed only once the new one is
    complete (for ``async_save`` too: in the writer thread, right after it), so a process
    that dies while saving still leaves its previous checkpoint, and once a save completes
    at most ``keep_checkpoint_max`` files remain.

    Args:
        prefix (Union[str, callable]): file name prefix, no ``/`` (default ``"CKP"``). If
            checkpoint files of this prefix are already in the directory, ``_1``, ``_2``, ...
            is appended by MindSpore's rule (:func:`unique_prefix`); a prefix another
            running process has just chosen there counts too, so two trainings sharing a
            folder never share a prefix (:func:`claim_prefix`). A callable gets
            ``cb_params`` at every step and returns the whole file name stem: the file is
            ``{prefix(cb_params)}.ckpt``, without epoch and step, and nothing is renamed.
        directory (Union[str, callable]): folder to save in, created if needed (default: the
            current folder); a callable gets ``cb_params`` at every step and returns it. In
            a data-parallel job of several processes each rank saves in its own sub-folder
            ``rank_R`` of it (call ``mscore.communication.init()`` first).
        config (CheckpointConfig): the policy (default ``CheckpointConfig()``).

    With ``config.exception_save`` an exception that ends training first saves the train
    network as ``{prefix}-{epoch}_{step}_breakpoint.ckpt`` (the prefix renamed among such
    files only).
    """

    def __init__(self, prefix="CKP", directory=None, config=None):
        super().__init__()
        if not callable(prefix):
            _check_prefix(prefix)
        if config is None:
            config = CheckpointConfig()
        elif not isinstance(config, CheckpointConfig):
            raise TypeError(f"For 'ModelCheckpoint', the type of argument 'config' should be "
                            f"'CheckpointConfig', but got {type(config).__name__}.")
        self._config = config
        self._prefix_func = prefix if callable(prefix) else None
        self._directory_func = directory if callable(directory) else None
        self._exception_prefix = prefix
        if self._directory_func is not None:
            self._directory = None
        else:
            self._directory = _make_directory(directory if directory is not None
                                              else os.getcwd())
        self._suffix = "." + config.format
        self._manager = CheckpointManager(config.format)
        self._prefix = prefix
        self._claim = None          # the claim file of the prefix until a file holds it
        if self._prefix_func is None and self._directory_func is None:
            self._prefix, self._claim = claim_prefix(self._directory, prefix)
            _held_claims.append(self._claim)
        append = config.append_dict or {}
        self._append_start = {name: append[name] for name in ("epoch_num", "step_num")
                              if name in append}
        self._latest_ckpt_file_name = ""
        self._last_triggered_step = 0
        self._last_time = time.time()
        self._kept_per_minute = []  # (time saved, path) under keep_checkpoint_per_n_minutes
        self._run = None            # cb_params of the training run in progress
        self._step_seen = (0, 0)    # (epoch, global step) of the last step that began

    @property
    def latest_ckpt_file_name(self):
        """Path of the newest checkpoint this callback wrote ("" before the first)."""
        return self._latest_ckpt_file_name

    @property
    def directory(self):
        """The folder checkpoints are written to (the last one a callable returned)."""
        return self._directory

    @property
    def prefix(self):
        """The file name prefix actually used (maybe with a ``_N`` suffix)."""
        return self._prefix

    # -- the hooks ----------------------------------------------------------------------------
    def on_train_begin(self, run_context):
        """Remember where the run's step counter starts (training only: an error while
        evaluating saves no breakpoint file)."""
        cb_params = run_context.original_args()
        self._run = cb_params
        self._step_seen = (0, 0)
        self._last_triggered_step = cb_params.get("cur_step_num", 0) or 0
        self._last_time = time.time()

    def on_train_step_begin(self, run_context):
        """Note the step (for the name of an exception checkpoint)."""
        cb_params = run_context.original_args()
        self._step_seen = (cb_params.get("cur_epoch_num", 0), cb_params.get("cur_step_num", 0))

    def step_end(self, run_context):
        """Evaluate a callable prefix/directory, then save when the policy says so."""
        cb_params = run_context.original_args()
        self._resolve_names(cb_params)
        self._save_ckpt(cb_params)

    def end(self, run_context):
        """Save the last state (unless this step was just saved) and wait for async writes."""
        self._run = None
        self._save_ckpt(run_context.original_args(), force=True)
        self._wait()

    def on_eval_step_end(self, run_context):
        """Nothing: evaluation changes no parameter, so there is nothing new to save."""

    def on_eval_end(self, run_context):
        """Nothing: evaluation changes no parameter, so there is nothing new to save."""

    def __exit__(self, exc_type, exc, tb):
        run, self._run = self._run, None
        if exc_type is not None and run is not None and self._config.exception_save:
            try:
                self._save_breakpoint(run)
            except Exception as save_error:  # the training error stays the one raised
                logger.error("ModelCheckpoint: the exception_save checkpoint could not be "
                             "written: %s: %s", type(save_error).__name__, save_error)
        self._release_claim()  # the run is over: its files (if any) hold the prefix
        return None

    # -- names --------------------------------------------------------------------------------
    def _resolve_names(self, cb_params):
        if self._prefix_func is not None:
            self._prefix = _check_prefix(self._prefix_func(cb_params), from_callable=True)
        if self._directory_func is not None:
            self._directory = _make_directory(self._directory_func(cb_params))

    def _file_name(self, cb_params):
        if self._prefix_func is not None:
            return f"{self._prefix}{self._suffix}"
        return (f"{self._prefix}-{cb_params.cur_epoch_num}_{step_in_epoch(cb_params)}"
                f"{self._suffix}")

    def _append_values(self, epoch, step):
        """The append_info entries with the counters added to their start values."""
        append = self._config.append_dict
        if append is None:
            return None
        values = dict(append)
        if "epoch_num" in self._append_start:
            values["epoch_num"] = self._append_start["epoch_num"] + epoch
        if "step_num" in self._append_start:
            values["step_num"] = self._append_start["step_num"] + step
        return values

    # -- saving -------------------------------------------------------------------------------
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

    def _rotate(self, newest):
        """Remove old files by the policy, once ``newest`` is complete on disk (never
        before: a save that dies must leave the previous checkpoint)."""
        self._release_claim()  # a complete file holds the prefix now
        cfg = self._config
        if cfg.keep_checkpoint_max and cfg.keep_checkpoint_max > 0:
            self._manager.update_ckpoint_filelist(self._directory, self._prefix)
            while self._manager.ckpoint_num > cfg.keep_checkpoint_max:
                before = self._manager.ckpoint_num
                self._manager.remove_oldest_ckpoint_file()
                if self._manager.ckpoint_num == before:  # could not be removed: stop here
                    break
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
        if self._directory is None:  # a callable directory not evaluated yet
            self._resolve_names(cb_params)
        path = os.path.join(self._directory, self._file_name(cb_params))
        self._last_triggered_step = cb_params.cur_step_num
        network = self._config.saved_network or cb_params.get("train_network") \
            or cb_params.get("network")
        append = self._append_values(cb_params.cur_epoch_num, cb_params.cur_step_num)
        self._write(network, path, append)
        self._latest_ckpt_file_name = path
        cb_params["latest_ckpt_file"] = path
        cb_params["last_save_ckpt_step"] = cb_params.cur_step_num

    def _save_kwargs(self, append):
        cfg = self._config
        kwargs = {"integrated_save": cfg.integrated_save, "async_save": cfg.async_save,
                  "enc_key": cfg.enc_key, "enc_mode": cfg.enc_mode}
        if append is not None:
            kwargs["append_dict"] = append
        return kwargs

    def _write(self, network, path, append):
        kwargs = self._save_kwargs(append)
        kwargs.update(crc_check=self._config.crc_check, format=self._config.format)
        with serialization._checkpoint.after_checkpoint_written(self._rotate):
            serialization.save_checkpoint(network, path, **kwargs)

    def _breakpoint_step(self, cb_params):
        """MindSpore's (epoch, step inside the epoch) at the moment training raised."""
        epoch = cb_params.get("cur_epoch_num", 0) or 0
        seen_epoch, seen_step = self._step_seen
        step = cb_params.get("cur_step_num", 0) or 0
        if step > seen_step or (seen_epoch == epoch and seen_step):
            return epoch, step_in_epoch(cb_params)
        return epoch, 0

    def _save_breakpoint(self, cb_params):
        """The exception_save checkpoint, of the train network, rotation-free."""
        directory = self._directory or os.getcwd()
        base = self._prefix if callable(self._exception_prefix) else self._exception_prefix
        prefix = unique_prefix(directory, base if isinstance(base, str) else "CKP",
                               breakpoints=True)
        epoch, step = self._breakpoint_step(cb_params)
        path = os.path.join(directory, f"{prefix}-{epoch}_{step}{_BREAKPOINT}")
        network = cb_params.get("train_network") or cb_params.get("network")
        serialization.save_checkpoint(network, path,
                                      **self._save_kwargs(self._append_values(epoch, step)))
        self._wait()

    def _release_claim(self):
        claim, self._claim = self._claim, None
        if claim is not None:
            if claim in _held_claims:
                _held_claims.remove(claim)
            release_claim(claim)

    def _wait(self):
        if self._config.async_save:
            serialization.wait_async_save()


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
