"""Backends that declare more than they honour, to show that a green kit certifies every
declaration (the kit must fail each one with a line naming what was declared and what
happened).

Not a distribution (nothing installs it by accident): register it for one kit run with
``mscore conformance NAME --plugin mscore_lying_backends`` (this folder on ``PYTHONPATH``).
Each is the numpy reference with one lie:

- ``liar_dtypes`` declares int8 but its elementwise ops, reductions and matmul refuse int8;
- ``liar_deterministic`` declares ``deterministic`` but matmul adds noise far below every
  tolerance (so only running the same program twice can tell);
- ``liar_capabilities`` declares ``compile``, ``donation`` and ``collectives``: its compile
  ignores ``donate_argnums`` and nothing provides the collective operations.
"""
import numpy as np
from scipy import special

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

ALL_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
              "uint8", "bool")


def _refuses_int8(method):
    def wrapper(self, *arrays, **kwargs):
        if any(getattr(a, "dtype", None) == np.int8 for a in arrays):
            raise TypeError(f"{method}: int8 is not supported")
        return getattr(ArrayModuleBackend, method)(self, *arrays, **kwargs)
    wrapper.__name__ = method
    return wrapper


class Int8Liar(ArrayModuleBackend):
    """numpy whose arithmetic refuses int8 (transfer and casts still work)."""

    def __init__(self):
        super().__init__(np, "liar_dtypes", special_erf=special.erf)

    neg = _refuses_int8("neg")
    abs = _refuses_int8("abs")
    sign = _refuses_int8("sign")
    add = _refuses_int8("add")
    mul = _refuses_int8("mul")
    sum = _refuses_int8("sum")
    max = _refuses_int8("max")
    matmul = _refuses_int8("matmul")


class NoisyMatmul(ArrayModuleBackend):
    """numpy whose matmul adds a different relative noise of ~1e-13 on every call."""

    def __init__(self):
        super().__init__(np, "liar_deterministic", special_erf=special.erf)
        self._noise = np.random.default_rng()

    def matmul(self, a, b):
        out = super().matmul(a, b)
        if out.dtype.kind != "f":
            return out
        scale = 1e-13 if out.dtype == np.float64 else 1e-6
        noise = self._noise.standard_normal(out.shape) * scale
        return (out * (1 + noise)).astype(out.dtype)


class HollowCapabilities(ArrayModuleBackend):
    """numpy with a compile that ignores donate_argnums (and no collectives at all)."""

    def __init__(self):
        super().__init__(np, "liar_capabilities", special_erf=special.erf)

    @staticmethod
    def compile(fn, donate_argnums=()):
        return fn


@hookimpl
def mscore_register_backends():
    """The three liars."""
    return [
        BackendSpec(name="liar_dtypes", version="0.0.1", factory=Int8Liar, dtypes=ALL_DTYPES,
                    description="declares int8, cannot compute it (kit self-test)"),
        BackendSpec(name="liar_deterministic", version="0.0.1", factory=NoisyMatmul,
                    dtypes=("float32", "float64", "int32", "int64", "bool"),
                    capabilities={"deterministic"},
                    description="declares deterministic, matmul is noisy (kit self-test)"),
        BackendSpec(name="liar_capabilities", version="0.0.1", factory=HollowCapabilities,
                    dtypes=("float32", "float64", "int32", "int64", "bool"),
                    capabilities={"compile", "donation", "collectives"},
                    description="declares donation and collectives, has neither "
                                "(kit self-test)"),
    ]
