"""``mscore.dataset.text`` word vectors, tokenizers, FilterWikipediaXML and JiebaTokenizer
against MindSpore 2.10: the cases of ``tests/data/text_tokenizer_cases.py`` run unchanged on
both; MindSpore's answers were recorded with ``cd tests/data && /tmp/ms/bin/python
make_text_oracle.py`` into ``tests/data/mindspore_text_tokenizer_oracle.json``.

MindSpore's pipeline errors wrap the message in a report of its C++ engine; the message line
itself (after ``[ERROR] ``) is compared. For a bad file (cases ``file_error_*``) MindSpore
raises ``RuntimeError`` and mscore a ``ValueError`` that starts with the same words and names
the file. The SentencePiece cases need the optional ``sentencepiece`` package (the ``text``
extra); without it they are skipped.
"""
import importlib.util
import json
import os
import re
import sys
import tempfile

import pytest

import mscore as ms

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "data"))
from text_cases import attempt  # noqa: E402
from text_tokenizer_cases import CASES  # noqa: E402

with open(os.path.join(HERE, "data", "mindspore_text_tokenizer_oracle.json"),
          encoding="utf-8") as f:
    ORACLE = json.load(f)


def _core(answer):
    """MindSpore's answer with each error message cut to its ``[ERROR]`` line."""
    if isinstance(answer, dict):
        if "message" in answer:
            found = re.search(r"\[ERROR\] (.*)", answer["message"])
            return dict(answer, message=found.group(1).strip()) if found else answer
        return {key: _core(value) for key, value in answer.items()}
    if isinstance(answer, list):
        return [_core(value) for value in answer]
    return answer


def _as_file_error(ours, theirs):
    """``ours`` compared as a file error: a ValueError starting with MindSpore's words
    stands for MindSpore's RuntimeError."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if ours.get("raises") == "ValueError" and theirs.get("raises") == "RuntimeError":
            if ours["message"].startswith(theirs["message"].rstrip(".")):
                return theirs
        return {key: _as_file_error(value, theirs.get(key)) for key, value in ours.items()}
    return ours


HAS_SENTENCEPIECE = importlib.util.find_spec("sentencepiece") is not None


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_answer_as_mindspore(name, tmp_path, monkeypatch):
    if "sentencepiece" in name and not HAS_SENTENCEPIECE:
        pytest.skip("the optional sentencepiece package (mscore[text]) is not installed")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ours, theirs = attempt(lambda: CASES[name](ms)), _core(ORACLE[name])
    if name.startswith("file_error_"):
        ours = _as_file_error(ours, theirs)
    assert ours == theirs


def test_every_case_was_recorded():
    assert sorted(CASES) == sorted(ORACLE)


def test_sentencepiece_without_the_package_names_the_extra(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_sentencepiece(name, *args, **kwargs):
        if name == "sentencepiece":
            raise ImportError("No module named 'sentencepiece'")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_sentencepiece)
    with pytest.raises(ImportError, match=r"pip install 'mscore\[text\]'"):
        ms.dataset.text.SentencePieceVocab.from_file(
            [__file__], 10, 1.0, ms.dataset.text.SentencePieceModel.CHAR, {})
