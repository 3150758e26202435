"""Helpers shared by the test modules (imported as ``_helpers``; pytest puts tests/ on the
path)."""
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import mscore as ms
from mscore.plugin.registry import get_registry

PROJECT_BACKENDS = ("numpy", "torch", "jax", "cupy")


def available_backends(exclude=()):
    """The project's own backends that are installed and usable here, in a fixed order
    (test-only and example plugins have their own tests)."""
    reg = get_registry()
    names = []
    for name in PROJECT_BACKENDS:
        if name in exclude or name not in reg.names():
            continue
        spec = reg.spec(name)
        if spec.probe is not None and not spec.probe()[0]:
            continue
        names.append(name)
    return names


def use_backend(name):
    """Select backend ``name`` (on the GPU when ``MSCORE_TEST_DEVICE=GPU`` and the backend
    declares one) or skip the test when its probe says it cannot run here (no device, library
    missing); returns its spec. A backend the probe passes but that fails to start is an
    error of the test, never a skip."""
    spec = get_registry().spec(name)
    if spec.probe is not None:
        available, reason, _ = spec.probe()
        if not available:
            pytest.skip(f"backend {name!r} unavailable: {reason}")
    device = "GPU" if os.environ.get("MSCORE_TEST_DEVICE") == "GPU" and "GPU" in spec.devices \
        else "CPU"
    ms.set_context(device_target=device, backend=name)
    return spec


def load_script(folder, name):
    """The module ``name`` of the repository's ``folder`` (``bench`` or ``tools``: scripts,
    not packages), loaded from its file."""
    path = Path(__file__).resolve().parent.parent / folder / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{folder}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def central_differences(f, x, eps=1e-6):
    """The gradient of the scalar function ``f`` at the numpy array ``x`` by central
    differences, ``(f(x + eps e_i) - f(x - eps e_i)) / (2 eps)`` per element."""
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[i] += eps
        minus[i] -= eps
        out[i] = (f(plus) - f(minus)) / (2 * eps)
    return out


# Exact integer references (Python ints) for the division tests.
def wrap_int(v, dtype):
    """``v`` wrapped into ``dtype``'s range (two's complement)."""
    info = np.iinfo(dtype)
    return (v - int(info.min)) % 2 ** info.bits + int(info.min)


def trunc_div(a, b):
    """``a / b`` rounded toward zero, exactly."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def saturated_by_zero(a, dtype):
    """MindSpore's integer ``a / 0``: MAX for ``a > 0``, MIN for ``a < 0``, 0 for 0."""
    info = np.iinfo(dtype)
    return int(info.max) if a > 0 else int(info.min) if a < 0 else 0
