"""Writing a file atomically, and cleaning up after writers that died.

The bytes go to a temporary file beside the target, which is fsynced and renamed over the
target: a process killed mid-write leaves the old file (or none) under the target name, never
a torn one. The temporary's name says what it is and who writes it::

    {target name}.mscore-partial.{host}.{pid}.{random}.tmp

(visible, not hidden, so a user who finds one knows where it came from). A writer killed
before the rename leaves it behind; the next write into the same folder removes every such
temporary whose writer is gone -- written on this host by a process that no longer exists.
Temporaries of live processes (an asynchronous save still running) and of other hosts (a
shared file system) are left alone.
"""
from __future__ import annotations

import os
import platform
import re
import tempfile

MARKER = ".mscore-partial."
_SUFFIX = ".tmp"
_NAME = re.compile(r"(?P<target>.+)" + re.escape(MARKER) +
                   r"(?P<host>[A-Za-z0-9_-]+)\.(?P<pid>\d+)\.[A-Za-z0-9_]+" + re.escape(_SUFFIX))


def _read_umask():
    """The process's umask (from /proc where it exists: os.umask can only read by setting)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _host():
    """This host's name as it appears in temporary names (only ``[A-Za-z0-9_-]``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", platform.node() or "localhost")


def temporary_prefix(target_name, pid=None, host=None):
    """The start of the temporary file name for ``target_name`` (a base name) written by
    process ``pid`` (default: this one) on ``host`` (default: this one)."""
    return (f"{target_name}{MARKER}{host if host is not None else _host()}."
            f"{pid if pid is not None else os.getpid()}.")


def _process_exists(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # someone else's process, or we cannot tell: keep its file
    return True


def remove_orphaned_temporaries(directory):
    """Remove the temporaries in ``directory`` left by dead writers of this host; returns
    their names. Nothing else is touched, and a file that cannot be removed is skipped."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    host, removed = _host(), []
    for name in names:
        m = _NAME.fullmatch(name)
        if m is None or m.group("host") != host or _process_exists(int(m.group("pid"))):
            continue
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            continue
        removed.append(name)
    return removed


def _fsync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path, write_fn):
    """Call ``write_fn(file)`` on a temporary file beside ``path``, fsync it, rename it to
    ``path``. On any failure the temporary file is removed and ``path`` is untouched.
    Orphaned temporaries of dead writers in the folder are removed first."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        remove_orphaned_temporaries(directory)
        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(os.path.basename(path)),
                                   suffix=_SUFFIX, dir=directory)
    except OSError as exc:   # name the user's file, not the temporary one beside it
        raise OSError(exc.errno, exc.strerror, path) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            write_fn(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.filename in (tmp, None) and exc.errno:
            raise OSError(exc.errno, exc.strerror, path) from exc
        raise
    _fsync_dir(directory)
