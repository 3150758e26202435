"""The checkpoint files of one prefix in one folder: which there are, and removing the oldest
(MindSpore's ``CheckpointManager``; :class:`ModelCheckpoint` rotates with it)."""
from __future__ import annotations

import logging
import os
import re
import stat

__all__ = ["CheckpointManager"]

logger = logging.getLogger("mscore.callback")


def _age_key(path):
    """Oldest first: by modification time, then by the numbers in the name (file times
    are coarse, so two files written in one tick keep their epoch/step order)."""
    name = os.path.basename(path)
    try:
        mtime = os.stat(path).st_mtime_ns
    except FileNotFoundError:  # removed by another process: it goes first
        mtime = -1
    return mtime, [int(n) for n in re.findall(r"\d+", name)], name


def _mtime(path):
    """The modification time of ``path`` in seconds; -inf for a file already removed."""
    try:
        return os.path.getmtime(path)
    except FileNotFoundError:
        return float("-inf")


class CheckpointManager:
    """Tracks the checkpoint files ``{prefix}-<digits and marks>.{format}`` of a folder.

    Args:
        format (str): the file suffix without the dot, ``"ckpt"`` (default) or
            ``"safetensors"``.

    :meth:`update_ckpoint_filelist` scans a folder; :meth:`remove_oldest_ckpoint_file` and
    :meth:`keep_one_ckpoint_per_minutes` delete files from disk and from the list.
    """

    def __init__(self, format="ckpt"):  # pylint: disable=redefined-builtin
        self._ckpoint_filelist = []
        self._format = format

    @property
    def ckpoint_filelist(self):
        """The paths of the checkpoint files found by the last scan (minus those removed)."""
        return self._ckpoint_filelist

    @property
    def ckpoint_num(self):
        """How many checkpoint files :attr:`ckpoint_filelist` holds."""
        return len(self._ckpoint_filelist)

    def update_ckpoint_filelist(self, directory, prefix):
        """Rescan ``directory``: a file counts when its name is ``prefix``, ``-``, then no
        letter up to the ``.{format}`` suffix (``net-1_2.ckpt`` counts for ``net``;
        ``net_1-1_2.ckpt`` and ``net-best.ckpt`` do not)."""
        suffix = f".{self._format}"
        found = []
        for filename in os.listdir(directory):
            if os.path.splitext(filename)[1] != suffix or not filename.startswith(prefix + "-"):
                continue
            middle = filename[len(prefix):-len(suffix)]
            if not any(char.isalpha() for char in middle):
                found.append(os.path.join(directory, filename))
        self._ckpoint_filelist = found

    def remove_ckpoint_file(self, file_name):
        """Delete ``file_name`` from disk and from the list; a failure is logged, not raised."""
        try:
            os.chmod(file_name, stat.S_IWRITE)
            os.remove(file_name)
            self._ckpoint_filelist.remove(file_name)
        except FileNotFoundError:  # another process removed it: it is gone all the same
            if file_name in self._ckpoint_filelist:
                self._ckpoint_filelist.remove(file_name)
        except OSError:
            logger.warning("OSError, failed to remove the older ckpt file %s.", file_name)
        except ValueError:
            logger.warning("ValueError, failed to remove the older ckpt file %s.", file_name)

    def remove_oldest_ckpoint_file(self):
        """Delete the least recently written file of the list."""
        self.remove_ckpoint_file(min(self._ckpoint_filelist, key=_age_key))

    def keep_one_ckpoint_per_minutes(self, minutes, cur_time):
        """Of the files written less than ``minutes`` before ``cur_time`` (seconds since the
        epoch) keep only the oldest; delete the others."""
        recent = [path for path in self._ckpoint_filelist
                  if cur_time - _mtime(path) < 60 * minutes]
        if not recent:
            return
        keep = min(recent, key=_age_key)
        for path in recent:
            if path != keep:
                self.remove_ckpoint_file(path)
