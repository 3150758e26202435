"""The summary table of a ``bench/gpu_run.sh`` pass, from the JSON files it wrote.

    python bench/gpu_summary.py OUT_DIR

prints Markdown: per model and backend, mscore/native (ratio of the medians of per-round
ratios, bigger is slower) at O0 / O2 / bf16 in PYNATIVE, torch GRAPH_MODE as a speed-up over
native eager (native time / GRAPH_MODE time, bigger is faster), the O2-over-O0 speed-up of
mscore and of native, and the first-call seconds of GRAPH_MODE; then the sections' outcomes
and the conformance kits' counts. Also writes ``summary.json`` next to the inputs.
"""
from __future__ import annotations

import json
import os
import sys

MODELS = (("resnet", "ResNet-18-like b128"), ("gpt-small", "decoder 256/4/256 b32"),
          ("gpt-large", "decoder 1024/8/1024 b16"))
LEVELS = ("O0", "O2", "bf16")


def _load(out, name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError:
        return None


def _fmt(x, suffix=""):
    return "—" if x is None else f"{x:.2f}{suffix}"


def rows(out):
    """One dict per (model, backend) with the numbers the table shows."""
    table = []
    for key, title in MODELS:
        for backend in ("torch", "jax"):
            run = _load(out, f"{key}-{backend}")
            graph = _load(out, f"{key}-{backend}-graph") if backend == "torch" else None
            if run is None and graph is None:
                continue
            row = {"model": title, "backend": backend}
            times = (run or {}).get(backend, {})
            ratios = (run or {}).get(f"{backend}_ratios", {})
            ms_name = "mscore" if backend == "torch" else "mscore GRAPH_MODE"
            for level in LEVELS:
                row[level] = ratios.get(level, {}).get(ms_name)
            for side, name in (("mscore", ms_name), ("native", "native")):
                o0, o2 = times.get("O0", {}).get(name), times.get("O2", {}).get(name)
                row[f"O2/O0 {side}"] = o0 / o2 if o0 and o2 else None
            if graph is not None:
                gtimes = graph.get("torch", {})
                for level in ("O2", "bf16"):
                    t = gtimes.get(level, {})
                    g, n = t.get("mscore GRAPH_MODE"), t.get("native")
                    row[f"graph {level}"] = n / g if g and n else None
                    row[f"graph {level} first call s"] = graph.get(
                        "torch_first_call_s", {}).get(level, {}).get("mscore GRAPH_MODE")
            table.append(row)
    return table


def main(argv=None):
    """Print the summary of the pass in ``argv[0]`` (a directory)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        print("usage: python bench/gpu_summary.py OUT_DIR", file=sys.stderr)
        return 2
    out = argv[0]
    table = rows(out)
    print("| model | backend | O0 | O2 | bf16 | O2/O0 mscore | O2/O0 native | "
          "GRAPH_MODE O2 (x faster than native) | GRAPH_MODE bf16 | first call O2 / bf16 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in table:
        first = " / ".join(_fmt(r.get(f"graph {lv} first call s"), " s")
                           for lv in ("O2", "bf16"))
        print(f"| {r['model']} | {r['backend']} | {_fmt(r['O0'])} | {_fmt(r['O2'])} | "
              f"{_fmt(r['bf16'])} | {_fmt(r['O2/O0 mscore'], 'x')} | "
              f"{_fmt(r['O2/O0 native'], 'x')} | {_fmt(r.get('graph O2'), 'x')} | "
              f"{_fmt(r.get('graph bf16'), 'x')} | {first} |")
    print("\nPYNATIVE columns: mscore/native (bigger is slower); GRAPH_MODE: native eager time "
          "/ mscore GRAPH_MODE time (bigger is faster).")
    status = os.path.join(out, "sections.txt")
    if os.path.exists(status):
        print("\nSections:")
        with open(status) as f:
            for line in f:
                print(f"- {line.strip()}")
    kits = {}
    for b in ("torch", "jax", "cupy"):
        report = _load(out, f"conformance-{b}")
        if report is not None:
            summary = report.get("summary", report.get("totals"))
            kits[b] = summary
            print(f"- conformance {b}: {json.dumps(summary)[:300]}")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"rows": table, "conformance": kits}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
