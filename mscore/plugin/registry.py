"""Backend discovery (entry points), registration (pluggy) and selection.

Loading is robust: a plugin that fails to import, or whose hooks pluggy rejects, is recorded
in :func:`load_failures` with the reason and a warning, and the other backends keep working.
``MSCORE_STRICT_PLUGINS=1`` turns every such failure into an exception.
"""
from __future__ import annotations

import os
import threading
import warnings
from dataclasses import dataclass
from importlib import metadata

import pluggy

from . import hookspecs
from .backend import Backend, BackendSpec, KNOWN_CAPABILITIES

ENTRY_POINT_GROUP = "mscore.backends"
DEFAULT_BACKEND = "numpy"


class PluginLoadError(RuntimeError):
    """A backend plugin could not be loaded (raised only in strict mode)."""


class BackendUnavailableError(RuntimeError):
    """The backend is installed but cannot run here (no device, missing library, ...)."""


class UnknownBackendError(ValueError):
    """No installed backend has this name. ``source`` names where the name came from (the
    ``backend`` argument, the ``MSCORE_BACKEND`` environment variable, a command option);
    ``detail`` is the rest of the message: the closest name, the installed ones, and how to
    install the project's own plugins."""

    def __init__(self, name, installed, source="backend"):
        from .hints import unknown_backend_detail
        self.name, self.installed, self.source = name, tuple(installed), source
        self.detail = unknown_backend_detail(name, installed)
        super().__init__(f"{source}: {self.detail}")

    def with_source(self, source):
        """The same error, attributed to ``source``."""
        return UnknownBackendError(self.name, self.installed, source)

    def __reduce__(self):
        return UnknownBackendError, (self.name, self.installed, self.source)


@dataclass
class LoadFailure:
    """One plugin or backend that failed to load, and why."""

    plugin: str
    reason: str


class Registry:
    """Holds the pluggy manager, the backend specs and the built backends."""

    def __init__(self):
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.specs: dict[str, BackendSpec] = {}
        self.failures: list[LoadFailure] = []
        self._built: dict[str, Backend] = {}
        self._loaded = False
        self._lock = threading.RLock()

    # -- loading -------------------------------------------------------------------------
    def load(self):
        """Load every entry point of the group once (idempotent)."""
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            for ep in _entry_points():
                self._load_entry_point(ep)
            self._collect_specs()

    def _load_entry_point(self, ep):
        try:
            module = ep.load()
        except Exception as exc:  # any import-time error of a third-party plugin
            self._fail(ep.name, f"import of {ep.value!r} failed: {type(exc).__name__}: {exc}")
            return
        self.register_plugin(module, ep.name)

    def register_plugin(self, plugin, name):
        """Register a plugin object with pluggy; record (or raise) a validation failure."""
        try:
            if self.pm.is_registered(plugin) or self.pm.get_plugin(name) is not None:
                return
            self.pm.register(plugin, name=name)
        except Exception as exc:  # pluggy.PluginValidationError and friends
            self._fail(name, f"invalid hook implementation: {type(exc).__name__}: {exc}")
            return
        if self._loaded:
            self._collect_specs(only=name)

    def _collect_specs(self, only=None):
        hook = self.pm.hook.mscore_register_backends
        impls = hook.get_hookimpls()
        for impl in impls:
            if only is not None and impl.plugin_name != only:
                continue
            try:
                result = impl.function()
                specs = list(result or [])
                for spec in specs:
                    if not isinstance(spec, BackendSpec):
                        raise TypeError(f"expected BackendSpec objects, got {type(spec).__name__}")
                    unknown = set(spec.capabilities) - KNOWN_CAPABILITIES
                    if unknown:
                        raise ValueError(f"backend {spec.name!r} declares unknown "
                                         f"capabilities {sorted(unknown)}")
            except Exception as exc:
                self._fail(impl.plugin_name,
                           f"mscore_register_backends failed: {type(exc).__name__}: {exc}")
                continue
            for spec in specs:
                spec.plugin = impl.plugin_name
                if spec.name in self.specs and self.specs[spec.name].plugin != impl.plugin_name:
                    self._fail(impl.plugin_name, f"backend name {spec.name!r} is already "
                                                 f"provided by {self.specs[spec.name].plugin!r}")
                    continue
                self.specs[spec.name] = spec

    def _fail(self, plugin, reason):
        self.failures.append(LoadFailure(plugin, reason))
        if os.environ.get("MSCORE_STRICT_PLUGINS", "") not in ("", "0"):
            raise PluginLoadError(f"mscore plugin {plugin!r}: {reason}")
        warnings.warn(f"mscore plugin {plugin!r} not loaded: {reason}", RuntimeWarning,
                      stacklevel=3)

    # -- building --------------------------------------------------------------------------
    def names(self):
        """Names of the registered backends, sorted."""
        self.load()
        return sorted(self.specs)

    def spec(self, name) -> BackendSpec:
        """The spec of backend ``name``; :class:`UnknownBackendError` (a ValueError) naming
        the installed ones and the closest name otherwise."""
        self.load()
        if not isinstance(name, str):
            raise TypeError(f"backend: expected a backend name (str), got {type(name).__name__}")
        try:
            return self.specs[name]
        except KeyError:
            raise UnknownBackendError(name, self.names()) from None

    def get(self, name) -> Backend:
        """The built backend ``name`` (built once, with plugin overrides applied)."""
        with self._lock:
            if name in self._built:
                return self._built[name]
            spec = self.spec(name)
            if spec.probe is not None:
                available, reason, _ = spec.probe()
                if not available:
                    raise BackendUnavailableError(f"backend {name!r} is installed but "
                                                  f"unavailable: {reason}")
            backend = spec.factory()
            if not isinstance(backend, Backend):
                raise TypeError(f"backend {name!r}: factory returned "
                                f"{type(backend).__name__}, expected a mscore Backend")
            self._apply_overrides(backend)
            self._built[name] = backend
            return backend

    def _apply_overrides(self, backend):
        name = backend.name
        for mapping in self.pm.hook.mscore_override_ops(backend_name=name):
            for op_name, fn in (mapping or {}).items():
                setattr(backend, op_name, fn)
        all_finite = self.pm.hook.mscore_all_finite_impl(backend_name=name)
        if all_finite is not None:
            backend.all_finite = all_finite
        vag = self.pm.hook.mscore_value_and_grad_impl(backend_name=name)
        if vag is not None:
            backend.value_and_grad = vag
        compile_fn = self.pm.hook.mscore_compile_impl(backend_name=name)
        if compile_fn is not None:
            backend.compile = compile_fn

    def amp_cast_list_additions(self, name):
        """The amp cast-list additions every plugin recommends for backend ``name``."""
        self.load()
        white, black = [], []
        for extra in self.pm.hook.mscore_amp_cast_lists(backend_name=name):
            if not extra:
                continue
            white.extend(extra.get("white", ()))
            black.extend(extra.get("black", ()))
        return {"white": white, "black": black}

    def describe(self, name):
        """A dict for ``mscore backends``: version, devices, dtypes, capabilities, status."""
        spec = self.spec(name)
        status, devices = "available", list(spec.devices)
        if spec.probe is not None:
            try:
                available, reason, probed = spec.probe()
            except Exception as exc:
                available, reason, probed = False, f"probe failed: {exc}", []
            devices = list(probed) or devices
            if not available:
                status = f"unavailable: {reason}"
        return {"name": spec.name, "version": spec.version, "plugin": spec.plugin,
                "devices": devices, "dtypes": list(spec.dtypes),
                "capabilities": sorted(spec.capabilities), "status": status}


def _entry_points():
    eps = metadata.entry_points()
    selected = eps.select(group=ENTRY_POINT_GROUP)
    seen, unique = set(), []
    for ep in selected:  # an editable install can list one entry point twice
        if ep.name in seen:
            continue
        seen.add(ep.name)
        unique.append(ep)
    return unique


REGISTRY = Registry()


def _ensure_builtin():
    """Register the built-in numpy backend even when the package's metadata is missing."""
    from mscore.backends.numpy import plugin as numpy_plugin
    REGISTRY.register_plugin(numpy_plugin, "numpy")


def get_registry() -> Registry:
    """The process-wide registry, loaded on first use."""
    if not REGISTRY._loaded:
        REGISTRY.load()
        if "numpy" not in REGISTRY.specs:
            _ensure_builtin()
    return REGISTRY
