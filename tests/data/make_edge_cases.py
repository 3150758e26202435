"""Record MindSpore 2.10's answers to the cases of ``edge_cases.py`` (exception types and
messages included) into ``mindspore_edge_cases.json`` beside this script.

Run with the separate MindSpore environment, from this folder:

    /tmp/ms/bin/python make_edge_cases.py

``tests/test_edge_cases.py`` runs the same cases on mscore and compares.
"""
import json
import os
import shutil
import sys
import tempfile

import mindspore as ms

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edge_cases import CASES, attempt


def main():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    scratch = tempfile.mkdtemp(prefix="edge_cases_")
    tempfile.tempdir = scratch
    try:
        out = {name: attempt(lambda fn=fn: fn(ms)) for name, fn in CASES.items()}
    finally:
        tempfile.tempdir = None
        shutil.rmtree(scratch, ignore_errors=True)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "mindspore_edge_cases.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
