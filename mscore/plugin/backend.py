"""The backend contract: what every array library must provide to run mscore.

A backend plugin returns :class:`BackendSpec` objects from the ``mscore_register_backends``
hook; the spec's ``factory`` builds a :class:`Backend` when the backend is first selected.
Every member of the contract (:mod:`.required` and :mod:`.optional` declare them, with
their signatures, grouped by concern) works on the backend's *native* arrays
(``numpy.ndarray``, ``torch.Tensor``, ``jax.Array``, ...), never on mscore ``Tensor``
objects. Shapes are tuples of ints, axes are ints or tuples of ints, dtypes are
:class:`mscore.common.dtype.DType`.

The required methods form the *primitive op set*; the reference autodiff
(:mod:`mscore.autodiff`) differentiates programs written in it, so a backend without native
autodiff gets gradients for free. Fused ops (``softmax``, ``log_softmax``, ``layer_norm``,
``batch_norm``, ``cross_entropy``, ``attention``) are optional: the core builds them from
primitives when a backend leaves them as ``None``.
"""
from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import optional, required
from .optional import OPTIONAL_MEMBERS
from .required import DEFAULTED, REQUIRED_MEMBERS, RequiredMethods

# A type checker sees the optional members' signatures on Backend; at run time each is None
# until a backend binds it.
if TYPE_CHECKING:
    from .optional import OptionalMethods as _Typed
else:
    _Typed = object

# The primitive op names, grouped by concern in the order :mod:`.required` declares them
# (with their signatures and contracts). The conformance kit checks each.
PRIMITIVE_OPS = REQUIRED_MEMBERS

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


class Backend(RequiredMethods, _Typed):
    """Base class of a backend: the primitive op set over native arrays.

    Subclasses set ``name`` and implement every required member (:mod:`.required`
    declares them with their signatures, grouped by concern; those without a default raise
    ``NotImplementedError`` here) and bind the optional members they have (:mod:`.optional`;
    the rest are None here). ``capabilities`` is set from :attr:`BackendSpec.capabilities` by
    the registry when the backend is built (the spec is the one place a plugin declares
    them). ``device`` is the current placement string ("CPU", "GPU:0", ...), changed through
    :meth:`set_device`. The members below have a working default a backend may override.
    """

    name = "abstract"
    capabilities: frozenset = frozenset()

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

    # -- host threads and execution -------------------------------------------------------
    def limit_threads(self, threads: int) -> contextlib.AbstractContextManager[None]:
        """A context manager: inside it, the library's own host thread pools (its intra-op
        and inter-op pools, which ``OMP_NUM_THREADS`` and threadpoolctl do not reach once the
        library has started) use at most ``threads`` threads. The default has nothing of its
        own to limit."""
        return contextlib.nullcontext()

    def graph_mode_eager_reason(self) -> str | None:
        """Why GRAPH_MODE programs run eagerly on this backend, as one phrase, or None when
        they are compiled."""
        if self.compile is None:
            return f"backend {self.name!r} has no compiler"
        return None

    def expected_overflow(self) -> contextlib.AbstractContextManager[None]:
        """A context manager around a loss-scaled step, whose inf and nan are expected (the
        overflow check after it is their point): a library that warns on floating-point
        overflow keeps quiet inside it. The default does nothing."""
        return contextlib.nullcontext()


# The optional members are None until a backend binds them.
for _name in OPTIONAL_MEMBERS:
    setattr(Backend, _name, None)


def missing_primitives(backend: Backend) -> list[str]:
    """Names of primitive ops the backend inherits unimplemented from :class:`Backend`."""
    cls = type(backend) if isinstance(backend, Backend) else backend
    return [name for name in PRIMITIVE_OPS
            if name not in DEFAULTED and getattr(cls, name, None) is getattr(Backend, name)]


def misnamed_parameters(backend: Backend) -> dict[str, tuple[list[str], list[str]]]:
    """``{member: (declared names, written names)}`` for the contract's members that the
    backend's class writes in Python with other parameter names, or in another order, than
    :mod:`.required` / :mod:`.optional` declare (the core passes op attributes by keyword).
    Extra trailing parameters with a default, keyword-only ones, and methods taking
    ``*args`` are accepted; members bound on the instance (library functions) are not
    looked at."""
    cls = type(backend) if isinstance(backend, Backend) else backend
    out = {}
    for name in REQUIRED_MEMBERS + OPTIONAL_MEMBERS:
        fn = getattr(cls, name, None)
        if not inspect.isfunction(fn) or fn is getattr(Backend, name):
            continue
        module = required if name in REQUIRED_MEMBERS else optional
        declared = list(module.signature(name).parameters)
        written = list(inspect.signature(fn).parameters.values())
        if not isinstance(inspect.getattr_static(cls, name), staticmethod):
            written = written[1:]
        if any(p.kind is p.VAR_POSITIONAL for p in written):
            continue
        positional = [p for p in written if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
        extra = positional[len(declared):]
        if [p.name for p in positional[:len(declared)]] != declared or any(
                p.default is p.empty for p in extra):
            out[name] = (declared, [p.name for p in written])
    return out
