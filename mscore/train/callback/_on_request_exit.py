"""``OnRequestExit``: stop training or evaluation on a signal and save what was reached."""
from __future__ import annotations

import json
import logging
import os
import signal
import threading

from mscore.context import get_context
from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import check_flag
from mscore.train.serialization import export, load_checkpoint, save_checkpoint

__all__ = ["OnRequestExit"]

logger = logging.getLogger("mscore.callback")
_CONFIG_KEY = "GracefulExit"


def _check_signal(sig):
    if not isinstance(sig, int):
        raise ValueError(f"For 'OnRequestExit', the argument 'sig' must be int, but got "
                         f"{sig!r}.")
    if hasattr(signal, "SIGKILL") and sig == signal.SIGKILL:
        raise ValueError("Not support send exit request by signal SIGKILL.")
    return sig


class OnRequestExit(Callback):
    """Respond to an exit request: on the signal ``sig`` (or when ``config_file`` holds
    ``{"GracefulExit": 1}``) training stops after the current step and evaluation after the
    current batch, and the network reached is saved as
    ``directory/rank_<device_id>/<file_name>_train.ckpt`` / ``.mindir`` (``_eval`` for an
    evaluation). A run that begins and finds that checkpoint loads it first, so a restarted
    job continues where the exit left it.

    Args:
        save_ckpt (bool): save (and restore) the checkpoint.
        save_mindir (bool): export the network as MINDIR (the forward network on the
            current batch's inputs).
        file_name (str): the file name stem.
        directory (str): the parent folder (None: the working directory).
        config_file (str): a JSON file polled at each training step.
        sig (int): the signal that asks for the exit (not SIGKILL); the handler is
            installed when a run begins (main thread only) and the previous handler is put
            back when it ends.
    """

    def __init__(self, save_ckpt=True, save_mindir=True, file_name="Net", directory="./",
                 config_file=None, sig=signal.SIGTERM):
        super().__init__()
        cls = "OnRequestExit"
        self.save_ckpt = check_flag(save_ckpt, "save_ckpt", cls)
        self.save_mindir = check_flag(save_mindir, "save_mindir", cls)
        self.sig = _check_signal(sig)
        self.exit = False
        self.lock = threading.Lock()
        self.save_path = directory
        if config_file is not None and not isinstance(config_file, (str, os.PathLike)):
            raise TypeError(f"For '{cls}', the argument 'config_file' must be a path or None, "
                            f"but got {type(config_file).__name__}.")
        self.key = _CONFIG_KEY
        self.remote_config_file = config_file
        self._previous_handler = None
        self.train_name = self.eval_name = None
        if self.save_ckpt or self.save_mindir:
            self.train_name, self.eval_name = self._save_names(file_name)

    def _save_names(self, file_name):
        base = os.getcwd() if self.save_path is None else self.save_path
        if isinstance(base, os.PathLike):
            base = os.fspath(base)
        if not isinstance(base, str):
            raise TypeError(f"For 'OnRequestExit', the argument 'directory' must be a str, but "
                            f"got {type(base).__name__}.")
        folder = os.path.realpath(os.path.join(base, f"rank_{get_context('device_id')}"))
        os.makedirs(folder, exist_ok=True)
        return (os.path.join(folder, f"{file_name}_train"),
                os.path.join(folder, f"{file_name}_eval"))

    # -- the signal ---------------------------------------------------------------------------
    def _handle_signal(self, signum, frame):
        self.exit = True

    def _install_handler(self):
        if threading.current_thread() is not threading.main_thread():
            logger.warning("OnRequestExit: not in the main thread, so signal %s cannot be "
                           "caught; only config_file can ask for the exit", self.sig)
            return
        if self._previous_handler is None:
            self._previous_handler = signal.signal(self.sig, self._handle_signal)

    def _restore_handler(self):
        if self._previous_handler is not None:
            signal.signal(self.sig, self._previous_handler)
            self._previous_handler = None

    def _config_asks_exit(self):
        path = self.remote_config_file
        if path is None or not os.path.exists(path):
            return False
        try:
            with open(path, encoding="utf-8") as f:
                info = json.load(f)
        except (OSError, ValueError) as exc:
            logger.warning("OnRequestExit: cannot read config_file %r: %s", path, exc)
            return False
        return isinstance(info, dict) and info.get(self.key) == 1

    # -- training -----------------------------------------------------------------------------
    def on_train_begin(self, run_context):
        """Install the signal handler; load the saved checkpoint of an earlier exit."""
        self._install_handler()
        if self.save_ckpt and os.path.isfile(f"{self.train_name}.ckpt"):
            load_checkpoint(f"{self.train_name}.ckpt",
                            net=run_context.original_args().train_network)

    def on_train_step_begin(self, run_context):
        """Poll the config file."""
        with self.lock:
            if not self.exit and self._config_asks_exit():
                self.exit = True

    def on_train_step_end(self, run_context):
        """Stop after this step when an exit was asked for."""
        if self.exit:
            run_context.request_stop()

    def on_train_epoch_end(self, run_context):
        """Stop after this epoch when an exit was asked for."""
        if self.exit:
            run_context.request_stop()

    def on_train_end(self, run_context):
        """Save the train network when an exit was asked for; put the signal handler back."""
        self._restore_handler()
        if not self.exit:
            return
        cb_params = run_context.original_args()
        self._save(cb_params.train_network, cb_params.get("network"),
                   cb_params.get("train_dataset_element"),
                   cb_params.get("loss_fn") is not None, self.train_name)

    # -- evaluation ---------------------------------------------------------------------------
    def on_eval_begin(self, run_context):
        """Install the signal handler; load the checkpoint of an earlier exit."""
        self._install_handler()
        if not self.save_ckpt:
            return
        eval_net = run_context.original_args().eval_network
        for name in (self.eval_name, self.train_name):
            if os.path.isfile(f"{name}.ckpt"):
                load_checkpoint(f"{name}.ckpt", net=eval_net)
                break

    def on_eval_step_end(self, run_context):
        """Stop after this batch when an exit was asked for."""
        if self.exit:
            run_context.request_stop()

    def on_eval_end(self, run_context):
        """Save the eval network when an exit was asked for; put the signal handler back."""
        self._restore_handler()
        if not self.exit:
            return
        cb_params = run_context.original_args()
        self._save(cb_params.eval_network, cb_params.get("network"),
                   cb_params.get("eval_dataset_element"), True, self.eval_name)

    def _save(self, network, forward, inputs, has_label, name):
        if self.save_ckpt:
            save_checkpoint(network, f"{name}.ckpt")
        if self.save_mindir and inputs is not None and forward is not None:
            data = tuple(inputs)[:-1] if has_label and len(inputs) > 1 else tuple(inputs)
            export(forward, *data, file_name=name, file_format="MINDIR")

    def __exit__(self, *err):
        self._restore_handler()
        return None
