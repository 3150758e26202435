"""The ``kit`` object every conformance test receives: one backend on one device.

A test asks the kit to run the same function on the backend under test and on the reference
(numpy, float64) and to compare the results. Tensors hold arrays of the backend that was
active when they were made, so each side builds its own Tensors from numpy inputs and hands
back numpy results before the other side runs.
"""
from __future__ import annotations

import contextlib
import numbers
from dataclasses import dataclass, field

import numpy as np

import mscore as ms
from mscore import context
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.conformance import calls, harness
from mscore.plugin.registry import get_registry

REFERENCE_BACKEND = "numpy"
_REFERENCE_CACHE: dict = {}


@dataclass
class Target:
    """One backend on one device target that the kit runs against."""

    name: str
    device: str                        # "CPU", "GPU", "GPU:1"
    spec: object = None                # the BackendSpec (None when not installed)
    unavailable: str | None = None     # why the backend cannot run here, or None

    @property
    def id(self):
        """The test-id part naming this target ("torch-CPU")."""
        return f"{self.name}-{self.device.replace(':', '')}"

    @property
    def device_target(self):
        """"CPU" or "GPU" (what ``set_context(device_target=...)`` takes)."""
        return self.device.split(":")[0]

    @property
    def device_id(self):
        """The device number (0 unless the device is written "GPU:N")."""
        parts = self.device.split(":")
        return int(parts[1]) if len(parts) > 1 else 0

    @property
    def dtypes(self):
        """The dtypes the backend declares on this device."""
        return self.spec.dtypes_on(self.device) if self.spec is not None else ()

    @property
    def capabilities(self):
        """The capabilities the backend declares on this device."""
        return self.spec.capabilities_on(self.device) if self.spec is not None else frozenset()

    @property
    def declarer(self):
        """Who declares: "torch", or "torch on GPU" when the device has its own entry."""
        if self.spec is not None and self.spec.varies_by_device(self.device):
            return f"{self.name} on {self.device_target}"
        return self.name

    def undeclared_dtype(self, name):
        """The skip reason of a test of dtype ``name`` that this target does not declare:
        "uint16 not declared by torch: REASON", with the reason from the spec's
        ``undeclared_dtypes`` when it gives one."""
        reason = self.spec.undeclared_reason(name) if self.spec is not None else ""
        return f"{name} not declared by {self.declarer}" + (f": {reason}" if reason else "")

    def __repr__(self):
        return self.id


def normalize_device(device):
    """"cpu" -> "CPU", "cuda:1" / "gpu:1" -> "GPU:1"; ValueError for anything else."""
    if not isinstance(device, str) or not device.strip():
        raise ValueError(f"device: expected 'CPU', 'GPU' or 'GPU:N', got {device!r}")
    head, _, num = device.strip().partition(":")
    head = head.upper()
    head = {"CUDA": "GPU"}.get(head, head)
    if head not in ("CPU", "GPU", "ASCEND"):
        raise ValueError(f"device: expected 'CPU', 'GPU' or 'GPU:N', got {device!r}")
    if head == "ASCEND":
        head = "Ascend"
    if num:
        if not num.isdigit():
            raise ValueError(f"device: the device number must be an int, got {device!r}")
        return f"{head}:{int(num)}"
    return head


def declared_device_targets(spec):
    """The device targets ("CPU", "GPU") a spec declares, normalized, in order."""
    out = []
    for d in spec.devices:
        try:
            t = normalize_device(d).split(":")[0]
        except ValueError:
            continue
        if t not in out:
            out.append(t)
    return out


@dataclass
class Record:
    """What one test measured: every comparison it made."""

    comparisons: list = field(default_factory=list)

    def worst(self):
        """``(max_abs_err, max_rel_err)`` over the comparisons, or ``(None, None)``."""
        if not self.comparisons:
            return None, None
        return (max(c.max_abs_err for c in self.comparisons),
                max(c.max_rel_err for c in self.comparisons))

    def closest(self):
        """The comparison that used the largest share of its tolerance (error / allowed
        error; above 1 it failed), or None when nothing was compared."""
        return max(self.comparisons, key=lambda c: c.ratio, default=None)


class Kit:
    """The backend under test, as a conformance test sees it (the ``kit`` fixture).

    Attributes: ``name`` (backend name), ``device`` ("CPU", "GPU:0"), ``spec`` (its
    BackendSpec), ``backend`` (the built Backend), ``ref`` (the numpy reference Backend),
    ``rng`` (a numpy Generator seeded from the test's name: the same inputs on every backend),
    ``quick`` (True in a ``--quick`` run: a test with many programs may check a sample),
    ``seed`` (the run's seed of the generated cases), ``thorough`` (many more generated
    examples) and ``replay`` (the ``mscore conformance`` arguments that select this test).
    """

    quick = False

    def __init__(self, target, case_key, record):
        self.target = target
        self.name = target.name
        self.device = target.device
        self.spec = target.spec
        self.case_key = case_key
        self.record = record
        registry = get_registry()
        self.backend = registry.get(target.name)
        self.ref = registry.get(REFERENCE_BACKEND)
        self.calls = calls.instrument(self.backend)
        self.rng = np.random.default_rng(harness.stable_seed(case_key))
        self.seed = 0
        self.thorough = False
        self.replay = ()

    def replay_command(self):
        """The command that runs this test again with the run's seed."""
        import shlex
        return " ".join(["mscore", "conformance", self.name, "--device", self.device,
                         "--seed", str(self.seed)] + (["--thorough"] if self.thorough else [])
                        + [shlex.quote(a) for a in self.replay])

    # -- capabilities ------------------------------------------------------------------------
    @property
    def declarer(self):
        """Who declares what the test checks, with the device unless it is the CPU
        ("torch", "torch on GPU" when the device has its own entry, else "torch on
        GPU:0"): failure messages start with it, so a failure on one device names it."""
        declarer = self.target.declarer
        if declarer == self.name and self.target.device_target != "CPU":
            return f"{self.name} on {self.device}"
        return declarer

    def has_dtype(self, dtype):
        """True when the backend declares ``dtype`` on the kit's device."""
        return harness.dtype_name(dtype) in self.target.dtypes

    def require_dtype(self, *dtypes):
        """Skip the test unless every dtype is declared by the backend."""
        import pytest
        for d in dtypes:
            if not self.has_dtype(d):
                pytest.skip(self.target.undeclared_dtype(harness.dtype_name(d)))

    def widest_float(self):
        """The widest floating dtype the backend declares ("float64", "float32", ...)."""
        for d in ("float64", "float32", "float16", "bfloat16"):
            if self.has_dtype(d):
                return d
        import pytest
        pytest.skip(f"no floating dtype declared by {self.name}")

    def has(self, capability):
        """True when the backend declares ``capability`` ("compile", "native_autodiff") on
        the kit's device."""
        return capability in self.target.capabilities

    def require(self, *capabilities):
        """Skip the test unless every capability is declared by the backend."""
        import pytest
        for c in capabilities:
            if not self.has(c):
                pytest.skip(f"capability {c!r} not declared by {self.declarer}")

    def broken_declaration(self, what, happened):
        """The failure of a declaration that does not hold: "torch declares WHAT, but
        HAPPENED" (one line)."""
        return harness.ConformanceFailure(f"{self.declarer} declares {what}, but {happened}")

    @contextlib.contextmanager
    def declaring(self, what, label):
        """Failures inside the block say what was declared first: "LABEL: torch declares
        WHAT, but <the failure>" (the failure's first line is the summary line)."""
        try:
            yield
        except harness.ConformanceFailure as exc:
            raise harness.ConformanceFailure(
                f"{label}: {self.declarer} declares {what}, but {exc}") from exc

    def fused(self, name):
        """The backend's fused op ``name`` or None."""
        return getattr(self.backend, name, None)

    # -- context ---------------------------------------------------------------------------
    def activate(self):
        """Make the backend under test (on the kit's device) the active one (the execution
        mode is left as it is)."""
        ms.set_context(backend=self.name, device_target=self.target.device_target,
                       device_id=self.target.device_id)
        calls.instrument(self.backend)     # placing the backend may rebind its methods

    @contextlib.contextmanager
    def on_reference(self):
        """Run the block on the numpy reference backend (CPU), then switch back."""
        saved_mode = context.get_context("mode")
        ms.set_context(backend=REFERENCE_BACKEND, device_target="CPU", device_id=0,
                       mode=ms.PYNATIVE_MODE)
        try:
            with self.calls.paused() if self.ref is self.backend else \
                    contextlib.nullcontext():
                yield self.ref
        finally:
            self.activate()
            ms.set_context(mode=saved_mode)

    @contextlib.contextmanager
    def graph_mode(self):
        """Run the block in GRAPH_MODE on the backend under test."""
        ms.set_context(mode=ms.GRAPH_MODE)
        try:
            yield
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)

    # -- inputs ------------------------------------------------------------------------------
    def uniform(self, shape, low=-1.0, high=1.0):
        """Float64 numpy values from the test's generator."""
        return self.rng.uniform(low, high, size=shape)

    def normal(self, shape, scale=1.0):
        """Float64 normal values from the test's generator."""
        return self.rng.standard_normal(shape) * scale

    def integers(self, shape, low, high, dtype="int64"):
        """Integers in [low, high) as numpy of ``dtype``."""
        return self.rng.integers(low, high, size=shape).astype(mdt.as_dtype(dtype).np_dtype)

    def cotangent(self, shape, dtype="float64"):
        """A fixed pseudo-random weighting for a result of ``shape`` (same on every backend)."""
        rng = np.random.default_rng(harness.stable_seed(self.case_key, "cot", tuple(shape)))
        return harness.quantize(rng.uniform(0.5, 1.5, size=shape) *
                                rng.choice([-1.0, 1.0], size=shape), dtype)

    # -- native arrays -------------------------------------------------------------------------
    def native(self, array, dtype=None):
        """A native array of the backend under test holding numpy ``array``."""
        array = np.asarray(array)
        if dtype is not None:
            array = harness.quantize(array, dtype)
        return self.backend.from_numpy(array)

    def numpy(self, native):
        """A numpy copy of a native array of the backend under test."""
        return self.backend.to_numpy(native)

    # -- running functions -------------------------------------------------------------------
    def prepare(self, inputs, dtype):
        """Numpy inputs as the backend under test sees them: floats rounded to ``dtype``."""
        out = []
        for x in inputs:
            if isinstance(x, np.ndarray) and _is_float(x) and dtype is not None:
                out.append(harness.quantize(x, dtype))
            else:
                out.append(x)
        return out

    def run(self, fn, *inputs, dtype=None):
        """``fn(*Tensors)`` on the backend under test; numpy inputs become Tensors (floats
        rounded to ``dtype``), the result comes back as numpy (nested like ``fn``'s)."""
        self.activate()
        args = [_to_tensor(x) for x in self.prepare(inputs, dtype)]
        return _to_numpy(fn(*args))

    def reference(self, fn, *inputs, dtype=None, key=None):
        """``fn(*Tensors)`` on the numpy reference in float64, from the inputs rounded to
        ``dtype`` exactly as :meth:`run` rounds them. ``key`` caches the result in-process."""
        cache_key = None if key is None else (self.case_key, key, harness.dtype_name(dtype))
        if cache_key is not None and cache_key in _REFERENCE_CACHE:
            return _REFERENCE_CACHE[cache_key]
        prepared = [harness.to_float64(x) if isinstance(x, np.ndarray) else x
                    for x in self.prepare(inputs, dtype)]
        with self.on_reference():
            args = [_to_tensor(x) for x in prepared]
            result = _to_numpy(fn(*args))
        if cache_key is not None:
            _REFERENCE_CACHE[cache_key] = result
        return result

    def reference_in_dtype(self, fn, *inputs, dtype):
        """``fn(*Tensors)`` on the numpy reference computing in ``dtype`` itself (the inputs
        rounded to it as :meth:`run` rounds them, not widened): how far a correct
        computation in that precision lands from the float64 reference."""
        prepared = self.prepare(inputs, dtype)
        with self.on_reference():
            return _to_numpy(fn(*[_to_tensor(x) for x in prepared]))

    def check(self, fn, *inputs, dtype, what=None, factor=1.0, key=None, min_scale=0.0):
        """Run ``fn`` on both sides and assert every result leaf is close (``min_scale``:
        see :func:`~mscore.conformance.harness.compare`)."""
        expected = self.reference(fn, *inputs, dtype=dtype, key=key)
        actual = self.run(fn, *inputs, dtype=dtype)
        self.assert_tree_close(actual, expected, dtype, what or "result", factor, min_scale)
        return actual, expected

    def assert_tree_close(self, actual, expected, dtype, what="result", factor=1.0,
                          min_scale=0.0):
        """Compare nested numpy results leaf by leaf (dict keys name the leaves)."""
        if isinstance(expected, dict):
            if not isinstance(actual, dict) or set(actual) != set(expected):
                raise harness.ConformanceFailure(
                    f"{what}: keys {sorted(actual) if isinstance(actual, dict) else actual!r}"
                    f", expected {sorted(expected)}")
            failures = []
            for k in expected:
                try:
                    self.assert_tree_close(actual[k], expected[k], dtype, f"{what}[{k}]",
                                           factor, min_scale)
                except harness.ConformanceFailure as exc:
                    failures.append(str(exc))
            if failures:
                raise harness.ConformanceFailure("\n".join(failures))
            return
        if isinstance(expected, (list, tuple)):
            if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
                raise harness.ConformanceFailure(
                    f"{what}: got {type(actual).__name__} of "
                    f"{len(actual) if hasattr(actual, '__len__') else '?'} items, expected "
                    f"{len(expected)}")
            failures = []
            for i, (a, e) in enumerate(zip(actual, expected)):
                try:
                    self.assert_tree_close(a, e, dtype, f"{what}[{i}]", factor, min_scale)
                except harness.ConformanceFailure as exc:
                    failures.append(str(exc))
            if failures:
                raise harness.ConformanceFailure("\n".join(failures))
            return
        self.assert_close(actual, expected, dtype, what, factor, min_scale=min_scale)

    def assert_close(self, actual, expected, dtype, what="result", factor=1.0, tol=None,
                     min_scale=0.0):
        """Assert numpy ``actual`` is within the tolerance of ``dtype`` of ``expected``;
        records the errors for the report and raises a readable failure otherwise."""
        expected_np = np.asarray(expected)
        if dtype is not None and not _is_float(expected_np) and not _is_float(
                np.asarray(actual)) and tol is None:
            tol = harness.EXACT
        c = harness.compare(actual, expected, dtype, what=what, factor=factor, tol=tol,
                            min_scale=min_scale)
        self.record.comparisons.append(c)
        if not c.ok:
            name = harness.dtype_name(dtype) or "-"
            ref = "numpy in float64" if name in harness.FLOAT_DTYPES else "numpy"
            raise harness.ConformanceFailure(
                f"{c.message}\n  [{self.name} on {self.device}, dtype {name}; reference: "
                f"{ref}]")
        return c

    def assert_within(self, actual, expected, allowed, dtype, what="result"):
        """Assert numpy ``actual`` is within the absolute error ``allowed`` (per element or
        one number) of ``expected``; records the comparison for the report."""
        c = harness.compare_within(actual, expected, allowed, what)
        self.record.comparisons.append(c)
        if not c.ok:
            name = harness.dtype_name(dtype) or "-"
            raise harness.ConformanceFailure(
                f"{c.message}\n  [{self.name} on {self.device}, dtype {name}]")
        return c

    def assert_unchanged(self, natives, originals, what):
        """Assert the native arrays still hold the numpy ``originals`` they were made from,
        bit for bit: an op that writes into an argument changes every other array that
        holds it (only the multi-tensor updates with ``inplace=True`` may)."""
        for i, (native, original) in enumerate(zip(natives, originals)):
            now = np.asarray(self.numpy(native))
            original = np.asarray(original)
            if now.shape != original.shape or not np.array_equal(
                    harness.bit_pattern(now.astype(original.dtype)),
                    harness.bit_pattern(original)):
                raise harness.ConformanceFailure(
                    f"{what} wrote into its argument {i} (an in-place update visible "
                    f"through every array that holds it); only the multi-tensor updates "
                    f"with inplace=True may")

    def assert_result_dtypes(self, result, dtype, what="result"):
        """Assert every floating leaf of a numpy result tree has ``dtype`` (the op keeps
        the dtype of its floating inputs)."""
        want = mdt.as_dtype(dtype).np_dtype
        for i, leaf in enumerate(harness.flatten(result)):
            leaf = np.asarray(leaf)
            if _is_float(leaf) and leaf.dtype != want:
                raise harness.ConformanceFailure(
                    f"{what} returned {leaf.dtype} for {mdt.as_dtype(dtype)} inputs "
                    f"(result leaf {i}); the op keeps its inputs' dtype")

    def assert_dtype(self, native, dtype, what="result"):
        """Assert the backend reports ``dtype`` for a native array."""
        got = self.backend.dtype(native)
        want = mdt.as_dtype(dtype)
        if got is not want:
            raise harness.ConformanceFailure(
                f"{what}: backend {self.name} reports dtype {got}, expected {want}")


def _is_float(a):
    a = np.asarray(a)
    return a.dtype.kind == "f" or a.dtype == mdt.bfloat16.np_dtype


def _to_tensor(x):
    if isinstance(x, np.ndarray):
        return Tensor(x)
    return x


def _to_numpy(value):
    if isinstance(value, Tensor):
        return value.asnumpy()
    if isinstance(value, dict):
        return {k: _to_numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_numpy(v) for v in value) if isinstance(value, list) else \
            tuple(_to_numpy(v) for v in value)
    if isinstance(value, (numbers.Number, np.ndarray, np.generic)):
        return np.asarray(value)
    if value is None:
        return None
    raise TypeError(f"conformance: a test function returned {type(value).__name__}; "
                    f"return Tensors, numbers, or lists/tuples/dicts of them")
