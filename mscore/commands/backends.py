"""``mscore backends [--json]``: every installed backend with its version, devices, dtypes,
capabilities and status, and every plugin that failed to load with the reason."""
from __future__ import annotations

import json

from mscore.commands import ArgumentParser, command

HELP = "list installed backends and plugins that failed to load"


def _parser():
    p = ArgumentParser(prog="mscore backends", description=HELP[0].upper() + HELP[1:] + ".")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    return p


@command("mscore backends")
def main(argv=None) -> int:
    """List the backends; returns 0."""
    args = _parser().parse_args(argv)
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
        else:
            for target, entry in rows[i - 1].get("per_device", {}).items():
                print(f"  on {target}: dtypes "
                      f"{','.join(_short_dtype(d) for d in entry['dtypes'])}; capabilities "
                      f"{','.join(entry['capabilities']) or '-'}")
    if reg.failures:
        print("\nplugins that failed to load:")
        for f in reg.failures:
            print(f"  {f.plugin}: {f.reason}")
    return 0


def _short_dtype(name):
    return {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
            "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
            "bool": "bool"}.get(name, name)
