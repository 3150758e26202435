"""Run every backend in lockstep: each step, the reference first, then each other backend's
free step and shadow step (see :mod:`mscore.compare._run`)."""
from __future__ import annotations

import math
import os

import numpy as np

from mscore.compare import _run
from mscore.compare._ops import watch_random
from mscore.compare.errors import BackendRunError
from mscore.compare.tolerance import step_tolerance, worse_dtype
from mscore.context import current_backend
from mscore.train.serialization import load_checkpoint, load_param_into_net, save_checkpoint


class Lane:
    """One backend: its free copy of the model and (not for the reference) its shadow."""

    def __init__(self, target, factory, options, shadow):
        self.target = target
        self.options = options
        self.run = _run.BackendRun(target)
        spec, self.free = _run.build_on(target, factory, options["amp_level"],
                                        options["mode"], options["seed"])
        self.run.amp_level = self.free.amp_level
        dtype = _run.network_compute_dtype(self.free.model.train_network)
        self.run.compute_dtype = dtype.name
        _run.check_dtype(spec, dtype)
        self.shadow = None
        if shadow:
            _, self.shadow = _run.build_on(target, factory, options["amp_level"],
                                           options["mode"], options["seed"])
        self.free_tap = _run.GradTap(self.free)
        self.shadow_tap = None if self.shadow is None else _run.GradTap(self.shadow)
        self.totals = {}          # parameter -> sum of (shadow - reference) after each step
        self.initial = {}         # parameter -> the reference's initial value
        self.snapshot = None      # (step, reference weights before it) at the first failure
        self.compare_dtype = self.run.compute_dtype

    def activate(self):
        """Make this lane's backend active again (backends take turns)."""
        _run.activate(self.target, self.options["mode"])

    def step(self, tap, batch, step):
        """One train step of ``tap``'s model on this lane's backend."""
        try:
            with watch_random(current_backend()) as drew:
                loss, overflow, scale, grads = tap.step(batch)
            weights = _run.network_weights(tap.network)
        except BackendRunError:
            raise
        except SystemExit as exc:  # the step did not run: never "agree"
            raise BackendRunError(f"step {step} called sys.exit({exc.code!r})") from None
        except Exception as exc:
            raise BackendRunError(f"step {step} failed: {type(exc).__name__}: {exc}") from exc
        self.run.draws_random |= bool(drew)
        record = _run.StepRecord(step=step, loss=loss, overflow=overflow, loss_scale=scale,
                                 grad_norm=None if grads is None else _run.global_norm(grads))
        return record, grads, weights

    def close(self):
        """Remove the gradient taps."""
        for tap in (self.free_tap, self.shadow_tap):
            if tap is not None:
                tap.close()


def copy_initial_weights(lanes, folder):
    """Write the reference's initial weights with ``save_checkpoint`` and load them into
    every other lane's free and shadow models with ``load_checkpoint``."""
    path = os.path.join(folder, "initial.ckpt")
    ref = lanes[0]
    ref.activate()
    save_checkpoint(ref.free.network, path)
    initial = _run.network_weights(ref.free.network)
    for lane in lanes[1:]:
        if lane.run.status != "ok":
            continue
        try:
            lane.activate()
            for trainee in (lane.free, lane.shadow):
                params = load_checkpoint(path)
                missing, unused = load_param_into_net(trainee.network, params,
                                                      strict_load=True)
                if missing or unused:
                    raise BackendRunError(f"the model built here differs from the "
                                          f"reference's: parameters only here {missing}, "
                                          f"only there {unused}")
            lane.initial = {k: np.asarray(v, np.float64) for k, v in initial.items()}
            mine = _run.network_weights(lane.free.network)
            lane.run.initial_weight_rel = {k: _run.rel_diff(mine[k], v)
                                           for k, v in initial.items()}
        except BackendRunError as exc:
            _fail(lane, str(exc))
        except Exception as exc:
            _fail(lane, f"loading the reference's initial weights failed: "
                        f"{type(exc).__name__}: {exc}")


def _fail(lane, reason):
    lane.run.status, lane.run.reason = "error", reason


def run_steps(lanes, batches, progress=lambda message: None):
    """Train every lane on ``batches`` in lockstep and fill their records; ``progress`` is
    told each step."""
    ref = lanes[0]
    for lane in lanes[1:]:
        lane.compare_dtype = worse_dtype(ref.run.compute_dtype, lane.run.compute_dtype)
    for step, batch in enumerate(batches, 1):
        progress(f"step {step}/{len(batches)} on {len(lanes)} backends")
        ref.activate()
        state_before = ref.free_tap.get_state()
        weights_before = _run.network_weights(ref.free.network)
        try:
            ref_rec, ref_grads, ref_weights = ref.step(ref.free_tap, batch, step)
        except BackendRunError as exc:
            _fail(ref, str(exc))
            for lane in lanes[1:]:
                if lane.run.status == "ok":
                    _fail(lane, f"stopped at step {step}: the reference failed")
            return
        ref.run.records.append(ref_rec)
        for lane in lanes[1:]:
            if lane.run.status != "ok":
                continue
            try:
                lane.activate()
                _lane_step(lane, batch, step, (ref_rec, ref_grads, ref_weights),
                           state_before, weights_before)
            except BackendRunError as exc:
                _fail(lane, str(exc))


def _lane_step(lane, batch, step, ref_out, state_before, weights_before):
    ref_rec, ref_grads, ref_weights = ref_out
    rel = _run.rel_diff
    rec, grads, weights = lane.step(lane.free_tap, batch, step)
    rec.loss_rel = rel(rec.loss, ref_rec.loss)
    if grads is not None and ref_grads is not None:
        rec.grad_norm_rel = rel(rec.grad_norm, ref_rec.grad_norm)
        rec.grad_rel = {k: rel(grads[k], v) for k, v in ref_grads.items()}
    rec.weight_rel = {k: rel(weights[k], v) for k, v in ref_weights.items()}

    lane.shadow_tap.set_state(state_before)
    shadow, s_grads, s_weights = lane.step(lane.shadow_tap, batch, step)
    rec.step_loss_rel = rel(shadow.loss, ref_rec.loss)
    rec.step_overflow_differs = shadow.overflow != ref_rec.overflow
    rec.step_loss_scale_rel = rel(shadow.loss_scale, ref_rec.loss_scale)
    if s_grads is not None and ref_grads is not None:
        rec.step_grad_norm_rel = rel(shadow.grad_norm, ref_rec.grad_norm)
        rec.step_grad_rel = {k: rel(s_grads[k], v) for k, v in ref_grads.items()}
    for k, before in weights_before.items():
        before = np.asarray(before, np.float64)
        ref_after = np.asarray(ref_weights[k], np.float64)
        diff = np.asarray(s_weights[k], np.float64) - ref_after
        ulp = _run.storage_eps(ref_weights[k]) * float(np.linalg.norm(ref_after))
        rec.update_rel[k] = _run.excess_rel(diff, ref_after - before, diff + ref_after - before,
                                            ulp)
        total = lane.totals.get(k, 0.0) + diff
        lane.totals[k] = total
        initial = lane.initial[k]
        rec.total_update_rel[k] = _run.excess_rel(
            total, ref_after - initial, total + ref_after - initial,
            2.0 * math.sqrt(step) * ulp)
    lane.run.records.append(rec)
    if lane.snapshot is None and _step_exceeds(rec, lane.compare_dtype):
        lane.snapshot = (step, weights_before, ref_rec.loss_scale)


def _step_exceeds(rec, dtype):
    """True when the shadow step differs from the reference's beyond tolerance."""
    if rec.step_overflow_differs or (rec.step_loss_scale_rel or 0.0) > 0.0:
        return True
    checks = [("loss", rec.step_loss_rel), ("grad_norm", rec.step_grad_norm_rel)]
    checks += [("grad", v) for v in rec.step_grad_rel.values()]
    checks += [("update", v) for v in rec.update_rel.values()]
    checks += [("total_update", v) for v in rec.total_update_rel.values()]
    return any(v is not None and v > step_tolerance(q, dtype) for q, v in checks)
