"""Every installed backend, listed without letting one plugin break the listing.

:func:`list_backends` imports the plugins in a child process (``python -m
mscore.plugin.listing``), one entry point after the other, each announced before its import.
A plugin that aborts the child (a crash, ``os.abort()``, ``sys.exit``) or does not finish
importing within the timeout is named as a failure, and a fresh child goes on with the
entry points after it. Each backend whose cheap ``check`` passes is then built (its
factory runs, importing its array library), so a backend listed as available can be built;
``probe=True`` runs the full probes as well (devices counted). :func:`list_backends` also
checks chosen plugins before a command uses them in its own process (``mscore
conformance``): a plugin that aborts or hangs there is named instead of taking the command
down.
"""
from __future__ import annotations

import importlib
import json
import os
import queue
import subprocess
import sys
import threading
import warnings

from mscore.supervisor import signal_name

from .backend import Backend
from .registry import (
    DEFAULT_BACKEND,
    Claim,
    LoadFailure,
    Registry,
    choose_claim,
    entry_points,
    normalize_distribution,
    register_builtin,
    spec_row,
)

DEFAULT_TIMEOUT = 20.0          # seconds one plugin may take to import (and check)
BUILD_TIMEOUT = 60.0            # ... and to build its backend (importing its array library)
TIMEOUT_ENV = "MSCORE_PLUGIN_TIMEOUT"
PROBE_TIMEOUT = 60.0            # ... and to import its array library, with probe=True
_MARK = "@@mscore-listing@@ "   # prefixes the child's protocol lines among a plugin's prints


def list_backends(probe=False, timeout=None, names=None, modules=(), build=True):
    """``(rows, failures)``: one :func:`~mscore.plugin.registry.spec_row` dict per backend
    (sorted by name) and the :class:`~mscore.plugin.registry.LoadFailure` of every plugin
    that failed to import, aborted, hung, collided with another, or whose factory failed.

    ``names``: only the entry points of these names (None: all); ``modules``: plugin modules
    that are not installed, ``"module[:name]"`` (``mscore conformance --plugin``), imported
    after them. ``build``: build each backend its check finds usable (its factory runs, so
    its array library is imported); a collection of names builds only those. A plugin that
    failed has a row too, whose status is ``"failed to load: <the cause's first line>"``."""
    timeouts = (timeout, timeout) if timeout is not None else \
        (plugin_timeout(probe), plugin_timeout(building=True))
    eps = entry_points()
    jobs = [["ep", i] for i, ep in enumerate(eps) if names is None or ep.name in names]
    jobs += [["module", m] for m in modules]
    rows, failures = [], []
    remaining = list(jobs)
    while remaining:
        done, failed_at, reason, more_failures = _run_child(remaining, probe, build, timeouts)
        for index in done:
            rows.extend(done[index])
        failures.extend(more_failures)
        if failed_at is None:
            break
        kind, value = remaining[failed_at]
        also = " (or building its backend)" if build else ""
        if kind == "ep":
            ep = eps[value]
            failures.append(LoadFailure(ep.name, f"import of {ep.value!r} from "
                                                 f"{_distribution_name(ep)}{also} {reason}"))
        else:
            failures.append(LoadFailure(value, f"import of the plugin module "
                                               f"{value.partition(':')[0]!r}{also} {reason}"))
        remaining = remaining[failed_at + 1:]
    if names is None and not any(row["name"] == DEFAULT_BACKEND for row in rows):
        rows.append(_builtin_row(probe))
    rows, failures = _resolve(rows, failures)
    return _with_failed_rows(rows, failures, eps, modules), failures


def check_before_use(backends, modules=(), timeout=None):
    """Check, in child processes, the plugins a command is about to import in its own
    process: every entry point, and the plugin ``modules`` (``"module[:name]"``); the
    ``backends`` named (a list, or None for all) are built as well. Returns
    ``(problems, failures)``: ``problems`` maps each of ``backends`` and ``modules`` that
    cannot be used to its cause; ``failures`` are the :class:`LoadFailure` of the plugins
    that failed (name collisions are left to the registry, which reports them; the
    command tells its registry to leave those plugins alone, see
    :meth:`~mscore.plugin.registry.Registry.exclude`)."""
    rows, failures = list_backends(timeout=timeout, modules=modules,
                                   build=True if backends is None else set(backends))
    failures = [f for f in failures if not f.collision]   # the registry reports those
    status = {row["name"]: row["status"] for row in rows}
    problems = {}
    for failure in failures:
        name = failure.plugin.split("@")[0]
        if name in modules or backends is None or name in backends:
            problems.setdefault(name, failure.reason)
    for name in backends or ():
        if status.get(name, "").startswith("failed to load") and name not in problems:
            problems[name] = status[name][len("failed to load: "):]
    return problems, failures


def plugin_timeout(probe=False, building=False):
    """Seconds one plugin may take to import, or to build its backend (``building``):
    ``$MSCORE_PLUGIN_TIMEOUT`` when set, else :data:`DEFAULT_TIMEOUT` to import
    (:data:`PROBE_TIMEOUT` with ``probe``) and :data:`BUILD_TIMEOUT` to build (a build imports
    the array library, which takes seconds on a busy machine)."""
    value = os.environ.get(TIMEOUT_ENV, "")
    try:
        seconds = float(value) if value else None
    except ValueError:
        seconds = None
    if seconds is not None and seconds > 0:
        return seconds
    return BUILD_TIMEOUT if building else PROBE_TIMEOUT if probe else DEFAULT_TIMEOUT


def first_line(text):
    """The first non-blank line of ``text`` (a failure's cause, shortened)."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return ""


def _with_failed_rows(rows, failures, eps, modules):
    """``rows`` and, for each entry point or plugin module that failed and provides no row,
    a row saying so (a plugin's entry point is named after its backend)."""
    dists = {ep.name: _distribution_name(ep) for ep in eps}
    dists.update({m: f"module {m.partition(':')[0]}" for m in modules})
    shown = {row["name"] for row in rows}
    extra = {}
    for failure in failures:
        name = failure.plugin.split("@")[0]
        if failure.collision or name not in dists or name in shown or name in extra:
            continue   # a collision, the listing itself, or a backend with its own row
        dist = dists[name]
        extra[name] = {"name": name, "version": dist.rsplit(" ", 1)[-1] if name in
                       {ep.name for ep in eps} else "", "plugin": failure.plugin,
                       "distribution": dist, "devices": [], "dtypes": [],
                       "undeclared_dtypes": {}, "capabilities": [], "per_device": {},
                       "status": f"failed to load: {first_line(failure.reason)}"}
    return sorted(rows + list(extra.values()), key=lambda row: row["name"])


def _run_child(jobs, probe, build, timeouts):
    """Run ``jobs`` in one child: ``(rows by job position, position it died on or None,
    why, failures reported)``; ``timeouts``: (to import, to build) one plugin."""
    env = dict(os.environ)
    env.pop("MSCORE_STRICT_PLUGINS", None)  # the listing reports failures, never raises
    request = json.dumps({"jobs": jobs, "probe": bool(probe), "path": os.getcwd(),
                          "build": build if isinstance(build, bool) else sorted(build)})
    proc = subprocess.Popen([sys.executable, "-m", "mscore.plugin.listing", request],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    lines = queue.Queue()
    reader = threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True)
    reader.start()
    done, failures, current, timeout = {}, [], None, timeouts[0]
    try:
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                if current is None:
                    return done, None, "", failures + [LoadFailure(
                        "mscore backends", f"the listing process did not start within "
                                           f"{timeout:g} s")]
                return done, current, (f"did not finish within {timeout:g} s (hung?); set "
                                       f"{TIMEOUT_ENV} to wait longer"), failures
            if line is None:  # the child's output ended
                proc.wait()
                if current is None:
                    return done, None, "", failures
                return done, current, _death(proc.returncode), failures
            message = json.loads(line)
            if "begin" in message:
                current, timeout = message["begin"], timeouts[0]
            elif "building" in message:
                timeout = timeouts[1]
            else:
                done[message["done"]] = message["rows"]
                failures.extend(LoadFailure(p, r) for p, r in message["failures"])
                current = None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _pump(stream, lines):
    for line in stream:
        if line.startswith(_MARK):
            lines.put(line[len(_MARK):])
    lines.put(None)


def _death(returncode):
    if returncode is not None and returncode < 0:
        return f"killed the process ({signal_name(-returncode)})"
    return f"ended the process (exit status {returncode})"


def _distribution_name(ep):
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"


def _builtin_row(probe):
    reg = Registry()
    reg._loaded = True  # the built-in plugin only (its metadata is missing)
    register_builtin(reg)
    return reg.describe(DEFAULT_BACKEND, probe)


def _resolve(rows, failures):
    """One row per backend name, chosen as the registry chooses; collisions are failures."""
    by_name = {}
    for row in rows:
        by_name.setdefault(row["name"], []).append(
            Claim(row, row["plugin"], row["distribution"]))
    chosen = []
    for name in sorted(by_name):
        claims = sorted(by_name[name], key=lambda c: (c.distribution, c.plugin))
        claim, problem = choose_claim(name, claims)
        if claim is not None:
            chosen.append(claim.spec)
        if problem:
            failures.append(LoadFailure(", ".join(c.plugin for c in claims
                                                  if c is not claim), problem,
                                        collision=True))
    return chosen, failures


def _child(request):
    """The child's side: run each job (import an entry point or a plugin module, then build
    its backends), announcing it first."""
    jobs, probe, build = request["jobs"], request["probe"], request["build"]
    warnings.simplefilter("ignore")
    if request.get("path"):
        sys.path.insert(0, request["path"])   # --plugin modules given by path-less name
    reg = Registry()
    reg.load()
    reg._loading = True   # name collisions are decided by the parent, over every claim
    pending = list(reg._pending)
    for position, (kind, value) in enumerate(jobs):
        _say({"begin": position})
        before = len(reg.failures)
        if kind == "ep":
            ep, shared_name = pending[value]
            reg._load_entry_point(ep, shared_name)
            plugin = f"{ep.name}@{_normalized(ep)}" if shared_name else ep.name
        else:
            plugin = _register_module(reg, value)
        rows = [spec_row(spec, probe) for spec in reg._claims.get(plugin, [])]
        for spec, row in zip(reg._claims.get(plugin, []), rows):
            if row["status"] == "available" and (build is True or build and
                                                 spec.name in build):
                _say({"building": position})
                _build(reg, plugin, spec, row)
        new = [(f.plugin, f.reason) for f in reg.failures[before:]]
        _say({"done": position, "rows": rows, "failures": new})


def _register_module(reg, spec):
    """Import the plugin module of ``"module[:name]"`` and register it; the plugin name."""
    module_name, _, name = spec.partition(":")
    name = name or module_name.rsplit(".", 1)[-1]
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import-time error of the user's module
        reg._fail(spec, f"import of the plugin module {module_name!r} failed: "
                        f"{type(exc).__name__}: {exc}")
        return name
    reg.register_plugin(module, name, distribution=f"module {module_name}")
    return name


def _build(reg, plugin, spec, row):
    """Build ``spec``'s backend as the registry does (its probe first: a backend that cannot
    run here is marked unavailable, not built); a failure marks ``row`` and is recorded for
    ``plugin``."""
    try:
        if spec.probe is not None:
            available, reason, _ = spec.probe()
            if not available:
                row["status"] = f"unavailable: {reason}"
                return
        backend = spec.factory()
        if not isinstance(backend, Backend):
            raise TypeError(f"it returned {type(backend).__name__}, expected a mscore Backend")
    except Exception as exc:  # any failure of the plugin's factory
        reason = f"building backend {spec.name!r} failed: {type(exc).__name__}: {exc}"
        row["status"] = f"failed to load: {first_line(reason)}"
        reg._fail(plugin, reason)


def _normalized(ep):
    return normalize_distribution(_distribution_name(ep))


def _say(message):
    sys.stdout.write(_MARK + json.dumps(message) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    _child(json.loads(sys.argv[1]))
