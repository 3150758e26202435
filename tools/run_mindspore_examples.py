"""Run MindSpore's own docstring examples with ``mindspore`` replaced by ``mscore``.

The measure: how many ordinary MindSpore programs run unchanged after the one-word
replacement. The corpus is ``tests/data/mindspore_examples.json`` (made with the real
MindSpore by ``tests/data/make_mindspore_examples.py``; only programs that run there are
recorded, with MindSpore's printed output). Usage, from the repository root with mscore
importable (``source /work/wt/env.sh`` or an installed mscore)::

    python tools/run_mindspore_examples.py                      # numpy backend, summary
    python tools/run_mindspore_examples.py --backend torch --jobs 2
    python tools/run_mindspore_examples.py --only 'nn\\.(Dense|Conv2d)$' --show-failures
    python tools/run_mindspore_examples.py --write              # docs/mindspore-examples.md
    python tools/run_mindspore_examples.py --batch 50           # 50 programs per process

Each program is the recorded source with the word ``mindspore`` replaced by ``mscore`` (plain
text, as a user would edit it), run in its own Python process in an empty scratch directory
with a timeout, the backend chosen by ``MSCORE_BACKEND``. A program *ran* when it exits 0;
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


def render(results, backend, command, corpus):
    """docs/mindspore-examples.md as a string."""
    per_module, totals, groups = summarize(results)
    excluded = corpus.get("excluded_names", {})
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
        f"**Backend {backend}: {totals['ran']} of {totals['programs']} programs ran unchanged "
        f"({_pct(totals['ran'], totals['programs'])}).** Of those, {totals['same']} printed "
        f"the same numbers as MindSpore (rtol {RTOL:g}, atol {ATOL:g}) and "
        f"{totals['none printed']} print no number; the rest differ in printing format or "
        "random draws, or compute something else (not checked here: the oracle tests do "
        "that).",
        "",
        "| module | programs | ran unchanged | rate | same numbers |",
        "|---|---:|---:|---:|---:|",
    ]
    for mod, row in sorted(per_module.items()):
        lines.append(f"| `{mod}` | {row['programs']} | {row['ran']} | "
                     f"{_pct(row['ran'], row['programs'])} | {row['same']} |")
    lines.append(f"| **total** | {totals['programs']} | {totals['ran']} | "
                 f"{_pct(totals['ran'], totals['programs'])} | {totals['same']} |")
    lines += ["", "## Failures by cause", ""]
    if not groups:
        lines.append("None.")
    for key, ids in groups.items():
        lines.append(f"- **{len(ids)}** `{key.replace('`', '')}`: "
                     + ", ".join(f"`{i}`" for i in ids))
    lines += ["", "## Failures, one by one", ""]
    for r in results:
        if r["status"] != "ran":
            cause = r["cause"].replace("|", "\\|").replace("`", "'")[:200]
            lines.append(f"- `{r['id']}`: {cause}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="numpy", help="numpy (default), torch, jax, ...")
    ap.add_argument("--jobs", type=int, default=2, help="programs run at a time (2)")
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
            results = json.load(f)
    elif args.batch:
        results = run_batched(examples, args.backend, args.batch, args.jobs, args.timeout,
                              progress)
    else:
        results = run_all(examples, args.backend, args.jobs, args.timeout, progress)
    print(report(results, args.backend))
    if args.show_failures:
        for r in results:
            if r["status"] != "ran":
                print(f"{r['id']}: {r['cause']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.write:
        command = "python tools/run_mindspore_examples.py --write" + (
            f" --backend {args.backend}" if args.backend != "numpy" else "") + (
            f" --batch {args.batch}" if args.batch else "")
        text = render(results, args.backend, command, corpus)
        with open(DOC + ".tmp", "w") as f:
            f.write(text)
        os.replace(DOC + ".tmp", DOC)
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
