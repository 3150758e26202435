"""The kit's output: the feature x dtype x device matrix, the coverage table, the failures
with their reproduction commands, the verdict, and the JSON report."""
from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import mscore
from mscore.conformance import coverage as cov
from mscore.conformance.harness import SHORT, SUITE_VERSION
from mscore.plugin.backend import FUSED_OPS, KNOWN_CAPABILITIES
from mscore.plugin.registry import get_registry

LEVEL_ORDER = ("contract", "capabilities", "optional", "ops", "errors", "grad", "layers", "amp",
               "training", "checkpoint")
REPORT_FORMAT = "mscore-conformance-report/3"
_SYMBOL = {"passed": "ok", "failed": "FAIL", "error": "ERR", "skipped": "--",
           "xfailed": "xf", "xpassed": "XP"}
_RANK = {"error": 6, "failed": 5, "xpassed": 4, "xfailed": 3, "passed": 2, "skipped": 1}
_DTYPE_ORDER = ["-", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
                "int64", "uint8", "uint16", "uint32", "uint64", "bool"]


def test_entries(state):
    """One dict per kit test that ran (or was skipped): ids, outcome, errors, message."""
    entries = []
    for nodeid, info in state.items.items():
        res = state.results.get(nodeid)
        if res is None or res["outcome"] is None:
            continue  # deselected or not run
        record = info.get("record")
        max_abs, max_rel = record.worst() if record is not None else (None, None)
        closest = record.closest() if record is not None else None
        tol = None if closest is None else {"rtol": closest.tolerance.rtol,
                                            "atol": closest.tolerance.atol}
        entry = {"nodeid": nodeid, "case": info["case"], "feature": info["feature"],
                 "dtype": info["dtype"], "needs": list(info.get("needs", ())),
                 "backend": info["backend"], "device": info["device"],
                 "outcome": res["outcome"], "duration_s": round(res["duration"], 4),
                 "message": res["message"],
                 "max_abs_err": _json_float(max_abs), "max_rel_err": _json_float(max_rel),
                 "comparisons": len(record.comparisons) if record is not None else 0,
                 "tolerance": tol,
                 "tolerance_ratio": None if closest is None else _json_float(closest.ratio),
                 "worst_error": None if closest is None else _json_float(closest.worst_err),
                 "allowed_error": None if closest is None else
                 _json_float(closest.worst_allowed),
                 "closest_check": None if closest is None else closest.what}
        if info.get("expected_failure"):
            entry["expected_failure"] = info["expected_failure"]
        if res["outcome"] in ("failed", "error"):
            entry["repro"] = res.get("repro") or ""
        entries.append(entry)
    return entries


def _json_float(v):
    if v is None:
        return None
    if v != v or v in (float("inf"), float("-inf")):
        return str(v)
    return float(v)


def stale_entries(state):
    """Expected-failure entries that matched no test, or whose tests passed."""
    stale = []
    for backend, entries in state.xfail_entries.items():
        for e in entries:
            outcomes = [state.results.get(n, {}).get("outcome") for n in e["matched"]]
            ran = [o for o in outcomes if o not in (None, "skipped")]
            if not e["matched"]:
                why = "matches no test of the kit"
            elif ran and all(o == "xpassed" for o in ran):
                why = "the test passes now (remove the entry)"
            else:
                continue
            stale.append({"backend": backend, "test": e["test"], "reason": e["reason"],
                          "source": e["source"], "stale_because": why})
    return stale


# -- terminal ----------------------------------------------------------------------------------
def print_matrix(tr, backend, entries):
    """The feature x dtype x device table of one backend, totals and skip reasons."""
    devices = sorted({e["device"] for e in entries})
    dtypes_seen = {e["dtype"] for e in entries}
    dtypes = [d for d in _DTYPE_ORDER if d in dtypes_seen] + \
        sorted(dtypes_seen - set(_DTYPE_ORDER))
    columns = [(dev, dt) for dev in devices for dt in dtypes]
    cells = {}
    for e in entries:
        key = (e["feature"], e["device"], e["dtype"])
        prev = cells.get(key)
        if prev is None or _RANK[e["outcome"]] > _RANK[prev]:
            cells[key] = e["outcome"]

    def sort_key(feature):
        level, _, name = feature.partition(".")
        rank = LEVEL_ORDER.index(level) if level in LEVEL_ORDER else len(LEVEL_ORDER)
        return (rank, level, name)

    features = sorted({e["feature"] for e in entries}, key=sort_key)
    width = max([len(f) for f in features] + [7])
    heads = [f"{dev if len(devices) > 1 else ''}{' ' if len(devices) > 1 else ''}"
             f"{SHORT.get(dt, dt)}" for dev, dt in columns]
    colw = max([len(h) for h in heads] + [4])
    tr.section(f"mscore conformance matrix: {backend} on {', '.join(devices)}")
    tr.write_line("feature".ljust(width) + " " + " ".join(h.rjust(colw) for h in heads))
    for f in features:
        row = []
        for dev, dt in columns:
            outcome = cells.get((f, dev, dt))
            row.append((_SYMBOL[outcome] if outcome else "").rjust(colw))
        tr.write_line(f.ljust(width) + " " + " ".join(row))
    counts = {}
    for e in entries:
        counts[e["outcome"]] = counts.get(e["outcome"], 0) + 1
    tr.write_line("legend: ok passed, FAIL failed, ERR error, -- skipped, xf expected "
                  "failure, XP unexpectedly passed (stale expected failure)")
    tr.write_line("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    reasons = {}
    for e in entries:
        if e["outcome"] == "skipped":
            reasons[e["message"]] = reasons.get(e["message"], 0) + 1
    for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
        tr.write_line(f"skipped {n}: {reason}")


def print_coverage(tr, target, table):
    """What the run certifies for one target: each declared dtype and every capability."""
    tr.section(f"mscore conformance coverage: {target.name} on {target.device}")
    if target.spec is not None and target.spec.varies_by_device(target.device):
        tr.write_line(f"declared for {target.device_target} (its own entry): dtypes "
                      f"{', '.join(target.dtypes)}; capabilities "
                      f"{', '.join(sorted(target.capabilities)) or '-'}")
    rows = [("dtype", name, row) for name, row in table["dtypes"].items()] + \
        [("capability", name, row) for name, row in table["capabilities"].items()] + \
        [("optional", name, row) for name, row in table.get("optional", {}).items()]
    width = max([len(name) for _, name, _ in rows] + [8])
    for kind, name, row in rows:
        counts = ", ".join(f"{k} {v}" for k, v in row.items() if k not in ("status", "why"))
        why = f" ({row['why']})" if "why" in row else ""
        tr.write_line(f"{kind:<10} {name:<{width}}  {row['status']:<12} {counts}{why}")
    if table.get("never_called"):
        tr.write_line(f"backend methods no test called: {', '.join(table['never_called'])}")


def print_failures(tr, entries):
    """One line per failure, each followed by the command that reruns just that test."""
    failed = [e for e in entries if e["outcome"] in ("failed", "error")]
    if not failed:
        return
    tr.section("mscore conformance: failures (one line each, then how to reproduce)")
    for e in failed:
        first = (e["message"] or "").strip().splitlines()
        tr.write_line(f"{e['outcome'].upper()} {e['backend']}/{e['device']} {e['feature']} "
                      f"[{e['dtype']}]: {first[0] if first else ''}")
        tr.write_line(f"    reproduce: {e['repro']}")


def print_verdict(tr, verdict):
    """Why the run does not pass (nothing when it does)."""
    if not verdict.reasons:
        return
    tr.section("mscore conformance: the run does not pass")
    for line in verdict.reasons:
        tr.write_line(line)


# -- JSON ----------------------------------------------------------------------------------
def build_report(state, entries, stale, verdict, coverage, profile):
    """The JSON report: versions, device, capabilities, coverage, verdict, every test."""
    import pytest

    backends = []
    for target in state.targets():
        spec = target.spec
        info = {"name": target.name, "device": target.device,
                "available": not target.unavailable,
                "unavailable_reason": target.unavailable}
        if spec is not None:
            info.update({"version": spec.version, "plugin": spec.plugin,
                         "distribution": spec.distribution,
                         "declared_devices": list(spec.devices),
                         "dtypes": list(target.dtypes),
                         "capabilities": sorted(target.capabilities),
                         "device_specific": spec.varies_by_device(target.device),
                         "fused_ops": _fused_ops(target)})
        info["coverage"] = coverage.get(target.id)
        backends.append(info)
    summary = {}
    for e in entries:
        summary[e["outcome"]] = summary.get(e["outcome"], 0) + 1
    return {
        "format": REPORT_FORMAT,
        "suite_version": SUITE_VERSION,
        "mscore_version": getattr(mscore, "__version__", "unknown"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pytest": pytest.__version__,
        "profile": profile,
        "seed": getattr(state, "seed", None),
        "thorough": bool(getattr(state, "thorough", False)),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(state.started)),
        "duration_s": round(time.time() - state.started, 2),
        "exit_status": int(verdict.exit_status),
        "passed": verdict.passed,
        "verdict": verdict.reasons,
        "summary": summary,
        "backends": backends,
        "stale_expected_failures": stale,
        "tolerance_use": tolerance_use(entries),
        "tests": entries,
    }


def tolerance_use(entries):
    """How close to its tolerance each feature came: one row per backend, device, feature
    and dtype with the largest error / allowed error of its numeric checks (1 is the edge:
    above it a check fails), that error and the error allowed there (``worst_error``,
    ``allowed_error``: absolute, at the element of that ratio), the check that came closest
    and how many tests it covers."""
    rows = {}
    for e in entries:
        ratio = e.get("tolerance_ratio")
        if ratio is None or e["outcome"] not in _RAN_OUTCOMES:
            continue
        value = float(ratio)
        key = (e["backend"], e["device"], e["feature"], e["dtype"])
        row = rows.setdefault(key, {"backend": key[0], "device": key[1], "feature": key[2],
                                    "dtype": key[3], "max_ratio": -1.0, "check": "",
                                    "worst_error": None, "allowed_error": None,
                                    "tests": 0})
        row["tests"] += 1
        if value > row["max_ratio"]:
            row["max_ratio"], row["check"] = value, e.get("closest_check") or ""
            row["worst_error"] = e.get("worst_error")
            row["allowed_error"] = e.get("allowed_error")
    out = sorted(rows.values(), key=lambda r: (r["backend"], r["device"],
                                               _feature_rank(r["feature"]), _dtype_rank(
                                                   r["dtype"])))
    for row in out:
        row["max_ratio"] = _json_float(row["max_ratio"])
    return out


_RAN_OUTCOMES = ("passed", "failed", "xfailed", "xpassed")


def _feature_rank(feature):
    level, _, name = feature.partition(".")
    return (LEVEL_ORDER.index(level) if level in LEVEL_ORDER else len(LEVEL_ORDER), level,
            name)


def _dtype_rank(dtype):
    return (_DTYPE_ORDER.index(dtype) if dtype in _DTYPE_ORDER else len(_DTYPE_ORDER), dtype)


def markdown(report):
    """The report as Markdown: the run's verdict, then per backend and device a table of the
    features (rows) by dtype (columns) whose cells are the largest share of its tolerance a
    numeric check used (error / allowed error; "FAIL" above 1) with that worst error and the
    error allowed there, a project can publish."""
    lines = ["# mscore conformance report", "",
             f"mscore {report.get('mscore_version', '?')}, kit {report.get('suite_version')}"
             f", profile {report.get('profile')}, seed {report.get('seed')}, "
             f"{report.get('started', '')}; "
             f"{'passed' if report.get('passed') else 'does not pass'}.", ""]
    for reason in report.get("verdict") or []:
        lines.append(f"- {reason}")
    if report.get("verdict"):
        lines.append("")
    rows = report.get("tolerance_use") or tolerance_use(report.get("tests", []))
    declared = {(b["name"], b["device"]): b for b in report.get("backends", [])}
    for backend, device in sorted({(r["backend"], r["device"]) for r in rows}):
        mine = [r for r in rows if r["backend"] == backend and r["device"] == device]
        dtypes = sorted({r["dtype"] for r in mine}, key=_dtype_rank)
        info = declared.get((backend, device), {})
        lines += [f"## {backend} {info.get('version', '')} on {device}".rstrip(), "",
                  "Largest error / allowed error of each feature's numeric checks (1.0 is "
                  "the tolerance), then that worst error and the error allowed there.", "",
                  "| feature | " + " | ".join(dtypes) + " |",
                  "|---|" + "---:|" * len(dtypes)]
        cells = {(r["feature"], r["dtype"]): r for r in mine}
        for feature in sorted({r["feature"] for r in mine}, key=_feature_rank):
            row = [_cell(cells.get((feature, d))) for d in dtypes]
            lines.append(f"| {feature} | " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)


def _cell(row):
    """A table cell: the ratio, then "worst / allowed" where the check recorded them."""
    if row is None:
        return ""
    text = _ratio_cell(row.get("max_ratio"))
    worst, allowed = row.get("worst_error"), row.get("allowed_error")
    if worst is None or allowed is None or not text:
        return text
    return f"{text} ({_number(worst)} / {_number(allowed)})"


def _number(value):
    try:
        return f"{float(value):.2g}"
    except (TypeError, ValueError):
        return str(value)


def _ratio_cell(value):
    if value is None:
        return ""
    value = float(value)
    if value > 1.0:
        return "FAIL" if value == float("inf") else f"FAIL {value:.3g}"
    return f"{value:.2g}" if value else "0"


def write_report(path, report):
    """Write ``report`` as JSON to ``path`` in one step (never half a file)."""
    write_text(path, json.dumps(report, indent=1, sort_keys=False))


def _fused_ops(target):
    if target.unavailable:
        return []
    try:
        b = get_registry().get(target.name)
    except Exception as exc:  # the tests already failed on it; the report says why
        return f"backend could not be built: {type(exc).__name__}: {exc}"
    return [n for n in FUSED_OPS if getattr(b, n, None) is not None]


def coverage_tables(state, entries):
    """``{target id: coverage table}`` for every target that could run."""
    tables = {}
    for target in state.targets():
        if target.spec is None or target.unavailable:
            continue
        mine = [e for e in entries if e["backend"] == target.name and
                e["device"] == target.device]
        tables[target.id] = cov.target_coverage(target, mine, KNOWN_CAPABILITIES,
                                                state.call_logs.get(target.id))
    return tables


def main(argv=None):
    """``python -m mscore.conformance.report REPORT.json [--output PATH]``: the JSON report
    as Markdown, on stdout or into PATH. Returns the exit status."""
    import argparse
    import sys
    p = argparse.ArgumentParser(prog="python -m mscore.conformance.report",
                                description="Render a conformance JSON report as Markdown.")
    p.add_argument("report", help="the JSON report of 'mscore conformance'")
    p.add_argument("--output", metavar="PATH", default=None,
                   help="write the Markdown here (default: stdout)")
    ns = p.parse_args(argv)
    try:
        data = json.loads(Path(ns.report).read_text())
    except (OSError, ValueError) as exc:
        print(f"{p.prog}: error: cannot read the report {ns.report!r}: {exc}",
              file=sys.stderr)
        return 2
    if not isinstance(data, dict) or not str(data.get("format", "")).startswith(
            "mscore-conformance-report/"):
        print(f"{p.prog}: error: {ns.report!r} is not an mscore conformance report",
              file=sys.stderr)
        return 2
    text = markdown(data)
    if ns.output:
        write_text(ns.output, text)
    else:
        print(text)
    return 0


def write_text(path, text):
    """Write ``text`` to ``path`` in one step (never half a file)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(text + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    raise SystemExit(main())
