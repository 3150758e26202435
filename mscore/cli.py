"""The ``mscore`` command: ``backends``, ``conformance``, ``demo``, ``plot``, ``compare``,
``run``."""
from __future__ import annotations

import argparse
import json
import sys


def _cmd_backends(args):
    from mscore.plugin.registry import get_registry
    reg = get_registry()
    rows = []
    for name in reg.names():
        try:
            rows.append(reg.describe(name))
        except Exception as exc:  # a probe that blows up is reported, not fatal
            rows.append({"name": name, "version": "?", "plugin": "?", "devices": [],
                         "dtypes": [], "capabilities": [], "status": f"error: {exc}"})
    if args.json:
        failures = [{"plugin": f.plugin, "reason": f.reason} for f in reg.failures]
        print(json.dumps({"backends": rows, "failures": failures}, indent=2))
        return 0
    headers = ("name", "version", "devices", "dtypes", "capabilities", "status")
    table = [headers] + [(r["name"], r["version"], ",".join(r["devices"]) or "-",
                          ",".join(_short_dtype(d) for d in r["dtypes"]),
                          ",".join(r["capabilities"]) or "-", r["status"]) for r in rows]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(headers))]
    for i, row in enumerate(table):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    if reg.failures:
        print("\nplugins that failed to load:")
        for f in reg.failures:
            print(f"  {f.plugin}: {f.reason}")
    return 0


def _short_dtype(name):
    return {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
            "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
            "bool": "bool"}.get(name, name)


def _cmd_conformance(argv):
    from mscore.conformance.runner import main as run
    return run(argv)


def _cmd_demo(argv):
    from mscore.examples.amp_digits import main as demo
    return demo(argv)


def _cmd_plot(argv):
    from mscore.train.summary.plot import main as plot
    return plot(argv)


def _cmd_compare(argv):
    from mscore.compare.cli import main as compare
    return compare(argv)


def _cmd_run(argv):
    from mscore.launch import main as run
    return run(argv)


def main(argv=None):
    """Entry point of the ``mscore`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="mscore", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("backends", help="list installed backends and plugins that failed")
    b.add_argument("--json", action="store_true", help="machine-readable output")
    sub.add_parser("conformance", help="run the conformance kit: mscore conformance BACKEND",
                   add_help=False)
    sub.add_parser("demo", help="train the seed-004 network on digits with amp O2",
                   add_help=False)
    sub.add_parser("plot", help="draw loss/learning-rate curves of a summary dir",
                   add_help=False)
    sub.add_parser("compare", help="train one model on several backends and compare them "
                   "step by step", add_help=False)
    sub.add_parser("run", help="start the workers of a data-parallel job (msrun's flags)",
                   add_help=False)
    if argv and argv[0] in ("conformance", "demo", "plot", "compare", "run"):
        handler = {"conformance": _cmd_conformance, "demo": _cmd_demo, "plot": _cmd_plot,
                   "compare": _cmd_compare, "run": _cmd_run}
        return handler[argv[0]](argv[1:])
    args = parser.parse_args(argv)
    return _cmd_backends(args)


if __name__ == "__main__":
    sys.exit(main())
