"""``mscore backends [--json] [--probe] [--timeout S]``: every installed backend with its
version, devices, dtypes (those it declares, and those of mscore's it leaves out with the
reason its spec gives), capabilities and status, and every plugin that failed to load (an
import error, a hook that raises or is misspelt, a factory that fails, an abort, a hang) with
the reason; such a plugin's row says "failed to load: <the cause's first line>".

The plugins are imported in a child process (:mod:`mscore.plugin.listing`), so one that
crashes or hangs is named instead of taking the command down. Each backend whose plugin's
cheap check passes is built there, so "available" means it can be built; ``--probe`` also
counts each one's devices.
"""
from __future__ import annotations

import json

from mscore.commands import ArgumentParser, command
from mscore.common import dtype as mdt
from mscore.plugin.listing import TIMEOUT_ENV, list_backends

HELP = "list installed backends and plugins that failed to load"
ALL_DTYPES = tuple(d.name for d in mdt.ALL_DTYPES)
NO_REASON = "(no reason given)"
STATUS_WIDTH = 60   # longer reasons are cut in the table (--json has them whole)
CAPABILITIES_WIDTH = 36   # a longer capability list continues on the next line
FAILED = "failed to load"   # the status of a plugin that did not load or build


def _parser():
    p = ArgumentParser(prog="mscore backends", description=HELP[0].upper() + HELP[1:] + ".")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--probe", action="store_true",
                   help="import each array library to count its devices (slower)")
    p.add_argument("--timeout", type=float, default=None,
                   help=f"seconds one plugin may take to import and build (default: "
                        f"${TIMEOUT_ENV}, else 20 to import, 60 to build or with --probe)")
    return p


@command("mscore backends")
def main(argv=None) -> int:
    """List the backends; returns 0."""
    args = _parser().parse_args(argv)
    rows, failures = list_backends(probe=args.probe, timeout=args.timeout)
    for row in rows:
        row["dtypes_left_out"] = _left_out(row)
    if args.json:
        print(json.dumps({"backends": rows, "failures": [
            {"plugin": f.plugin, "reason": f.reason} for f in failures]}, indent=2))
        return 0
    headers = ("name", "version", "devices", "dtypes", "capabilities", "status")
    table = [[(h,) for h in headers]] + [
        [(r["name"],), (_short_version(r["version"]),), (",".join(r["devices"]) or "-",),
         (_dtypes_summary(r["dtypes"]) if not r["status"].startswith(FAILED) else "-",),
         _wrapped(r["capabilities"]), (_cut(r["status"]),)]
        for r in rows]
    widths = [max(len(line) for row in table for line in row[i]) for i in range(len(headers))]
    for i, row in enumerate(table):
        for k in range(max(len(cell) for cell in row)):   # a wrapped cell continues below
            print("  ".join((cell[k] if k < len(cell) else "").ljust(w)
                            for cell, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
        else:
            for line in _left_out_lines(rows[i - 1]["dtypes_left_out"]):
                print(line)
            for target, entry in rows[i - 1].get("per_device", {}).items():
                print(f"  on {target}: dtypes {_dtypes_summary(entry['dtypes'])}; "
                      f"capabilities {','.join(entry['capabilities']) or '-'}")
    if failures:
        print("\nplugins that failed to load:")
        for f in failures:
            print(f"  {f.plugin}: {f.reason}")
    return 0


def _left_out(row):
    """``{dtype name: reason}`` of every mscore dtype the backend of ``row`` does not declare
    (the reason its spec gives, else ""); nothing for a plugin that failed to load."""
    if row["status"].startswith(FAILED):
        return {}
    reasons = row.get("undeclared_dtypes", {})
    return {d: reasons.get(d, "") for d in ALL_DTYPES if d not in row["dtypes"]}


def _left_out_lines(left_out):
    """The lines under a backend's row naming the dtypes it leaves out, one per reason."""
    by_reason = {}
    for name, reason in left_out.items():
        by_reason.setdefault(reason, []).append(name)
    return [f"  leaves out {','.join(names)}: {reason}" if reason else
            f"  leaves out {','.join(names)} {NO_REASON}" for reason, names in by_reason.items()]


def _short_version(version):
    return "-" if version in ("", "not installed") else version


def _dtypes_summary(dtypes):
    """"all", or the missing ones ("no bf16"), or the declared ones when they are fewer."""
    missing = [d for d in ALL_DTYPES if d not in dtypes]
    if not missing:
        return "all"
    if len(missing) <= len(dtypes):
        return "no " + ",".join(_short_dtype(d) for d in missing)
    return ",".join(_short_dtype(d) for d in dtypes)


def _wrapped(capabilities):
    """The comma-joined capability names as lines of at most ``CAPABILITIES_WIDTH``
    characters (a name is never split), or ``("-",)``."""
    lines = []
    for name in capabilities:
        if lines and len(lines[-1]) + 1 + len(name) <= CAPABILITIES_WIDTH:
            lines[-1] += "," + name
        else:
            if lines:
                lines[-1] += ","
            lines.append(name)
    return tuple(lines) or ("-",)


def _cut(text):
    return text if len(text) <= STATUS_WIDTH else text[:STATUS_WIDTH - 3] + "..."


def _short_dtype(name):
    return {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
            "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
            "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool"}.get(name, name)
