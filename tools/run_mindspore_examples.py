"""Run MindSpore's own docstring examples with ``mindspore`` replaced by ``mscore``.

The measure: how many ordinary MindSpore programs run unchanged after the one-word
replacement. The corpus is ``tests/data/mindspore_examples.json`` (made with the real
MindSpore by ``tests/data/make_mindspore_examples.py``; only programs that run there are
recorded, with MindSpore's printed output). Usage, from the repository root with mscore
importable (``source /work/wt/env.sh`` or an installed mscore)::

    python tools/run_mindspore_examples.py                      # every usable backend
    python tools/run_mindspore_examples.py --backend torch --backend jax --jobs 2
    python tools/run_mindspore_examples.py --only 'nn\\.(Dense|Conv2d)$' --show-failures
    python tools/run_mindspore_examples.py --write              # docs/mindspore-examples.md
    python tools/run_mindspore_examples.py --batch 50           # 50 programs per process

Each program is the recorded source with the word ``mindspore`` replaced by ``mscore`` (plain
text, as a user would edit it), run in its own Python process in an empty scratch directory
with a timeout, the backend chosen as a user chooses it, by ``MSCORE_BACKEND`` (by default
every project backend that is installed and usable here, one after the other; a backend that
cannot run, such as cupy without a CUDA device, is listed with its reason). A program *ran*
when it exits 0;
otherwise its cause is the first line of the exception it ended with. Separately, a program
that ran has *the same numbers* when the numbers it prints match MindSpore's printed numbers
one for one at a loose tolerance (``rtol=1e-3, atol=1e-5``); printing formats and random
draws differ between the two, so that figure is informative only.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "tests", "data", "mindspore_examples.json")
DOC = os.path.join(ROOT, "docs", "mindspore-examples.md")
RTOL, ATOL = 1e-3, 1e-5
# The project's backends, in the order the page shows them.
DEFAULT_BACKENDS = ("numpy", "torch", "jax", "cupy")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b",
                     re.I)
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|"
                        r"Iteration|Stop\w*)|[A-Za-z_][\w.]*)(?::\s?(.*))?$")


def load_corpus(path=CORPUS):
    """The recorded corpus: ``{"examples": [{"module", "name", "source", "ms_output", ...}],
    ...}``."""
    with open(path) as f:
        return json.load(f)


def example_id(example):
    """``mindspore.nn.Dense``: the recorded program's module and name."""
    return f"{example['module']}.{example['name']}"


def to_mscore(source):
    """The program as a user would port it: every word ``mindspore`` becomes ``mscore``."""
    return re.sub(r"\bmindspore\b", "mscore", source)


def child_env(backend):
    """The environment of one example's process: the backend chosen, one BLAS thread, the
    project's test switches cleared."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MSCORE_", "PYTEST"))}
    env.update(MSCORE_BACKEND=backend, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONHASHSEED="0", PYTHONWARNINGS="ignore")
    if ROOT not in env.get("PYTHONPATH", "").split(os.pathsep):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    return env


def exception_line(stderr):
    """The first line of the exception a traceback in ``stderr`` ends with ("" when there is
    none)."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")]
    if not starts:
        tail = [line for line in lines if line.strip()]
        return tail[-1].strip() if tail else ""
    for line in lines[starts[-1] + 1:]:
        if line and not line[0].isspace():
            return line.strip()
    return ""


def run_example(example, backend, timeout):
    """``{"id", "module", "status": "ran"|"failed"|"timeout", "cause", "stdout", "seconds"}``
    of one program run with mscore in its own process."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mscore_example_") as scratch:
        path = os.path.join(scratch, "example.py")
        with open(path, "w") as f:
            f.write(to_mscore(example["source"]))
        try:
            proc = subprocess.run([sys.executable, path], cwd=scratch, env=child_env(backend),
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            status, cause, stdout = "timeout", f"timeout after {timeout:g} s", ""
        else:
            stdout = proc.stdout
            if proc.returncode == 0:
                status, cause = "ran", ""
            else:
                status = "failed"
                cause = exception_line(proc.stderr) or f"exit status {proc.returncode}"
    return {"id": example_id(example), "module": example["module"], "status": status,
            "cause": cause, "stdout": stdout,
            "seconds": round(time.perf_counter() - start, 2)}


_BATCH_CHILD = r"""
import contextlib, io, json, os, sys, tempfile
programs = json.load(sys.stdin)
out = []
for source in programs:
    buf = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="mscore_example_") as scratch:
        os.chdir(scratch)
        status, cause = "ran", ""
        try:
            with contextlib.redirect_stdout(buf):
                exec(compile(source, "example.py", "exec"), {"__name__": "__main__"})
        except SystemExit as exc:
            if exc.code not in (None, 0):
                status, cause = "failed", f"SystemExit: {exc.code}"
        except BaseException as exc:
            status = "failed"
            cause = f"{type(exc).__name__}: {str(exc).strip()}".splitlines()[0]
        os.chdir("/")
    out.append({"status": status, "cause": cause, "stdout": buf.getvalue()})
with open(sys.argv[1], "w") as f:
    json.dump(out, f)
"""


def run_batch(examples, backend, timeout=120.0):
    """The results of ``examples`` run one after another in ONE mscore process (each in a
    fresh namespace and scratch directory): much faster than :func:`run_all`, at the price
    of shared process state (context settings, seeds), so the tests use it for a small fixed
    sample and the tool's measure does not."""
    with tempfile.TemporaryDirectory(prefix="mscore_examples_") as scratch:
        out = os.path.join(scratch, "results.json")
        proc = subprocess.run([sys.executable, "-c", _BATCH_CHILD, out],
                              env=child_env(backend),
                              input=json.dumps([to_mscore(e["source"]) for e in examples]),
                              capture_output=True, text=True, timeout=timeout, cwd=scratch)
        if proc.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"the batch process failed ({proc.returncode}): "
                               f"{exception_line(proc.stderr)}")
        with open(out) as f:
            results = json.load(f)
    return [dict(r, id=example_id(e), module=e["module"]) for e, r in zip(examples, results)]


def run_batched(examples, backend, size, jobs=2, timeout=60.0, progress=None):
    """The results of ``examples`` run ``size`` at a time in one process each
    (:func:`run_batch`; ``jobs`` processes at a time), in the corpus order; a batch whose
    process dies is run again one program per process (:func:`run_example`)."""
    chunks = [examples[i:i + size] for i in range(0, len(examples), size)]

    def one_chunk(chunk):
        try:
            return run_batch(chunk, backend, timeout * len(chunk))
        except (RuntimeError, subprocess.TimeoutExpired):
            return [run_example(ex, backend, timeout) for ex in chunk]
    results = []
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        for chunk, done in zip(chunks, pool.map(one_chunk, chunks)):
            for ex, res in zip(chunk, done):
                if res["status"] == "ran":
                    res["numbers"] = same_numbers(res["stdout"], ex.get("ms_output", ""))
                results.append(res)
                if progress:
                    progress(len(results), len(examples), res)
    return results


def numbers(text):
    """The numbers printed in ``text``, in order (``True``/``False`` count as 1/0)."""
    text = re.sub(r"\bTrue\b", "1", re.sub(r"\bFalse\b", "0", text))
    text = re.sub(r"\b(?:mscore|mindspore)\.\w+|\b(?i:float|int|uint|bfloat|complex)\d+\b|"
                  r"\bdtype=\w+|\bshape=[(\[][\d, ]*[)\]]", " ", text)
    return [float(m) for m in _NUMBER.findall(text)]


def same_numbers(ours, theirs):
    """``"same"``, ``"different"`` or ``"none printed"``: the numbers of mscore's output
    against MindSpore's at ``RTOL``/``ATOL``."""
    a, b = numbers(ours), numbers(theirs)
    if not a and not b:
        return "none printed"
    if len(a) != len(b):
        return "different"
    for x, y in zip(a, b):
        if math.isnan(x) and math.isnan(y):
            continue
        if not (x == y or abs(x - y) <= ATOL + RTOL * abs(y)):
            return "different"
    return "same"


def cause_group(cause):
    """The key failures are grouped by: the exception type and its message with numbers and
    quoted values cut to their first 70 characters (``AttributeError: module 'mscore.ops'
    has no attribute 'x'`` keeps the missing name; shapes and values become ``N``)."""
    m = _EXCEPTION.match(cause)
    kind, message = (m.group(1), m.group(2) or "") if m else ("other", cause)
    message = re.sub(r"\d+(?:\.\d+)?", "N", message)
    return f"{kind}: {message[:70]}".rstrip(": ")


def run_all(examples, backend, jobs=2, timeout=60.0, progress=None):
    """The results of ``examples`` on ``backend`` in the corpus order, run ``jobs`` at a
    time."""
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = [pool.submit(run_example, ex, backend, timeout) for ex in examples]
        results = []
        for i, (ex, fut) in enumerate(zip(examples, futures)):
            res = fut.result()
            if res["status"] == "ran":
                res["numbers"] = same_numbers(res["stdout"], ex.get("ms_output", ""))
            results.append(res)
            if progress:
                progress(i + 1, len(examples), res)
    return results


def summarize(results):
    """``(per module counts, totals, cause groups)``; a group is
    ``{key: [ids...]}``, most common first."""
    per_module = {}
    for r in results:
        row = per_module.setdefault(r["module"], {"programs": 0, "ran": 0, "same": 0})
        row["programs"] += 1
        row["ran"] += r["status"] == "ran"
        row["same"] += r.get("numbers") == "same"
    totals = {k: sum(row[k] for row in per_module.values())
              for k in ("programs", "ran", "same")}
    totals["none printed"] = sum(r.get("numbers") == "none printed" for r in results)
    groups = {}
    for r in results:
        if r["status"] != "ran":
            groups.setdefault(cause_group(r["cause"]), []).append(r["id"])
    groups = dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    return per_module, totals, groups


def _pct(part, whole):
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def report(results, backend):
    """The summary printed on the terminal."""
    per_module, totals, groups = summarize(results)
    lines = [f"backend {backend}: {totals['ran']} of {totals['programs']} programs ran "
             f"unchanged ({_pct(totals['ran'], totals['programs'])}); "
             f"{totals['same']} of the {totals['ran']} that ran printed MindSpore's numbers "
             f"({totals['none printed']} print no number)", ""]
    width = max(len(m) for m in per_module) if per_module else 10
    for mod, row in sorted(per_module.items()):
        lines.append(f"  {mod:<{width}}  {row['ran']:4d}/{row['programs']:<4d} "
                     f"{_pct(row['ran'], row['programs']):>7}")
    if groups:
        lines += ["", "failure causes (most common first):"]
        for key, ids in groups.items():
            shown = ", ".join(i.split(".")[-1] for i in ids[:6])
            lines.append(f"  {len(ids):4d}  {key}   [{shown}{', ...' if len(ids) > 6 else ''}]")
    return "\n".join(lines)


def backend_status(names):
    """``{name: reason}`` for the backends of ``names``: ``""`` when the backend is installed
    and its probe says it runs here (a GPU-only backend without a device gets the probe's
    reason), else why not."""
    from mscore.plugin.registry import get_registry
    registry = get_registry()
    status = {}
    for name in names:
        if name not in registry.names():
            status[name] = "not installed"
            continue
        spec = registry.spec(name)
        reason = spec.check() if spec.check is not None else ""
        if not reason and spec.probe is not None:
            available, why, _ = spec.probe()
            reason = "" if available else why
        status[name] = reason
    return status


def _backend_failures(results, backend):
    """The failure sections of one backend: by cause, then one by one."""
    _, _, groups = summarize(results)
    lines = [f"## Failures on {backend}", "", "By cause:", ""]
    if not groups:
        lines.append("None.")
    for key, ids in groups.items():
        lines.append(f"- **{len(ids)}** `{key.replace('`', '')}`: "
                     + ", ".join(f"`{i}`" for i in ids))
    failed = [r for r in results if r["status"] != "ran"]
    if failed:
        lines += ["", "One by one:", ""]
    for r in failed:
        cause = r["cause"].replace("|", "\\|").replace("`", "'")[:200]
        lines.append(f"- `{r['id']}`: {cause}")
    return lines + [""]


def render(by_backend, command, corpus, skipped=None):
    """docs/mindspore-examples.md as a string: ``by_backend`` maps a backend name to its
    results (corpus order); ``skipped`` maps a backend that did not run to the reason."""
    skipped = skipped or {}
    excluded = corpus.get("excluded_names", {})
    backends = list(by_backend)
    summaries = {b: summarize(r) for b, r in by_backend.items()}
    lines = [
        "# MindSpore's own examples, run with mscore",
        "",
        f"<!-- Generated by `{command}`; do not edit by hand. -->",
        "",
        f"Generated {datetime.date.today().isoformat()} with `{command}`.",
        "",
        "The measure: MindSpore programs that run unchanged after replacing the word "
        "`mindspore` by `mscore`. The programs are the `>>>` examples of the docstrings of "
        "MindSpore 2.10's public training-side names, of the public methods of its `Tensor` "
        "and of the names of `mindspore.numpy` and `mindspore.mint` (one program per name, "
        "the Examples section joined; `tests/data/make_mindspore_examples.py` with the real "
        "MindSpore), "
        "kept when they run in MindSpore on the CPU: "
        f"{len(corpus['examples'])} of {corpus.get('programs', '?')} distinct programs. Names "
        "left out before running: " + "; ".join(f"{why}: {n}" for why, n in excluded.items())
        + ". So the corpus measures the names mscore provides (the ops modules: only the "
        "training-side subset); the names it leaves out on purpose are listed with their "
        "reasons in `docs/api-coverage.md`.",
        "",
        "Each program runs on each backend as a user selects one (`MSCORE_BACKEND=<name>`, "
        "the device the CPU); \"same numbers\" counts the programs whose printed numbers "
        f"match MindSpore's one for one (rtol {RTOL:g}, atol {ATOL:g}); the others differ in "
        "printing format or random draws, print no number, or compute something else (not "
        "checked here: the oracle tests do that).",
        "",
    ]
    for b in backends:
        t = summaries[b][1]
        lines.append(f"- **{b}: {t['ran']} of {t['programs']} programs ran unchanged "
                     f"({_pct(t['ran'], t['programs'])})**; {t['same']} printed the same "
                     f"numbers as MindSpore, {t['none printed']} print no number.")
    for b, why in skipped.items():
        lines.append(f"- {b}: not run here ({why}).")
    lines += ["", "| module | programs | " + " | ".join(f"ran on {b}" for b in backends)
              + " | " + " | ".join(f"same numbers ({b})" for b in backends) + " |",
              "|---|---:|" + "---:|" * (2 * len(backends))]
    modules = sorted(set().union(*(summaries[b][0] for b in backends))) if backends else []
    for mod in modules:
        rows = [summaries[b][0].get(mod, {"programs": 0, "ran": 0, "same": 0})
                for b in backends]
        n = max(r["programs"] for r in rows)
        lines.append(f"| `{mod}` | {n} | "
                     + " | ".join(f"{r['ran']} ({_pct(r['ran'], r['programs'])})"
                                  for r in rows)
                     + " | " + " | ".join(str(r["same"]) for r in rows) + " |")
    if backends:
        totals = [summaries[b][1] for b in backends]
        lines.append(f"| **total** | {max(t['programs'] for t in totals)} | "
                     + " | ".join(f"{t['ran']} ({_pct(t['ran'], t['programs'])})"
                                  for t in totals)
                     + " | " + " | ".join(str(t["same"]) for t in totals) + " |")
    lines.append("")
    for b in backends:
        lines += _backend_failures(by_backend[b], b)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", action="append", metavar="NAME",
                    help="a backend to run on (repeatable); default: every project backend "
                         f"installed and usable here ({', '.join(DEFAULT_BACKENDS)})")
    ap.add_argument("--jobs", type=int, default=2, help="processes at a time (2)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per program (60)")
    ap.add_argument("--only", help="regular expression on module.name")
    ap.add_argument("--show-failures", action="store_true",
                    help="print every failure with its cause")
    ap.add_argument("--json", metavar="FILE", help="write every result to FILE")
    ap.add_argument("--write", action="store_true", help=f"regenerate {DOC}")
    ap.add_argument("--batch", type=int, default=0, metavar="N",
                    help="run N programs per process (faster; they share process state such "
                         "as seeds and context settings); 0: one process per program")
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--results", metavar="FILE",
                    help="report on the results --json saved instead of running again")
    args = ap.parse_args(argv)
    corpus = load_corpus(args.corpus)
    examples = corpus["examples"]
    if args.only:
        examples = [e for e in examples if re.search(args.only, example_id(e))]

    def progress(i, n, res):
        if res["status"] != "ran" or i % 50 == 0 or i == n:
            note = f"  {res['cause'][:110]}" if res["status"] != "ran" else ""
            print(f"[{i}/{n}] {res['status']:7} {res['id']}{note}", file=sys.stderr,
                  flush=True)
    if args.results:
        with open(args.results) as f:
            saved = json.load(f)
        by_backend, skipped = saved["backends"], saved.get("skipped", {})
    else:
        wanted = args.backend or list(DEFAULT_BACKENDS)
        status = backend_status(wanted)
        skipped = {b: why for b, why in status.items() if why}
        if args.backend and skipped:
            ap.error("cannot run on " + "; ".join(f"{b}: {why}" for b, why in skipped.items()))
        by_backend = {}
        for backend in (b for b in wanted if not status[b]):
            start = time.perf_counter()
            if args.batch:
                results = run_batched(examples, backend, args.batch, args.jobs, args.timeout,
                                      progress)
            else:
                results = run_all(examples, backend, args.jobs, args.timeout, progress)
            by_backend[backend] = results
            print(f"{backend}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    for backend, results in by_backend.items():
        print(report(results, backend) + "\n")
        if args.show_failures:
            for r in results:
                if r["status"] != "ran":
                    print(f"{r['id']}: {r['cause']}")
    for backend, why in skipped.items():
        print(f"backend {backend}: not run ({why})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"backends": by_backend, "skipped": skipped}, f, indent=1)
    if args.write:
        command = "python tools/run_mindspore_examples.py --write" + "".join(
            f" --backend {b}" for b in (args.backend or ())) + (
            f" --batch {args.batch}" if args.batch else "")
        text = render(by_backend, command, corpus, skipped)
        with open(DOC + ".tmp", "w") as f:
            f.write(text)
        os.replace(DOC + ".tmp", DOC)
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
