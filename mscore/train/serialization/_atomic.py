"""Writing a file atomically, and cleaning up after writers that died.

The bytes go to a temporary file beside the target, which is fsynced and renamed over the
target: a process killed mid-write leaves the old file (or none) under the target name, never
a torn one. The temporary's name says what it is and who writes it, and stays short
(about 45 bytes) so that any target name the file system allows can be written::

    mscore-partial.{host hash}.{pid}.{random}.tmp

(visible, not hidden, so a user who finds one knows where it came from; the host hash is
the first 8 hex digits of the SHA-1 of the host name). Temporaries of the older, longer
form ``{target name}.mscore-partial.{host}.{pid}.{random}.tmp`` are cleaned up alike. Errors
name the target path the caller gave, never the temporary. A writer killed
before the rename leaves it behind; the next write into the same folder removes every such
temporary whose writer is gone -- written on this host by a process that no longer exists.
Temporaries of live processes (an asynchronous save still running) and of other hosts (a
shared file system) are left alone.
"""
from __future__ import annotations

import hashlib
import os
import platform
import re
import tempfile

MARKER = "mscore-partial."
_SUFFIX = ".tmp"
_NAME = re.compile(re.escape(MARKER) +
                   r"(?P<host>[0-9a-f]{8})\.(?P<pid>\d+)\.[A-Za-z0-9_]+" + re.escape(_SUFFIX))
_OLD_NAME = re.compile(r"(?P<target>.+)\." + re.escape(MARKER) +
                       r"(?P<host>[A-Za-z0-9_-]+)\.(?P<pid>\d+)\.[A-Za-z0-9_]+" +
                       re.escape(_SUFFIX))


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


def _old_host():
    """This host's name as the older temporary names hold it (only ``[A-Za-z0-9_-]``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", platform.node() or "localhost")


def _host():
    """This host as temporary names hold it: 8 hex digits of its name's SHA-1."""
    return hashlib.sha1((platform.node() or "localhost").encode("utf-8", "replace")) \
        .hexdigest()[:8]


def temporary_prefix(pid=None, host=None):
    """The start of the name of a temporary file written by process ``pid`` (default: this
    one) on ``host`` (a host hash; default: this host's)."""
    return (f"{MARKER}{host if host is not None else _host()}."
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
    hosts, removed = {_NAME: _host(), _OLD_NAME: _old_host()}, []
    for name in names:
        m = _NAME.fullmatch(name) or _OLD_NAME.fullmatch(name)
        if m is None or m.group("host") != hosts[m.re] or \
                _process_exists(int(m.group("pid"))):
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
    ``path``. On any failure the temporary file is removed and ``path`` is untouched; an
    ``OSError`` names ``path``. Orphaned temporaries of dead writers in the folder are
    removed first."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        os.makedirs(directory, exist_ok=True)
        remove_orphaned_temporaries(directory)
        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(), suffix=_SUFFIX, dir=directory)
        with os.fdopen(fd, "wb") as f:
            write_fn(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(exc, OSError) and exc.errno is not None:
            raise type(exc)(exc.errno, exc.strerror, path) from None
        raise
    _fsync_dir(directory)
