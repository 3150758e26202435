"""The pieces of a comparison run: targets, per-step records, the gradient tap, state.

Every backend trains its own copy of the model (the *free* run, whose trajectory is
compared with the reference's) and a *shadow* copy that, before each step, gets the
reference's whole training state (weights, optimizer state, loss scale) of the step before:
the shadow's step then differs from the reference's only by how the backend computes one
step. Backends run in lockstep, one step each in turn, so nothing but the current step's
arrays is kept.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import mscore as ms
from mscore._optional import missing_dependency_hint
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common.tensor import Tensor
from mscore.compare._factory import build_trainee
from mscore.compare.errors import BackendRunError, CompareSetupError
from mscore.dataset.engine import as_dataset, to_tensor
from mscore.nn.cell import Cell
from mscore.plugin.registry import get_registry

MODES = {"pynative": 1, "graph": 0}   # ms.PYNATIVE_MODE, ms.GRAPH_MODE


@dataclass(frozen=True)
class Target:
    """One entry of ``--backends``: a backend name and the device it runs on."""

    label: str
    backend: str
    device: str


def parse_targets(backends, device_target):
    """``["numpy", "torch:GPU"]`` (or ``"numpy,torch:GPU"``) as :class:`Target` objects;
    entries without ``:DEVICE`` run on ``device_target``."""
    if isinstance(backends, str):
        backends = [b.strip() for b in backends.split(",")]
    if not isinstance(backends, (list, tuple)) or not all(isinstance(b, str) for b in backends):
        raise TypeError("backends: expected a list of backend names (or a comma-separated "
                        "str)")
    targets = []
    for entry in backends:
        name, _, device = entry.partition(":")
        device = device or device_target
        if not name:
            raise CompareSetupError(f"backends: empty backend name in {list(backends)}")
        if device not in ("CPU", "GPU", "Ascend"):
            raise CompareSetupError(f"backends: device of {entry!r} must be CPU, GPU or "
                                    f"Ascend, got {device!r}")
        label = name if device == device_target else f"{name}:{device}"
        targets.append(Target(label, name, device))
    labels = [t.label for t in targets]
    if len(targets) < 2:
        raise CompareSetupError(f"backends: expected at least two backends to compare, got "
                                f"{labels}")
    if len(set(labels)) != len(labels):
        raise CompareSetupError(f"backends: each backend may appear once, got {labels}")
    return targets


@dataclass
class StepRecord:
    """What one backend did at one step, and how it compares with the reference.

    ``loss``, ``overflow``, ``loss_scale``, ``grad_norm`` are the backend's own free run.
    The trajectory fields (``loss_rel``, ``grad_norm_rel``, ``grad_rel``, ``weight_rel``)
    compare its free run with the reference's; the ``step_*``, ``update_rel`` and
    ``total_update_rel`` fields compare its shadow step, taken from the reference's state,
    with the reference's step. They are None (or empty) on the reference itself, and for
    gradients on a step where either side skipped the update (overflow).
    """

    step: int
    loss: float
    overflow: bool
    loss_scale: float
    grad_norm: float | None
    loss_rel: float | None = None
    grad_norm_rel: float | None = None
    grad_rel: dict = field(default_factory=dict)
    weight_rel: dict = field(default_factory=dict)
    step_loss_rel: float | None = None
    step_grad_norm_rel: float | None = None
    step_grad_rel: dict = field(default_factory=dict)
    update_rel: dict = field(default_factory=dict)
    total_update_rel: dict = field(default_factory=dict)
    step_overflow_differs: bool = False
    step_loss_scale_rel: float | None = None

    def to_dict(self):
        """The record as JSON-ready values (NaN/inf as strings)."""
        out = {}
        for key, value in self.__dict__.items():
            if isinstance(value, dict):
                value = {k: _json_float(v) for k, v in value.items()}
            else:
                value = _json_float(value)
            out[key] = value
        return out


def _json_float(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


@dataclass
class BackendRun:
    """One backend's run: ``status`` is "ok" or "error" (with ``reason``)."""

    target: Target
    status: str = "ok"
    reason: str = ""
    records: list = field(default_factory=list)
    initial_weight_rel: dict = field(default_factory=dict)
    compute_dtype: str = "float32"
    amp_level: str = "O0"
    draws_random: bool = False


def rel_diff(a, ref):
    """``||a - ref|| / max(||a||, ||ref||)`` in float64 (0 when both are 0).

    Non-finite values agree only where both sides hold the same value (both NaN counts as
    the same); anything else non-finite is ``inf``.
    """
    a = np.asarray(a, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if a.shape != ref.shape:
        return math.inf
    bad_a, bad_r = ~np.isfinite(a), ~np.isfinite(ref)
    if bad_a.any() or bad_r.any():
        if not np.array_equal(bad_a, bad_r):
            return math.inf
        x, y = a[bad_a], ref[bad_a]
        if not ((x == y) | (np.isnan(x) & np.isnan(y))).all():
            return math.inf
        a, ref = np.where(bad_a, 0.0, a), np.where(bad_a, 0.0, ref)
    scale = max(float(np.linalg.norm(a)), float(np.linalg.norm(ref)))
    if scale == 0.0:
        return 0.0
    return float(np.linalg.norm(a - ref)) / scale


def excess_rel(diff, reference_change, own_change, allowance):
    """``max(0, ||diff|| - allowance) / max(||reference_change||, ||own_change||)``: how much
    two changes of a parameter differ beyond ``allowance`` (the rounding the parameter's own
    storage adds), relative to the change (0 within the allowance, inf for non-finite)."""
    diff = np.asarray(diff, np.float64)
    if not np.isfinite(diff).all():
        return math.inf
    excess = float(np.linalg.norm(diff)) - allowance
    if excess <= 0.0:
        return 0.0
    scale = max(float(np.linalg.norm(reference_change)), float(np.linalg.norm(own_change)))
    return math.inf if scale == 0.0 else excess / scale


def storage_eps(arr):
    """Machine epsilon of a parameter's own dtype (its ulp relative to its values); 0 for
    integer parameters, which round nothing."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "V":   # bfloat16
        return 2.0 ** -7
    if arr.dtype.kind != "f":
        return 0.0
    return float(np.finfo(arr.dtype).eps)


def draw_batches(dataset, steps):
    """``steps`` batches of ``dataset`` as tuples of numpy arrays (starting a new epoch when
    one ends), so every backend trains on exactly the same data."""
    ds = as_dataset(dataset, "dataset")
    batches = []
    while len(batches) < steps:
        before = len(batches)
        try:
            for row in ds.create_tuple_iterator(num_epochs=1, output_numpy=True):
                batches.append(tuple(_host(v) for v in row))
                if len(batches) == steps:
                    break
        except SystemExit as exc:
            raise BackendRunError(f"the dataset called sys.exit({exc.code!r}) at batch "
                                  f"{len(batches) + 1}") from None
        except Exception as exc:
            raise BackendRunError(f"the dataset failed at batch {len(batches) + 1}: "
                                  f"{type(exc).__name__}: {exc}") from None
        if len(batches) == before:
            raise CompareSetupError("dataset: it yielded no batch")
    return batches


def _host(value):
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return np.asarray(value)


def network_compute_dtype(network):
    """The lowest-precision float dtype any cell of ``network`` computes in (float32 if
    none is set): how amp levels O1-O3 show in a built network."""
    order = {mdt.float32: 0, mdt.float16: 1, mdt.bfloat16: 2}
    worst = mdt.float32
    for _, cell in network.cells_and_names():
        for dtype in (cell.compute_dtype, getattr(cell, "_low_dtype", None)):
            if dtype in order and order[dtype] > order[worst]:
                worst = dtype
    return worst


class GradTap:
    """Runs the train cell and captures the gradients its optimizer receives.

    A forward pre-hook on the optimizer writes each gradient into a slot Parameter owned by
    a wrapper cell, so the slots are state of the step: in GRAPH_MODE they leave the
    compiled program like any other updated Parameter. On a step the optimizer skips
    (overflow) the slots keep older values, and the gradients count as not taken.
    """

    def __init__(self, trainee):

        optimizer = trainee.optimizer
        self.names = [p.name for p in optimizer.parameters]
        self.unscale = float(getattr(optimizer, "loss_scale", 1.0) or 1.0)
        slots = ParameterTuple(
            Parameter(Tensor(np.zeros(p.shape, np.float32)), name=f"mscore_compare_grad.{i}",
                      requires_grad=False) for i, p in enumerate(optimizer.parameters))

        class _Tapped(Cell):
            """The train cell, owning the gradient slots (so GRAPH_MODE threads them)."""

            def __init__(self, train_network):
                super().__init__(auto_prefix=False)
                self.train_network = train_network
                self.grad_slots = slots

            def construct(self, *inputs):
                return self.train_network(*inputs)

        def tap(cell, inputs):
            for slot, g in zip(slots, inputs[0]):
                slot._assign(g._data)

        self.network = trainee.network
        self.cell = _Tapped(trainee.model.train_network)
        self.slots = slots
        self._handle = optimizer.register_forward_pre_hook(tap)

    def step(self, batch):
        """One train step on ``batch``: ``(loss, overflow, scale, grads or None)``."""
        self.cell.set_train(True)
        out = self.cell(*[to_tensor(a) for a in batch])
        if isinstance(out, (tuple, list)) and len(out) >= 3:
            loss, overflow, scale = out[0], bool(np.all(_host(out[1]))), float(
                np.asarray(_host(out[2])).reshape(-1)[0])
        else:
            loss = out[0] if isinstance(out, (tuple, list)) else out
            overflow, scale = False, 1.0
        loss = float(np.asarray(_host(loss), dtype=np.float64).reshape(-1)[0])
        grads = None
        if not overflow:
            grads = {n: _host(s).astype(np.float64) / self.unscale if self.unscale != 1.0
                     else _host(s) for n, s in zip(self.names, self.slots)}
        return loss, overflow, scale, grads

    def close(self):
        """Remove the optimizer hook."""
        self._handle.remove()

    def state_params(self):
        """Every Parameter of the train cell (network, optimizer state, loss scale), in a
        fixed order, without the gradient slots."""
        slots = {id(s) for s in self.slots}
        return [p for _, p in self.cell.parameters_and_names() if id(p) not in slots]

    def get_state(self):
        """The training state as numpy arrays (see :meth:`state_params`)."""
        return [_host(p) for p in self.state_params()]

    def set_state(self, arrays):
        """Give the training state the values ``arrays`` (from another backend's
        :meth:`get_state`, the same model built by the same factory)."""
        params = self.state_params()
        if len(params) != len(arrays):
            raise BackendRunError(f"the train cell holds {len(params)} parameters here and "
                                  f"{len(arrays)} in the reference's")
        for p, arr in zip(params, arrays):
            if tuple(p.shape) != tuple(arr.shape):
                raise BackendRunError(f"parameter {p.name!r} has shape {tuple(p.shape)} "
                                      f"here and {tuple(arr.shape)} in the reference's")
            p.set_data(Tensor(arr))


def network_weights(network):
    """``{parameter name: numpy array}`` of every parameter of ``network`` (buffers too)."""
    return {p.name: _host(p) for _, p in network.parameters_and_names()}


def global_norm(grads):
    """The L2 norm of all gradients together (float64)."""
    return math.sqrt(sum(float(np.sum(np.square(np.asarray(g, np.float64))))
                         for g in grads.values()))


def activate(target, mode):
    """Select ``target``'s backend and device and the execution mode; a backend that cannot
    run here is a :class:`BackendRunError` with the reason."""
    try:
        spec = get_registry().spec(target.backend)
    except ValueError as exc:
        raise BackendRunError(str(exc)) from None
    try:
        ms.set_context(backend=target.backend, device_target=target.device,
                       mode=MODES[mode])
    except Exception as exc:  # unavailable library, no such device, ...
        raise BackendRunError(f"cannot start on {target.device}: {type(exc).__name__}: "
                              f"{exc}") from None
    return spec


def check_dtype(spec, dtype):
    """A backend that does not declare the compute dtype cannot run the model."""
    if dtype.name not in spec.dtypes:
        raise BackendRunError(f"the model computes in {dtype.name} and backend "
                              f"{spec.name!r} does not support it (its dtypes: "
                              f"{', '.join(spec.dtypes)})")


def build_on(target, factory, amp_level, mode, seed):
    """Select ``target`` and build the factory's model there from ``seed``."""
    spec = activate(target, mode)
    ms.set_seed(seed)
    try:
        trainee = build_trainee(factory, amp_level)
    except CompareSetupError:
        raise
    except SystemExit as exc:  # the run did not happen: never "agree"
        raise BackendRunError(f"the factory called sys.exit({exc.code!r})") from None
    except Exception as exc:
        hint = missing_dependency_hint(exc)
        if hint is not None:  # not the backend's fault: no backend can run it
            raise CompareSetupError(f"the factory failed: {hint}") from exc
        raise BackendRunError(f"the factory failed: {type(exc).__name__}: {exc}") from exc
    return spec, trainee
