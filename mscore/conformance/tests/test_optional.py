"""Level 0 (optional methods): every optional method a backend provides does what the
contract says, over its shape classes and every declared dtype; one it does not provide is
skipped with the reason (the core does without it).

The fused ops are compared with the reference in ``test_fused.py`` (each once through the
backend's method and once through the core's composite); this module holds the methods whose
contract is not a value: ``host_callback`` (repeated identical calls, many calls, inside and
outside compiled programs), ``compile`` (the Python body runs once per input signature),
``grad_boundary`` and the backward hooks built on it, ``set_deterministic``, ``copy``,
``native_dtype`` and ``shard``. The run's coverage lists every optional method the backend
provides, and one no test reached fails a full run (:mod:`mscore.conformance.coverage`).
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import mscore as ms
from mscore import nn, ops
from mscore.common import dtype as mdt
from mscore.conformance import harness

LEVEL = "optional"
ALL = tuple(d.name for d in mdt.ALL_DTYPES)
MANY = 200      # host callbacks in a row (eagerly; a compiled program runs MANY // 4 times)


def _method(kit, name):
    """The backend's optional method ``name``; skips the test when it has none."""
    method = getattr(kit.backend, name, None)
    if not callable(method):
        pytest.skip(f"optional method {name} not provided by {kit.declarer} (the core does "
                    f"without it)")
    return method


def _sample(kit, dtype, shape):
    """Numpy values of ``dtype`` (its own numpy dtype) for ``shape``."""
    np_dtype = mdt.get_dtype(dtype).np_dtype
    if dtype == "bool":
        return kit.rng.random(shape) > 0.5
    if dtype in harness.FLOAT_DTYPES:
        return harness.quantize(kit.normal(shape, 3.0), dtype)
    info = np.iinfo(np_dtype)
    return kit.rng.integers(max(info.min, -100), min(info.max, 100), size=shape,
                            endpoint=True).astype(np_dtype)


@contextlib.contextmanager
def _spy(backend, name, seen):
    """Within the block, each call of ``backend.name`` appends its arguments to ``seen``
    (and still reaches the backend's method, through the kit's call log)."""
    own = vars(backend).get(name)
    method = getattr(backend, name)

    def spying(*args, **kwargs):
        seen.append(args)
        return method(*args, **kwargs)
    setattr(backend, name, spying)
    try:
        yield
    finally:
        if own is None:
            delattr(backend, name)
        else:
            setattr(backend, name, own)


def _failure(kit, name, happened):
    return harness.ConformanceFailure(f"{kit.declarer} provides {name}, but {happened}")


# -- host_callback -----------------------------------------------------------------------------
class _Recorder:
    """A host callback that keeps what it was given: (numpy dtype name, values) per array."""

    def __init__(self):
        self.calls = []

    def __call__(self, *values):
        self.calls.append([(type(v), np.asarray(v).dtype.name, np.asarray(v).copy())
                           for v in values])

    def check(self, kit, expected, where):
        """Assert the calls received exactly ``expected`` (a list of lists of numpy arrays),
        in order."""
        got = self.calls
        if len(got) != len(expected):
            raise _failure(kit, "host_callback", f"{where} it called its function "
                           f"{len(got)} times, expected {len(expected)} (one per call, "
                           f"identical values included)")
        for i, (call, want) in enumerate(zip(got, expected)):
            if len(call) != len(want):
                raise _failure(kit, "host_callback", f"{where} call {i} received "
                               f"{len(call)} arrays, expected {len(want)}")
            for j, ((kind, name, value), w) in enumerate(zip(call, want)):
                if kind is not np.ndarray:
                    raise _failure(kit, "host_callback", f"{where} call {i} received a "
                                   f"{kind.__name__} for array {j}, expected a numpy copy")
                if name != w.dtype.name or value.shape != w.shape or not np.array_equal(
                        harness.bit_pattern(value), harness.bit_pattern(w)):
                    raise _failure(kit, "host_callback", f"{where} call {i} received "
                                   f"{name} {value.tolist()!r} for array {j}, expected "
                                   f"{w.dtype.name} {w.tolist()!r}")


@pytest.mark.parametrize("dtype", ALL)
def test_host_callback(kit, dtype):
    """``host_callback(fn, arrays)`` calls ``fn`` with numpy copies of the arrays once per
    call: at once on concrete arrays (two identical calls in a row are two calls; many calls
    keep their order), and inside a ``compile``d program each time the program runs, with
    that run's values (``ops.Print`` in GRAPH_MODE relies on it)."""
    hook = _method(kit, "host_callback")
    b = kit.backend
    x, s = _sample(kit, dtype, (2, 3)), _sample(kit, dtype, ())
    rec = _Recorder()
    for _ in range(3):        # the same values three times: three calls
        hook(rec, [kit.native(x), kit.native(s)])
    rec.check(kit, [[x, s]] * 3, "outside compiled programs")
    rec = _Recorder()
    values = [_sample(kit, dtype, (3,)) for _ in range(MANY)]
    for v in values:
        hook(rec, [kit.native(v)])
    rec.check(kit, [[v] for v in values], f"over {MANY} calls in a row")
    if not callable(getattr(b, "compile", None)):
        return
    rec = _Recorder()

    def program(a):
        hook(rec, [a])
        hook(rec, [a])          # twice in one run, identical values
        return b.reshape(a, (3,))
    step = b.compile(program)
    runs = [values[0], values[0], values[1]] + values[2:MANY // 4]
    for v in runs:            # a repeated run with identical values is a run
        out = step(kit.native(v))
        kit.assert_close(kit.numpy(out), v, dtype, "the compiled program's result",
                         tol=harness.EXACT)
    b.synchronize()
    rec.check(kit, [[v] for v in runs for _ in range(2)],
              f"inside a compiled program run {len(runs)} times")


# -- compile -------------------------------------------------------------------------------------
@pytest.mark.mscore_needs("compile")
@pytest.mark.parametrize("dtype", harness.FLOAT_DTYPES)
def test_compile_compiles(kit, dtype):
    """A declared ``compile`` compiles: the Python body of the compiled function runs once
    per input signature (shapes and dtypes), however often it is called, and its results
    equal the eager ones."""
    b = kit.backend
    compile_ = _method(kit, "compile")
    reason = b.graph_mode_eager_reason()
    if reason:
        pytest.skip(f"{kit.declarer} declares compile, but says GRAPH_MODE runs eagerly on "
                    f"{kit.device}: {reason}")
    bodies = []

    def fn(x, y):
        bodies.append(b.shape(x))
        return b.add(b.mul(x, y), b.tanh(x))

    step = compile_(fn)
    eager = []
    calls = 0
    for shape in ((3, 4), (3, 4), (3, 4), (5,), (5,)):
        x, y = kit.normal(shape), kit.normal(shape)
        out = kit.numpy(step(kit.native(x, dtype), kit.native(y, dtype)))
        calls += 1
        xq, yq = (harness.quantize(v, dtype).astype(np.float64) for v in (x, y))
        eager.append((out, xq * yq + np.tanh(xq)))
    signatures = 2
    if len(bodies) > signatures:
        raise kit.broken_declaration(
            "'compile'", f"compile declared, nothing compiled: the Python body ran "
            f"{len(bodies)} times for {calls} calls with {signatures} input signatures "
            f"(a compiled function runs it once per signature)")
    for i, (out, want) in enumerate(eager):
        kit.assert_close(out, want, dtype, f"compiled call {i}", factor=2.0)


# -- grad_boundary and backward hooks --------------------------------------------------------
def _hooks_supported(kit):
    """Why cells' backward hooks cannot work on the backend, or None when they can."""
    b = kit.backend
    if b.value_and_grad is None or callable(getattr(b, "grad_boundary", None)):
        return None
    return (f"backward hooks unsupported on {kit.declarer}: it differentiates natively "
            f"(value_and_grad) and provides no grad_boundary, so Cell.register_backward_hook "
            f"and Tensor.register_hook raise NotImplementedError there")


@pytest.mark.parametrize("dtype", harness.FLOAT_DTYPES)
def test_grad_boundary(kit, dtype):
    """``grad_boundary(arrays, vjp)`` returns the arrays unchanged, and on the backward pass
    of the backend's ``value_and_grad`` calls ``vjp`` once with the outputs' cotangents and
    a flag per input; what ``vjp`` returns flows on to the inputs."""
    boundary = _method(kit, "grad_boundary")
    b = kit.backend
    if not callable(b.value_and_grad):
        pytest.skip(f"{kit.declarer} provides grad_boundary without value_and_grad (the "
                    f"reference autodiff makes its own boundaries)")
    x0, y0 = kit.normal((3, 4)), kit.normal((3, 4))
    xq, yq = (harness.quantize(v, dtype).astype(np.float64) for v in (x0, y0))
    seen = []
    d = mdt.get_dtype(dtype)

    def vjp(cotangents, needed):
        seen.append(([kit.numpy(c) for c in cotangents], list(needed)))
        three = b.full((), 3, d)
        return [b.mul(c, three) for c in cotangents]

    def fn(x, y):
        outs = boundary([x, y], vjp)
        return b.sum(b.mul(outs[0], outs[1]), None, False), [outs[0]]

    (value, aux), grads = b.value_and_grad(fn, [kit.native(x0, dtype), kit.native(y0, dtype)],
                                           True)
    kit.assert_close(kit.numpy(aux[0]), xq, dtype, "grad_boundary's forward output",
                     tol=harness.EXACT)
    kit.assert_close(kit.numpy(value), np.sum(xq * yq), dtype, "value", factor=2.0)
    if len(seen) != 1:
        raise _failure(kit, "grad_boundary", f"its vjp was called {len(seen)} times on one "
                       f"backward pass, expected once")
    cots, needed = seen[0]
    if [bool(n) for n in needed] != [True, True]:
        raise _failure(kit, "grad_boundary", f"vjp got needed={needed}, expected [True, "
                       f"True] (both inputs are differentiated)")
    kit.assert_close(cots[0], yq, dtype, "the cotangent vjp got for output 0", factor=2.0)
    kit.assert_close(cots[1], xq, dtype, "the cotangent vjp got for output 1", factor=2.0)
    kit.assert_close(kit.numpy(grads[0]), 3 * yq, dtype, "d value / d x through vjp",
                     factor=2.0)
    kit.assert_close(kit.numpy(grads[1]), 3 * xq, dtype, "d value / d y through vjp",
                     factor=2.0)


def _hooked_dense(case_key, dtype):
    """``ms.value_and_grad`` of a Dense layer whose backward hook records the gradients it
    sees and doubles its input gradient: returns the recorded and the resulting gradients."""
    def run(x):
        ms.set_seed(0)
        net = nn.Dense(4, 3)
        for p in net.get_parameters():
            p.set_data(p.astype(x.dtype))
        seen = {}

        def hook(cell, grad_input, grad_output):
            seen["grad_output"] = grad_output[0]
            seen["grad_input"] = grad_input[0]
            return (grad_input[0] * 2,)
        handle = net.register_backward_hook(hook)
        cot = ms.Tensor(harness.quantize(np.linspace(-1.5, 1.5, 6).reshape(2, 3), dtype),
                        dtype=x.dtype)

        def loss(x):
            return ops.sum(net(x) * cot)
        value, grad = ms.value_and_grad(loss)(x)
        handle.remove()
        plain = ms.value_and_grad(loss)(x)[1]
        return {"value": value, "grad_x": grad, "grad_x_unhooked": plain,
                "hook_grad_output": seen.get("grad_output"),
                "hook_grad_input": seen.get("grad_input")}
    return run


@pytest.mark.parametrize("dtype", harness.FLOAT_DTYPES)
def test_backward_hooks(kit, dtype):
    """``Cell.register_backward_hook`` works wherever the backend can carry it (the
    reference autodiff, or native autodiff with ``grad_boundary``): the hook sees the
    reference's output and input gradients, and the input gradient it returns is the one
    ``value_and_grad`` gives. A backend with native autodiff and no ``grad_boundary`` is
    listed as not supporting backward hooks (a skip saying so)."""
    unsupported = _hooks_supported(kit)
    if unsupported:
        pytest.skip(unsupported)
    x = kit.normal((2, 4))
    with kit.declaring(dtype, "backward hooks"):
        kit.check(_hooked_dense(kit.case_key, dtype), x, dtype=dtype, what="backward hook",
                  factor=4.0)


# -- set_deterministic -------------------------------------------------------------------------
def test_set_deterministic(kit):
    """``ms.set_deterministic(flag)`` switches the backend's mode through
    ``set_deterministic(flag)``: on with True, off with False."""
    _method(kit, "set_deterministic")
    before = ms.get_context("deterministic") == "ON"
    flags = []
    try:
        with _spy(kit.backend, "set_deterministic", flags):
            ms.set_deterministic(False)
            ms.set_deterministic(True)
            on = list(flags)
            ms.set_deterministic(False)
    finally:
        ms.set_deterministic(before)
    if not on or bool(on[-1][0]) is not True:
        raise _failure(kit, "set_deterministic", f"ms.set_deterministic(True) called it with "
                       f"{on!r}, expected (True,)")
    if len(flags) <= len(on) or bool(flags[-1][0]) is not False:
        raise _failure(kit, "set_deterministic", f"ms.set_deterministic(False) called it "
                       f"with {flags[len(on):]!r}, expected (False,)")


# -- copy, native_dtype, shard -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
def test_copy(kit, dtype):
    """``copy(a)`` gives ``a``'s values, dtype and shape in a new array; where the backend
    declares donation, donating ``a`` afterwards leaves the copy intact."""
    copy = _method(kit, "copy")
    b = kit.backend
    for shape in ((), (5,), (2, 3, 4)):
        x = _sample(kit, dtype, shape)
        a = kit.native(x)
        c = copy(a)
        if c is a:
            raise _failure(kit, "copy", "copy(a) returned a itself")
        kit.assert_dtype(c, dtype, "copy")
        kit.assert_close(kit.numpy(c), x, dtype, f"copy of a {shape} array",
                         tol=harness.EXACT)
        if kit.has("donation") and dtype in harness.FLOAT_DTYPES:
            step = b.compile(lambda v: b.add(v, v), donate_argnums=(0,))
            step(a)
            kit.assert_close(kit.numpy(c), x, dtype, "the copy after its source was donated",
                             tol=harness.EXACT)


def test_native_dtype(kit):
    """``native_dtype(dtype)`` is the library's dtype of the backend's arrays of each
    declared dtype (compared where the arrays have a ``dtype`` attribute), one per dtype."""
    native_dtype = _method(kit, "native_dtype")
    b = kit.backend
    seen = {}
    for name in kit.target.dtypes:
        d = mdt.get_dtype(name)
        nd = native_dtype(d)
        array = b.full((2,), 0, d)
        if hasattr(array, "dtype") and array.dtype != nd:
            raise _failure(kit, "native_dtype", f"native_dtype({name}) is {nd!r}, but its "
                           f"arrays of {name} have dtype {array.dtype!r}")
        seen.setdefault(repr(nd), []).append(name)
    shared = {k: v for k, v in seen.items() if len(v) > 1}
    if shared:
        raise _failure(kit, "native_dtype", f"native_dtype gives one library dtype for "
                       f"several mscore dtypes: {shared}")


@pytest.mark.parametrize("dtype", ("float32", "int32"))
def test_shard(kit, dtype):
    """``shard(array, parts)`` with one part per axis keeps the values and shape, eagerly
    and inside a compiled program."""
    shard = _method(kit, "shard")
    kit.require_dtype(dtype)
    b = kit.backend
    for shape in ((6,), (4, 6), (2, 3, 4)):
        x = _sample(kit, dtype, shape)
        parts = (1,) * len(shape)
        kit.assert_close(kit.numpy(shard(kit.native(x), parts)), x, dtype,
                         f"shard of a {shape} array", tol=harness.EXACT)
        if callable(getattr(b, "compile", None)):
            step = b.compile(lambda a, parts=parts: b.add(shard(a, parts), a))
            kit.assert_close(kit.numpy(step(kit.native(x))), x.astype(np.float64) * 2, dtype,
                             f"shard of a {shape} array inside a compiled program",
                             tol=harness.EXACT)


# -- batch norm layers: the in-place statistics at the layer level -----------------------------
BN_LAYERS = [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (4, 3, 2, 2)),
             ("BatchNorm3d", (2, 3, 2, 2, 2))]


def _bn_layer_steps(layer):
    def run(x):
        ms.set_seed(0)
        net = getattr(nn, layer)(x.shape[1])
        for p in net.get_parameters():
            p.set_data(p.astype(x.dtype))
        net.set_train(True)
        outs = [net(x), net(x * 2.0)]
        return {"outputs": outs, "statistics": {p.name: p for p in net.get_parameters()
                                                if not p.requires_grad}}
    return run


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("layer,shape", BN_LAYERS,
                         ids=[f"{name}_{len(s)}d" for name, s in BN_LAYERS])
def test_batch_norm_layers_in_training(kit, layer, shape, dtype):
    """``nn.BatchNorm1d/2d/3d`` training eagerly on (N, C), (N, C, L), (N, C, H, W) and
    (N, C, D, H, W) inputs: outputs and moving statistics after two steps match the
    reference; a backend with ``batch_norm_inplace`` is reached through the layers."""
    kit.require_dtype(dtype)
    x = kit.normal(shape, 2.0)
    with kit.declaring(dtype, f"{layer} training on {len(shape)}-d inputs"), \
            kit.calls.recording() as called:
        kit.check(_bn_layer_steps(layer), x, dtype=dtype, what=layer, factor=4.0)
    if callable(getattr(kit.backend, "batch_norm_inplace", None)) and \
            "batch_norm_inplace" not in called:
        raise _failure(kit, "batch_norm_inplace", f"{layer} training eagerly on "
                       f"{len(shape)}-d inputs never called it")
