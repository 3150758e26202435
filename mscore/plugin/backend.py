"""The backend contract: what every array library must provide to run mscore.

A backend plugin returns :class:`BackendSpec` objects from the ``mscore_register_backends``
hook; the spec's ``factory`` builds a :class:`Backend` when the backend is first selected.
Every method below works on the backend's *native* arrays (``numpy.ndarray``,
``torch.Tensor``, ``jax.Array``, ...), never on mscore ``Tensor`` objects. Shapes are
tuples of ints, axes are ints or tuples of ints, dtypes are :class:`mscore.common.dtype.DType`.

The required methods form the *primitive op set*; the reference autodiff
(:mod:`mscore.autodiff`) differentiates programs written in it, so a backend without native
autodiff gets gradients for free. Fused ops (``softmax``, ``log_softmax``, ``layer_norm``,
``batch_norm``, ``cross_entropy``, ``attention``) are optional: the core builds them from
primitives when a backend leaves them as ``None``.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .optional import OPTIONAL_MEMBERS

# A type checker sees the optional members' signatures on Backend; at run time each is None
# until a backend binds it.
if TYPE_CHECKING:
    from .optional import OptionalMethods as _Typed
else:
    _Typed = object

# The primitive op names, in the order the docs list them. The conformance kit checks each.
PRIMITIVE_OPS = (
    # creation and transfer
    "from_numpy", "to_numpy", "full", "arange", "shape", "dtype", "cast", "stop_gradient",
    # elementwise unary
    "neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "erf", "sign", "floor", "ceil",
    "logical_not", "isfinite",
    # elementwise binary and comparisons
    "add", "sub", "mul", "div", "pow", "maximum", "minimum",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "where",
    # reductions
    "sum", "max", "min", "argmax", "argmin", "all", "any",
    # shape
    "reshape", "transpose", "broadcast_to", "concat", "pad",
    # indexing
    "getitem", "scatter_add",
    # linear algebra, convolution, pooling
    "matmul", "conv", "conv_transpose", "max_pool", "avg_pool",
    # random streams
    "rng_state", "random_uniform", "random_normal",
    # device
    "synchronize", "memory_stats", "all_finite",
)

FUSED_OPS = ("softmax", "log_softmax", "layer_norm", "batch_norm", "cross_entropy",
             "attention", "addcmul", "relu", "dense", "gelu", "conv_bias", "foreach_div",
             "momentum_update", "adam_update", "unscale_check", "int_floor_divide",
             "rnn_sequence")

# Optional methods beyond the fused ops: None (or absent) means the core does without.
OPTIONAL_METHODS = ("native_dtype", "float_caster", "copy", "value_and_grad", "grad_boundary",
                    "compile", "set_deterministic", "host_callback")

# Methods a second plugin may replace through the ``mscore_backend_override`` hook.
OVERRIDABLE = PRIMITIVE_OPS + FUSED_OPS + OPTIONAL_METHODS + ("expected_overflow",)

# Capability names a backend may declare in BackendSpec.capabilities.
KNOWN_CAPABILITIES = frozenset({
    "native_autodiff",   # value_and_grad is provided by the library (torch autograd, jax)
    "compile",           # compile() turns a pure step function into one compiled program
    "donation",          # compile() honours donate_argnums
    "collectives",       # all_reduce for data parallelism
    "deterministic",     # the same program gives bit-identical results run to run (same
                         # machine, library versions and thread settings: BLAS thread
                         # counts change float rounding)
})


@dataclass
class BackendSpec:
    """What a plugin says about one backend it provides.

    ``factory`` is called with no arguments the first time the backend is selected, so that a
    plugin's import stays cheap (import the array library inside the factory). ``probe`` is an
    optional callable returning ``(available: bool, reason: str, devices: list[str])`` without
    building the backend (it may import the array library); selecting the backend runs it,
    and ``mscore backends --probe``. ``check`` is an optional callable returning ``""`` when
    the backend looks usable, or the reason it is not, *without importing the array library*
    (``importlib.util.find_spec``, distribution metadata, a driver library's presence); the
    plain ``mscore backends`` uses it, so listing stays fast.

    ``dtypes`` and ``capabilities`` hold on every device of ``devices``, except where
    ``device_dtypes`` / ``device_capabilities`` (device target -> dtypes / capabilities, e.g.
    ``{"GPU": (...)}``) replace them for one device target; :meth:`dtypes_on` and
    :meth:`capabilities_on` give what holds on a device, and the conformance kit certifies
    each device against its own entry. ``undeclared_dtypes`` (dtype name -> reason) says why
    the backend leaves an mscore dtype out (on the devices whose entry lacks it); the kit's
    skips of that dtype give the reason.
    """

    name: str
    version: str
    factory: Callable[[], Backend]
    devices: tuple = ("CPU",)
    dtypes: tuple = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
                     "int64", "uint8", "bool")
    capabilities: frozenset = frozenset()
    probe: Callable | None = None
    check: Callable | None = None
    description: str = ""
    device_dtypes: dict = field(default_factory=dict)
    device_capabilities: dict = field(default_factory=dict)
    undeclared_dtypes: dict = field(default_factory=dict)
    plugin: str = field(default="", compare=False)          # set by the registry
    distribution: str = field(default="", compare=False)    # "mscore-torch 0.1.0", likewise

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"BackendSpec.name: expected an identifier, got {self.name!r}")
        if not callable(self.factory):
            raise TypeError(f"BackendSpec.factory of {self.name!r}: expected a callable")
        self.devices = tuple(self.devices)
        self.dtypes = tuple(self.dtypes)
        self.capabilities = frozenset(self.capabilities)
        targets = {device_target(d) for d in self.devices}
        self.device_dtypes = {
            key: tuple(value) for key, value in
            self._per_device("device_dtypes", self.device_dtypes, targets).items()}
        self.device_capabilities = {
            key: frozenset(value) for key, value in
            self._per_device("device_capabilities", self.device_capabilities,
                             targets).items()}
        self.undeclared_dtypes = self._undeclared(self.undeclared_dtypes)

    def _undeclared(self, table):
        if not isinstance(table, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in table.items()):
            raise TypeError(f"BackendSpec.undeclared_dtypes of {self.name!r}: expected a dict "
                            f"of dtype name -> reason (non-empty str), got {table!r}")
        return dict(table)

    def _per_device(self, what, table, targets):
        if not isinstance(table, dict):
            raise TypeError(f"BackendSpec.{what} of {self.name!r}: expected a dict of device "
                            f"target -> names, got {type(table).__name__}")
        out = {}
        for key, value in table.items():
            target = device_target(key) if isinstance(key, str) else None
            if target not in targets:
                raise ValueError(f"BackendSpec.{what} of {self.name!r}: {key!r} is not one "
                                 f"of its devices {list(self.devices)}")
            if isinstance(value, str) or not hasattr(value, "__iter__"):
                raise TypeError(f"BackendSpec.{what}[{key!r}] of {self.name!r}: expected "
                                f"a collection of names, got {value!r}")
            out[target] = value
        return out

    def dtypes_on(self, device):
        """The dtypes that hold on ``device`` ("CPU", "GPU", "GPU:1", ...)."""
        return self.device_dtypes.get(device_target(device), self.dtypes)

    def undeclared_reason(self, dtype):
        """Why the backend does not declare dtype name ``dtype`` ("" when it gives none)."""
        return self.undeclared_dtypes.get(dtype, "")

    def capabilities_on(self, device):
        """The capabilities that hold on ``device``."""
        return self.device_capabilities.get(device_target(device), self.capabilities)

    def varies_by_device(self, device):
        """True when ``device`` has its own dtype or capability entry."""
        target = device_target(device)
        return target in self.device_dtypes or target in self.device_capabilities


def device_target(device):
    """The device target of a device string: "cuda:1" / "gpu:1" / "GPU" -> "GPU", "cpu" ->
    "CPU", "ascend" -> "Ascend" (other names are returned upper-cased)."""
    head = str(device).strip().split(":")[0].upper()
    return {"CUDA": "GPU", "ASCEND": "Ascend"}.get(head, head)


class Backend(_Typed):
    """Base class of a backend: the primitive op set over native arrays.

    Subclasses set ``name`` and implement every method that raises ``NotImplementedError``
    here. ``capabilities`` is set from :attr:`BackendSpec.capabilities` by the registry when
    the backend is built (the spec is the one place a plugin declares them). ``device`` is
    the current placement string ("CPU", "GPU:0", ...), changed through :meth:`set_device`.
    """

    name = "abstract"
    capabilities: frozenset = frozenset()

    # The optional members (:mod:`mscore.plugin.optional` has their signatures, grouped by
    # concern) are None here, each set below the class: a backend binds the ones it has.
    # True when every array value_and_grad returns is already cut from the library's graph
    # (torch: detached): the core then skips its stop_gradient of each.
    value_and_grad_detached = False

    def __init__(self):
        self.device = "CPU"

    # -- device -----------------------------------------------------------------------
    def set_device(self, device_target: str, device_id: int = 0) -> None:
        """Place new arrays on ``device_target`` ("CPU" or "GPU") number ``device_id``."""
        if device_target != "CPU":
            raise ValueError(f"device_target: backend {self.name!r} supports only 'CPU', "
                             f"got {device_target!r}")
        self.device = "CPU"

    def synchronize(self) -> None:
        """Wait for all queued work on the current device."""

    def memory_stats(self) -> dict:
        """Bytes in use / peak on the current device, as a dict (may be empty on CPU)."""
        return {}

    # -- host threads and execution -------------------------------------------------------
    def limit_threads(self, threads: int):
        """A context manager: inside it, the library's own host thread pools (its intra-op
        and inter-op pools, which ``OMP_NUM_THREADS`` and threadpoolctl do not reach once the
        library has started) use at most ``threads`` threads. The default has nothing of its
        own to limit."""
        return contextlib.nullcontext()

    def graph_mode_eager_reason(self):
        """Why GRAPH_MODE programs run eagerly on this backend, as one phrase, or None when
        they are compiled."""
        if self.compile is None:
            return f"backend {self.name!r} has no compiler"
        return None

    # -- creation and transfer ----------------------------------------------------------
    def from_numpy(self, array, dtype=None):
        """A native array holding a copy of numpy ``array`` (cast to ``dtype`` if given)."""
        raise NotImplementedError

    def to_numpy(self, a):
        """A numpy array with the values of ``a`` (bfloat16 as ``ml_dtypes.bfloat16``)."""
        raise NotImplementedError

    def full(self, shape, value, dtype):
        """An array of ``shape`` filled with ``value``."""
        raise NotImplementedError

    def arange(self, start, stop, step, dtype):
        """``start, start+step, ...`` below ``stop``."""
        raise NotImplementedError

    def shape(self, a) -> tuple:
        """The shape of ``a`` as a tuple of ints."""
        raise NotImplementedError

    def dtype(self, a):
        """The mscore DType of ``a``."""
        raise NotImplementedError

    def cast(self, a, dtype):
        """``a`` converted to ``dtype`` (a no-op when it already has it)."""
        raise NotImplementedError

    def stop_gradient(self, a):
        """``a`` cut from any gradient history the library keeps (detach)."""
        return a

    # -- elementwise ---------------------------------------------------------------------
    def neg(self, a): raise NotImplementedError
    def abs(self, a): raise NotImplementedError
    def exp(self, a): raise NotImplementedError
    def log(self, a): raise NotImplementedError
    def sqrt(self, a): raise NotImplementedError
    def sin(self, a): raise NotImplementedError
    def cos(self, a): raise NotImplementedError
    def tanh(self, a): raise NotImplementedError
    def erf(self, a): raise NotImplementedError
    def sign(self, a): raise NotImplementedError
    def floor(self, a): raise NotImplementedError
    def ceil(self, a): raise NotImplementedError
    def logical_not(self, a): raise NotImplementedError
    def isfinite(self, a): raise NotImplementedError

    # Binary ops get two arrays of the same dtype (the core promotes first) whose shapes
    # broadcast with numpy's rules.
    def add(self, a, b): raise NotImplementedError
    def sub(self, a, b): raise NotImplementedError
    def mul(self, a, b): raise NotImplementedError
    def div(self, a, b): raise NotImplementedError
    def pow(self, a, b): raise NotImplementedError
    def maximum(self, a, b): raise NotImplementedError
    def minimum(self, a, b): raise NotImplementedError
    def equal(self, a, b): raise NotImplementedError
    def not_equal(self, a, b): raise NotImplementedError
    def less(self, a, b): raise NotImplementedError
    def less_equal(self, a, b): raise NotImplementedError
    def greater(self, a, b): raise NotImplementedError
    def greater_equal(self, a, b): raise NotImplementedError
    def logical_and(self, a, b): raise NotImplementedError
    def logical_or(self, a, b): raise NotImplementedError

    def where(self, cond, x, y):
        """Elementwise ``x if cond else y`` (``x`` and ``y`` share a dtype)."""
        raise NotImplementedError

    # -- reductions: axis is None (all) or a tuple of non-negative ints ---------------------
    def sum(self, a, axis, keepdims): raise NotImplementedError
    def max(self, a, axis, keepdims): raise NotImplementedError
    def min(self, a, axis, keepdims): raise NotImplementedError
    def all(self, a, axis, keepdims): raise NotImplementedError
    def any(self, a, axis, keepdims): raise NotImplementedError

    def argmax(self, a, axis):
        """Index (int64) of the first maximum along the int ``axis``."""
        raise NotImplementedError

    def argmin(self, a, axis):
        """Index (int64) of the first minimum along the int ``axis``."""
        raise NotImplementedError

    # -- shape ---------------------------------------------------------------------------
    def reshape(self, a, shape): raise NotImplementedError
    def transpose(self, a, perm): raise NotImplementedError
    def broadcast_to(self, a, shape): raise NotImplementedError

    def concat(self, arrays, axis):
        """Join a list of same-dtype arrays along ``axis``."""
        raise NotImplementedError

    def pad(self, a, pad_width, value):
        """Constant padding; ``pad_width`` is a tuple of ``(before, after)`` per axis."""
        raise NotImplementedError

    # -- indexing --------------------------------------------------------------------------
    def getitem(self, a, index):
        """numpy indexing: ``index`` is a tuple of ints, slices, None, Ellipsis and native
        integer arrays (advanced indexing)."""
        raise NotImplementedError

    def scatter_add(self, a, index, updates):
        """A copy of ``a`` with ``updates`` added at ``a[index]``; repeated indices
        accumulate (``np.add.at`` semantics). The VJP of :meth:`getitem`."""
        raise NotImplementedError

    # -- linear algebra, convolution, pooling ----------------------------------------------
    def matmul(self, a, b):
        """Batched matrix product with numpy's broadcasting rules (operands are >= 2-d)."""
        raise NotImplementedError

    def conv(self, x, w, stride, padding, dilation, groups):
        """N-d cross-correlation, channels first. ``x``: (N, C, *spatial), ``w``:
        (O, C // groups, *kernel); ``stride``/``dilation``: one int per spatial axis;
        ``padding``: one ``(before, after)`` pair per spatial axis."""
        raise NotImplementedError

    def conv_transpose(self, x, w, stride, padding, output_padding, dilation, groups):
        """The gradient of :meth:`conv` with respect to its input, as a layer.
        ``w``: (C_in, O // groups, *kernel); ``output_padding``: one int per spatial axis,
        added at the end of each axis."""
        raise NotImplementedError

    def max_pool(self, x, kernel, stride, padding):
        """Max over windows of the spatial axes; ``padding`` pairs pad with -inf."""
        raise NotImplementedError

    def avg_pool(self, x, kernel, stride, padding, count_include_pad):
        """Mean over windows; zero padding counted or not by ``count_include_pad``."""
        raise NotImplementedError

    # -- random streams: states are native arrays so they can flow through compiled steps --
    def rng_state(self, seed: int):
        """A fresh random state for ``seed``."""
        raise NotImplementedError

    def random_uniform(self, state, shape, dtype):
        """``(values in [0, 1), next_state)``."""
        raise NotImplementedError

    def random_normal(self, state, shape, dtype):
        """``(standard normal values, next_state)``."""
        raise NotImplementedError

    # -- overflow check ------------------------------------------------------------------
    def all_finite(self, arrays) -> bool:
        """True when no array holds inf or nan: one pass, at most one host synchronisation."""
        raise NotImplementedError

    def expected_overflow(self):
        """A context manager around a loss-scaled step, whose inf and nan are expected (the
        overflow check after it is their point): a library that warns on floating-point
        overflow keeps quiet inside it. The default does nothing."""
        return contextlib.nullcontext()


# Primitives whose Backend default is a valid implementation (no-op sync, no stats, ...).
for _name in OPTIONAL_MEMBERS:
    setattr(Backend, _name, None)


_DEFAULTED = frozenset({"stop_gradient", "synchronize", "memory_stats"})


def missing_primitives(backend: Backend) -> list[str]:
    """Names of primitive ops the backend inherits unimplemented from :class:`Backend`."""
    cls = type(backend) if isinstance(backend, Backend) else backend
    return [name for name in PRIMITIVE_OPS
            if name not in _DEFAULTED and getattr(cls, name, None) is getattr(Backend, name)]
