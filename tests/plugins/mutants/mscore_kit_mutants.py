"""Copies of the numpy reference backend (and one of the torch backend) with one planted
bug each, and their honest twins, for the mutation test of the conformance kit
(``tests/test_conformance_mutations.py``). Each bug is one a real author could ship and the
kit's fixed, hand-picked cases do not meet:

- ``mutant_sum_axis``: ``sum`` 0.1 % off for one axis/keepdims combination (axis 1 kept);
- ``mutant_bf16_ties``: a bfloat16 ``float_caster`` rounding ties away from zero;
- ``mutant_uint64_pow``: ``pow`` of uint64 through float64 (loses bits, does not wrap);
- ``mutant_floor_pow2``: ``int_floor_divide`` by a 0-d negative power of two shifts right
  and negates (``-(a >> k)``: floor of ``a / 2**k`` negated, not floor of ``a / -2**k``);
- ``mutant_xent_fp16``: the cross-entropy gradient kernel 1 % too large in float16;
- ``mutant_adam_third``: ``adam_update`` reads the third array's gradient 1 % too large
  (every other array of the list right);
- ``mutant_momentum_fp16``: ``momentum_update`` in float16 computes ``momentum * (v + g)``
  for ``momentum * v + g``;
- ``mutant_momentum_writes``: ``momentum_update`` writes into the given parameters and
  moments even when the caller did not allow it (``inplace=False``);
- ``mutant_layer_norm_fp16`` (torch): the fused layer norm's gradients 1 % too large in
  float16, its values right.

``honest_numpy`` and ``honest_torch`` are the twins without the bugs (the same optional
methods, written correctly). Not a distribution: register it for one kit run with
``--plugin mscore_kit_mutants`` (this folder on ``PYTHONPATH``).
"""
import ml_dtypes
import numpy as np
from scipy import special

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "bool")


class HonestNumpy(ArrayModuleBackend):
    """numpy with a bfloat16 ``float_caster`` and the cross-entropy kernels, correct."""

    def __init__(self, name="honest_numpy"):
        super().__init__(np, name, special_erf=special.erf)

    def native_dtype(self, dtype):
        return dtype.np_dtype

    def float_caster(self, dtype):
        if dtype.name != "bfloat16":
            return lambda a: a.astype(dtype.np_dtype)
        return self._to_bfloat16

    def _to_bfloat16(self, a):
        """Round to nearest, ties to even, from the float32 bits."""
        bits = a.astype(np.float32).view(np.uint32)
        rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16
        out = rounded.astype(np.uint16).view(ml_dtypes.bfloat16)
        return np.where(np.isnan(a), a.astype(ml_dtypes.bfloat16), out)

    def sparse_nll_rows(self, sh, s, target, ignore_index):
        m, c = sh.shape
        zero = np.zeros((), sh.dtype)
        hot = target.reshape(m, 1) == np.arange(c, dtype=target.dtype).reshape(1, c)
        picked = self.sum(np.where(hot, sh, zero), (1,), False)
        valid = target != ignore_index
        return np.where(valid, np.log(s).reshape(m) - picked, zero), valid.astype(sh.dtype)

    def sparse_xent_grad(self, e, s, target, valid, scale):
        m, c = e.shape
        hot = (target.reshape(m, 1) == np.arange(c, dtype=target.dtype).reshape(1, c))
        return (e / s - hot.astype(e.dtype)) * (valid * scale)


class SumOneAxis(HonestNumpy):
    def sum(self, a, axis, keepdims):
        out = super().sum(a, axis, keepdims)
        kept_axis_1 = axis == (1,) and keepdims and out.dtype.kind == "f"
        return out * out.dtype.type(1.001) if kept_axis_1 else out   # the bug


class BfloatTiesAway(HonestNumpy):
    def _to_bfloat16(self, a):
        bits = a.astype(np.float32).view(np.uint32)
        rounded = (bits + np.uint32(0x8000)) >> 16   # the bug: ties away from zero
        out = rounded.astype(np.uint16).view(ml_dtypes.bfloat16)
        return np.where(np.isnan(a), a.astype(ml_dtypes.bfloat16), out)


class Uint64PowThroughFloat(HonestNumpy):
    def pow(self, a, b):
        if a.dtype == np.uint64:
            return np.power(a.astype(np.float64), b.astype(np.float64)).astype(np.uint64)  # the bug
        return super().pow(a, b)


class FloorDivideNegativePowerOfTwo(HonestNumpy):
    def int_floor_divide(self, a, b):
        k = abs(int(b)).bit_length() - 1 if b.ndim == 0 and a.dtype.kind == "i" else -1
        if k > 0 and int(b) == -(1 << k):
            return -(a >> k)   # the bug: -floor(a / 2**k), not floor(a / -2**k)
        return super().int_floor_divide(a, b)


class CrossEntropyGradHalf(HonestNumpy):
    def sparse_xent_grad(self, e, s, target, valid, scale):
        g = super().sparse_xent_grad(e, s, target, valid, scale)
        return g * g.dtype.type(1.01) if g.dtype == np.float16 else g   # the bug


class AdamThirdTensor(HonestNumpy):
    def adam_update(self, params, m, v, grads, *args):
        grads = [g * g.dtype.type(1.01) if i == 2 else g for i, g in enumerate(grads)]  # the bug
        return super().adam_update(params, m, v, grads, *args)


class MomentumHalf(HonestNumpy):
    def momentum_update(self, params, moments, grads, lr, momentum, nesterov, inplace=False):
        if params and params[0].dtype == np.float16:
            grads = [g * momentum for g in grads]   # the bug: momentum * (v + g)
        return super().momentum_update(params, moments, grads, lr, momentum, nesterov, inplace)


class MomentumAlwaysInPlace(HonestNumpy):
    def momentum_update(self, params, moments, grads, lr, momentum, nesterov, inplace=False):
        return super().momentum_update(params, moments, grads, lr, momentum, nesterov,
                                       True)   # the bug: in place whatever the caller says


def _numpy_spec(name, factory):
    return BackendSpec(name=name, version="0.0.1", factory=lambda: factory(name),
                       dtypes=DTYPES, description="kit mutation test")


def _torch_backend(name, planted):
    """The torch backend; with ``planted``, its fused layer norm's gradients in float16 are
    1 % too large (the values unchanged)."""
    from mscore_torch.plugin import build
    backend = build()
    backend.name = name
    if planted:
        honest = backend.layer_norm

        def layer_norm(x, normalized_shape, weight, bias, eps):
            out = honest(x, normalized_shape, weight, bias, eps)
            half = str(out.dtype) == "torch.float16"
            return out + 0.01 * (out - out.detach()) if half else out   # the bug
        backend.layer_norm = layer_norm
    return backend


def _torch_specs():
    try:
        from mscore_torch.plugin import CAPABILITIES
        from mscore_torch.plugin import DTYPES as TORCH_DTYPES
    except ImportError:
        return []
    return [BackendSpec(name=name, version="0.0.1", factory=lambda n=name, p=planted:
                        _torch_backend(n, p), dtypes=TORCH_DTYPES,
                        capabilities=CAPABILITIES, description="kit mutation test")
            for name, planted in (("honest_torch", False), ("mutant_layer_norm_fp16", True))]


@hookimpl
def mscore_register_backends():
    """The mutants and their honest twins."""
    return [_numpy_spec("honest_numpy", HonestNumpy),
            _numpy_spec("mutant_sum_axis", SumOneAxis),
            _numpy_spec("mutant_bf16_ties", BfloatTiesAway),
            _numpy_spec("mutant_uint64_pow", Uint64PowThroughFloat),
            _numpy_spec("mutant_floor_pow2", FloorDivideNegativePowerOfTwo),
            _numpy_spec("mutant_xent_fp16", CrossEntropyGradHalf),
            _numpy_spec("mutant_adam_third", AdamThirdTensor),
            _numpy_spec("mutant_momentum_fp16", MomentumHalf),
            _numpy_spec("mutant_momentum_writes", MomentumAlwaysInPlace)] + _torch_specs()
