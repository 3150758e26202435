"""``mscore conformance BACKEND``: run the kit against one installed backend.

``main(argv) -> int`` is the CLI entry. Exit status: 0 when the run passes (nothing failed,
every declared dtype and capability tested in a full run; skips of what is not declared and
expected failures do not count), 1 when a test failed or a declaration went untested, 2 when
the backend could not run at all (its plugin failed to load, unavailable here, its name
claimed by two plugins, a device it does not declare, or every selected test skipped) and
for a usage error (one line on stderr, see :mod:`mscore.commands`; that includes pytest or
hypothesis missing: the kit needs ``pip install "mscore[conformance]"``). ``--seed N``
replays the generated cases of a run (its seed is printed), ``--thorough`` runs many more of
them.
"""
from __future__ import annotations

import os
import sys

from mscore.commands import USAGE_ERROR, ArgumentParser, CommandError, command  # noqa: F401
from mscore.plugin.hints import unknown_backend_detail
from mscore.plugin.listing import check_before_use, first_line
from mscore.plugin.registry import get_registry

NOT_RUN = 2
EXTRA_HINT = 'pip install "mscore[conformance]"'
#: said after a run without --report: nothing is written unless asked for
NO_REPORT = "no JSON report written (pass --report PATH to write one)"


def build_parser():
    """The argument parser of ``mscore conformance``."""
    p = ArgumentParser(
        prog="mscore conformance",
        description="Run the mscore conformance kit against an installed backend; print its "
                    "matrix, coverage and verdict, and write a JSON report with --report.")
    p.add_argument("backend", help="the backend's name (see 'mscore backends'), a "
                                   "comma-separated list, or 'all'")
    p.add_argument("--report", metavar="PATH", default=None,
                   help="write the JSON report to PATH (default: none; the matrix, coverage "
                        "and verdict are printed either way)")
    p.add_argument("--markdown", metavar="PATH", default=None,
                   help="also write the tolerance table (error / allowed error per feature, "
                        "dtype and device) as Markdown to PATH")
    p.add_argument("--device", metavar="DEVICE", default=None,
                   help="CPU, GPU or GPU:N (default: every declared device usable here)")
    p.add_argument("-k", dest="keyword", metavar="EXPR", default=None,
                   help="only tests matching this pytest -k expression")
    p.add_argument("--xfail", metavar="PATH", action="append", default=[],
                   help="an extra expected-failures JSON file (repeatable)")
    p.add_argument("--plugin", metavar="MODULE", action="append", default=[],
                   help="register a backend plugin module that is not installed (repeatable)")
    p.add_argument("--quick", action="store_true",
                   help="a deterministic sample of the cases of each test (every test and "
                        "declared dtype at least once); does not certify full coverage")
    p.add_argument("--seed", metavar="N", type=int, default=None,
                   help="the seed of the generated cases (default: a new one each run, "
                        "printed at the start and end; pass it to replay a run)")
    p.add_argument("--thorough", action="store_true",
                   help="many more generated examples per generated test (minutes more)")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    p.add_argument("--no-matrix", action="store_true", help="do not print the matrix")
    return p


def pytest_args(ns):
    """The pytest command line for parsed arguments ``ns``."""
    # The kit's test package: the same tests and node ids as ``--pyargs mscore.conformance``.
    args = ["--pyargs", "mscore.conformance.tests", f"--mscore-backend={ns.backend}",
            "-p", "no:cacheprovider",
            # The kit must not depend on the pytest configuration of the current folder.
            "-o", "addopts=", "-o", "python_files=test_*.py", "-o", "python_classes=Test*",
            "-o", "python_functions=test_*", "-o", "xfail_strict=false",
            "-o", "filterwarnings=",
            # The runner imported mscore to check the backend, so pytest cannot rewrite it.
            "-W", "ignore::pytest.PytestAssertRewriteWarning",
            "--tb=short"]
    if not _plugin_autoloaded():
        args += ["-p", "mscore.conformance.pytest_plugin"]
    if ns.report:
        args.append(f"--mscore-report={os.path.abspath(ns.report)}")
    if ns.device:
        args.append(f"--mscore-device={ns.device}")
    if ns.markdown:
        args.append(f"--mscore-markdown={os.path.abspath(ns.markdown)}")
    if ns.keyword:
        args += ["-k", ns.keyword]
    for path in ns.xfail:
        args.append(f"--mscore-xfail={os.path.abspath(path)}")
    for mod in ns.plugin:
        args.append(f"--mscore-plugin={mod}")
    if ns.exitfirst:
        args.append("-x")
    args.append("-v" if ns.verbose else "-q")
    if ns.no_matrix:
        args.append("--mscore-no-matrix")
    if ns.quick:
        args.append("--mscore-quick")
    if ns.seed is not None:
        args.append(f"--mscore-seed={ns.seed}")
    if ns.thorough:
        args.append("--mscore-thorough")
    return args


def _plugin_autoloaded():
    """True when pytest will load the kit's plugin through its ``pytest11`` entry point."""
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    from importlib import metadata
    for ep in metadata.entry_points().select(group="pytest11"):
        if ep.value.split(":")[0] == "mscore.conformance.pytest_plugin":
            return True
    return False


def _plugins_load(ns):
    """Whether the backends and ``--plugin`` modules of ``ns`` load: each plugin is first
    imported (and the chosen backends built) in a child process, within the plugin timeout,
    so one that fails, aborts or hangs is named in one line instead of failing every test
    or taking the kit down; the registry of this process then leaves the broken ones alone.
    With ``all``, a broken plugin is named and the others are tested."""
    names = None if ns.backend == "all" else [n.strip() for n in ns.backend.split(",")
                                               if n.strip()]
    problems, failures = check_before_use(names, ns.plugin)
    registry = get_registry()
    for failure in failures:
        registry.exclude(failure)
    for name, cause in problems.items():
        what = f"--plugin {name!r} failed to load" if name in ns.plugin else \
            f"backend {name!r} cannot be tested: its plugin failed to load"
        print(f"mscore conformance: {what}: {first_line(cause)}", file=sys.stderr)
    return names is None or not problems


@command("mscore conformance")
def main(argv=None) -> int:
    """Run the kit; returns the exit status (0: conformant)."""
    parser = build_parser()
    ns = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    if ns.plugin:
        # Make plugin modules given by path-less name importable from the current folder.
        sys.path.insert(0, os.getcwd())
    if not _plugins_load(ns):
        return NOT_RUN
    try:
        registry = get_registry()
        if ns.plugin:
            import importlib
            for spec in ns.plugin:
                module_name, _, name = spec.partition(":")
                registry.register_plugin(importlib.import_module(module_name),
                                         name or module_name.rsplit(".", 1)[-1])
        installed = registry.names()
    except Exception as exc:
        raise CommandError(f"cannot load the backends: {type(exc).__name__}: {exc}") from None
    if ns.backend != "all":
        names = [n.strip() for n in ns.backend.split(",") if n.strip()]
        collided = [n for n in names if n in registry.collisions]
        for name in collided:
            print(f"mscore conformance: backend {name!r} cannot be tested: "
                  f"{registry.collisions[name]}", file=sys.stderr)
        if collided:
            return NOT_RUN
        missing = [n for n in names if n not in installed]
        if missing:
            raise CommandError("BACKEND: " + "; ".join(unknown_backend_detail(n, installed)
                                                       for n in missing))
    try:
        import pytest
    except ImportError:
        raise CommandError(f"the kit runs on pytest, which is not installed; install it "
                           f"with: {EXTRA_HINT}") from None
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        raise CommandError(f"the kit's generated cases need hypothesis, which is not "
                           f"installed; install it with: {EXTRA_HINT}") from None
    status = int(pytest.main(pytest_args(ns)))
    if ns.report is None and status in (0, 1, NOT_RUN):
        print(f"mscore conformance: {NO_REPORT}")
    return status


if __name__ == "__main__":
    sys.exit(main())
