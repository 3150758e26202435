"""Summary argument checks against MindSpore 2.10's recorded answers.

The cases live in ``tests/data/summary_api_cases.py`` and run unchanged on both frameworks;
MindSpore's answers were recorded with
``cd tests/data && /tmp/ms/bin/python make_summary_api.py`` into
``tests/data/mindspore_summary_api.json``. Where mscore deliberately differs (see
docs/differences.md) the expected outcome is overridden below, with the reason.
"""
import json
import os
import sys

import pytest
from test_cell_api import _same

import mscore as ms

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
from summary_api_cases import CASES, attempt  # noqa: E402

with open(os.path.join(DATA, "mindspore_summary_api.json")) as _f:
    EXPECTED = json.load(_f)

# Deliberate differences (docs/differences.md, "Summary").
OVERRIDES = {}


@pytest.mark.parametrize("name", sorted(CASES))
def test_summary_checks_match_mindspore(name, tmp_path):
    got = json.loads(json.dumps(attempt(lambda: CASES[name](ms, str(tmp_path)))))
    want = dict(EXPECTED[name])
    want.update(OVERRIDES.get(name, {}))
    _same(got, want, name)


def test_every_case_was_recorded():
    assert sorted(CASES) == sorted(EXPECTED)
