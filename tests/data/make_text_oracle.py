"""Record MindSpore 2.10's answers to the cases of ``text_cases.py`` and
``text_tokenizer_cases.py`` into ``mindspore_text_oracle.json`` and
``mindspore_text_tokenizer_oracle.json`` beside this script, after saving the SentencePiece
model MindSpore trains (``mindspore_sentencepiece_unigram.model``) that a case loads.

Run with the separate MindSpore environment, from this folder:

    /tmp/ms/bin/python make_text_oracle.py

``tests/test_dataset_text.py`` and ``tests/test_dataset_text_tokenizers.py`` run the same
cases on mscore and compare.
"""
import importlib
import json
import os
import shutil
import sys
import tempfile

import mindspore as ms

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from text_cases import attempt  # noqa: E402

RECORDS = {"text_cases": "mindspore_text_oracle.json",
           "text_tokenizer_cases": "mindspore_text_tokenizer_oracle.json"}


def record(module_name, target):
    cases = importlib.import_module(module_name).CASES
    scratch = tempfile.mkdtemp(prefix="text_cases_")
    tempfile.tempdir = scratch
    try:
        answers = {name: attempt(lambda fn=fn: fn(ms)) for name, fn in cases.items()}
    finally:
        tempfile.tempdir = None
        shutil.rmtree(scratch, ignore_errors=True)
    with open(os.path.join(HERE, target), "w") as f:
        json.dump(answers, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


def main():
    scratch = tempfile.mkdtemp(prefix="text_model_")
    tempfile.tempdir = scratch
    try:
        importlib.import_module("text_tokenizer_cases").make_unigram_model(ms)
    finally:
        tempfile.tempdir = None
        shutil.rmtree(scratch, ignore_errors=True)
    for module_name, target in RECORDS.items():
        record(module_name, target)


if __name__ == "__main__":
    main()
