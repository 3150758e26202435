"""``--bisect``: find the first cell, op and dtype where a drifting backend differs.

At the first step ``t`` whose one-step check failed, both backends get the reference's weights
before step ``t`` and batch ``t``. On the reference, forward hooks on every cell of the loss network
record each cell call's inputs and output, and a zero "probe" added to every output (the hook
returns ``output + probe``) gives, as the gradient of the scaled loss with respect to the probes,
the gradient arriving at each cell's output. Then every cell call is re-run on its own, on both
backends, from the *reference's* inputs and output gradient: its output, and the gradients of its
inputs and parameters. Fed identical inputs, a correct cell agrees within
:func:`~mscore.compare.tolerance.local_tolerance` of its dtype, so the differences do not pile up
along the network and the first cell that differs is the culprit: the first to finish whose output
differs, or else the innermost whose gradients differ, taken in backward order. Inside that cell the
ops the drifting backend ran (watched through the backend contract) are replayed one by one on the
reference, output and gradient, and the first op that differs is named with its dtype.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mscore import dispatch
from mscore.common import dtype as mdt
from mscore.common.parameter import MutationScope, Parameter
from mscore.common.tensor import Tensor
from mscore.compare import _ops, _run
from mscore.compare.tolerance import eps, local_tolerance
from mscore.dataset.engine import to_tensor
from mscore.ops import functional as F
from mscore.ops.grad import value_and_grad
from mscore.train.serialization import load_param_into_net

_FLOAT_KINDS = "fV"


@dataclass
class CellCall:
    """One call of one cell in the reference's forward pass."""

    index: int            # completion order
    started: int          # start order (descendants start later and finish earlier)
    path: str             # path inside the loss network (stable across builds)
    name: str             # path inside the user's network when it is part of it
    cls: str
    args: tuple
    out: object           # HostArray, or None for a non-Tensor output
    cotangent: object = None   # numpy gradient arriving at the output

    def contains(self, other):
        """True when ``other`` ran inside this call."""
        return self.started < other.started and other.index < self.index


@dataclass
class Finding:
    """The outcome of bisecting one drifting backend."""

    backend: str
    reference: str
    step: int
    cell: str | None = None
    cell_type: str = ""
    kind: str = ""                 # "output" or "gradient"
    rel: float | None = None
    tol: float | None = None
    dtype: str = ""
    op: str | None = None
    op_dtype: str = ""
    op_kind: str = ""
    op_rel: float | None = None
    op_tol: float | None = None
    note: str = ""
    cells: list = field(default_factory=list)

    def describe(self):
        """One paragraph for the table."""
        head = f"bisect {self.backend} vs {self.reference} at step {self.step}: "
        if self.cell is None:
            return head + (self.note or "no cell differs given identical inputs")
        text = (head + f"first differing cell {self.cell!r} ({self.cell_type}): its "
                f"{self.kind} differs by {self.rel:.2e} (tolerance {self.tol:.1e}, "
                f"{self.dtype})")
        if self.op is not None:
            text += (f"; op {self.op!r} on {self.op_dtype}: its {self.op_kind} differs by "
                     f"{self.op_rel:.2e} (tolerance {self.op_tol:.1e})")
        elif self.note:
            text += f"; {self.note}"
        return text

    def to_dict(self):
        """JSON-ready data."""
        return dict(self.__dict__)


def bisect_drifts(factory, lanes, batches, options):
    """A :class:`Finding` for every lane whose one-step check failed, at its first failing
    step (``lane.snapshot`` holds the reference's weights before that step)."""
    findings = []
    reference = lanes[0].target
    for lane in lanes[1:]:
        snapshot = getattr(lane, "snapshot", None)
        if snapshot is None:
            continue
        step, weights, loss_scale = snapshot
        try:
            findings.append(bisect_step(factory, reference, lane.target, step,
                                        batches[step - 1], weights, options, loss_scale))
        except Exception as exc:  # the bisect is a diagnosis: report why it stopped
            findings.append(Finding(lane.target.label, reference.label, step,
                                    note=f"bisect failed: {type(exc).__name__}: {exc}"))
    return findings


def bisect_step(factory, reference, target, step, batch, weights, options, loss_scale):
    """Bisect ``target`` against ``reference`` at ``step`` from the reference's network
    ``weights`` before it (see the module docstring)."""
    finding = Finding(target.label, reference.label, step)
    opts = dict(options, mode="pynative")
    ref_net = _Built(factory, reference, opts, weights)
    calls = ref_net.record(batch, loss_scale)
    ref_results = ref_net.check_all(calls)
    test_net = _Built(factory, target, opts, weights)
    test_results = test_net.check_all(calls)
    finding.cells = _cell_table(calls, ref_results, test_results)
    culprit = _culprit(calls, finding.cells)
    if culprit is None:
        finding.note = ("no cell differs given identical inputs and weights: the difference "
                        "is in the optimizer update or the loss scaling")
        return finding
    call, row = culprit
    finding.cell = call.name
    finding.cell_type = call.cls
    finding.kind, finding.rel, finding.tol, finding.dtype = (row["kind"], row["rel"],
                                                             row["tol"], row["dtype"])
    _find_op(finding, call, test_net, ref_net)
    return finding


class _Built:
    """The factory's model built on one backend, holding the reference's weights."""

    def __init__(self, factory, target, options, state):
        self.target = target
        self.options = options
        _, self.trainee = _run.build_on(target, factory, options["amp_level"], "pynative",
                                        options["seed"])
        self._load(state)
        train = self.trainee.model.train_network
        self.loss_cell = getattr(train, "network", None)
        if self.loss_cell is None:
            raise ValueError("the train network has no 'network' (loss) cell to bisect")
        self.loss_cell.set_train(True)
        users = {id(c): p for p, c in self.trainee.network.cells_and_names()}
        self.cells = {}
        for path, cell in self.loss_cell.cells_and_names():
            name = users.get(id(cell))
            self.cells[path] = (cell, path if name is None else (name or "<network>"))

    def activate(self):
        """Make this build's backend the active one."""
        _run.activate(self.target, "pynative")

    def _load(self, state):
        params = {k: Tensor(v) for k, v in state.items()}
        for _, p in self.trainee.network.parameters_and_names():
            if p.name in params and params[p.name].dtype is not p.dtype:
                params[p.name] = Tensor(state[p.name].astype(p.dtype.np_dtype))
        load_param_into_net(self.trainee.network, params, strict_load=True)

    # -- the reference's pass ---------------------------------------------------------------
    def record(self, batch, loss_scale):
        """The cell calls of one forward pass on ``batch``, with the gradients (of the loss
        times ``loss_scale``) arriving at each output."""
        self.activate()
        inputs = [to_tensor(a) for a in batch]
        calls = []
        with MutationScope() as scope, self._hooks(calls, None):
            self.loss_cell(*inputs)
            scope.restore()
        probes = {c.index: Parameter(Tensor(np.zeros(c.out.value.shape, c.out.value.dtype)),
                                     name=f"mscore_bisect_probe.{c.index}")
                  for c in calls if _is_float(c.out)}
        order = sorted(probes)

        def scaled_loss(*xs):
            loss = self.loss_cell(*xs)
            return F.mul(loss, float(loss_scale))

        with MutationScope() as scope, self._hooks([], probes):
            _, grads = value_and_grad(scaled_loss, None, [probes[i] for i in order])(*inputs)
            scope.restore()
        for i, g in zip(order, grads):
            calls[i].cotangent = g.asnumpy()
        return calls

    def _hooks(self, calls, probes):
        from contextlib import ExitStack
        stack = ExitStack()
        counter = {"start": 0, "end": 0}
        started = {}

        def pre(cell, args):
            started.setdefault(id(cell), []).append(counter["start"])
            counter["start"] += 1

        def post_for(path, name):
            def post(cell, args, out):
                index = counter["end"]
                counter["end"] += 1
                if probes is not None:
                    probe = probes.get(index)
                    return None if probe is None else F.add(out, F.cast(probe, out.dtype))
                backend = _active()
                calls.append(CellCall(
                    index=index, started=started[id(cell)].pop(), path=path, name=name,
                    cls=type(cell).__name__, args=_args_to_host(backend, args),
                    out=_ops.HostArray(out.asnumpy()) if isinstance(out, Tensor) else None))
                return None
            return post

        for path, (cell, name) in self.cells.items():
            h1 = cell.register_forward_pre_hook(pre)
            h2 = cell.register_forward_hook(post_for(path, name))
            stack.callback(h1.remove)
            stack.callback(h2.remove)
        return stack

    # -- local checks ------------------------------------------------------------------------
    def check_all(self, calls):
        """For every call: this backend's output and gradients of the cell fed the
        reference's inputs and output gradient (or the error that stopped it)."""
        self.activate()
        return [self.check(call) for call in calls]

    def check(self, call):
        """``{"out", "grads"}`` (numpy) of ``call``'s cell re-run alone, or ``{"error"}``."""
        cell = self.cells[call.path][0]
        try:
            with MutationScope() as scope:
                try:
                    return _local(cell, _args_to_native(call.args), call.cotangent)
                finally:
                    scope.restore()
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}


def _active():
    return dispatch.backend()


def _is_float(host):
    return isinstance(host, _ops.HostArray) and host.value.dtype.kind in _FLOAT_KINDS


def _args_to_host(backend, args):
    return tuple(_ops.HostArray(a.asnumpy()) if isinstance(a, Tensor) else a for a in args)


def _args_to_native(args):
    return [Tensor(a.value) if isinstance(a, _ops.HostArray) else a for a in args]


def _local(cell, args, cotangent):
    """Output of ``cell(*args)`` and, given the output's ``cotangent``, the gradients of
    its floating inputs and trainable parameters (numpy, by name)."""
    out = cell(*args)
    result = {"out": out.asnumpy() if isinstance(out, Tensor) else None, "grads": {}}
    if cotangent is None or not isinstance(out, Tensor):
        return result
    positions = tuple(i for i, a in enumerate(args)
                      if isinstance(a, Tensor) and a.dtype.is_floating)
    params = cell.trainable_params()
    if not positions and not params:
        return result
    cot = Tensor(np.asarray(cotangent, np.float32))

    def target(*xs):
        y = cell(*xs)
        return F.sum(F.mul(F.cast(y, mdt.float32), cot))

    _, grads = value_and_grad(target, positions or None, params or None)(*args)
    if positions and params:
        inputs, weights = grads
    elif positions:
        inputs, weights = grads, ()
    else:
        inputs, weights = (), grads
    result["grads"] = {**{f"input {i}": g.asnumpy() for i, g in zip(positions, inputs)},
                       **{p.name: g.asnumpy() for p, g in zip(params, weights)}}
    return result


def _cell_table(calls, ref_results, test_results):
    """Per call: how the drifting backend's local output and gradients compare."""
    rows = []
    for call, ref, test in zip(calls, ref_results, test_results):
        row = {"index": call.index, "cell": call.name, "type": call.cls, "kind": "",
               "rel": None, "tol": None, "dtype": "", "fails": False}
        if "error" in ref or "error" in test:
            row["error"] = ref.get("error") or test.get("error")
            rows.append(row)
            continue
        dtype = _dtype_of(call, calls)
        limit = local_tolerance(dtype)
        out_rel = 0.0 if ref["out"] is None else _run.rel_diff(test["out"], ref["out"])
        grad_rel, worst = 0.0, ""
        for key, g in ref["grads"].items():
            r = _run.rel_diff(test["grads"].get(key), g)
            if r > grad_rel:
                grad_rel, worst = r, key
        kind, rel = ("output", out_rel) if out_rel > limit or out_rel >= grad_rel else \
            (f"gradient ({worst})", grad_rel)
        row.update(kind=kind, rel=rel, tol=limit, dtype=dtype, fails=rel > limit,
                   output_rel=out_rel, grad_rel=grad_rel)
        rows.append(row)
    return rows


def _dtype_of(call, calls):
    """The least precise floating dtype among the inputs and outputs of a call and of every
    call made inside it (a wrapper may take and return float32 and compute in float16)."""
    names = []
    for c in [call] + [o for o in calls if call.contains(o)]:
        names += [a.dtype for a in c.args if _is_float(a)]
        if _is_float(c.out):
            names.append(c.out.dtype)
    names = [n for n in names if n in ("float16", "bfloat16", "float32", "float64")]
    return max(names, key=eps) if names else "float32"


def _culprit(calls, rows):
    """The first cell whose output differs (in completion order), else the innermost
    whose gradients differ, first in backward order."""
    failing = [(c, r) for c, r in zip(calls, rows) if r["fails"]]
    outputs = [(c, r) for c, r in failing if r["kind"] == "output"]
    if outputs:
        return min(outputs, key=lambda cr: cr[0].index)
    innermost = [(c, r) for c, r in failing
                 if not any(c.contains(o) for o, _ in failing if o is not c)]
    if innermost:
        return max(innermost, key=lambda cr: cr[0].index)
    return None


def _find_op(finding, call, test_net, ref_net):
    """Replay the ops the drifting backend ran inside ``call``'s cell on both backends and
    name the first whose output (or input gradient) differs."""
    test_net.activate()
    ops = []
    cell = test_net.cells[call.path][0]
    with MutationScope() as scope, _ops.record_ops(_active(), ops):
        cell(*_args_to_native(call.args))
        scope.restore()
    cots = _op_cotangents(ops, call) if finding.kind != "output" else [None] * len(ops)
    mine = [_safe_replay(op, cot) for op, cot in zip(ops, cots)]
    ref_net.activate()
    theirs = [_safe_replay(op, cot) for op, cot in zip(ops, cots)]
    for op, (out_t, g_t), (out_r, g_r) in zip(ops, mine, theirs):
        if out_t is None or out_r is None or not _is_float(op.out):
            continue
        dtype = op.dtype if op.dtype in ("float16", "bfloat16", "float32", "float64") \
            else "float32"
        limit = local_tolerance(dtype)
        rel = _run.rel_diff(out_t, out_r)
        kind = "output"
        if rel <= limit and g_t is not None and g_r is not None:
            rel = max((_run.rel_diff(a, b) for a, b in zip(g_t, g_r)), default=0.0)
            kind = "input gradient"
        if rel > limit:
            finding.op, finding.op_dtype, finding.op_kind = op.name, dtype, kind
            finding.op_rel, finding.op_tol = rel, limit
            return
    finding.note = (f"none of the {len(ops)} ops the cell ran differs on its own; the "
                    f"difference is in how the cell combines them")


def _op_cotangents(ops, call):
    """Output gradients for replaying ``ops``: the cell's own for the last op that makes an
    output of the cell's shape, random ones of the same magnitude for the others (an
    overflow in float16 depends on it)."""
    cell_cot = call.cotangent
    scale = 1.0 if cell_cot is None else float(np.sqrt(np.mean(np.square(
        np.asarray(cell_cot, np.float64))))) or 1.0
    shape = None if cell_cot is None else np.shape(cell_cot)
    last = max((i for i, op in enumerate(ops)
                if _is_float(op.out) and np.shape(op.out.value) == shape), default=None)
    rng = np.random.default_rng(0)
    cots = []
    for i, op in enumerate(ops):
        if not _is_float(op.out):
            cots.append(None)
        elif i == last:
            cots.append(np.asarray(cell_cot, np.float32))
        else:
            cots.append((rng.standard_normal(np.shape(op.out.value)) * scale)
                        .astype(np.float32))
    return cots


def _safe_replay(op, cot):
    try:
        return _ops.replay(op, cot)
    except Exception:  # an op the other backend cannot run alone: skip it
        return None, None
