"""Record MindSpore 2.10's ``set_deterministic`` and ``get_context("deterministic")``.

Run with the oracle's interpreter (never imported by mscore or its tests), from /tmp::

    /tmp/ms/bin/python <repo>/tests/data/make_deterministic_oracle.py

It writes ``tests/data/deterministic_oracle.json``: for each probe (a sequence of calls, run
in a fresh process, since MindSpore allows one ``set_deterministic`` per process) the value
``get_context("deterministic")`` reads after it (``["OK", value]``) or the exception of the
first call that failed (``["ERR", type name, message]``).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "deterministic_oracle.json")

PROBES = {
    "default": [],
    "True": [True],
    "False": [False],
    "int 1": [1],
    "str 'x'": ["x"],
    "True then False": [True, False],
}

SCRIPT = r'''
import json, sys
import mindspore as ms
try:
    for arg in json.loads(sys.argv[1]):
        ms.set_deterministic(arg)
    out = ["OK", ms.get_context("deterministic")]
except Exception as e:
    out = ["ERR", type(e).__name__, str(e).strip().split("\n")[0]]
print("PROBE " + json.dumps(out), flush=True)
'''


def probe(calls):
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(calls)],
                          capture_output=True, text=True, cwd="/tmp", check=True)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE "))
    return json.loads(line[len("PROBE "):])


def main():
    records = {name: {"calls": calls, "result": probe(calls)} for name, calls in PROBES.items()}
    with open(OUT, "w") as f:
        json.dump(records, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
