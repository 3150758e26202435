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
  ignores ``donate_argnums`` and nothing provides the collective operations;
- ``liar_ulp_noise`` declares ``deterministic`` but its float32 matmul moves a few elements
  by one ulp on every call (float64, the widest dtype, is exact);
- ``liar_per_device`` declares int16 on CPU only (its CPU entry of ``device_dtypes``), and
  its int16 arithmetic refuses to run;
- ``liar_result_dtype``: fused softmax and gelu compute half-precision inputs in float32 and
  return float32 (the right values, the wrong dtype);
- ``liar_broadcast``: binary ops given two operands of the same size but different shapes
  pair their elements in order instead of broadcasting ((4, 1) + (1, 4) gives (4, 1));
- ``liar_aliasing``: ``add`` writes its result into its first operand (an in-place update
  visible through every other array that holds it).
"""
import numpy as np
from scipy import special

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

ALL_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
              "uint8", "bool")


def _refuses(dtype, method):
    def wrapper(self, *arrays, **kwargs):
        if any(getattr(a, "dtype", None) == dtype for a in arrays):
            raise TypeError(f"{method}: {np.dtype(dtype).name} is not supported")
        return getattr(ArrayModuleBackend, method)(self, *arrays, **kwargs)
    wrapper.__name__ = method
    return wrapper


class Int8Liar(ArrayModuleBackend):
    """numpy whose arithmetic refuses int8 (transfer and casts still work)."""

    def __init__(self):
        super().__init__(np, "liar_dtypes", special_erf=special.erf)

    neg = _refuses(np.int8, "neg")
    abs = _refuses(np.int8, "abs")
    sign = _refuses(np.int8, "sign")
    add = _refuses(np.int8, "add")
    mul = _refuses(np.int8, "mul")
    sum = _refuses(np.int8, "sum")
    max = _refuses(np.int8, "max")
    matmul = _refuses(np.int8, "matmul")


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


class UlpNoiseMatmul(ArrayModuleBackend):
    """numpy whose float32 matmul moves about one element in eight by one ulp, differently
    on every call."""

    def __init__(self):
        super().__init__(np, "liar_ulp_noise", special_erf=special.erf)
        self._noise = np.random.default_rng()

    def matmul(self, a, b):
        out = super().matmul(a, b)
        if out.dtype != np.float32:
            return out
        moved = self._noise.random(out.shape) < 0.125
        away = np.where(self._noise.random(out.shape) < 0.5, -np.inf, np.inf)
        return np.where(moved, np.nextafter(out, away.astype(np.float32)), out)


class Int16OnCpuLiar(ArrayModuleBackend):
    """numpy whose arithmetic refuses int16, which its spec declares on CPU only."""

    def __init__(self):
        super().__init__(np, "liar_per_device", special_erf=special.erf)

    neg = _refuses(np.int16, "neg")
    add = _refuses(np.int16, "add")
    mul = _refuses(np.int16, "mul")
    sum = _refuses(np.int16, "sum")
    matmul = _refuses(np.int16, "matmul")


class Float32Results(ArrayModuleBackend):
    """numpy with fused softmax and gelu that return float32 for half-precision inputs."""

    def __init__(self):
        super().__init__(np, "liar_result_dtype", special_erf=special.erf)

    @staticmethod
    def _wide(x):
        return x.astype(np.float32) if x.dtype.itemsize < 4 else x

    def softmax(self, x, axis):
        x = self._wide(x)
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def gelu(self, x, approximate):
        x = self._wide(x)
        if approximate == "tanh":
            inner = np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)
            return (0.5 * x * (1 + np.tanh(inner))).astype(x.dtype)
        return (0.5 * x * (1 + special.erf(x / np.sqrt(2)))).astype(x.dtype)


def _pairs_equal_sizes(method):
    def wrapper(self, a, b):
        if a.shape != b.shape and a.size == b.size:
            b = b.reshape(a.shape)
        return getattr(ArrayModuleBackend, method)(self, a, b)
    wrapper.__name__ = method
    return wrapper


class SameSizeBroadcast(ArrayModuleBackend):
    """numpy whose binary arithmetic pairs same-size operands element by element."""

    def __init__(self):
        super().__init__(np, "liar_broadcast", special_erf=special.erf)

    add = _pairs_equal_sizes("add")
    sub = _pairs_equal_sizes("sub")
    mul = _pairs_equal_sizes("mul")
    div = _pairs_equal_sizes("div")
    maximum = _pairs_equal_sizes("maximum")
    minimum = _pairs_equal_sizes("minimum")


class InPlaceAdd(ArrayModuleBackend):
    """numpy whose add overwrites its first operand when the result fits in it."""

    def __init__(self):
        super().__init__(np, "liar_aliasing", special_erf=special.erf)

    def add(self, a, b):
        if a.shape == np.broadcast_shapes(a.shape, b.shape) and a.flags.writeable:
            return np.add(a, b, out=a)
        return super().add(a, b)


FLOAT_INT = ("float16", "bfloat16", "float32", "float64", "int32", "int64", "bool")


@hookimpl
def mscore_register_backends():
    """The liars."""
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
        BackendSpec(name="liar_ulp_noise", version="0.0.1", factory=UlpNoiseMatmul,
                    dtypes=FLOAT_INT, capabilities={"deterministic"},
                    description="declares deterministic, float32 matmul moves by one ulp "
                                "(kit self-test)"),
        BackendSpec(name="liar_per_device", version="0.0.1", factory=Int16OnCpuLiar,
                    devices=("CPU", "GPU"), dtypes=FLOAT_INT,
                    device_dtypes={"CPU": FLOAT_INT + ("int16",)},
                    probe=lambda: (True, "", ["CPU"]),
                    description="declares int16 on CPU, cannot compute it (kit self-test)"),
        BackendSpec(name="liar_result_dtype", version="0.0.1", factory=Float32Results,
                    dtypes=FLOAT_INT,
                    description="fused softmax/gelu return float32 for half inputs "
                                "(kit self-test)"),
        BackendSpec(name="liar_broadcast", version="0.0.1", factory=SameSizeBroadcast,
                    dtypes=FLOAT_INT,
                    description="binary ops pair same-size operands instead of "
                                "broadcasting (kit self-test)"),
        BackendSpec(name="liar_aliasing", version="0.0.1", factory=InPlaceAdd,
                    dtypes=FLOAT_INT,
                    description="add writes into its first operand (kit self-test)"),
    ]
