"""What a kit run certifies: coverage of every declaration, and the run's verdict.

Coverage: for each backend on each device, every dtype and capability it declares is

- ``tested`` when at least one test of it passed (or failed as an expected failure) and none
  failed,
- ``failed`` when a test of it failed or errored,
- ``not tested`` when no test of it ran (filtered out, or nothing in the kit exercises it);

capabilities it does not declare are ``not declared`` (their tests were skipped, with that
reason). A test counts for a dtype through its ``dtype`` parameter and for a capability
through its ``@pytest.mark.mscore_needs(...)`` marker.

Every optional method a backend provides (a fused op, ``batch_norm_inplace``,
``float_caster``, ``host_callback``, ... :data:`mscore.conformance.calls.OPTIONAL`) is
``tested`` when a test called it and ``not tested`` otherwise: providing a method declares
it as much as a capability does.

Verdict: a run passes when nothing failed, every target could run (an unavailable backend,
a backend name claimed twice, a device the backend does not declare, or a target whose every
test was skipped is *not run*: exit status 2), and, in a full run of the kit (no ``-k``, no
``--mscore-quick``, no test selected by name), every declaration was tested and every method
the backend provides was called by some test (exit status 1 otherwise).
"""
from __future__ import annotations

from dataclasses import dataclass, field

TESTED, FAILED, NOT_TESTED, NOT_DECLARED = "tested", "failed", "not tested", "not declared"
NOT_RUN_EXIT = 2
FAILED_EXIT = 1
_RAN = ("passed", "xfailed", "xpassed", "failed", "error")


def _status(outcomes):
    if any(o in ("failed", "error") for o in outcomes):
        return FAILED
    if any(o in ("passed", "xfailed", "xpassed") for o in outcomes):
        return TESTED
    return NOT_TESTED


# The order the counts of a coverage row are listed in, whatever order the tests ran in.
OUTCOME_ORDER = ("passed", "failed", "error", "xfailed", "xpassed", "skipped")


def _counts(outcomes):
    out = {o: 0 for o in OUTCOME_ORDER}
    for o in outcomes:
        out[o] = out.get(o, 0) + 1
    return {o: n for o, n in out.items() if n}


# The backend method a declared capability stands on: its tests certify it only when they
# called it.
CAPABILITY_METHODS = {"native_autodiff": "value_and_grad", "compile": "compile",
                      "donation": "compile"}


def target_coverage(target, entries, known_capabilities, calls=None):
    """``{"dtypes": {name: {...}}, "capabilities": {name: {...}}, "optional": {name: {...}},
    "never_called": [...]}`` for one target's test entries (each with ``dtype``, ``needs``
    and ``outcome``): what the backend declares on the target's device. ``calls`` (a
    :class:`mscore.conformance.calls.CallLog`, optional) says which backend methods the
    tests called: a capability whose method no test called is not tested, ``optional`` has
    one row per optional method the backend provides (tested when a test called it), and
    ``never_called`` lists the provided methods no test reached."""
    dtypes = {}
    for d in target.dtypes:
        outcomes = [e["outcome"] for e in entries if e["dtype"] == d]
        dtypes[d] = {"status": _status(outcomes), **_counts(outcomes)}
    capabilities = {}
    for cap in sorted(known_capabilities):
        outcomes = [e["outcome"] for e in entries if cap in e.get("needs", ())]
        status = _status(outcomes) if cap in target.capabilities else NOT_DECLARED
        method = CAPABILITY_METHODS.get(cap)
        row = {"status": status, **_counts(outcomes)}
        if status == TESTED and calls is not None and method in calls.provided and \
                method not in calls.called:
            row["status"] = NOT_TESTED
            row["why"] = f"no test called Backend.{method}"
        capabilities[cap] = row
    never = calls.never_called() if calls is not None else []
    optional = {}
    for name in (calls.optional_provided() if calls is not None else ()):
        optional[name] = {"status": NOT_TESTED if name in never else TESTED}
        if name in never:
            optional[name]["why"] = f"no test called Backend.{name}"
    return {"dtypes": dtypes, "capabilities": capabilities, "optional": optional,
            "never_called": never}


@dataclass
class Verdict:
    """The run's outcome: ``exit_status`` (0, 1 or 2) and the reasons, one line each."""

    exit_status: int = 0
    not_run: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    untested: list = field(default_factory=list)

    @property
    def passed(self):
        """True when the run certifies what it tested."""
        return self.exit_status == 0

    @property
    def reasons(self):
        """Every reason the run does not pass, not-run targets first."""
        return self.not_run + self.failed + self.untested


def verdict(targets, entries, coverage, full_run, pytest_status):
    """The :class:`Verdict` of a run over ``targets`` (kit Targets) given its test entries,
    the coverage per target id and whether the whole kit was selected."""
    v = Verdict()
    for target in targets:
        mine = [e for e in entries if e["backend"] == target.name and
                e["device"] == target.device]
        not_run = _not_run(target, mine)
        if not_run:
            v.not_run.append(f"{target.name} on {target.device} did not run: {not_run}")
            continue
        failures = sum(1 for e in mine if e["outcome"] in ("failed", "error"))
        if failures:
            v.failed.append(f"{target.name} on {target.device}: {failures} of {len(mine)} "
                            f"tests failed")
        if full_run and target.id in coverage:
            v.untested.extend(_untested(target, coverage[target.id]))
    if v.not_run:
        v.exit_status = NOT_RUN_EXIT
    elif pytest_status not in (0, 5):
        v.exit_status = pytest_status
    elif v.untested or v.failed:
        v.exit_status = FAILED_EXIT
    else:
        v.exit_status = pytest_status
    return v


def _not_run(target, entries):
    """Why ``target`` could not run at all, or "" when it ran."""
    if target.unavailable:
        return target.unavailable
    if entries and not any(e["outcome"] in _RAN for e in entries):
        reasons = sorted({e["message"] for e in entries})
        return (f"all {len(entries)} selected tests were skipped ({'; '.join(reasons[:3])}"
                f"{'; ...' if len(reasons) > 3 else ''})")
    return ""


def _untested(target, table):
    out = []
    for kind, what in (("dtypes", "dtype"), ("capabilities", "capability")):
        for name, row in table[kind].items():
            if row["status"] == NOT_TESTED:
                why = f" ({row['why']})" if "why" in row else ""
                out.append(f"{target.name} on {target.device} declares {what} {name!r}, but no "
                           f"test of the kit exercised it{why}")
    optional = table.get("optional", {})
    for name in table.get("never_called", ()):
        kind = "optional method" if name in optional else "method"
        out.append(f"{target.name} on {target.device} provides {kind} {name!r}, but no test "
                   f"of the kit called it: the kit cannot vouch for it (a failure of the "
                   f"kit, not a pass)")
    return out
