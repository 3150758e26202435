"""What the jax plugin's test modules share: they are skipped when jax is missing (importing
this module skips the importer; the plugin is registered from the checkout when it is not
installed), and compare the jax backend with the numpy reference at the per-dtype tolerances
of :data:`TOL` (:func:`both` for a backend primitive, :func:`compare_functional` for an ops
function)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from _backend_compare import assert_close as _assert_close  # noqa: E402

import mscore as ms  # noqa: E402
from mscore.common import dtype as mdt  # noqa: E402
from mscore.plugin.registry import get_registry  # noqa: E402

PLUGIN_DIR = Path(__file__).resolve().parents[1]


def _ensure_plugin():
    """Use the installed entry point, or register the plugin from the checkout."""
    reg = get_registry()
    if "jax" not in reg.names():
        sys.path.insert(0, str(PLUGIN_DIR))
        from mscore_jax import plugin
        reg.register_plugin(plugin, "jax")
    return reg


REG = _ensure_plugin()
JB = REG.get("jax")
NB = REG.get("numpy")
from mscore_jax.backend import is_tracer  # noqa: E402

# (rtol, atol relative to the largest magnitude) per dtype, as the conformance kit uses.
TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-6), "float16": (3e-3, 1.5e-3),
       "bfloat16": (2e-2, 1e-2)}


def assert_close(actual, expected, dtype="float32", factor=1.0, what="", min_scale=0.0):
    """The shared comparison (:mod:`_backend_compare`) with jax's tolerances; ``min_scale``
    for quantities that are rounding noise around zero, like the gradient of a bias that
    BatchNorm cancels."""
    _assert_close(actual, expected, dtype, factor, tol=TOL, what=what, min_scale=min_scale)


def both(op, inputs, dtype="float32", factor=1.0, **attrs):
    """Run backend op ``op`` on numpy and on jax from the same numpy inputs; compare."""
    def prep(backend, x):
        if isinstance(x, np.ndarray):
            return backend.from_numpy(x)
        if isinstance(x, list):
            return [prep(backend, v) for v in x]
        if isinstance(x, tuple):
            return tuple(prep(backend, v) for v in x)
        return x
    ref = getattr(NB, op)(*prep(NB, inputs), **attrs)
    out = getattr(JB, op)(*prep(JB, inputs), **attrs)
    assert_close(JB.to_numpy(out), NB.to_numpy(ref), dtype, factor, what=op)
    return JB.to_numpy(out)


RNG = np.random.default_rng(1234)


def rand(*shape, dtype="float32", positive=False):
    """Standard normal numbers of ``shape`` in ``dtype`` from the shared :data:`RNG`
    (``positive``: their magnitudes plus 0.1)."""
    x = RNG.normal(size=shape)
    if positive:
        x = np.abs(x) + 0.1
    return x.astype(mdt.get_dtype(dtype).np_dtype)


def compare_functional(fn, *np_inputs, dtype="float32", factor=1.0):
    """``fn`` (an ops function) on Tensors of ``np_inputs`` on numpy and on jax; compare."""
    outs = []
    for name in ("numpy", "jax"):
        ms.set_context(backend=name)
        out = fn(*[ms.Tensor(x) for x in np_inputs])
        outs.append(out.asnumpy())
    assert_close(outs[1], outs[0], dtype, factor)


def leaked_tracers(params):
    """The names of the Parameters in ``params`` left holding a jax tracer."""
    return [p.name for p in params if is_tracer(p._data)]
