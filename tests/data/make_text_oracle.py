"""Record MindSpore 2.10's answers to the cases of ``text_cases.py`` into
``mindspore_text_oracle.json`` beside this script.

Run with the separate MindSpore environment, from this folder:

    /tmp/ms/bin/python make_text_oracle.py

``tests/test_dataset_text.py`` runs the same cases on mscore and compares.
"""
import json
import os
import shutil
import sys
import tempfile

import mindspore as ms

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from text_cases import CASES, attempt


def main():
    scratch = tempfile.mkdtemp(prefix="text_cases_")
    tempfile.tempdir = scratch
    try:
        answers = {name: attempt(lambda fn=fn: fn(ms)) for name, fn in CASES.items()}
    finally:
        tempfile.tempdir = None
        shutil.rmtree(scratch, ignore_errors=True)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "mindspore_text_oracle.json"), "w") as f:
        json.dump(answers, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
