"""pytest plugin of the conformance kit (registered under ``pytest11``; inert unless asked).

It only acts on tests that request the ``kit`` fixture, which are the modules in
``mscore/conformance/tests/`` (run them with ``pytest --pyargs mscore.conformance`` or
``mscore conformance BACKEND``). For those tests it

- parametrizes ``kit`` over the selected backends and devices (``--mscore-backend``,
  ``--mscore-device``; default: every installed backend on every device it can use here);
- skips a test whose dtype, device or capability the backend does not declare, with the
  reason "... not declared by BACKEND", and every test of a backend that cannot run here;
  any other problem is a failure, never a skip;
- marks the entries of the backend's expected-failures file as xfail and reports stale ones;
- with ``--mscore-quick``, runs a deterministic sample of each parametrized test's cases
  (every test function and every declared dtype at least once, every capability check);
- prints a feature x dtype x device matrix, the coverage of every declared dtype and
  capability (:mod:`mscore.conformance.coverage`) and, for each failure, a one-line command
  that reproduces it; ``--mscore-report PATH`` writes everything as JSON (with the share of
  its tolerance each numeric check used), ``--mscore-markdown PATH`` that table as Markdown;
- sets the exit status to the run's verdict: 2 when a backend could not run at all (or
  nothing ran), 1 when a test failed or, in a full run, a declaration went untested.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import sys
import time
from pathlib import Path

import pytest

import mscore as ms
from mscore.conformance import harness
from mscore.conformance import report as _report
from mscore.conformance.coverage import verdict
from mscore.conformance.harness import DEFAULT_EXAMPLES, THOROUGH_EXAMPLES, stable_seed
from mscore.conformance.kit import Kit, Record, Target, declared_device_targets, normalize_device
from mscore.plugin.hints import unknown_backend_detail
from mscore.plugin.registry import get_registry

_STATE_KEY = pytest.StashKey()
_KIT_MARKER = "mscore_needs"
LEVEL_ORDER = _report.LEVEL_ORDER
QUICK_STRIDE = 3     # --mscore-quick keeps about one (case, dtype) pair in this many


def pytest_addoption(parser):
    """The kit's command-line options (``--mscore-*``)."""
    group = parser.getgroup("mscore", "mscore conformance kit")
    group.addoption("--mscore-backend", action="store", default=None, metavar="NAMES",
                    help="backend(s) the conformance kit tests: a name, a comma-separated "
                         "list or 'all' (default: every installed backend)")
    group.addoption("--mscore-device", action="store", default=None, metavar="DEVICES",
                    help="device(s): CPU, GPU, GPU:N, comma-separated (default: every "
                         "declared device the backend can use here)")
    group.addoption("--mscore-report", action="store", default=None, metavar="PATH",
                    help="write the conformance report as JSON to PATH")
    group.addoption("--mscore-markdown", action="store", default=None, metavar="PATH",
                    help="write the report's tolerance table as Markdown to PATH")
    group.addoption("--mscore-xfail", action="append", default=[], metavar="PATH",
                    help="an expected-failures JSON file (repeatable)")
    group.addoption("--mscore-plugin", action="append", default=[], metavar="MODULE",
                    help="register MODULE (a backend plugin not installed through an "
                         "entry point) before the run (repeatable)")
    group.addoption("--mscore-no-matrix", action="store_true", default=False,
                    help="do not print the conformance matrix")
    group.addoption("--mscore-seed", action="store", default=None, type=int, metavar="N",
                    help="the seed of the generated cases (default: a new one each run, "
                         "printed; pass it again to replay a run)")
    group.addoption("--mscore-thorough", action="store_true", default=False,
                    help=f"run {THOROUGH_EXAMPLES} generated examples per generated test "
                         f"instead of {DEFAULT_EXAMPLES}")
    group.addoption("--mscore-quick", action="store_true", default=False,
                    help="run a deterministic sample of the cases of each parametrized test "
                         "(every test and declared dtype at least once); a quick run does "
                         "not certify full coverage")


def pytest_configure(config):
    """Register the marker; the kit's state is created here but does nothing by itself."""
    config.addinivalue_line(
        "markers", f"{_KIT_MARKER}(*capabilities): the conformance test needs backend "
                   f"capabilities (skipped with 'not declared by BACKEND' otherwise)")
    config.stash[_STATE_KEY] = KitState(config)


_KIT_TESTS = Path(__file__).resolve().parent / "tests"   # the kit's test modules


# -- state -------------------------------------------------------------------------------------
class KitState:
    """Targets, expected failures and results of one pytest session."""

    def __init__(self, config):
        self.config = config
        self._targets = None
        self.results = {}            # nodeid -> result dict
        self.items = {}              # nodeid -> item info
        self.xfail_entries = {}      # backend -> list of entry dicts
        self.call_logs = {}          # target id -> CallLog of its backend
        self.deselected = 0
        self.modules = set()         # file names of the kit's test modules collected
        self.started = time.time()
        self.active = False
        self.verdict = None
        seed = config.getoption("mscore_seed", None)
        self.seed = seed if seed is not None else secrets.randbelow(2 ** 31)
        self.thorough = bool(config.getoption("mscore_thorough", False))

    def option(self, name):
        return self.config.getoption(name)

    # -- targets -------------------------------------------------------------------------------
    def targets(self):
        """The (backend, device) Targets of this run, built once."""
        if self._targets is None:
            self._targets = self._build_targets()
        return self._targets

    def _build_targets(self):
        registry = get_registry()
        for module_name in self.option("mscore_plugin") or []:
            _register_module(registry, module_name)
        installed = registry.names()
        wanted = self.option("mscore_backend")
        if wanted in (None, "", "all"):
            names = installed + sorted(registry.collisions)
        else:
            names = [n.strip() for n in wanted.split(",") if n.strip()]
            missing = [n for n in names if n not in installed and n not in registry.collisions]
            if missing:
                raise pytest.UsageError("--mscore-backend: " + "; ".join(
                    unknown_backend_detail(n, installed) for n in missing))
        devices_opt = self.option("mscore_device")
        try:
            asked = None if not devices_opt else [normalize_device(d) for d in
                                                   devices_opt.split(",") if d.strip()]
        except ValueError as exc:
            raise pytest.UsageError(f"--mscore-device: {exc}") from None
        targets = []
        for name in names:
            if name in registry.collisions:  # neither claimant is chosen: nothing to test
                targets.append(Target(name, (asked or ["CPU"])[0], None,
                                      registry.collisions[name]))
                continue
            spec = registry.spec(name)
            declared = declared_device_targets(spec) or ["CPU"]
            available, reason, probed = True, "", []
            if spec.probe is not None:
                try:
                    available, reason, probed = spec.probe()
                except Exception as exc:  # a broken probe is a finding, not a crash
                    available, reason = False, f"probe raised {type(exc).__name__}: {exc}"
            probed_targets = []
            for d in probed or []:
                try:
                    probed_targets.append(normalize_device(d).split(":")[0])
                except ValueError:
                    pass
            if asked is not None:
                devices = asked
            else:
                devices = [d for d in declared if not probed_targets or d in probed_targets]
                devices = devices or declared[:1]
            for device in devices:
                unavailable = None if available else \
                    f"backend {name} cannot run here: {reason or 'its probe says unavailable'}"
                device_target = device.split(":")[0]
                if available and device_target not in declared:
                    unavailable = f"{device_target} not declared by {name}"
                elif available and probed_targets and device_target not in probed_targets:
                    unavailable = (f"backend {name} cannot run on {device_target} here: its "
                                   f"probe finds only {', '.join(probed)}")
                targets.append(Target(name, device, spec, unavailable))
        return targets

    # -- expected failures -------------------------------------------------------------------
    def entries_for(self, backend):
        """The expected-failure entries for ``backend`` from every source (loaded once)."""
        if backend not in self.xfail_entries:
            self.xfail_entries[backend] = _load_expected_failures(
                backend, self.option("mscore_xfail") or [])
        return self.xfail_entries[backend]


def _register_module(registry, spec):
    import importlib
    module_name, _, plugin_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise pytest.UsageError(f"--mscore-plugin: cannot import {module_name!r}: "
                                f"{type(exc).__name__}: {exc}") from None
    registry.register_plugin(module, plugin_name or module_name.rsplit(".", 1)[-1])


def _expected_failure_files(backend, extra):
    files = [Path(p) for p in extra]
    files.append(Path(__file__).parent / "expected_failures" / f"{backend}.json")
    try:
        registry = get_registry()
        plugin = registry.pm.get_plugin(registry.spec(backend).plugin)
        module_file = getattr(plugin, "__file__", None)
        if module_file:
            files.append(Path(module_file).parent / "conformance_expected_failures.json")
    except Exception:
        pass
    return files


def _load_expected_failures(backend, extra):
    """Entries ``{"test": pattern, "reason": str, "device": optional, "source": file}``."""
    entries = []
    for path in _expected_failure_files(backend, extra):
        if not path.is_file():
            if str(path) in map(str, extra):
                raise pytest.UsageError(f"--mscore-xfail: no such file {str(path)!r}")
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise pytest.UsageError(f"expected-failures file {str(path)!r} is not valid "
                                    f"JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("expected_failures"), list):
            raise pytest.UsageError(f"expected-failures file {str(path)!r}: expected an "
                                    f"object with a list 'expected_failures'")
        if data.get("backend", backend) != backend:
            continue
        for i, entry in enumerate(data["expected_failures"]):
            if not isinstance(entry, dict) or not isinstance(entry.get("test"), str) or \
                    not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
                raise pytest.UsageError(
                    f"expected-failures file {str(path)!r}, entry {i}: expected "
                    f"{{'test': pattern, 'reason': non-empty text}}, got {entry!r}")
            entries.append({"test": entry["test"], "reason": entry["reason"],
                            "device": entry.get("device"), "source": str(path),
                            "matched": [], "passed": []})
    return entries


def _pattern_matches(pattern, case):
    """Shell-style match where only ``*`` and ``?`` are wildcards (test ids contain [ ])."""
    regex = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch)
                    for ch in pattern)
    return re.fullmatch(regex, case) is not None


# -- collection --------------------------------------------------------------------------------
def pytest_generate_tests(metafunc):
    """Parametrize the ``kit`` fixture over the selected backends and devices."""
    if "kit" not in metafunc.fixturenames:
        return
    state = metafunc.config.stash[_STATE_KEY]
    state.active = True
    targets = state.targets()
    metafunc.parametrize("kit", targets, ids=[t.id for t in targets], indirect=True)


def _case_key(item, target):
    name = getattr(item, "originalname", item.name)
    params = item.callspec.id if hasattr(item, "callspec") else ""
    tid = target.id
    if params == tid:
        params = ""
    elif params.startswith(tid + "-"):
        params = params[len(tid) + 1:]
    elif params.endswith("-" + tid):
        params = params[:-len(tid) - 1]
    else:
        params = params.replace("-" + tid + "-", "-")
    module = Path(str(item.fspath)).name
    return f"{module}::{name}[{params}]" if params else f"{module}::{name}"


def _feature(item):
    """"level.case": the level is the module's LEVEL (default: its name without test_), the
    case the ``case`` parameter's ``feature``/``name``/``op`` (default: the function name)."""
    module = Path(str(item.fspath)).stem
    level = getattr(getattr(item, "module", None), "LEVEL", None) or (
        module[5:] if module.startswith("test_") else module)
    params = item.callspec.params if hasattr(item, "callspec") else {}
    case = params.get("case")
    label = None
    if case is not None:
        for attr in ("feature", "name", "op"):
            value = getattr(case, attr, None)
            if isinstance(value, str):
                label = value
                break
        if label is None and isinstance(case, str):
            label = case
    if label is None:
        label = getattr(item, "originalname", item.name)
        label = label[5:] if label.startswith("test_") else label
    if isinstance(params.get("path"), str):
        label = f"{label} ({params['path']})"
    return f"{level}.{label}"


def _dtype_of(item):
    params = item.callspec.params if hasattr(item, "callspec") else {}
    d = params.get("dtype")
    if d is None:
        return "-"
    name = getattr(d, "name", d)
    return str(name)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    """Attach expected failures to the kit's items and remember their metadata; with
    ``--mscore-quick``, deselect all but a sample of the cases."""
    state = config.stash[_STATE_KEY]
    if config.getoption("mscore_quick"):
        dropped = _quick_deselection(items)
        if dropped:
            items[:] = [i for i in items if i not in dropped]
            config.hook.pytest_deselected(items=list(dropped))
    for item in items:
        path = Path(str(item.fspath))
        if path.parent == _KIT_TESTS:
            state.modules.add(path.name)
        if "kit" not in getattr(item, "fixturenames", ()) or not hasattr(item, "callspec"):
            continue
        target = item.callspec.params.get("kit")
        if target is None or not hasattr(target, "spec"):
            continue
        case = _case_key(item, target)
        info = {"case": case, "feature": _feature(item), "dtype": _dtype_of(item),
                "needs": tuple(c for m in item.iter_markers(_KIT_MARKER) for c in m.args),
                "backend": target.name, "device": target.device, "target": target,
                "path": str(item.fspath), "name": item.name}
        state.items[item.nodeid] = info
        for entry in state.entries_for(target.name):
            if entry["device"] and entry["device"] != target.device:
                continue
            if _pattern_matches(entry["test"], case):
                entry["matched"].append(item.nodeid)
                info["expected_failure"] = entry["reason"]
                item.add_marker(pytest.mark.xfail(reason=f"expected failure: "
                                                         f"{entry['reason']}", strict=False))
                break


def pytest_deselected(items):
    """Count deselected kit tests: a run with any is not a full run of the kit."""
    state = _current_state
    if state is not None:
        state.deselected += sum(1 for i in items if "kit" in getattr(i, "fixturenames", ()))


def _quick_deselection(items):
    """The kit items ``--mscore-quick`` leaves out. Per test function and target, an item
    (case, dtype) stays when ``(hash(case) + rank(dtype)) % QUICK_STRIDE == 0``: about one in
    :data:`QUICK_STRIDE` of the cases of each dtype, a different share for each dtype. Every
    test function keeps at least one item and every declared dtype at least one test. Items
    of undeclared dtypes stay (they are skipped with the reason); unparametrized tests and
    capability checks stay."""
    groups, dtypes = {}, {}
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        target = params.get("kit")
        if target is None or getattr(target, "spec", None) is None:
            continue
        if any(True for _ in item.iter_markers(_KIT_MARKER)):
            continue  # capability checks are few and each certifies a declaration
        dtype = params.get("dtype")
        name = "-" if dtype is None else getattr(dtype, "name", dtype)
        if dtype is not None and name not in target.dtypes:
            continue
        case = tuple(sorted((k, getattr(v, "id", None) or repr(v)) for k, v in params.items()
                            if k not in ("kit", "dtype")))
        if not case and dtype is None:
            continue
        key = (target.id, str(item.path), getattr(item, "originalname", item.name))
        groups.setdefault(key, []).append((stable_seed(*key[1:], case), name, item))
        dtypes.setdefault((target.id, name), []).append(item)
    order = list(_report._DTYPE_ORDER)
    keep = set()
    for members in groups.values():
        chosen = [item for h, name, item in members
                  if (h + (order.index(name) if name in order else len(order))) %
                  QUICK_STRIDE == 0]
        keep.update(chosen or [min(members, key=lambda m: m[0])[2]])
    for (_, name), members in dtypes.items():
        if name != "-" and not keep.intersection(members):
            keep.add(members[0])
    return {item for members in groups.values() for _, _, item in members} - keep


# -- the fixture -------------------------------------------------------------------------------
@pytest.fixture
def kit(request):
    """The backend under test (a :class:`mscore.conformance.kit.Kit`), active on its device,
    seeded with ``ms.set_seed(0)``; numpy on CPU is restored afterwards."""
    target = request.param
    if target.unavailable:
        pytest.skip(target.unavailable)
    params = request.node.callspec.params
    dtype = params.get("dtype")
    if dtype is not None:
        name = harness.dtype_name(dtype)
        if name not in target.dtypes:
            pytest.skip(target.undeclared_dtype(name))
    for marker in request.node.iter_markers(_KIT_MARKER):
        for cap in marker.args:
            if cap not in target.capabilities:
                pytest.skip(f"capability {cap!r} not declared by {target.declarer}")
    state = request.config.stash[_STATE_KEY]
    info = state.items.get(request.node.nodeid, {})
    record = Record()
    info["record"] = record
    case = info.get("case") or _case_key(request.node, target)
    try:
        k = Kit(target, case, record)
        k.quick = bool(request.config.getoption("mscore_quick"))
        k.seed, k.thorough = state.seed, state.thorough
        k.replay = ("-k", request.node.name)
        state.call_logs[target.id] = k.calls
        k.activate()
        ms.set_context(mode=ms.PYNATIVE_MODE)
    except Exception as exc:
        _restore()
        pytest.fail(f"backend {target.name} could not be selected on {target.device}: "
                    f"{type(exc).__name__}: {exc}", pytrace=False)
    ms.set_seed(0)
    try:
        yield k
    finally:
        _restore()


def _restore():
    ms.set_context(backend="numpy", device_target="CPU", device_id=0, mode=ms.PYNATIVE_MODE)


# -- results -----------------------------------------------------------------------------------
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Add the reproduction command under a kit test's failure."""
    outcome = yield
    rep = outcome.get_result()
    state = item.config.stash[_STATE_KEY]
    info = state.items.get(item.nodeid)
    if info is None:
        return
    if rep.failed:
        rep.sections.append(("mscore conformance: reproduce with", repro_command(item, info)))


def pytest_runtest_logreport(report):
    """Collect the outcome of every kit test phase (setup, call, teardown)."""
    # The state lives on the config; find it through the running session's plugin manager.
    state = _current_state
    if state is None:
        return
    info = state.items.get(report.nodeid)
    if info is None:
        return
    res = state.results.setdefault(report.nodeid, {"outcome": None, "duration": 0.0,
                                                   "message": ""})
    res["duration"] += getattr(report, "duration", 0.0) or 0.0
    outcome = None
    if report.when == "setup":
        if report.skipped:
            outcome = "skipped"
            res["message"] = _skip_reason(report)
        elif report.failed:
            outcome = "error"
            res["message"] = _failure_message(report)
    elif report.when == "call":
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
            res["message"] = report.wasxfail
        elif report.passed:
            outcome = "passed"
        elif report.failed:
            outcome = "failed"
            res["message"] = _failure_message(report)
        elif report.skipped:
            outcome = "skipped"
            res["message"] = _skip_reason(report)
    elif report.when == "teardown" and report.failed and res["outcome"] in (None, "passed"):
        outcome = "error"
        res["message"] = _failure_message(report)
    if outcome is not None:
        res["outcome"] = outcome


_current_state = None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """Remember the state so per-report hooks can reach it."""
    global _current_state
    _current_state = session.config.stash.get(_STATE_KEY, None)


def _skip_reason(report):
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        msg = str(lr[2])
        return msg[len("Skipped: "):] if msg.startswith("Skipped: ") else msg
    return str(lr)


def _failure_message(report):
    lr = report.longrepr
    crash = getattr(lr, "reprcrash", None)
    if crash is not None and crash.message:
        if crash.message.rstrip(": ") == "AssertionError":
            return _bare_assertion(crash)
        return crash.message
    text = str(lr).strip().splitlines()
    return text[-1] if text else "failed"


def _bare_assertion(crash):
    """A bare ``assert`` (no message; the kit's modules are not assertion-rewritten) named by
    the check it made: "AssertionError: assert x == y (test_fused.py:358)"."""
    import linecache
    source = linecache.getline(str(crash.path), int(crash.lineno)).strip()
    where = f"{Path(str(crash.path)).name}:{crash.lineno}"
    return f"AssertionError: {source} ({where})" if source else f"AssertionError at {where}"


def repro_command(item, info):
    """One shell line that re-runs this kit test alone."""
    target = info["target"]
    parts = [sys.executable, "-m", "pytest", _quote(f"{info['path']}::{item.name}"),
             f"--mscore-backend={target.name}", f"--mscore-device={target.device}"]
    for mod in item.config.getoption("mscore_plugin") or []:
        parts.append(f"--mscore-plugin={mod}")
    for path in item.config.getoption("mscore_xfail") or []:
        parts.append(f"--mscore-xfail={_quote(os.path.abspath(path))}")
    state = item.config.stash.get(_STATE_KEY, None)
    if state is not None:   # the same generated examples
        parts.append(f"--mscore-seed={state.seed}")
        if state.thorough:
            parts.append("--mscore-thorough")
    parts += ["-p", "no:cacheprovider"]
    return " ".join(parts)


def _quote(text):
    import shlex
    return shlex.quote(text)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """Turn the kit's results into the run's verdict and exit status (before the terminal
    summary prints them)."""
    state = session.config.stash.get(_STATE_KEY, None)
    if state is None or not state.active:
        return
    state.entries = _report.test_entries(state)
    state.coverage = _report.coverage_tables(state, state.entries)
    state.verdict = verdict(state.targets(), state.entries, state.coverage,
                            _is_full_run(session.config, state), int(exitstatus))
    session.exitstatus = state.verdict.exit_status


def _is_full_run(config, state):
    """True when the whole kit was selected: every one of its test modules collected (not
    one module named by path or ``--pyargs``), no -k/-m, no deselection, no quick sample, no
    test named on the command line."""
    every_module = {p.name for p in _KIT_TESTS.glob("test_*.py")}
    return every_module <= state.modules and not (
        config.getoption("keyword") or config.getoption("markexpr") or
        config.getoption("mscore_quick") or state.deselected or
        any("::" in str(a) for a in config.args))


def pytest_collection_finish(session):
    """The seed of the generated cases, before the kit's first test runs (nothing in other
    test sessions)."""
    state = session.config.stash.get(_STATE_KEY, None)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if state is not None and state.active and reporter is not None:
        reporter.write_line(seed_line(state))


def seed_line(state):
    """"mscore conformance: generated cases with seed N (...)"."""
    budget = THOROUGH_EXAMPLES if state.thorough else DEFAULT_EXAMPLES
    return (f"mscore conformance: generated cases with seed {state.seed}, {budget} examples "
            f"per test{' (--thorough)' if state.thorough else ''}; replay with --seed "
            f"{state.seed}")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Print the matrix, the coverage, the failures' reproduction lines, stale expected
    failures and the verdict; write the JSON report."""
    state = config.stash.get(_STATE_KEY, None)
    if state is None or state.verdict is None:
        return
    tr = terminalreporter
    for nodeid, info in state.items.items():
        res = state.results.get(nodeid)
        if res and res["outcome"] in ("failed", "error"):
            res["repro"] = repro_command(_ItemProxy(info, config), info)
    entries = state.entries = _report.test_entries(state)
    if not config.getoption("mscore_no_matrix"):
        for backend in sorted({e["backend"] for e in entries}):
            _report.print_matrix(tr, backend, [e for e in entries if e["backend"] == backend])
        for target in state.targets():
            if target.id in state.coverage:
                _report.print_coverage(tr, target, state.coverage[target.id])
    _report.print_failures(tr, entries)
    stale = _report.stale_entries(state)
    if stale:
        tr.section("mscore conformance: stale expected failures")
        for s in stale:
            tr.write_line(f"{s['backend']}: {s['test']!r} ({s['source']}): {s['stale_because']}")
    tr.write_line(seed_line(state))
    _report.print_verdict(tr, state.verdict)
    path = config.getoption("mscore_report")
    md_path = config.getoption("mscore_markdown")
    if path or md_path:
        profile = "quick" if config.getoption("mscore_quick") else (
            "full" if _is_full_run(config, state) else "selection")
        data = _report.build_report(state, entries, stale, state.verdict, state.coverage,
                                    profile)
        if path:
            _report.write_report(path, data)
            tr.write_line(f"mscore conformance report written to {path}")
        if md_path:
            _report.write_text(md_path, _report.markdown(data))
            tr.write_line(f"mscore conformance tolerance table written to {md_path}")


class _ItemProxy:
    """Enough of an item for :func:`repro_command` after the session."""

    def __init__(self, info, config):
        self.name = info["name"]
        self.config = config
