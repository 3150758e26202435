"""Every installed backend, listed without letting one plugin break the listing.

:func:`list_backends` imports the plugins in a child process (``python -m
mscore.plugin.listing``), one entry point after the other, each announced before its import.
A plugin that aborts the child (a crash, ``os.abort()``, ``sys.exit``) or does not finish
importing within the timeout is named as a failure, and a fresh child goes on with the
entry points after it. By default only each spec's cheap ``check`` runs, so no array
library is imported; ``probe=True`` runs the full probes (devices counted).
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import warnings

from mscore.supervisor import signal_name

from .registry import (DEFAULT_BACKEND, Claim, LoadFailure, Registry, choose_claim,
                       entry_points, normalize_distribution, register_builtin, spec_row)

DEFAULT_TIMEOUT = 20.0          # seconds one plugin may take to import (and check)
PROBE_TIMEOUT = 60.0            # ... and to import its array library, with probe=True
_MARK = "@@mscore-listing@@ "   # prefixes the child's protocol lines among a plugin's prints


def list_backends(probe=False, timeout=None):
    """``(rows, failures)``: one :func:`~mscore.plugin.registry.spec_row` dict per backend
    (sorted by name) and the :class:`~mscore.plugin.registry.LoadFailure` of every plugin
    that failed to import, aborted, hung, or collided with another."""
    if timeout is None:
        timeout = PROBE_TIMEOUT if probe else DEFAULT_TIMEOUT
    eps = entry_points()
    rows, failures = [], []
    remaining = list(range(len(eps)))
    while remaining:
        done, failed_at, reason, more_failures = _run_child(remaining, probe, timeout)
        for index in done:
            rows.extend(done[index])
        failures.extend(more_failures)
        if failed_at is None:
            break
        ep = eps[failed_at]
        failures.append(LoadFailure(ep.name, f"import of {ep.value!r} from "
                                             f"{_distribution_name(ep)} {reason}"))
        remaining = remaining[remaining.index(failed_at) + 1:]
    if not any(row["name"] == DEFAULT_BACKEND for row in rows):
        rows.append(_builtin_row(probe))
    return _resolve(rows, failures)


def _run_child(indices, probe, timeout):
    """Import entry points ``indices`` in one child: ``(rows by index, index it died on or
    None, why, failures reported)``."""
    env = dict(os.environ)
    env.pop("MSCORE_STRICT_PLUGINS", None)  # the listing reports failures, never raises
    request = json.dumps({"indices": indices, "probe": bool(probe)})
    proc = subprocess.Popen([sys.executable, "-m", "mscore.plugin.listing", request],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    lines = queue.Queue()
    reader = threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True)
    reader.start()
    done, failures, current = {}, [], None
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
                                       f"MSCORE_PLUGIN_TIMEOUT to wait longer"), failures
            if line is None:  # the child's output ended
                proc.wait()
                if current is None:
                    return done, None, "", failures
                return done, current, _death(proc.returncode), failures
            message = json.loads(line)
            if "begin" in message:
                current = message["begin"]
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
                                                  if c is not claim), problem))
    return chosen, failures


def _child(request):
    """The child's side: import each requested entry point, announcing it first."""
    indices, probe = request["indices"], request["probe"]
    warnings.simplefilter("ignore")
    reg = Registry()
    reg.load()
    pending = list(reg._pending)
    for index in indices:
        ep, shared_name = pending[index]
        _say({"begin": index})
        before = len(reg.failures)
        reg._load_entry_point(ep, shared_name)
        plugin = f"{ep.name}@{_normalized(ep)}" if shared_name else ep.name
        rows = [spec_row(spec, probe) for spec in reg._claims.get(plugin, [])]
        new = [(f.plugin, f.reason) for f in reg.failures[before:]]
        _say({"done": index, "rows": rows, "failures": new})


def _normalized(ep):
    return normalize_distribution(_distribution_name(ep))


def _say(message):
    sys.stdout.write(_MARK + json.dumps(message) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    _child(json.loads(sys.argv[1]))
