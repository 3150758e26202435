"""The ``mscore`` command. Each subcommand is a module with ``main(argv) -> int`` (see
``mscore/commands/__init__.py`` for the error convention); adding one is a line in COMMANDS."""
from __future__ import annotations

import importlib
import sys

from mscore import __version__
from mscore.commands import ArgumentParser, CommandError, command
from mscore.plugin.hints import closest_name

# name -> (module with main(argv), one line for `mscore --help`)
COMMANDS = {
    "backends": ("mscore.commands.backends",
                 "list installed backends and plugins that failed to load"),
    "conformance": ("mscore.conformance.runner",
                    "run the conformance kit against a backend: mscore conformance BACKEND"),
    "demo": ("mscore.examples.amp_digits",
             "train MindSpore's amp tutorial network on handwritten digits (amp O2)"),
    "plot": ("mscore.train.summary.plot",
             "draw the loss curves of every summary run in a folder into a PNG"),
    "compare": ("mscore.compare.cli",
                "train one model on several backends and compare them step by step"),
    "run": ("mscore.launch",
            "start the workers of a data-parallel job (msrun's flags)"),
}

DESCRIPTION = ("mscore: a backend-neutral training core with MindSpore's semantics. "
               "Run 'mscore COMMAND --help' for a command's options.")


def _parser():
    parser = ArgumentParser(prog="mscore", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"mscore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_line) in COMMANDS.items():
        sub.add_parser(name, help=help_line, add_help=False)
    return parser


@command("mscore")
def _dispatch(argv):
    if argv and argv[0] in COMMANDS:
        module = importlib.import_module(COMMANDS[argv[0]][0])
        return module.main(argv[1:])
    if argv and not argv[0].startswith("-"):
        guess = closest_name(argv[0], COMMANDS)
        raise CommandError(f"unknown command {argv[0]!r}"
                           + (f" (did you mean {guess!r}?)" if guess else "")
                           + f"; commands: {', '.join(COMMANDS)}")
    _parser().parse_args(argv)  # --help, or an unknown option
    raise CommandError(f"a command is needed: {', '.join(COMMANDS)} (see 'mscore --help')")


def main(argv=None):
    """Entry point of the ``mscore`` console script; returns the exit status."""
    return _dispatch(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
