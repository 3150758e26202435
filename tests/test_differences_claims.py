"""docs/differences.md, line by line: every paragraph that claims MindSpore's behaviour
("same exception types", "checked as MindSpore checks it", ...) has a check here, and the
check runs mscore against the fixture recorded from MindSpore 2.10 that the paragraph names.
A new claim without a check, or a claim its fixture contradicts, fails."""
import json
import re
import sys
from pathlib import Path

import pytest

import mscore as ms

HERE = Path(__file__).resolve().parent
DOC = (HERE.parent / "docs" / "differences.md").read_text()
DATA = HERE / "data"
sys.path.insert(0, str(DATA))

# the wordings that claim MindSpore's behaviour
CLAIM = re.compile(r"same exception types|same behaviour|as MindSpore checks (?:it|them)|"
                   r"MindSpore's (?:checks|types and messages)", re.I)


def _paragraphs():
    """The doc's bullet paragraphs (a "- " line and its indented continuation), joined."""
    out, current = [], None
    for line in DOC.splitlines():
        if line.startswith("- "):
            current = [line[2:]]
            out.append(current)
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line.strip())
        else:
            current = None
    return [" ".join(p) for p in out]


def _load(name):
    return json.loads((DATA / name).read_text())


def _outcome(fn):
    try:
        fn()
    except Exception as exc:  # the type and message are the observation
        return {"type": type(exc).__name__, "message": str(exc)}
    return None


def check_summary_operators(tmp_path):
    """PyNative: the summary operators' checks against the recorded types; GRAPH_MODE: an
    empty name against the recorded type and message."""
    from cell_api_cases import attempt
    from summary_api_cases import CASES
    from test_cell_api import _same
    got = json.loads(json.dumps(attempt(lambda: CASES["summary_operators"](ms, str(tmp_path)))))
    _same(got, _load("mindspore_summary_api.json")["summary_operators"], "summary_operators")
    import numpy as np
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        for op, want in _load("training_api_oracle.json")[
                "summary_empty_name_graph_mode"].items():
            shape = (1, 3, 2, 2) if op == "ImageSummary" else (1,)
            x = ms.Tensor(np.ones(shape, np.float32))
            assert _outcome(lambda op=op, x=x: getattr(ms.ops, op)()("", x)) == want
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def check_collect_landscape(tmp_path):
    """Every recorded ``collect_landscape`` case: MindSpore's type and message."""
    from test_training_api_oracle import COLLECTOR_CASES
    recorded = _load("training_api_oracle.json")["collector_errors"]
    cases = [n for n in COLLECTOR_CASES if n.startswith("landscape_")]
    assert len(cases) >= 10
    for name in cases:
        got = _outcome(lambda name=name: ms.train.SummaryCollector(
            str(tmp_path), collect_specified_data=COLLECTOR_CASES[name]))
        assert got == recorded[name], name


def check_recompute(tmp_path):
    """``recompute()``'s keywords: the recorded outcomes (types) of cell_api_cases."""
    import test_cell_api
    test_cell_api._run("recompute")


def check_parallel_optimizer_config(tmp_path):
    """Every recorded ``parallel_optimizer_config`` setting (outcome types)."""
    import test_scaleout
    cases = [c for c in test_scaleout.ORACLE if c.startswith("parallel_optimizer_config=")]
    assert cases
    for case in cases:
        test_scaleout.test_settings_are_checked_as_mindspore_checks_them(case)


def check_jit_options(tmp_path):
    """``ms.jit``'s ``capture_mode``, ``jit_level``, ``dynamic``, ``fullgraph`` (recorded
    error types)."""
    import ops_cases
    import test_ops_api
    cases = [(c, k) for c, k in ops_cases.ERROR_CASES if c.startswith("ms.jit.")]
    assert {c.rsplit(".", 1)[1] for c, _ in cases} >= {"capture_mode", "jit_level",
                                                      "dynamic", "fullgraph"}
    for case_id, code in cases:
        test_ops_api.test_argument_errors_match_mindspore(case_id, code)


def check_encrypted_mindir(tmp_path):
    """``export``'s ``enc_key``/``enc_mode`` and ``load``'s ``dec_key``: the recorded types and
    messages, and MindSpore's encrypted files."""
    import test_training_api_oracle as t
    t.test_encrypted_mindir_argument_errors(tmp_path)
    for mode in t._ENC["files"]:
        t.test_mindspore_encrypted_mindir_loads_with_its_key(mode)


def check_max_rowsize(tmp_path):
    """Every recorded ``max_rowsize`` argument error: MindSpore's type and message."""
    import test_dataset_workers as t
    cases = [n for n in t._COMPARED if "max_rowsize" in n and "error" in t.ORACLE["cases"][n]]
    assert len(cases) >= 10
    for name in cases:
        want, got = t.ORACLE["cases"][name], t._run_case(name)
        assert (got.get("error"), got.get("message")) == (want["error"], want["message"]), name


def check_optimizer_target(tmp_path):
    """``Optimizer.target``: the recorded cases (results and error types)."""
    import test_nn_optim_oracle as t
    from _oracle import check_case
    cases = [n for n in t.SAME if "target" in n]
    assert len(cases) >= 5
    for name in cases:
        check_case(t.ORACLE, name, t.NAMES)


# a phrase of the claim's paragraph -> its check
CHECKS = {
    "the summary operators (`ScalarSummary`, ...)": check_summary_operators,
    "`collect_landscape` is checked": check_collect_landscape,
    "`recompute()` is accepted": check_recompute,
    "`parallel_optimizer_config` is checked": check_parallel_optimizer_config,
    "`capture_mode`, `jit_level`": check_jit_options,
    "`enc_key`/`enc_mode` encrypt the file": check_encrypted_mindir,
    "`max_rowsize` is checked": check_max_rowsize,
    "`Optimizer.target`": check_optimizer_target,
}


def test_every_claim_has_a_check():
    claims = [p for p in _paragraphs() if CLAIM.search(p)]
    assert claims, "the claim pattern no longer matches the doc"
    unchecked = [p[:120] for p in claims if not any(phrase in p for phrase in CHECKS)]
    assert not unchecked, f"claims without a check in this file: {unchecked}"
    stale = [phrase for phrase in CHECKS if not any(phrase in p for p in claims)]
    assert not stale, f"checks whose claim is gone from the doc: {stale}"


@pytest.mark.parametrize("phrase", sorted(CHECKS))
def test_claim_holds(phrase, tmp_path):
    ms.set_context(backend="numpy")
    CHECKS[phrase](tmp_path)
