"""pytest plugin of the conformance kit (registered under ``pytest11``; inert unless asked).

It only acts on tests that request the ``kit`` fixture, which are the modules in
``mscore/conformance/tests/`` (run them with ``pytest --pyargs mscore.conformance`` or
``mscore conformance BACKEND``). For those tests it

- parametrizes ``kit`` over the selected backends and devices (``--mscore-backend``,
  ``--mscore-device``; default: every installed backend on every device it can use here);
- skips a test whose dtype, device or capability the backend does not declare, with the
  reason "... not declared by BACKEND", and every test of a backend whose probe says it
  cannot run here;
- marks the entries of the backend's expected-failures file as xfail and reports stale ones;
- prints a feature x dtype x device matrix and, for each failure, a one-line command that
  reproduces it; ``--mscore-report PATH`` writes everything as JSON.
"""
from __future__ import annotations

import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import pytest

_STATE_KEY = pytest.StashKey()
_KIT_MARKER = "mscore_needs"
LEVEL_ORDER = ("contract", "ops", "grad", "layers", "amp", "training", "checkpoint")
_SYMBOL = {"passed": "ok", "failed": "FAIL", "error": "ERR", "skipped": "--",
           "xfailed": "xf", "xpassed": "XP"}
_RANK = {"error": 6, "failed": 5, "xpassed": 4, "xfailed": 3, "passed": 2, "skipped": 1}


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
    group.addoption("--mscore-xfail", action="append", default=[], metavar="PATH",
                    help="an expected-failures JSON file (repeatable)")
    group.addoption("--mscore-plugin", action="append", default=[], metavar="MODULE",
                    help="register MODULE (a backend plugin not installed through an "
                         "entry point) before the run (repeatable)")
    group.addoption("--mscore-no-matrix", action="store_true", default=False,
                    help="do not print the conformance matrix")


def pytest_configure(config):
    """Register the marker; the kit's state is created here but does nothing by itself."""
    config.addinivalue_line(
        "markers", f"{_KIT_MARKER}(*capabilities): the conformance test needs backend "
                   f"capabilities (skipped with 'not declared by BACKEND' otherwise)")
    config.stash[_STATE_KEY] = KitState(config)


# -- state -------------------------------------------------------------------------------------
class KitState:
    """Targets, expected failures and results of one pytest session."""

    def __init__(self, config):
        self.config = config
        self._targets = None
        self.results = {}            # nodeid -> result dict
        self.items = {}              # nodeid -> item info
        self.xfail_entries = {}      # backend -> list of entry dicts
        self.started = time.time()
        self.active = False

    def option(self, name):
        return self.config.getoption(name)

    # -- targets -------------------------------------------------------------------------------
    def targets(self):
        """The (backend, device) Targets of this run, built once."""
        if self._targets is None:
            self._targets = self._build_targets()
        return self._targets

    def _build_targets(self):
        from mscore.conformance.kit import Target, declared_device_targets, normalize_device
        from mscore.plugin.registry import get_registry
        registry = get_registry()
        for module_name in self.option("mscore_plugin") or []:
            _register_module(registry, module_name)
        installed = registry.names()
        wanted = self.option("mscore_backend")
        if wanted in (None, "", "all"):
            names = installed
        else:
            names = [n.strip() for n in wanted.split(",") if n.strip()]
            missing = [n for n in names if n not in installed]
            if missing:
                from mscore.plugin.hints import unknown_backend_detail
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
            spec = registry.spec(name)
            declared = declared_device_targets(spec) or ["CPU"]
            available, reason, probed = True, "", []
            if spec.probe is not None:
                try:
                    available, reason, probed = spec.probe()
                except Exception as exc:  # a broken probe is a finding, not a crash
                    available, reason = False, f"probe raised {type(exc).__name__}: {exc}"
            if asked is not None:
                devices = asked
            else:
                probed_targets = []
                for d in probed or []:
                    try:
                        probed_targets.append(normalize_device(d).split(":")[0])
                    except ValueError:
                        pass
                devices = [d for d in declared if not probed_targets or d in probed_targets]
                devices = devices or declared[:1]
            for device in devices:
                unavailable = None if available else \
                    f"backend {name} cannot run here: {reason or 'its probe says unavailable'}"
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
        from mscore.plugin.registry import get_registry
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
    """Attach expected failures to the kit's items and remember their metadata."""
    state = config.stash[_STATE_KEY]
    for item in items:
        if "kit" not in getattr(item, "fixturenames", ()) or not hasattr(item, "callspec"):
            continue
        target = item.callspec.params.get("kit")
        if target is None or not hasattr(target, "spec"):
            continue
        case = _case_key(item, target)
        info = {"case": case, "feature": _feature(item), "dtype": _dtype_of(item),
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


# -- the fixture -------------------------------------------------------------------------------
@pytest.fixture
def kit(request):
    """The backend under test (a :class:`mscore.conformance.kit.Kit`), active on its device,
    seeded with ``ms.set_seed(0)``; numpy on CPU is restored afterwards."""
    from mscore.conformance.kit import Kit, Record
    from mscore.conformance import harness
    import mscore as ms
    target = request.param
    if target.unavailable:
        pytest.skip(target.unavailable)
    spec = target.spec
    declared = [d.split(":")[0] for d in spec.devices]
    if target.device_target not in declared:
        pytest.skip(f"{target.device_target} not declared by {target.name}")
    params = request.node.callspec.params
    dtype = params.get("dtype")
    if dtype is not None:
        name = harness.dtype_name(dtype)
        if name not in spec.dtypes:
            pytest.skip(f"{name} not declared by {target.name}")
    for marker in request.node.iter_markers(_KIT_MARKER):
        for cap in marker.args:
            if cap not in spec.capabilities:
                pytest.skip(f"capability {cap!r} not declared by {target.name}")
    state = request.config.stash[_STATE_KEY]
    info = state.items.get(request.node.nodeid, {})
    record = Record()
    info["record"] = record
    case = info.get("case") or _case_key(request.node, target)
    try:
        k = Kit(target, case, record)
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
    import mscore as ms
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
        return crash.message
    text = str(lr).strip().splitlines()
    return text[-1] if text else "failed"


def repro_command(item, info):
    """One shell line that re-runs this kit test alone."""
    target = info["target"]
    parts = [sys.executable, "-m", "pytest", _quote(f"{info['path']}::{item.name}"),
             f"--mscore-backend={target.name}", f"--mscore-device={target.device}"]
    for mod in item.config.getoption("mscore_plugin") or []:
        parts.append(f"--mscore-plugin={mod}")
    for path in item.config.getoption("mscore_xfail") or []:
        parts.append(f"--mscore-xfail={_quote(os.path.abspath(path))}")
    parts += ["-p", "no:cacheprovider"]
    return " ".join(parts)


def _quote(text):
    import shlex
    return shlex.quote(text)


def _test_entries(state):
    entries = []
    for nodeid, info in state.items.items():
        res = state.results.get(nodeid)
        if res is None or res["outcome"] is None:
            continue  # deselected or not run
        record = info.get("record")
        max_abs, max_rel = record.worst() if record is not None else (None, None)
        tol = None
        if record is not None and record.comparisons:
            t = record.comparisons[-1].tolerance
            tol = {"rtol": t.rtol, "atol": t.atol}
        entry = {"nodeid": nodeid, "case": info["case"], "feature": info["feature"],
                 "dtype": info["dtype"], "backend": info["backend"],
                 "device": info["device"], "outcome": res["outcome"],
                 "duration_s": round(res["duration"], 4), "message": res["message"],
                 "max_abs_err": _json_float(max_abs), "max_rel_err": _json_float(max_rel),
                 "comparisons": len(record.comparisons) if record is not None else 0,
                 "tolerance": tol}
        if info.get("expected_failure"):
            entry["expected_failure"] = info["expected_failure"]
        if res["outcome"] in ("failed", "error"):
            entry["repro"] = res.get("repro") or ""
        entries.append(entry)
    return entries


def _json_float(v):
    if v is None:
        return None
    if v != v or v in (float("inf"), float("-inf")):
        return str(v)
    return float(v)


def stale_entries(state):
    """Expected-failure entries that matched no test, or whose tests passed."""
    stale = []
    for backend, entries in state.xfail_entries.items():
        for e in entries:
            outcomes = [state.results.get(n, {}).get("outcome") for n in e["matched"]]
            ran = [o for o in outcomes if o not in (None, "skipped")]
            if not e["matched"]:
                why = "matches no test of the kit"
            elif ran and all(o == "xpassed" for o in ran):
                why = "the test passes now (remove the entry)"
            else:
                continue
            stale.append({"backend": backend, "test": e["test"], "reason": e["reason"],
                          "source": e["source"], "stale_because": why})
    return stale


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Print the feature x dtype x device matrix, the failures' reproduction lines and stale
    expected failures."""
    state = config.stash.get(_STATE_KEY, None)
    if state is None or not state.results:
        return
    tr = terminalreporter
    for nodeid, info in state.items.items():
        res = state.results.get(nodeid)
        if res and res["outcome"] in ("failed", "error"):
            res["repro"] = repro_command(_ItemProxy(info, config), info)
    entries = _test_entries(state)
    if not config.getoption("mscore_no_matrix"):
        for backend in sorted({e["backend"] for e in entries}):
            _print_matrix(tr, backend, [e for e in entries if e["backend"] == backend])
    failed = [e for e in entries if e["outcome"] in ("failed", "error")]
    if failed:
        tr.section("mscore conformance: failures (one line each, then how to reproduce)")
        for e in failed:
            first = (e["message"] or "").strip().splitlines()
            tr.write_line(f"{e['outcome'].upper()} {e['backend']}/{e['device']} {e['feature']} "
                          f"[{e['dtype']}]: {first[0] if first else ''}")
            tr.write_line(f"    reproduce: {e['repro']}")
    stale = stale_entries(state)
    if stale:
        tr.section("mscore conformance: stale expected failures")
        for s in stale:
            tr.write_line(f"{s['backend']}: {s['test']!r} ({s['source']}): {s['stale_because']}")
    path = config.getoption("mscore_report")
    if path:
        report = build_report(state, entries, stale, exitstatus)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(str(path) + ".tmp")
        tmp.write_text(json.dumps(report, indent=1, sort_keys=False))
        os.replace(tmp, path)
        tr.write_line(f"mscore conformance report written to {path}")


class _ItemProxy:
    """Enough of an item for :func:`repro_command` after the session."""

    def __init__(self, info, config):
        self.name = info["name"]
        self.config = config


def _print_matrix(tr, backend, entries):
    from mscore.conformance.harness import SHORT
    devices = sorted({e["device"] for e in entries})
    dtypes_seen = {e["dtype"] for e in entries}
    order = ["-", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
             "int64", "uint8", "bool"]
    dtypes = [d for d in order if d in dtypes_seen] + sorted(dtypes_seen - set(order))
    columns = [(dev, dt) for dev in devices for dt in dtypes]
    cells = {}
    for e in entries:
        key = (e["feature"], e["device"], e["dtype"])
        prev = cells.get(key)
        if prev is None or _RANK[e["outcome"]] > _RANK[prev]:
            cells[key] = e["outcome"]

    def sort_key(feature):
        level, _, name = feature.partition(".")
        rank = LEVEL_ORDER.index(level) if level in LEVEL_ORDER else len(LEVEL_ORDER)
        return (rank, level, name)

    features = sorted({e["feature"] for e in entries}, key=sort_key)
    width = max([len(f) for f in features] + [7])
    heads = [f"{dev if len(devices) > 1 else ''}{' ' if len(devices) > 1 else ''}"
             f"{SHORT.get(dt, dt)}" for dev, dt in columns]
    colw = max([len(h) for h in heads] + [4])
    tr.section(f"mscore conformance matrix: {backend} on {', '.join(devices)}")
    tr.write_line("feature".ljust(width) + " " + " ".join(h.rjust(colw) for h in heads))
    for f in features:
        row = []
        for dev, dt in columns:
            outcome = cells.get((f, dev, dt))
            row.append((_SYMBOL[outcome] if outcome else "").rjust(colw))
        tr.write_line(f.ljust(width) + " " + " ".join(row))
    counts = {}
    for e in entries:
        counts[e["outcome"]] = counts.get(e["outcome"], 0) + 1
    tr.write_line("legend: ok passed, FAIL failed, ERR error, -- skipped, xf expected "
                  "failure, XP unexpectedly passed (stale expected failure)")
    tr.write_line("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    reasons = {}
    for e in entries:
        if e["outcome"] == "skipped":
            reasons[e["message"]] = reasons.get(e["message"], 0) + 1
    for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        tr.write_line(f"skipped {n}: {reason}")


def build_report(state, entries, stale, exitstatus):
    """The JSON report: versions, device, capabilities, every test's outcome and errors."""
    import mscore
    from mscore.conformance.harness import SUITE_VERSION
    backends = {}
    for info in state.items.values():
        target = info["target"]
        key = f"{target.name}@{target.device}"
        if key in backends or not any(e["backend"] == target.name and
                                      e["device"] == target.device for e in entries):
            continue
        spec = target.spec
        backends[key] = {"name": spec.name, "version": spec.version, "plugin": spec.plugin,
                         "device": target.device, "declared_devices": list(spec.devices),
                         "dtypes": list(spec.dtypes),
                         "capabilities": sorted(spec.capabilities),
                         "fused_ops": _fused_ops(target), "available": not target.unavailable,
                         "unavailable_reason": target.unavailable}
    summary = {}
    for e in entries:
        summary[e["outcome"]] = summary.get(e["outcome"], 0) + 1
    return {
        "format": "mscore-conformance-report/1",
        "suite_version": SUITE_VERSION,
        "mscore_version": getattr(mscore, "__version__", "unknown"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pytest": pytest.__version__,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(state.started)),
        "duration_s": round(time.time() - state.started, 2),
        "exit_status": int(exitstatus),
        "passed": summary.get("failed", 0) == 0 and summary.get("error", 0) == 0,
        "summary": summary,
        "backends": list(backends.values()),
        "stale_expected_failures": stale,
        "tests": entries,
    }


def _fused_ops(target):
    if target.unavailable:
        return []
    try:
        from mscore.plugin.backend import FUSED_OPS
        from mscore.plugin.registry import get_registry
        b = get_registry().get(target.name)
        return [n for n in FUSED_OPS if getattr(b, n, None) is not None]
    except Exception:
        return []
