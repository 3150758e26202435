"""Record MindSpore 2.10's docstring examples that run, as a corpus of MindSpore programs.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    /tmp/ms/bin/python tests/data/make_mindspore_examples.py            # ~30 min on 2 cores
    /tmp/ms/bin/python tests/data/make_mindspore_examples.py --jobs 2 --timeout 90

It writes ``tests/data/mindspore_examples.json``. For every public name of the training-side
modules captured in ``tools/data/mindspore-2.10-api.json`` (the ops modules only for the
names mscore implements, ``TRAINING_OPS``), minus the names the coverage rules list as absent
with a reason (the generated table ``docs/api-coverage.md``), it joins the ``>>>`` examples of the
docstring's Examples section into one program (``doctest.DocTestParser``), runs it with
MindSpore on the CPU in a scratch directory (one process per program, with a timeout), and
keeps the programs that exit 0, with MindSpore's printed output. A program shared by several
names (the same class re-exported by several modules) is kept once, under the first module
in ``MODULE_ORDER``, with the other places in ``also``. ``tools/run_mindspore_examples.py``
runs the corpus with ``mindspore`` replaced by ``mscore``.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import doctest
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REFERENCE = os.path.join(ROOT, "tools", "data", "mindspore-2.10-api.json")
COVERAGE = os.path.join(ROOT, "docs", "api-coverage.md")
OUT = os.path.join(HERE, "mindspore_examples.json")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import api_coverage_rules as rules  # noqa: E402  (plain tables; imports neither side)

# The order in which a shared program is attributed: specific modules before re-exports,
# the top level last.
MODULE_ORDER = (
    "mindspore.nn", "mindspore.nn.loss", "mindspore.nn.optim", "mindspore.nn.wrap",
    "mindspore.nn.dynamic_lr", "mindspore.nn.learning_rate_schedule",
    "mindspore.train", "mindspore.train.callback", "mindspore.train.metrics",
    "mindspore.nn.metrics", "mindspore.train.serialization", "mindspore.train.summary",
    "mindspore.train.summary.summary_record", "mindspore.train.amp", "mindspore.train.model",
    "mindspore.train.loss_scale_manager", "mindspore.train.dataset_helper",
    "mindspore.amp", "mindspore.common.initializer", "mindspore.common.tensor",
    "mindspore.common.parameter", "mindspore.common.api", "mindspore.common.dtype",
    "mindspore.context", "mindspore.communication", "mindspore.boost",
    "mindspore.dataset", "mindspore.dataset.transforms", "mindspore.dataset.vision",
    "mindspore.dataset.text",
    "mindspore.ops", "mindspore.ops.operations", "mindspore.ops.functional",
    "mindspore.ops.composite", "mindspore",
    "mindspore.Tensor", "mindspore.numpy", "mindspore.mint", "mindspore.mint.nn",
    "mindspore.mint.nn.functional", "mindspore.mint.optim",
)
KINDS = ("class", "function", "method")
# Modules whose classes document their use in their methods (``text.Vocab.from_list``, not
# ``text.Vocab``): the public methods' examples are programs of their own
# (``Vocab.from_list``).
METHOD_EXAMPLES = ("mindspore.dataset.text",)
TENSOR = "mindspore.Tensor"  # the reference's pseudo-module of Tensor's methods
# Examples (mostly of mint) that call MindSpore's implementation modules instead of the
# public name they document (``ops.function.math_func.amax_ext``, ``ops.auto_generate``):
# they measure MindSpore's internals, not the public API, and are left out.
INTERNAL_PATH = re.compile(r"\bops\.(function|auto_generate|functional_overload)\.|"
                           r"\bops\.\w+_ext\(")

# MindSpore's docstrings use LeNet5 and create_dataset without defining them (they point to
# the LeNet5 and MNIST helpers of MindSpore's tutorials). A program that uses one and does
# not define it gets these definitions, written with MindSpore's API, in front
# (``"preamble": true``); the data are synthetic, so no download is needed.
PREAMBLE = {
    "LeNet5": """\
import numpy as _np
import mindspore.nn as _nn
class LeNet5(_nn.Cell):
    def __init__(self, num_class=10, num_channel=1, include_top=True):
        super().__init__()
        self.conv1 = _nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = _nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.relu = _nn.ReLU()
        self.max_pool2d = _nn.MaxPool2d(kernel_size=2, stride=2)
        self.include_top = include_top
        if include_top:
            self.flatten = _nn.Flatten()
            self.fc1 = _nn.Dense(16 * 5 * 5, 120)
            self.fc2 = _nn.Dense(120, 84)
            self.fc3 = _nn.Dense(84, num_class)
    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        if not self.include_top:
            return x
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)
""",
    "create_dataset": """\
import numpy as _np
import mindspore.dataset as _ds
def create_dataset(num_data=32, batch_size=16, repeat_size=1):
    rng = _np.random.RandomState(0)
    images = rng.rand(num_data, 1, 32, 32).astype(_np.float32)
    labels = rng.randint(0, 10, (num_data,)).astype(_np.int32)
    data = _ds.NumpySlicesDataset((images, labels), ["image", "label"], shuffle=False)
    return data.batch(batch_size).repeat(repeat_size)
""",
}
MAX_OUTPUT = 6000


def examples_section(doc):
    """The part of a docstring from its ``Examples:`` heading on (the whole docstring when it
    has none)."""
    m = re.search(r"^\s*Examples?\s*:?\s*$", doc, re.M)
    return doc[m.end():] if m else doc


def program_of(doc):
    """The docstring's ``>>>`` examples joined into one program, or None."""
    try:
        examples = doctest.DocTestParser().get_examples(examples_section(doc))
    except ValueError:  # malformed doctest text
        return None
    source = "".join(e.source for e in examples)
    return source if source.strip() else None


def absent_names(path=COVERAGE):
    """``{module: {name, ...}}`` of the names the generated coverage table
    (``python tools/api_coverage.py --write``) lists as absent on purpose, with a reason."""
    out, module, in_absent = {}, None, False
    with open(path) as f:
        for line in f:
            if line.startswith("## "):
                module, in_absent = line[3:].strip(), False
            elif line.startswith("Absent on purpose"):
                in_absent = True
            elif in_absent and line.startswith("- "):
                names = line.rsplit("): ", 1)[-1]
                out.setdefault(module, set()).update(re.findall(r"`([^`]+)`", names))
            elif in_absent and line.strip():
                in_absent = False
    return out


def with_preamble(source):
    """``(program, used a preamble)``: the definitions of ``PREAMBLE`` the source uses and
    does not make itself, in front of it."""
    parts = [text for name, text in PREAMBLE.items()
             if re.search(rf"\b{name}\b", source)
             and not re.search(rf"^\s*(class|def)\s+{name}\b", source, re.M)]
    return "".join(parts) + source, bool(parts)


def candidates(reference):
    """``(records, excluded)``: one record per distinct program, and the counts of names
    left out, by cause."""
    excluded = {"absent by the coverage rules": 0, "ops outside the training subset": 0,
                "not a class or function": 0, "no examples": 0,
                "calls MindSpore's internal op modules": 0}
    by_source = {}
    absent = absent_names()
    for module in MODULE_ORDER:
        for name, rec in reference["modules"].get(module, {}).items():
            if rec.get("kind") not in KINDS:
                excluded["not a class or function"] += 1
                continue
            if module in rules.OPS_MODULES and name not in rules.TRAINING_OPS:
                excluded["ops outside the training subset"] += 1
                continue
            if name in absent.get(module, ()):
                excluded["absent by the coverage rules"] += 1
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    owner = importlib.import_module("mindspore").Tensor if module == TENSOR \
                        else importlib.import_module(module)
                    obj = getattr(owner, name)
            except Exception:
                continue
            documented = [(name, obj)]
            if module in METHOD_EXAMPLES and inspect.isclass(obj):
                documented += [(f"{name}.{attr}", value) for attr, value in vars(obj).items()
                               if not attr.startswith("_") and callable(
                                   getattr(value, "__func__", value))]
            for doc_name, doc_obj in documented:
                source = program_of(getattr(doc_obj, "__doc__", None) or "")
                if source is not None or doc_obj is obj:  # a method without one: no name
                    _add_program(by_source, excluded, module, doc_name, source)
    return list(by_source.values()), excluded


def _add_program(by_source, excluded, module, name, source):
    """Count ``source`` (the program of ``module.name``, or None) into ``by_source``, or
    into ``excluded`` with its cause."""
    if source is None:
        excluded["no examples"] += 1
        return
    if INTERNAL_PATH.search(source):
        excluded["calls MindSpore's internal op modules"] += 1
        return
    if source in by_source:
        by_source[source]["also"].append(f"{module}.{name}")
        return
    program, preamble = with_preamble(source)
    by_source[source] = {"module": module, "name": name, "also": [],
                         "preamble": preamble, "source": program}


def run_program(source, timeout):
    """``(exit status or "timeout", stdout, last stderr line)`` of ``source`` run with
    MindSpore in an empty scratch directory."""
    env = dict(os.environ, GLOG_v="3", OMP_NUM_THREADS="1", PYTHONHASHSEED="0",
               PYTHONWARNINGS="ignore")
    with tempfile.TemporaryDirectory(prefix="ms_example_") as scratch:
        path = os.path.join(scratch, "example.py")
        with open(path, "w") as f:
            f.write(source)
        try:
            proc = subprocess.run([sys.executable, path], cwd=scratch, env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", "", ""
    err = [line for line in proc.stderr.splitlines() if line.strip()]
    return proc.returncode, proc.stdout, err[-1] if err else ""


def _owner(qualified):
    """The module of a ``module.name`` key: the longest module of the corpus it starts with
    (``mindspore.Tensor.add`` belongs to ``mindspore.Tensor``, not ``mindspore``)."""
    return max((m for m in MODULE_ORDER if qualified.startswith(m + ".")), key=len,
               default=None)


def merged(path, modules, kept, failed):
    """The corpus at ``path`` with the programs and MindSpore failures of ``modules``
    replaced by the new ones (``kept``, ``failed``)."""
    with open(path) as f:
        old = json.load(f)
    keep_old = [r for r in old["examples"] if r["module"] not in modules]
    fails = {k: v for k, v in old.get("failed_in_mindspore", {}).items()
             if _owner(k) not in modules}
    fails.update(failed)
    return keep_old + kept, fails


_BATCH_CHILD = r"""
import contextlib, io, json, os, sys, tempfile, traceback, warnings
warnings.filterwarnings("ignore")
programs = json.load(sys.stdin)
out = []
for source in programs:
    buf = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="ms_example_") as scratch:
        os.chdir(scratch)
        status, err = 0, ""
        try:
            with contextlib.redirect_stdout(buf):
                exec(compile(source, "example.py", "exec"), {"__name__": "__main__"})
        except SystemExit as exc:
            status = 0 if exc.code in (None, 0) else 1
        except BaseException as exc:
            status, err = 1, f"{type(exc).__name__}: {str(exc).strip()}".splitlines()[0]
        os.chdir("/")
    out.append([status, buf.getvalue(), err])
with open(sys.argv[1], "w") as f:
    json.dump(out, f)
"""


def run_batch(sources, timeout):
    """``[(exit status, stdout, last error line)]`` of ``sources`` run one after another in
    ONE MindSpore process (each in a fresh namespace and scratch directory): far faster
    than a process per program, at the price of shared process state; a batch that dies
    is re-run one program per process."""
    env = dict(os.environ, GLOG_v="3", OMP_NUM_THREADS="1", PYTHONHASHSEED="0",
               PYTHONWARNINGS="ignore")
    with tempfile.TemporaryDirectory(prefix="ms_examples_") as scratch:
        out = os.path.join(scratch, "results.json")
        try:
            proc = subprocess.run([sys.executable, "-c", _BATCH_CHILD, out], cwd=scratch,
                                  env=env, input=json.dumps(sources), capture_output=True,
                                  text=True, timeout=timeout * len(sources))
            ok = proc.returncode == 0 and os.path.exists(out)
        except subprocess.TimeoutExpired:
            ok = False
        if ok:
            with open(out) as f:
                return [tuple(r) for r in json.load(f)]
    return [run_program(s, timeout) for s in sources]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--limit", type=int, default=None, help="first N programs only (trial)")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--batch", type=int, default=0,
                    help="run this many programs per MindSpore process (0: one each)")
    ap.add_argument("--modules", nargs="+", default=None,
                    help="record only these modules and merge them into the existing corpus "
                         "(e.g. mindspore.Tensor mindspore.numpy)")
    args = ap.parse_args(argv)
    import mindspore
    with open(REFERENCE) as f:
        reference = json.load(f)
    records, excluded = candidates(reference)
    if args.modules:
        # Attribution follows MODULE_ORDER over the whole corpus: a program another module
        # holds (a re-export's example) is not recorded again under the named ones.
        records = [r for r in records if r["module"] in args.modules]
    if args.limit:
        records = records[:args.limit]
    failed = {}
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        if args.batch:
            chunks = [records[i:i + args.batch] for i in range(0, len(records), args.batch)]
            batches = [pool.submit(run_batch, [r["source"] for r in chunk], args.timeout)
                       for chunk in chunks]
            futures = [concurrent.futures.Future() for _ in records]
            for k, (_chunk, batch) in enumerate(zip(chunks, batches)):
                for j, res in enumerate(batch.result()):
                    futures[k * args.batch + j].set_result(res)
        else:
            futures = [pool.submit(run_program, r["source"], args.timeout) for r in records]
        for i, (rec, fut) in enumerate(zip(records, futures)):
            status, out, err = fut.result()
            rec["ms_exit"] = status
            rec["ms_output"] = out[:MAX_OUTPUT]
            if status != 0:
                failed[f"{rec['module']}.{rec['name']}"] = f"{status}: {err[:200]}"
            print(f"[{i + 1}/{len(records)} {time.time() - start:.0f}s] {status} "
                  f"{rec['module']}.{rec['name']}", flush=True)
    kept = [r for r in records if r["ms_exit"] == 0]
    ran = len(kept)
    if args.modules and os.path.exists(args.out):
        kept, failed = merged(args.out, args.modules, kept, failed)
    doc = {
        "made_by": "/tmp/ms/bin/python tests/data/make_mindspore_examples.py",
        "mindspore_version": mindspore.__version__,
        "python": sys.version.split()[0],
        "timeout_s": args.timeout,
        "programs": len(kept) + len(failed),
        "excluded_names": excluded,
        "failed_in_mindspore": dict(sorted(failed.items())),
        "examples": kept,
    }
    with open(args.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(args.out + ".tmp", args.out)
    print(f"{ran} of {len(records)} programs ran in MindSpore ({len(kept)} in the corpus); "
          f"excluded names: "
          f"{excluded}; wrote {args.out}")


if __name__ == "__main__":
    main()
