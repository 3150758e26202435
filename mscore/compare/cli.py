"""``mscore compare``: train your model on several backends and show that they agree.

Exit status: 0 every backend agrees with the first within tolerance, 1 one drifts, 2 one
cannot run (or the command itself cannot start, or ``--timeout`` ran out), with the reason.
User code that calls ``sys.exit`` (the script, the factory, the dataset, a step) is a backend
that cannot run: agreement is only ever reported for steps that were measured.
"""
from __future__ import annotations

import argparse
import contextlib
import signal
import sys

from mscore.commands import ArgumentParser, CommandError, PluginHangError, build_backend, command
from mscore.compare.engine import compare_backends
from mscore.compare.errors import CompareSetupError


class _OutOfTime(BaseException):
    """Raised by the --timeout alarm; a BaseException so no handler of the user's code (or
    of a backend's step) takes it for a failure of that backend and carries on."""


@contextlib.contextmanager
def _time_limit(seconds):
    """Raise :class:`_OutOfTime` in the main thread after ``seconds`` (None: no limit)."""
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return

    def alarm(signum, frame):
        raise _OutOfTime()
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _parser():
    p = ArgumentParser(
        prog="mscore compare",
        description="Train the model a factory builds on every backend listed (the first is "
                    "the reference), from the same initial weights and batches, and compare "
                    "loss, gradient norm, per-parameter gradients and updates, loss scale and "
                    "overflow flag step by step.",
        epilog="Exit status: 0 agree, 1 drift, 2 a backend cannot run.")
    p.add_argument("factory", metavar="SCRIPT_OR_MODULE:FACTORY",
                   help="a function returning (network, loss_fn, optimizer, dataset) or "
                        "(model, dataset): 'train.py:build' or 'mypkg.models:build'")
    p.add_argument("--backends", required=True,
                   help="comma-separated backends, the reference first: numpy,torch,jax "
                        "(NAME:GPU runs one on another device)")
    p.add_argument("--steps", type=int, default=50, help="optimizer steps (default 50)")
    p.add_argument("--device", default="CPU", choices=("CPU", "GPU", "Ascend"),
                   help="device of the backends without their own (default CPU)")
    p.add_argument("--amp", default=None, choices=("O0", "O1", "O2", "O3"),
                   help="amp level for a 4-tuple factory (default O0; a Model keeps its own)")
    p.add_argument("--mode", default="pynative", choices=("pynative", "graph"))
    p.add_argument("--seed", type=int, default=0, help="mscore.set_seed before each build")
    p.add_argument("--report", metavar="OUT.json", help="write the full report as JSON")
    p.add_argument("--plot", metavar="OUT.png",
                   help="draw the differences against the step (log scale)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="give up after SECONDS (exit 2: nothing was compared to the end)")
    p.add_argument("--bisect", action="store_true",
                   help="when a backend drifts, name the first cell, op and dtype that differ")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show what is running on one line of stderr (default: when stderr "
                        "is a terminal)")
    return p


class _ProgressLine:
    """What ``compare_backends`` is doing, on one line of stderr that each message
    overwrites; :meth:`clear` wipes it before the report prints."""

    def __init__(self, stream):
        self.stream = stream

    def __call__(self, message):
        self.stream.write(f"\r\033[Kmscore compare: {message}")
        self.stream.flush()

    def clear(self):
        self.stream.write("\r\033[K")
        self.stream.flush()


def _build_within_plugin_timeout(backends):
    """Build each backend of ``--backends`` within the plugin timeout (one whose plugin hangs
    is a usage error naming it); any other failure is left to the comparison, which reports
    that backend as unable to run."""
    for name in dict.fromkeys(entry.partition(":")[0].strip() for entry in backends.split(",")):
        if not name:
            continue
        try:
            build_backend(name)
        except PluginHangError as exc:
            raise CommandError(f"--backends: {exc}") from None
        except Exception:  # reported by compare_backends, with the others' results
            pass


@command("mscore compare")
def main(argv=None):
    """Run ``mscore compare``; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.timeout is not None and not args.timeout > 0:
        raise CommandError(f"--timeout: expected a positive number of seconds, got "
                           f"{args.timeout}")
    _build_within_plugin_timeout(args.backends)
    show = sys.stderr.isatty() if args.progress is None else args.progress
    progress = _ProgressLine(sys.stderr) if show else None
    try:
        with _time_limit(args.timeout):
            report = compare_backends(args.factory, args.backends, steps=args.steps,
                                      device_target=args.device, amp_level=args.amp,
                                      mode=args.mode, seed=args.seed, bisect=args.bisect,
                                      progress=progress)
    except (CompareSetupError, TypeError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    except _OutOfTime:
        raise CommandError(f"--timeout: the comparison did not finish within {args.timeout:g} "
                           f"s; no verdict") from None
    finally:
        if progress is not None:
            progress.clear()
    print(report.table(), flush=True)
    for what, path, write in (("report", args.report, report.write_json),
                              ("plot", args.plot, report.plot)):
        if path is None:
            continue
        try:
            write(path)
        except (OSError, ValueError, ImportError) as exc:
            raise CommandError(f"--{what} {path!r}: {type(exc).__name__}: {exc}") from None
        print(f"{what}: {path}")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
