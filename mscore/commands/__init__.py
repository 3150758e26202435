"""What every ``mscore`` subcommand shares: one error type, one way to report it, and the
backend choice with its source.

A subcommand is a module with ``main(argv) -> int`` decorated with :func:`command`, listed in
``mscore/cli.py``'s ``COMMANDS``. Inside it, a user's mistake is ``raise CommandError(...)``
(or an argument error of :class:`ArgumentParser`): the command prints one line,
``mscore NAME: error: MESSAGE``, and exits with status 2, whether it was started from the
console script or called as ``module.main(argv)``. A missing optional dependency (scikit-learn
for the demo, matplotlib for a plot, ...) is reported the same way, as the line that says
which extra of mscore installs it.
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import threading
import warnings

from mscore._optional import missing_dependency_hint
from mscore.context import ENV_SOURCE
import mscore as ms
from mscore.plugin.listing import TIMEOUT_ENV, plugin_timeout
from mscore.plugin.registry import (BackendLoadError, BackendUnavailableError,
                                    UnknownBackendError, get_registry)

USAGE_ERROR = 2


class CommandError(Exception):
    """A user error of a command (bad argument, unknown backend, unreadable input): reported
    as one line naming where the bad value came from, exit status 2."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with its errors raised as :class:`CommandError` (one line, no usage dump)."""

    def error(self, message):
        """Report an argument error as one line."""
        raise CommandError(f"{message} (see '{self.prog} --help')")


# The status of a process that SIGPIPE ended (128 + 13), which a shell reports for `cmd | head`.
BROKEN_PIPE = 141


def command(prog):
    """Decorate a subcommand's ``main(argv) -> int``: a :class:`CommandError` becomes one line
    on stderr, ``PROG: error: MESSAGE``, and the status 2; so is a missing optional
    dependency (with the extra that installs it); Ctrl-C is one line and 130; output into a
    pipe whose reader has gone is dropped quietly, status 141."""
    def decorate(main):
        @functools.wraps(main)
        def run(argv=None):
            try:
                return main(argv)
            except CommandError as exc:
                print(f"{prog}: error: {exc}", file=sys.stderr)
                return USAGE_ERROR
            except ImportError as exc:
                hint = missing_dependency_hint(exc)
                if hint is None:
                    raise
                print(f"{prog}: error: {hint}", file=sys.stderr)
                return USAGE_ERROR
            except KeyboardInterrupt:
                print(f"{prog}: interrupted", file=sys.stderr)
                return 130
            except BrokenPipeError:
                # The reader went away (`mscore backends | head`): stop quietly, and point
                # stdout at /dev/null so that the flush at exit does not fail again.
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                return BROKEN_PIPE
        return run
    return decorate


def backend_choice(value, option="--backend"):
    """``(name, source)`` of the backend a command should use: the command-line ``option``
    when given, else the ``MSCORE_BACKEND`` environment variable, else ``(None, None)`` (the
    built-in default)."""
    if value is not None:
        return value, option
    env = os.environ.get("MSCORE_BACKEND")
    if env:
        return env, ENV_SOURCE
    return None, None


class PluginHangError(BackendLoadError):
    """Importing or building a backend did not finish within the plugin timeout."""


def within_plugin_timeout(name, load, timeout=None):
    """``load()`` (which imports or builds backend ``name``) within ``timeout`` seconds
    (default: ``$MSCORE_PLUGIN_TIMEOUT``, else 60), waiting in a way Ctrl-C interrupts;
    returns what it returns, raises what it raises, or
    :class:`PluginHangError` when it did not finish in time (it is left behind in a daemon
    thread: a command ends after that). The warnings of a plugin of
    that name that failed are dropped: the error says the same."""
    timeout = plugin_timeout(building=True) if timeout is None else timeout
    outcome = {}

    def run():
        try:
            outcome["value"] = load()
        except BaseException as exc:  # handed to the waiting thread as it is
            outcome["error"] = exc

    worker = threading.Thread(target=run, name=f"mscore-load-{name}", daemon=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        worker.start()
        worker.join(timeout)
    own = (f"mscore plugin {name!r}", f"mscore plugin '{name}@")
    for w in caught:
        if not str(w.message).startswith(own):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if worker.is_alive():
        raise PluginHangError(name, f"importing or building it did not finish within "
                                     f"{timeout:g} s (hung?); set {TIMEOUT_ENV} to wait "
                                     f"longer")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def build_backend(name, timeout=None):
    """The built backend ``name`` (:func:`within_plugin_timeout` of the registry's build)."""
    return within_plugin_timeout(name, lambda: get_registry().get(name), timeout)


def backend_spec(name, source, timeout=None):
    """The spec of backend ``name`` (its plugin imported within the plugin timeout); a plugin
    that failed to load is a :class:`CommandError` naming ``source``; an unknown name is
    the registry's ``UnknownBackendError`` (a ValueError)."""
    try:
        return within_plugin_timeout(name, lambda: get_registry().spec(name), timeout)
    except BackendUnavailableError as exc:
        raise CommandError(f"{source}: {exc}") from None


def select_backend(name, source, device_target=None, device_source="--device-target",
                   **context):
    """``mscore.set_context(backend=name, device_target=..., **context)``, the backend built
    first by :func:`build_backend` (bounded, interruptible); a name that is not installed, a
    plugin that failed to load, a backend that cannot run here or a bad device is a
    :class:`CommandError` naming where the value came from (``source``,
    ``device_source``)."""
    if name is not None:
        context["backend"] = name
    if device_target is not None:
        context["device_target"] = device_target
    try:
        if name is not None:
            build_backend(name)
        ms.set_context(**context)
        # The default backend is built on first use: build it here, so that a device it
        # cannot use is reported now, as a usage error, not as a traceback later.
        return ms.get_context("backend")
    except UnknownBackendError as exc:
        raise CommandError(str(exc.with_source(source))) from None
    except BackendUnavailableError as exc:
        raise CommandError(f"{source}: {exc}") from None
    except (ValueError, TypeError) as exc:
        where = device_source if device_target is not None else "context"
        raise CommandError(f"{where}: {exc}") from None
