"""The result of a comparison: verdicts, the table, the JSON report and the plot."""
from __future__ import annotations

import json
import math
import os

from mscore.compare import tolerance as tol

EXIT_OK, EXIT_DRIFT, EXIT_ERROR = 0, 1, 2


# (record field, per-parameter?) of each quantity
_STEP_FIELDS = {"loss": "step_loss_rel", "grad_norm": "step_grad_norm_rel",
                "grad": "step_grad_rel", "update": "update_rel",
                "total_update": "total_update_rel"}
_TRAJECTORY_FIELDS = {"loss": "loss_rel", "grad_norm": "grad_norm_rel", "grad": "grad_rel",
                      "weight": "weight_rel"}


def _values(rec, field):
    """``[(parameter or None, value)]`` of one record field."""
    value = getattr(rec, field)
    if isinstance(value, dict):
        return list(value.items())
    return [] if value is None else [(None, value)]


class _Track:
    """First step over tolerance and worst ratio of one quantity."""

    def __init__(self):
        self.first = None
        self.worst = None   # {"ratio", "rel", "step", "tol", "param"}

    def see(self, step, value, param, limit):
        ratio = math.inf if math.isinf(value) else value / limit
        if ratio > 1.0 and self.first is None:
            self.first = step
        if self.worst is None or ratio > self.worst["ratio"]:
            self.worst = {"ratio": ratio, "rel": value, "step": step, "tol": limit,
                          "param": param}


class Verdict:
    """How one backend compares with the reference: the one-step checks (the verdict) and
    the free-running trajectory (the divergence, reported)."""

    def __init__(self, run, reference):
        self.run = run
        self.label = run.target.label
        self.status = run.status
        self.reason = run.reason
        self.dtype = tol.worse_dtype(run.compute_dtype, reference.compute_dtype)
        self.step = {q: _Track() for q in tol.STEP_QUANTITIES}
        self.trajectory = {q: _Track() for q in tol.TRAJECTORY_QUANTITIES}
        self.overflow_first = None
        self.overflow_steps = 0
        self.growth_per_step = None
        self.initial_max_rel = max(run.initial_weight_rel.values(), default=0.0)
        if run.status == "ok":
            self._evaluate(run)

    def _evaluate(self, run):
        for rec in run.records:
            t = rec.step
            self.overflow_steps += rec.overflow
            if (rec.step_overflow_differs or (rec.step_loss_scale_rel or 0.0) > 0.0) and \
                    self.overflow_first is None:
                self.overflow_first = t
            for q, field in _STEP_FIELDS.items():
                limit = tol.step_tolerance(q, self.dtype)
                for param, value in _values(rec, field):
                    self.step[q].see(t, value, param, limit)
            for q, field in _TRAJECTORY_FIELDS.items():
                limit = tol.trajectory_tolerance(q, self.dtype, t)
                for param, value in _values(rec, field):
                    self.trajectory[q].see(t, value, param, limit)
        self.growth_per_step = _growth([max(r.weight_rel.values(), default=0.0)
                                        for r in run.records])
        if self.first_drift_step is not None:
            self.status = "drift"

    @property
    def first_drift_step(self):
        """The first step whose one-step check failed (0: the initial weights differ;
        None: never)."""
        if self.initial_max_rel > 0.0:
            return 0
        steps = [tr.first for tr in self.step.values() if tr.first is not None]
        if self.overflow_first is not None:
            steps.append(self.overflow_first)
        return min(steps) if steps else None

    @property
    def trajectory_leaves_envelope(self):
        """The first step at which the free run left the rounding envelope (None: never)."""
        steps = [tr.first for tr in self.trajectory.values() if tr.first is not None]
        return min(steps) if steps else None

    def to_dict(self):
        """JSON-ready summary."""
        def tracks(table):
            return {q: {"first_step_over_tolerance": tr.first,
                        "worst": None if tr.worst is None else
                        {k: _jsonable(v) for k, v in tr.worst.items()}}
                    for q, tr in table.items()}
        return {"backend": self.label, "status": self.status, "reason": self.reason,
                "compute_dtype": self.dtype, "first_drift_step": self.first_drift_step,
                "step_checks": tracks(self.step),
                "overflow_or_scale_differs_from_step": self.overflow_first,
                "trajectory": tracks(self.trajectory),
                "trajectory_leaves_envelope_at": self.trajectory_leaves_envelope,
                "growth_per_step": self.growth_per_step,
                "initial_weights_max_rel_diff": self.initial_max_rel,
                "overflow_steps": self.overflow_steps,
                "draws_random": self.run.draws_random}


def _growth(series):
    """``exp(slope)`` of a least-squares line through ``log(d_t)``: the factor by which the
    divergence grows per step (None with fewer than 3 non-zero points)."""
    pts = [(t, math.log(v)) for t, v in enumerate(series, 1) if v > 0 and math.isfinite(v)]
    if len(pts) < 3:
        return None
    n = len(pts)
    mt = sum(t for t, _ in pts) / n
    my = sum(y for _, y in pts) / n
    var = sum((t - mt) ** 2 for t, _ in pts)
    if var == 0:
        return None
    slope = sum((t - mt) * (y - my) for t, y in pts) / var
    return math.exp(slope)


def _jsonable(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def _fmt(v, spec=".2e"):
    if v is None:
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    return format(v, spec)


class CompareReport:
    """Per-step records of every backend, the verdict of each against the reference,
    ``exit_code`` (0 agree, 1 drift, 2 a backend could not run), ``bisect`` findings, and
    the table / JSON / plot views."""

    def __init__(self, runs, options):
        self.runs = runs
        self.options = dict(options)
        self.reference = runs[0]
        self.verdicts = [Verdict(r, self.reference) for r in runs[1:]]
        self.bisect = []
        self.wall_s = None

    @property
    def exit_code(self):
        """2 when a backend could not run, else 1 when one drifted, else 0."""
        runs = [self.reference] + [v for v in self.verdicts]
        if any(r.status == "error" for r in runs):
            return EXIT_ERROR
        if any(v.status == "drift" for v in self.verdicts):
            return EXIT_DRIFT
        return EXIT_OK

    @property
    def drifting(self):
        """The verdicts of the backends that drifted."""
        return [v for v in self.verdicts if v.status == "drift"]

    # -- views --------------------------------------------------------------------------------
    def to_dict(self):
        """The whole report as JSON-ready data."""
        ref = self.reference
        return {
            "reference": ref.target.label,
            "backends": [r.target.label for r in self.runs],
            "options": self.options,
            "amp_level": ref.amp_level,
            "compute_dtype": ref.compute_dtype,
            "tolerance": {"one_step": "k_q * eps(dtype)",
                          "trajectory": "k_q * eps(dtype) * sqrt(step)",
                          "k": dict(tol.FACTORS), "eps": {d: tol.eps(d) for d in tol.EPS}},
            "exit_code": self.exit_code,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "errors": {r.target.label: r.reason for r in self.runs if r.status == "error"},
            "steps": {r.target.label: [rec.to_dict() for rec in r.records]
                      for r in self.runs},
            "bisect": [b.to_dict() for b in self.bisect],
            "wall_s": self.wall_s,
        }

    def write_json(self, path):
        """Write :meth:`to_dict` to ``path`` (replacing it only once it is complete)."""
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1, allow_nan=False)
        os.replace(tmp, path)

    def table(self):
        """The human summary: per backend, check and quantity, the first step over
        tolerance and the worst ratio of difference to tolerance, with where it happened."""
        o = self.options
        ref = self.reference
        lines = [f"mscore compare: {len(ref.records)} steps, amp {ref.amp_level} "
                 f"(computes in {ref.compute_dtype}), {o['mode']}, seed {o['seed']}; "
                 f"reference {ref.target.label}"
                 + ("" if ref.status == "ok" else f" FAILED: {ref.reason}")]
        head = ("backend", "check", "quantity", "first>tol", "worst rel", "tol", "ratio",
                "step", "parameter")
        rows = [head]
        notes = []
        for v in self.verdicts:
            if v.status == "error":
                notes.append(f"{v.label}: cannot run: {v.reason}")
                continue
            first_row = True
            for check, table in (("one step", v.step), ("trajectory", v.trajectory)):
                for i, (q, tr) in enumerate(table.items()):
                    w = tr.worst
                    rows.append((v.label if first_row else "", check if i == 0 else "", q,
                                 "-" if tr.first is None else str(tr.first),
                                 _fmt(w and w["rel"]), _fmt(w and w["tol"]),
                                 _fmt(w and w["ratio"], ".2f"),
                                 "-" if w is None else str(w["step"]),
                                 (w and w["param"]) or ""))
                    first_row = False
            notes.append(_note(v))
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        for k, row in enumerate(rows if len(rows) > 1 else []):
            lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
            if k == 0:
                lines.append("  ".join("-" * w for w in widths))
        lines.extend(notes)
        for b in self.bisect:
            lines.append(b.describe())
        lines.append({EXIT_OK: "result: every backend within tolerance (exit 0)",
                      EXIT_DRIFT: "result: drift (exit 1)",
                      EXIT_ERROR: "result: a backend could not run (exit 2)"}[self.exit_code])
        return "\n".join(lines)

    def plot(self, path):
        """Draw the relative differences against the step on a log scale: the one-step
        checks above, the free-running trajectory below, one line per backend, the
        tolerance dashed; write the picture to ``path``."""
        import matplotlib
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        panels = [("one step", "loss", "step_loss_rel"), ("one step", "grad", "step_grad_rel"),
                  ("one step", "update", "update_rel"), ("trajectory", "loss", "loss_rel"),
                  ("trajectory", "grad", "grad_rel"), ("trajectory", "weight", "weight_rel")]
        fig, axes = plt.subplots(2, 3, figsize=(13, 7), sharex=True)
        n = len(self.reference.records)
        ts = list(range(1, n + 1))
        for ax, (check, q, field) in zip(axes.flat, panels):
            dtype = None
            for v in self.verdicts:
                if v.status == "error":
                    continue
                dtype = v.dtype
                steps, values = [], []
                for rec in v.run.records:
                    got = [x for _, x in _values(rec, field)]
                    if got:
                        worst = max(got)
                        steps.append(rec.step)
                        values.append(max(worst, 1e-16) if math.isfinite(worst) else 1.0)
                ax.plot(steps, values, marker=".", ms=3, label=v.label)
            if dtype is not None:
                limit = [tol.step_tolerance(q, dtype)] * n if check == "one step" else \
                    [tol.trajectory_tolerance(q, dtype, t) for t in ts]
                ax.plot(ts, limit, "k--", lw=1, label="tolerance")
            ax.set_yscale("log")
            ax.set_title(f"{check}: {q}" + (" (worst parameter)" if q != "loss" else ""))
            ax.grid(True, which="both", alpha=0.3)
        for ax in axes[1]:
            ax.set_xlabel("step")
        for ax in axes[:, 0]:
            ax.set_ylabel(f"relative difference vs {self.reference.target.label}")
        axes[0, 0].legend(fontsize=8)
        fig.suptitle(f"mscore compare against {self.reference.target.label} "
                     f"(exact agreement is drawn at 1e-16)", fontsize=10)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)


def _note(v):
    """The one-line verdict of a backend under the table."""
    if v.status == "drift":
        text = f"{v.label}: DRIFT: a step differs from the reference's from step " \
               f"{v.first_drift_step}"
    else:
        text = f"{v.label}: every step agrees with the reference's within tolerance"
    if v.overflow_first is not None:
        text += f"; overflow flag or loss scale differs from step {v.overflow_first}"
    text += f"; {v.overflow_steps} overflow step(s)"
    leaves = v.trajectory_leaves_envelope
    if leaves is not None:
        text += (f"; the free run leaves the rounding envelope at step {leaves}" +
                 (" (the model amplifies rounding: each step still agrees)"
                  if v.status != "drift" else ""))
    if v.growth_per_step is not None:
        text += f"; weight divergence x{v.growth_per_step:.3f} per step"
    text += "; initial weights identical" if v.initial_max_rel == 0.0 else \
        f"; initial weights differ by {v.initial_max_rel:.1e}"
    if v.run.draws_random:
        text += "; the model draws random numbers (each backend has its own stream)"
    return text
