"""Level 0 (capabilities): every capability a backend declares is honoured; one it does not
declare is skipped with the reason.

The rule is general: a kit test marked ``@pytest.mark.mscore_needs("CAP")`` runs exactly when
the backend declares CAP (``test_collectives.py``, for one, plugs in that way), and the
report's coverage table counts a declared capability as tested only when such a test passed.
This module holds the checks that need no second process:

- every declared capability has an implementation behind it (``native_autodiff``:
  ``value_and_grad``; ``compile`` and ``donation``: ``compile``; ``collectives``: a plugin's
  ``mscore_collectives_impl`` for the backend, implementing every operation);
- ``native_autodiff``: ``ms.value_and_grad`` goes through the backend's own
  ``value_and_grad`` and gives the reference's gradients;
- ``deterministic``: the same program run twice gives bit-identical results (in
  ``test_determinism.py``);
- ``donation``: a donated argument's buffer is really given up (reading it afterwards fails
  or shows the new values), the other arguments stay intact, and in GRAPH_MODE nothing the
  user can still read (a Tensor taken from a Parameter before the step) is invalidated.
"""
from __future__ import annotations

import numpy as np
import pytest

import mscore as ms
from mscore import nn, ops
from mscore.common import dtype as mdt
from mscore.conformance import harness
from mscore.conformance.tests.test_training import MLP, _batches
from mscore.plugin.backend import KNOWN_CAPABILITIES
from mscore.plugin.collectives import Collectives
from mscore.plugin.registry import get_registry

LEVEL = "capabilities"


def _declared_without(kit, capability, what):
    return kit.broken_declaration(repr(capability), what)


def _collectives_missing(kit):
    """Why the declared collectives have nothing behind them, or None."""
    registry = get_registry()
    hook = getattr(registry.pm.hook, "mscore_collectives_impl", None)
    if hook is None:
        return ("this mscore has no collectives contract (hook mscore_collectives_impl), so "
                "nothing can provide them")
    factory = hook(backend_name=kit.name)
    if factory is None:
        return "no plugin implements mscore_collectives_impl for it"
    if not callable(factory):
        return f"mscore_collectives_impl returned {factory!r}, not a factory"
    impl = factory(kit.backend)
    if not isinstance(impl, Collectives):
        return (f"its collectives factory built {type(impl).__name__}, not a "
                f"mscore.plugin.collectives.Collectives")
    missing = [n for n, v in vars(Collectives).items() if callable(v) and not n.startswith("_")
               and getattr(type(impl), n) is v]
    if missing:
        return f"its {type(impl).__name__} does not implement {', '.join(sorted(missing))}"
    return None


def _missing_implementation(kit, capability):
    b = kit.backend
    if capability == "native_autodiff" and not callable(b.value_and_grad):
        return f"Backend.value_and_grad is {b.value_and_grad!r}"
    if capability in ("compile", "donation") and not callable(b.compile):
        return f"Backend.compile is {b.compile!r}"
    if capability == "collectives":
        return _collectives_missing(kit)
    return None


STRUCTURAL = sorted(KNOWN_CAPABILITIES - {"deterministic"})   # has no callable behind it


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.mscore_needs(c), id=c)
                                  for c in STRUCTURAL])
def test_declared_capability_is_implemented(kit, case):
    """A declared capability has an implementation behind it."""
    problem = _missing_implementation(kit, case)
    if problem:
        raise _declared_without(kit, case, problem)


@pytest.mark.mscore_needs("native_autodiff")
@pytest.mark.parametrize("dtype", harness.FLOAT_DTYPES)
def test_native_autodiff_is_used(kit, dtype):
    """``ms.value_and_grad`` runs through the backend's own autodiff and is right."""
    if not callable(kit.backend.value_and_grad):
        raise _declared_without(kit, "native_autodiff", "Backend.value_and_grad is not set")
    calls = []
    native = kit.backend.value_and_grad

    def counting(*args, **kwargs):
        calls.append(1)
        return native(*args, **kwargs)

    def fn(x, w):
        # Positive terms: the sum has no cancellation, so half precision's rounding of each
        # term stays within its tolerance of the total.
        t = ops.tanh(ops.matmul(x, w))
        return ops.sum(t * t * 1.5)

    def run(x, w):
        value, grads = ms.value_and_grad(fn, grad_position=(0, 1))(x, w)
        return [value, *grads]

    x, w = kit.normal((3, 4)), kit.normal((4, 2))
    expected = kit.reference(run, x, w, dtype=dtype)
    own = vars(kit.backend).get("value_and_grad")    # set on the instance, or None
    kit.backend.value_and_grad = counting
    try:
        actual = kit.run(run, x, w, dtype=dtype)
    finally:
        if own is None:
            del kit.backend.value_and_grad
        else:
            kit.backend.value_and_grad = own
    if not calls:
        raise _declared_without(kit, "native_autodiff", "ms.value_and_grad did not call "
                                "Backend.value_and_grad")
    kit.assert_tree_close(actual, expected, dtype, "value_and_grad", factor=4.0)


@pytest.mark.mscore_needs("native_autodiff")
@pytest.mark.parametrize("dtype", harness.FLOAT_DTYPES)
def test_value_and_grad_contract(kit, dtype):
    """``Backend.value_and_grad(fn, primals, has_aux)`` as the contract states it: the value,
    the aux tree untouched, one gradient per primal (zeros of its own dtype for an integer
    primal, zeros for a primal the value does not use); with ``has_aux=False`` aux is None."""
    b = kit.backend
    d = mdt.get_dtype(dtype)
    x0, w0 = kit.normal((3,)), kit.normal((3,))
    x, w = kit.native(x0, dtype), kit.native(w0, dtype)
    k = b.from_numpy(np.array([2, 5, 7], np.int32))
    unused = kit.native(kit.normal((2,)), dtype)

    def fn(x, k, w, unused):
        value = b.sum(b.mul(b.mul(x, x), b.cast(k, d)), None, False)
        return value, [b.mul(x, w), (k,)]

    try:
        (value, aux), grads = b.value_and_grad(fn, [x, k, w, unused], True)
        (plain, none), plain_grads = b.value_and_grad(lambda *p: fn(*p)[0], [x, k, w, unused],
                                                      False)
    except Exception as exc:
        raise _declared_without(kit, "native_autodiff", f"value_and_grad raised "
                                f"{type(exc).__name__}: {exc}") from exc
    xq = harness.quantize(x0, dtype).astype(np.float64)
    kk = np.array([2.0, 5.0, 7.0])
    kit.assert_close(kit.numpy(value), np.sum(xq * xq * kk), dtype, "value", factor=2.0)
    kit.assert_close(kit.numpy(aux[0]), xq * harness.quantize(w0, dtype), dtype, "aux[0]",
                     factor=2.0)
    kit.assert_close(kit.numpy(aux[1][0]), np.array([2, 5, 7], np.int32), None, "aux[1][0]",
                     tol=harness.EXACT)
    if len(grads) != 4 or len(plain_grads) != 4:
        raise harness.ConformanceFailure(f"value_and_grad gave {len(grads)} gradients for 4 "
                                         f"primals")
    kit.assert_close(kit.numpy(grads[0]), 2 * xq * kk, dtype, "d value / d x", factor=4.0)
    kit.assert_dtype(grads[1], "int32", "gradient of an integer primal")
    kit.assert_close(kit.numpy(grads[1]), np.zeros(3, np.int32), None,
                     "gradient of an integer primal", tol=harness.EXACT)
    kit.assert_close(kit.numpy(grads[2]), np.zeros(3), dtype, "gradient of a primal only aux "
                     "uses", tol=harness.EXACT)
    kit.assert_close(kit.numpy(grads[3]), np.zeros(2), dtype, "gradient of an unused primal",
                     tol=harness.EXACT)
    if none is not None:
        raise harness.ConformanceFailure(f"value_and_grad(has_aux=False) gave aux {none!r}, "
                                         f"expected None")
    kit.assert_close(kit.numpy(plain), np.sum(xq * xq * kk), dtype, "value (has_aux=False)",
                     factor=2.0)


# -- donation ----------------------------------------------------------------------------------
@pytest.mark.mscore_needs("donation")
@pytest.mark.parametrize("dtype", harness.FLOAT_DTYPES)
def test_donated_buffer_is_reused(kit, dtype):
    """``compile(fn, donate_argnums=(0,))`` gives up the first argument's buffer and leaves
    the second alone."""
    b = kit.backend
    if not callable(b.compile):
        raise _declared_without(kit, "donation", "Backend.compile is not set")
    x0, y0 = kit.normal((4, 5)), kit.normal((4, 5))
    xq, yq = harness.quantize(x0, dtype), harness.quantize(y0, dtype)
    step = b.compile(lambda x, y: b.add(b.mul(x, b.full((), 2, mdt.get_dtype(dtype))), y),
                     donate_argnums=(0,))
    x, y = b.from_numpy(xq), b.from_numpy(yq)
    out = kit.numpy(step(x, y))
    kit.assert_close(out, xq.astype(np.float64) * 2 + yq.astype(np.float64), dtype,
                     "compiled step with a donated argument", factor=2.0)
    kit.assert_close(kit.numpy(y), yq, dtype, "the argument that was not donated",
                     tol=harness.EXACT)
    try:
        after = kit.numpy(x)
    except Exception:
        return   # the buffer was given away: reading it fails, as with jax's deleted arrays
    if np.array_equal(harness.bit_pattern(after), harness.bit_pattern(xq)):
        raise _declared_without(
            kit, "donation", "compile(fn, donate_argnums=(0,)) left the donated argument "
            "intact and readable: its buffer was not reused")


@pytest.mark.mscore_needs("donation", "compile")
def test_donation_keeps_user_visible_values(kit):
    """GRAPH_MODE steps donate the parameters, yet a Tensor taken from a Parameter before
    the step still reads its old value, and the parameters read their new ones."""
    xs, ys = _batches("mlp")
    ms.set_seed(0)
    net = MLP()
    train = nn.TrainOneStepCell(
        nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")),
        nn.Momentum(net.trainable_params(), 0.05, 0.9))
    train.set_train(True)
    held = net.fc1.weight.value()
    before = held.asnumpy().copy()
    with kit.graph_mode():
        for i in range(2):
            train(ms.Tensor(xs[i]), ms.Tensor(ys[i]))
    try:
        still = held.asnumpy()
    except Exception as exc:
        raise _declared_without(kit, "donation", f"a Tensor taken from a Parameter before a "
                                f"GRAPH_MODE step can no longer be read: "
                                f"{type(exc).__name__}: {exc}") from exc
    kit.assert_close(still, before, "float32", "a Tensor held across GRAPH_MODE steps",
                     tol=harness.EXACT)
    now = net.fc1.weight.asnumpy()
    if np.array_equal(now, before):
        raise harness.ConformanceFailure("GRAPH_MODE steps did not update fc1.weight")
