"""``compare_backends``: train one model on several backends and compare step by step."""
from __future__ import annotations

import tempfile
import time
import warnings

import mscore as ms
from mscore.amp.convert import AMP_LEVELS
from mscore.compare import _lockstep, _run
from mscore.compare._factory import load_factory
from mscore.compare.bisect import bisect_drifts
from mscore.compare.errors import BackendRunError, CompareSetupError
from mscore.compare.report import CompareReport

# the levels of mscore.amp but 'auto' (which picks O2 or O3 by device)
_AMP = tuple(level for level in AMP_LEVELS if level != "auto")


def _check_options(steps, amp_level, mode, seed, device_target):
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise CompareSetupError(f"steps: expected an int >= 1, got {steps!r}")
    if amp_level is not None and amp_level not in _AMP:
        raise CompareSetupError(f"amp_level: expected one of {list(_AMP)} or None, got "
                                f"{amp_level!r}")
    if mode not in _run.MODES:
        raise CompareSetupError(f"mode: expected 'pynative' or 'graph', got {mode!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise CompareSetupError(f"seed: expected a non-negative int, got {seed!r}")
    if device_target not in ("CPU", "GPU", "Ascend"):
        raise CompareSetupError(f"device_target: expected 'CPU', 'GPU' or 'Ascend', got "
                                f"{device_target!r}")


def compare_backends(factory, backends, steps=50, device_target="CPU", amp_level=None,
                     mode="pynative", seed=0, bisect=False, progress=None):
    """Train the factory's model on every backend in ``backends`` and compare each with the
    first, step by step. Returns a :class:`~mscore.compare.report.CompareReport`.

    Args:
        factory: a function of no arguments returning ``(network, loss_fn, optimizer,
            dataset)`` or ``(model, dataset)``, or its name as ``"module:function"`` /
            ``"script.py:function"``. It is called once per backend, with that backend
            active and ``seed`` set; the first backend's dataset provides the batches for all.
        backends: two or more backend names, first the reference (``["numpy", "torch"]``
            or ``"numpy,torch"``); ``"torch:GPU"`` runs one of them on another device.
        steps: optimizer steps to run.
        device_target: "CPU" or "GPU", for entries without their own device.
        amp_level: "O0"-"O3" for the 4-tuple factory (default "O0"); None for a Model.
        mode: "pynative" or "graph".
        seed: passed to ``mscore.set_seed`` before each build.
        bisect: when a backend drifts, re-run its first drifting step cell by cell and name
            the first cell (and op, and dtype) whose output or gradient differs.
        progress: None, or a function called with one line of text as the work moves on
            (the backend being built, the step being compared, the bisection).

    A backend that cannot run (not installed, no such device, an unsupported dtype, an
    error in a step) is reported with the reason and the others are still compared;
    ``report.exit_code`` is 2 then, else 1 when one drifts beyond tolerance, else 0. Bad
    arguments raise :class:`~mscore.compare.errors.CompareSetupError` (a ValueError).
    """
    if isinstance(factory, str):
        factory = load_factory(factory)
    if not callable(factory):
        raise TypeError(f"factory: expected a callable or 'module:function', got "
                        f"{type(factory).__name__}")
    _check_options(steps, amp_level, mode, seed, device_target)
    if not isinstance(bisect, bool):
        raise TypeError(f"bisect: expected a bool, got {type(bisect).__name__}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected None or a callable, got "
                        f"{type(progress).__name__}")
    targets = _run.parse_targets(backends, device_target)
    options = {"steps": steps, "device_target": device_target, "amp_level": amp_level,
               "mode": mode, "seed": seed}
    saved = {"backend": ms.get_context("backend"),
             "device_target": ms.get_context("device_target"),
             "mode": ms.get_context("mode")}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # float16 overflow on a loss-scaled step is expected and counted in the report
            warnings.filterwarnings("ignore", r".*encountered in", RuntimeWarning)
            report = _compare(factory, targets, options, bisect,
                              progress or (lambda message: None))
    finally:
        ms.set_context(**saved)
    report.wall_s = time.perf_counter() - start
    return report


def _compare(factory, targets, options, bisect, progress):
    with tempfile.TemporaryDirectory(prefix="mscore-compare-") as folder:
        lanes, batches = _build_lanes(factory, targets, options, progress)
        try:
            if lanes[0].run.status == "ok":
                _lockstep.copy_initial_weights(lanes, folder)
                _lockstep.run_steps(lanes, batches, progress)
        finally:
            for lane in lanes:
                if hasattr(lane, "close"):
                    lane.close()
    report = CompareReport([lane.run for lane in lanes], options)
    if bisect and report.drifting:
        progress("bisecting the first drifting step")
        report.bisect = bisect_drifts(factory, lanes, batches, options)
    return report


class _FailedLane:
    """A backend that could not even build the model."""

    def __init__(self, target, reason):
        self.target = target
        self.run = _run.BackendRun(target, status="error", reason=reason)


def _build_lanes(factory, targets, options, progress):
    """A lane per target (a failed one keeps its reason); the reference draws the
    batches."""
    lanes, batches = [], None
    for i, target in enumerate(targets):
        progress(f"building the model on {target.label} ({i + 1}/{len(targets)})")
        try:
            lane = _lockstep.Lane(target, factory, options, shadow=i > 0)
        except BackendRunError as exc:
            lane = _FailedLane(target, str(exc))
        if i == 0:
            if lane.run.status != "ok":
                return [lane] + [_FailedLane(t, f"nothing to compare with: the reference backend "
                                                f"{target.label!r} failed")
                                 for t in targets[1:]], None
            lane.activate()
            try:
                batches = _run.draw_batches(lane.free.dataset, options["steps"])
            except BackendRunError as exc:
                return [_FailedLane(target, str(exc))] + [
                    _FailedLane(t, f"nothing to compare with: the reference backend "
                                   f"{target.label!r} failed") for t in targets[1:]], None
        lanes.append(lane)
    return lanes, batches
