"""``BackupAndRestore``: keep a backup checkpoint during training, restore it on restart."""
from __future__ import annotations

import os

from mscore.train.callback._callback import Callback
from mscore.train.callback._utils import check_bool, check_positive_int
from mscore.train.serialization import load_checkpoint, save_checkpoint

__all__ = ["BackupAndRestore"]

BACKUP_FILE = "backup.ckpt"


def make_directory(path, cls):
    """``path`` made absolute and created: ``TypeError`` for a non-path, ``ValueError`` for
    an empty one (MindSpore's checks)."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"For '{cls}', the path is invalid, the type should be string, but "
                        f"got {type(path).__name__}.")
    if not path.strip():
        raise ValueError(f"For '{cls}', the path is invalid, it should be non-blank.")
    path = os.path.realpath(path)
    os.makedirs(path, exist_ok=True)
    return path


class BackupAndRestore(Callback):
    """Save the train network (with the optimizer state) to ``backup_dir/backup.ckpt`` every
    ``save_freq`` epochs, and load that file into the train network when a training run
    begins and finds it, so a run that was interrupted starts again from the last backup.
    Training only: the epoch counter is not restored (pass ``initial_epoch`` for that).

    Args:
        backup_dir (str): the folder of the backup file (created).
        save_freq (Union['epoch', int]): ``'epoch'`` (every epoch) or every this many epochs.
        delete_checkpoint (bool): remove the backup file when training ends.
    """

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True):
        super().__init__()
        cls = "BackupAndRestore"
        self.backup_file = os.path.join(make_directory(backup_dir, cls), BACKUP_FILE)
        if save_freq == "epoch":
            self.save_freq = 1
        else:
            self.save_freq = check_positive_int(save_freq, "save_freq", cls)
        self.delete_checkpoint = check_bool(delete_checkpoint, "delete_checkpoint", cls)

    def on_train_begin(self, run_context):
        """Load the backup into the train network if there is one."""
        if os.path.exists(self.backup_file):
            load_checkpoint(self.backup_file, net=run_context.original_args().train_network)

    def on_train_epoch_end(self, run_context):
        """Write the backup every ``save_freq`` epochs."""
        cb_params = run_context.original_args()
        if cb_params.cur_epoch_num % self.save_freq == 0:
            save_checkpoint(cb_params.train_network, self.backup_file)

    def on_train_end(self, run_context):
        """Remove the backup when asked to (and when there is one)."""
        if self.delete_checkpoint:
            try:
                os.remove(self.backup_file)
            except FileNotFoundError:
                pass
