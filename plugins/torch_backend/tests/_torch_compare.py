"""What the torch plugin's test modules share: they are skipped when torch or the plugin is
missing (importing this module skips the importer), and compare the torch backend with the numpy
reference through :func:`both`/:func:`run_on` at the per-dtype tolerances of
:mod:`_backend_compare`."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _backend_compare import assert_close as _assert_close  # noqa: E402

import mscore as ms  # noqa: E402
from mscore.plugin.registry import get_registry  # noqa: E402

if "torch" not in get_registry().names():
    pytest.skip("the torch plugin is not installed (pip install --no-deps -e "
                "plugins/torch_backend)", allow_module_level=True)

CUDA = torch.cuda.is_available()


def run_on(backend, fn, *arrays, dtypes=None, device="CPU"):
    """``fn(*Tensors)`` on ``backend``; the results (nested) as numpy arrays."""
    ms.set_context(backend=backend, device_target=device)
    tensors = [ms.Tensor(a) if dtypes is None else ms.Tensor(a, dtype=dtypes)
               for a in arrays]
    return to_numpy(fn(*tensors))


def to_numpy(out):
    """``out`` (a Tensor, or nested tuples/lists of them) as numpy arrays."""
    if isinstance(out, (tuple, list)):
        return type(out)(to_numpy(o) for o in out)
    if isinstance(out, ms.Tensor):
        return out.asnumpy()
    return out


def assert_close(actual, expected, dtype="float32", factor=1.0):
    """The shared per-dtype comparison (:mod:`_backend_compare`'s tolerances) with the scale of
    its magnitude-relative atol at least 1 and the dtypes equal; ints and bools exactly."""
    _assert_close(actual, expected, dtype, factor, min_scale=1.0, same_dtype=True)


def both(fn, *arrays, dtype="float32", factor=1.0, exact_dtype=True):
    """Run ``fn`` on numpy and torch from the same inputs and compare."""
    dt = getattr(ms, dtype) if dtype else None
    ref = run_on("numpy", fn, *arrays, dtypes=dt)
    got = run_on("torch", fn, *arrays, dtypes=dt)
    assert_close(got, ref, dtype or "float32", factor)
    return got


RNG = np.random.default_rng(1234)


def rnd(*shape, low=-2.0, high=2.0):
    """Uniform float64 numbers in ``[low, high)`` of ``shape`` from the shared :data:`RNG`."""
    return RNG.uniform(low, high, size=shape)
