"""A deliberately broken backend, to show that the conformance kit catches real mistakes.

Not a distribution (so nothing installs it by accident): register it for one kit run with
``mscore conformance broken --plugin mscore_broken_backend`` (this folder on ``PYTHONPATH``).
It is the numpy backend with six classic bugs, each of which one kit level must report:

- ``erf`` is computed as ``tanh`` (a wrong formula: ops.erf, grad.erf, layers.GELU_erf),
- ``sum`` over several axes ignores ``keepdims`` (a shape bug),
- ``argmax`` returns int32 instead of int64 (a dtype bug),
- ``scatter_add`` adds repeated indices once (``a[i] += u`` instead of ``np.add.at``),
- ``max_pool`` pads with 0 instead of -inf (wrong with padding and negative inputs),
- ``all_finite`` does not see NaN (loss scaling would apply a NaN update).
"""
import numpy as np

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

NAME = "broken"


class BrokenBackend(ArrayModuleBackend):
    """numpy with deliberate bugs."""

    def __init__(self):
        super().__init__(np, NAME)

    def erf(self, a):
        return np.tanh(a)

    def sum(self, a, axis, keepdims):
        if axis is not None and len(axis) > 1:
            keepdims = False
        return np.sum(a, axis=axis, keepdims=keepdims, dtype=a.dtype)

    def argmax(self, a, axis):
        return np.argmax(a, axis=axis).astype(np.int32)

    def scatter_add(self, a, index, updates):
        out = a.copy()
        out[index] += updates
        return out

    def max_pool(self, x, kernel, stride, padding):
        x = self.pad(x, ((0, 0), (0, 0)) + tuple(padding), 0)
        return super().max_pool(x, kernel, stride, ((0, 0),) * len(kernel))

    def all_finite(self, arrays):
        return not any(bool(np.isinf(a).any()) for a in arrays)


@hookimpl
def mscore_register_backends():
    """The broken backend: CPU, float32/float64 and integers (no half precision)."""
    return [BackendSpec(name=NAME, version="0.0.1", factory=BrokenBackend, devices=("CPU",),
                        dtypes=("float32", "float64", "int8", "int16", "int32", "int64",
                                "uint8", "bool"),
                        description="deliberately broken numpy backend (kit self-test)")]
