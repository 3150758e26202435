"""Backends whose optional methods lie narrowly, each beside its honest twin, to show that the
kit proves every optional method a backend provides (and every capability it declares) where
a real author could ship the lie.

Not a distribution: register it for one kit run with ``mscore conformance NAMES --plugin
mscore_optional_liars`` (this folder on ``PYTHONPATH``). Each liar is the numpy reference
(torch for the last) with one lie; its twin (``honest_*``) is the same class with the lie off:

- ``liar_bn_inplace``: ``batch_norm_inplace`` leaves the running statistics alone for 2-d
  (N, C) inputs (3-d and wider are right);
- ``liar_host_callback``: ``host_callback`` drops a call whose values repeat the previous
  call's;
- ``liar_fp16_sum``: declares ``deterministic``, but its float16 sum of more than 4096
  elements moves by one ulp on every other call (the order of a multi-block reduction);
- ``liar_compile``: declares ``compile``, which returns the function unchanged (its twin
  declares nothing: numpy has no compiler);
- ``liar_no_grad_boundary``: torch without ``grad_boundary`` (its native autodiff cannot
  carry cells' backward hooks: ``register_backward_hook`` raises NotImplementedError); its
  twin is torch with it.
"""
import numpy as np
from scipy import special

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

FLOATS = ("float16", "bfloat16", "float32", "float64", "int32", "int64", "bool")


class _Numpy(ArrayModuleBackend):
    """The numpy reference under another name; ``lie`` turns the subclass's lie on."""

    lie = True

    def __init__(self, name, lie):
        super().__init__(np, name, special_erf=special.erf)
        self.lie = lie


class InplaceBatchNorm(_Numpy):
    """numpy with a training batch norm that updates the running statistics in place."""

    def batch_norm_inplace(self, x, running_mean, running_var, weight, bias, momentum, eps):
        axes = (0,) + tuple(range(2, x.ndim))
        xf = x.astype(running_mean.dtype)
        mean, var = xf.mean(axes), xf.var(axes)
        n = x.size // x.shape[1]
        shape = (1, -1) + (1,) * (x.ndim - 2)
        out = (xf - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
        if weight is not None:
            out = out * weight.astype(xf.dtype).reshape(shape)
        if bias is not None:
            out = out + bias.astype(xf.dtype).reshape(shape)
        if not (self.lie and x.ndim == 2):
            running_mean *= 1 - momentum
            running_mean += momentum * mean
            running_var *= 1 - momentum
            running_var += momentum * var * n / max(n - 1, 1)
        return out.astype(x.dtype)


class RepeatDroppingCallback(_Numpy):
    """numpy with a host_callback that skips a call repeating the previous values."""

    def __init__(self, name, lie):
        super().__init__(name, lie)
        self._last = None

    def host_callback(self, fn, arrays):
        values = [np.array(a, copy=True) for a in arrays]
        repeat = self._last is not None and len(values) == len(self._last) and all(
            v.dtype == w.dtype and np.array_equal(v, w) for v, w in zip(values, self._last))
        self._last = values
        if self.lie and repeat:
            return
        fn(*values)


class HalfSumOrder(_Numpy):
    """numpy whose float16 sums of more than 4096 elements differ by one ulp call to call."""

    def __init__(self, name, lie):
        super().__init__(name, lie)
        self._calls = 0

    def sum(self, a, axis, keepdims):
        out = super().sum(a, axis, keepdims)
        if self.lie and a.dtype == np.float16 and a.size > 4096:
            self._calls += 1
            if self._calls % 2:
                out = np.nextafter(out, np.float16(np.inf)).astype(np.float16)
        return out


class IdentityCompile(_Numpy):
    """numpy whose compile returns the function itself."""

    @staticmethod
    def compile(fn, donate_argnums=()):
        return fn


def _torch(lie):
    from mscore_torch.plugin import build
    backend = build()
    backend.name = "liar_no_grad_boundary" if lie else "honest_grad_boundary"
    if lie:
        backend.grad_boundary = None
    return backend


def _pair(name, cls, dtypes=FLOATS, capabilities=(), twin_capabilities=None, what=""):
    """The liar ``liar_NAME`` and its twin ``honest_NAME`` built from ``cls``."""
    twin_caps = capabilities if twin_capabilities is None else twin_capabilities
    return [BackendSpec(name=f"liar_{name}", version="0.0.1",
                        factory=lambda: cls(f"liar_{name}", True), dtypes=dtypes,
                        capabilities=set(capabilities),
                        description=f"{what} (kit self-test)"),
            BackendSpec(name=f"honest_{name}", version="0.0.1",
                        factory=lambda: cls(f"honest_{name}", False), dtypes=dtypes,
                        capabilities=set(twin_caps),
                        description=f"the honest twin of liar_{name} (kit self-test)")]


@hookimpl
def mscore_register_backends():
    """The liars and their twins."""
    torch_dtypes = ("float16", "bfloat16", "float32", "float64", "int32", "int64", "bool")
    return [
        *_pair("bn_inplace", InplaceBatchNorm,
               what="batch_norm_inplace skips the running statistics of 2-d inputs"),
        *_pair("host_callback", RepeatDroppingCallback,
               what="host_callback drops a call repeating the previous values"),
        *_pair("fp16_sum", HalfSumOrder, capabilities={"deterministic"},
               what="declares deterministic, float16 sums above 4096 elements are not"),
        *_pair("compile", IdentityCompile, capabilities={"compile"}, twin_capabilities=(),
               what="declares compile, compiles nothing"),
        BackendSpec(name="liar_no_grad_boundary", version="0.0.1",
                    factory=lambda: _torch(True), dtypes=torch_dtypes,
                    capabilities={"native_autodiff"},
                    description="torch without grad_boundary (kit self-test)"),
        BackendSpec(name="honest_grad_boundary", version="0.0.1",
                    factory=lambda: _torch(False), dtypes=torch_dtypes,
                    capabilities={"native_autodiff"},
                    description="torch with grad_boundary (kit self-test)"),
    ]
