"""``mscore.dataset.text`` against MindSpore 2.10: the cases of ``tests/data/text_cases.py``
run unchanged on both; MindSpore's answers were recorded with ``cd tests/data &&
/tmp/ms/bin/python make_text_oracle.py`` into ``tests/data/mindspore_text_oracle.json``.

MindSpore's pipeline errors wrap the message in a report of its C++ engine; the message
line itself (after ``[ERROR] ``) is compared.
"""
import json
import os
import re
import sys
import tempfile

import pytest

import mscore as ms

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "data"))
from text_cases import CASES, attempt  # noqa: E402

with open(os.path.join(HERE, "data", "mindspore_text_oracle.json"), encoding="utf-8") as f:
    ORACLE = json.load(f)


def _core_message(answer):
    if isinstance(answer, dict) and "message" in answer:
        found = re.search(r"\[ERROR\] (.*)", answer["message"])
        if found:
            answer = dict(answer, message=found.group(1).strip())
    return answer


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_answer_as_mindspore(name, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert attempt(lambda: CASES[name](ms)) == _core_message(ORACLE[name])


def test_every_case_was_recorded():
    assert sorted(CASES) == sorted(ORACLE)


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'SentencePieceTrainer'"):
        _ = ms.dataset.text.SentencePieceTrainer
    assert set(ms.dataset.text.ABSENT).isdisjoint(ms.dataset.text.__all__)
