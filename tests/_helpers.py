"""Helpers shared by the test modules (imported as ``_helpers``; pytest puts tests/ on the
path), among them the fixture factories :func:`each_backend` and
:func:`numpy_context_each_test`: a test module assigns what they return to a name."""
import importlib.util
import json
import os
import socket
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


def each_backend(scope="function", seed=None):
    """A ``backend`` fixture (assign it to ``backend`` in a test module): each installed
    backend in turn, selected for the test (``scope="module"``: for the module's tests) with
    :func:`use_backend`, the global seed set to ``seed`` when given; numpy restored after."""
    @pytest.fixture(scope=scope, params=available_backends())
    def backend(request):
        use_backend(request.param)
        if seed is not None:
            ms.set_seed(seed)
        yield request.param
        use_backend("numpy")
    return backend


def numpy_context_each_test(seed=None):
    """An autouse fixture (assign it to ``_numpy_context`` in a test module): each test starts
    on the numpy backend, on the CPU, in PyNative mode (the global seed set to ``seed`` when
    given) and leaves that context behind, whatever it selected."""
    @pytest.fixture(autouse=True)
    def _numpy_context():
        ms.set_context(backend="numpy", device_target="CPU", mode=ms.PYNATIVE_MODE)
        if seed is not None:
            ms.set_seed(seed)
        yield
        ms.set_context(backend="numpy", device_target="CPU", mode=ms.PYNATIVE_MODE)
    return _numpy_context


def child_result(proc):
    """The JSON a child Python printed on its line starting with ``RESULT``; an
    AssertionError with the child's output when it printed none."""
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[len("RESULT"):])
    raise AssertionError(f"child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def trunc_mod(a, b, dtype=None):
    """The remainder of :func:`trunc_div` (the sign of ``a``), exactly; 0 where ``b`` is 0.
    (``dtype`` is unused: the signature of the division tests' tables of exact results.)"""
    return 0 if b == 0 else a - trunc_div(a, b) * b


def pids_with_tag(tag):
    """The ids of the running processes whose command line contains ``tag``."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if tag.encode() in f.read():
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def saturated_by_zero(a, dtype):
    """MindSpore's integer ``a / 0``: MAX for ``a > 0``, MIN for ``a < 0``, 0 for 0."""
    info = np.iinfo(dtype)
    return int(info.max) if a > 0 else int(info.min) if a < 0 else 0


def layout_block(whole, dev_matrix, tensor_map, rank):
    """Device ``rank``'s block of ``whole`` under a (dev_matrix, tensor_map) layout, from the
    layout's definition (written out here, not taken from mscore): tensor axis a is cut
    into ``dev_matrix[-1 - tensor_map[a]]`` parts, device coordinates last axis fastest."""
    coord, left = [], rank
    for size in reversed(dev_matrix):
        coord.insert(0, left % size)
        left //= size
    index = []
    for axis, m in enumerate(tensor_map):
        if m == -1:
            index.append(slice(None))
            continue
        parts = dev_matrix[len(dev_matrix) - 1 - m]
        size = whole.shape[axis] // parts
        j = coord[len(dev_matrix) - 1 - m]
        index.append(slice(j * size, (j + 1) * size))
    return whole[tuple(index)]
