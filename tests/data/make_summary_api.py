"""Record MindSpore 2.10's answers to the summary argument-check cases of
``summary_api_cases.py`` into ``mindspore_summary_api.json`` beside this script.

Run with the separate MindSpore environment, from this folder:

    /tmp/ms/bin/python make_summary_api.py

``tests/test_summary_api.py`` runs the same cases on mscore and compares.
"""
import json
import os
import sys
import tempfile
from functools import partial

import mindspore as ms

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summary_api_cases import CASES, attempt


def main():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    out = {}
    for name, fn in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            out[name] = attempt(partial(fn, ms, tmp))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "mindspore_summary_api.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
