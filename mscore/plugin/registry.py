"""Backend discovery (entry points), registration (pluggy) and selection.

Discovery reads the entry points' metadata and imports nothing: a plugin is imported when a
backend of its entry point's name is selected (the entry point's name is the backend's name;
a plugin overriding another backend's concerns names its entry point after that backend), or
when every backend is listed (:meth:`Registry.names`). So a plugin that is broken at import
breaks only the programs that use it; ``mscore backends`` imports each in a child process
(:mod:`mscore.plugin.listing`).

Loading is robust: a plugin that fails to import, or whose hooks pluggy rejects, is recorded
in :attr:`Registry.failures` with the reason and a warning, and the other backends keep
working. ``MSCORE_STRICT_PLUGINS=1`` turns every such failure into an exception.

Name collisions are resolved the same way whatever the order of ``sys.path`` or of the
entry points: when two plugins claim one backend name, neither is used and the collision is
reported with both distributions named, until the user pins one with the environment
variable ``MSCORE_BACKEND_PLUGIN_<NAME>=<distribution>`` (or :meth:`Registry.pin`). The
built-in ``numpy`` reference belongs to the ``mscore`` distribution; another plugin's claim on
it is refused.
"""
from __future__ import annotations

import os
import re
import threading
import warnings
from dataclasses import dataclass
from importlib import metadata

import pluggy

from . import hookspecs
from .backend import KNOWN_CAPABILITIES, OVERRIDABLE, Backend, BackendSpec
from .hints import unknown_backend_detail

ENTRY_POINT_GROUP = "mscore.backends"
DEFAULT_BACKEND = "numpy"
CORE_DISTRIBUTION = "mscore"
PIN_ENV_PREFIX = "MSCORE_BACKEND_PLUGIN_"


class PluginLoadError(RuntimeError):
    """A backend plugin could not be loaded (raised only in strict mode)."""


class BackendUnavailableError(RuntimeError):
    """The backend is installed but cannot run here (no device, missing library, ...)."""


class BackendLoadError(BackendUnavailableError):
    """The backend's plugin is installed but failed to load (its import, its hook or its
    factory failed); ``name`` is the backend, ``cause`` what went wrong."""

    def __init__(self, name, cause):
        self.name, self.cause = name, cause
        super().__init__(f"{name!r} is installed but its plugin failed to load: {cause}")

    def __reduce__(self):
        return BackendLoadError, (self.name, self.cause)


class BackendNameCollision(PluginLoadError):
    """Several plugins claim one backend name and none is pinned, so none of them is used."""


class UnknownBackendError(ValueError):
    """No installed backend has this name. ``source`` names where the name came from (the
    ``backend`` argument, the ``MSCORE_BACKEND`` environment variable, a command option);
    ``detail`` is the rest of the message: the closest name, the installed ones, and how to
    install the project's own plugins."""

    def __init__(self, name, installed, source="backend"):
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
    """One plugin or backend that failed to load, and why; ``collision``: it loaded, but its
    claim on a backend name clashes with another plugin's."""

    plugin: str
    reason: str
    collision: bool = False


@dataclass(frozen=True)
class Claim:
    """One plugin's claim on a backend name: the spec and where it comes from."""

    spec: BackendSpec
    plugin: str
    distribution: str

    def describe(self):
        """"mscore-torch 0.1.0 (plugin 'torch')"."""
        return f"{self.distribution} (plugin {self.plugin!r})"


def normalize_distribution(name):
    """A distribution name compared the way pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", str(name).split(" ")[0]).lower()


def pin_variable(backend_name):
    """The environment variable that pins the distribution providing ``backend_name``."""
    return PIN_ENV_PREFIX + re.sub(r"[^0-9A-Za-z]", "_", backend_name).upper()


class Registry:
    """Holds the pluggy manager, the backend specs and the built backends."""

    def __init__(self):
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.specs: dict[str, BackendSpec] = {}
        self.collisions: dict[str, str] = {}      # backend name -> why it is not used
        self.failures: list[LoadFailure] = []
        self._claims: dict[str, list[BackendSpec]] = {}   # plugin name -> its specs
        self._sources: dict[str, str] = {}        # plugin name -> "distribution version"
        self._pins: dict[str, str] = {}
        self._reported: set = set()
        self._built: dict[str, Backend] = {}
        self._pending = []                        # (entry point, shares its name) not imported
        self._loaded = False
        self._loading = False
        self._lock = threading.RLock()

    # -- loading -------------------------------------------------------------------------
    def load(self):
        """Read the entry points of the group once (idempotent); nothing is imported."""
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            eps = entry_points()
            counts = {}
            for ep in eps:
                counts[ep.name] = counts.get(ep.name, 0) + 1
            self._pending = [(ep, counts[ep.name] > 1) for ep in eps]

    def load_named(self, name):
        """Import the plugins whose entry point is named ``name`` (not yet imported)."""
        self._load_matching(lambda ep: ep.name == name)

    def load_all(self):
        """Import every plugin not yet imported."""
        self._load_matching(lambda ep: True)

    def _load_matching(self, wanted):
        with self._lock:
            self.load()
            chosen = [item for item in self._pending if wanted(item[0])]
            if not chosen:
                return
            self._pending = [item for item in self._pending if not wanted(item[0])]
            self._loading = True
            try:
                for ep, shared_name in chosen:
                    self._load_entry_point(ep, shared_name)
            finally:
                self._loading = False
            self._resolve()

    def _load_entry_point(self, ep, shared_name=False):
        dist = _distribution(ep)
        # Two distributions may use one entry-point name: load both, under distinct names.
        name = f"{ep.name}@{normalize_distribution(dist)}" if shared_name else ep.name
        try:
            module = ep.load()
        except Exception as exc:  # any import-time error of a third-party plugin
            self._fail(name, f"import of {ep.value!r} from {dist} failed: "
                             f"{type(exc).__name__}: {exc}")
            return
        self.register_plugin(module, name, distribution=dist)

    def register_plugin(self, plugin, name, distribution=None):
        """Register a plugin object with pluggy under ``name``; record (or raise) a validation
        failure. ``distribution`` names where it comes from (default: its module)."""
        with self._lock:
            if self.pm.is_registered(plugin):
                return
            taken = self.pm.get_plugin(name)
            if taken is not None:
                self._fail(name, f"plugin name {name!r} is already used by "
                                 f"{self._sources.get(name, repr(taken))}; not registered")
                return
            try:
                self.pm.register(plugin, name=name)
            except Exception as exc:  # pluggy.PluginValidationError and friends
                self._fail(name, f"invalid hook implementation: {type(exc).__name__}: {exc}")
                return
            try:  # a hook implementation no spec knows (a misspelt name) is an error
                self.pm.check_pending()
            except pluggy.PluginValidationError as exc:
                self.pm.unregister(plugin)
                self._fail(name, f"invalid hook implementation: {type(exc).__name__}: {exc}")
                return
            self._sources[name] = distribution or _module_source(plugin)
            self._collect_specs(name)
            if self._loaded and not self._loading:
                self._resolve()

    def unregister_plugin(self, plugin):
        """Remove a plugin object and the backends it provided (for tests and tools)."""
        with self._lock:
            name = self.pm.get_name(plugin)
            if name is None:
                return
            self.pm.unregister(plugin)
            for spec in self._claims.pop(name, []):
                self._built.pop(spec.name, None)
            self._resolve()

    def pin(self, backend_name, distribution):
        """Use ``distribution`` (or plugin name) for ``backend_name`` when several claim it;
        the programmatic twin of ``MSCORE_BACKEND_PLUGIN_<NAME>``. Call before first use."""
        with self._lock:
            self._pins[backend_name] = distribution
            self._built.pop(backend_name, None)
            if self._loaded and not self._loading:
                self._resolve()

    def _collect_specs(self, plugin_name):
        impls = [i for i in self.pm.hook.mscore_register_backends.get_hookimpls()
                 if i.plugin_name == plugin_name]
        specs = []
        for impl in impls:
            try:
                result = impl.function()
                found = list(result or [])
                for spec in found:
                    if not isinstance(spec, BackendSpec):
                        raise TypeError(f"expected BackendSpec objects, got {type(spec).__name__}")
                    unknown = set(spec.capabilities) - KNOWN_CAPABILITIES
                    if unknown:
                        raise ValueError(f"backend {spec.name!r} declares unknown "
                                         f"capabilities {sorted(unknown)}")
            except Exception as exc:
                self._fail(plugin_name,
                           f"mscore_register_backends failed: {type(exc).__name__}: {exc}")
                continue
            for spec in found:
                spec.plugin = plugin_name
                spec.distribution = self._sources.get(plugin_name, "")
            specs.extend(found)
        self._claims[plugin_name] = specs

    def _resolve(self):
        """Decide which claim provides each backend name; report collisions, once each."""
        by_name = {}
        for plugin_name, specs in self._claims.items():
            if self.pm.get_plugin(plugin_name) is None:  # unregistered behind our back
                continue
            for spec in specs:
                by_name.setdefault(spec.name, []).append(
                    Claim(spec, plugin_name, self._sources.get(plugin_name, "")))
        specs, collisions = {}, {}
        for name, claims in by_name.items():
            claims.sort(key=lambda c: (normalize_distribution(c.distribution), c.plugin))
            chosen, problem = self._choose(name, claims)
            if chosen is not None:
                specs[name] = chosen.spec
            if problem:
                if chosen is None:
                    collisions[name] = problem
                key = (name, tuple(c.plugin for c in claims), problem)
                if key not in self._reported:
                    self._reported.add(key)
                    self._fail(", ".join(c.plugin for c in claims if c is not chosen),
                               problem, BackendNameCollision if chosen is None else
                               PluginLoadError)
        for name in set(self.specs) - set(specs):
            self._built.pop(name, None)
        self.specs = specs
        self.collisions = collisions

    def _choose(self, name, claims):
        """``(claim or None, problem or "")`` for the claims on one backend name."""
        return choose_claim(name, claims, self._pins.get(name))

    def _fail(self, plugin, reason, error=PluginLoadError):
        self.failures.append(LoadFailure(plugin, reason))
        if os.environ.get("MSCORE_STRICT_PLUGINS", "") not in ("", "0"):
            raise error(f"mscore plugin {plugin!r}: {reason}")
        warnings.warn(f"mscore plugin {plugin!r} not loaded: {reason}", RuntimeWarning,
                      stacklevel=3)

    # -- building --------------------------------------------------------------------------
    def names(self):
        """Names of the registered backends, sorted (every plugin is imported)."""
        self.load_all()
        return sorted(self.specs)

    def spec(self, name) -> BackendSpec:
        """The spec of backend ``name``; :class:`UnknownBackendError` (a ValueError) naming
        the installed ones and the closest name otherwise."""
        self.load()
        if not isinstance(name, str):
            raise TypeError(f"backend: expected a backend name (str), got {type(name).__name__}")
        self.load_named(name)
        if name not in self.specs and name not in self.collisions and \
                self.load_failure(name) is None:
            self.load_all()  # a plugin may provide a backend under another name
        try:
            return self.specs[name]
        except KeyError:
            if name in self.collisions:
                raise BackendNameCollision(self.collisions[name]) from None
            failure = self.load_failure(name)
            if failure is not None:
                raise BackendLoadError(name, failure.reason) from None
            raise UnknownBackendError(name, self.names()) from None

    def exclude(self, failure):
        """Never import the entry points named ``failure.plugin`` (found broken elsewhere,
        e.g. by :func:`~mscore.plugin.listing.check_before_use`); the failure is recorded
        without a warning, so selecting that backend names its cause."""
        with self._lock:
            self.load()
            name = failure.plugin.split("@")[0]
            self._pending = [item for item in self._pending if item[0].name != name]
            if self.load_failure(name) is None:
                self.failures.append(LoadFailure(failure.plugin, failure.reason))

    def load_failure(self, name):
        """The :class:`LoadFailure` of the plugin whose entry point is named ``name`` (a
        plugin's entry point is named after its backend), or None."""
        for failure in self.failures:
            if failure.plugin == name or failure.plugin.startswith(name + "@"):
                return failure
        return None

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
            try:
                backend = spec.factory()
            except Exception as exc:  # whatever the plugin's factory raises
                raise BackendLoadError(name, f"its factory raised {type(exc).__name__}: "
                                             f"{exc}") from exc
            if not isinstance(backend, Backend):
                raise TypeError(f"backend {name!r}: factory returned "
                                f"{type(backend).__name__}, expected a mscore Backend")
            _adopt_capabilities(backend, spec)
            self._apply_overrides(backend)
            self._built[name] = backend
            return backend

    def built(self) -> dict:
        """The backends built so far, ``{name: Backend}`` (a copy)."""
        with self._lock:
            return dict(self._built)

    def _apply_overrides(self, backend):
        hook = self.pm.hook.mscore_backend_override
        replaced = set()
        for method in OVERRIDABLE:
            fn = hook(backend_name=backend.name, method=method)
            if fn is not None:
                setattr(backend, method, fn)
                replaced.add(method)
        if "cast" in replaced and "float_caster" not in replaced:
            backend.float_caster = None   # the library's cast would bypass the replaced one

    def collectives_factory(self, name):
        """The ``factory(backend) -> Collectives`` a plugin provides for backend ``name``
        (``mscore_collectives_impl``), or None."""
        self.load_named(name)
        return self.pm.hook.mscore_collectives_impl(backend_name=name)

    def amp_cast_list_additions(self, name):
        """The amp cast-list additions every plugin recommends for backend ``name``."""
        self.load_named(name)
        white, black = [], []
        for extra in self.pm.hook.mscore_amp_cast_lists(backend_name=name):
            if not extra:
                continue
            white.extend(extra.get("white", ()))
            black.extend(extra.get("black", ()))
        return {"white": white, "black": black}

    def describe(self, name, probe=True):
        """:func:`spec_row` of backend ``name``."""
        return spec_row(self.spec(name), probe)


def choose_claim(name, claims, pin=None):
    """``(claim or None, problem or "")`` for the claims on backend ``name``: the core's own
    ``numpy``, the only claim, or the one ``pin`` (default: the pin variable) names."""
    if len(claims) == 1:
        return claims[0], ""
    listed = "; ".join(c.describe() for c in claims)
    if name == DEFAULT_BACKEND:
        core = [c for c in claims if normalize_distribution(c.distribution) ==
                CORE_DISTRIBUTION]
        if len(core) == 1:
            others = "; ".join(c.describe() for c in claims if c is not core[0])
            return core[0], (f"backend name {name!r} belongs to the built-in reference "
                             f"({CORE_DISTRIBUTION}); the claim of {others} is refused")
    variable = pin_variable(name)
    pin = pin or os.environ.get(variable, "")
    if pin:
        matches = [c for c in claims if normalize_distribution(c.distribution) ==
                   normalize_distribution(pin) or c.plugin == pin]
        if len(matches) == 1:
            return matches[0], ""
        return None, (f"backend name {name!r} is claimed by {len(claims)} plugins: "
                      f"{listed}; the pin {variable}={pin} matches "
                      f"{'none' if not matches else 'several'} of them, so none is used")
    return None, (f"backend name {name!r} is claimed by {len(claims)} plugins: {listed}; "
                  f"none is used. Pin one with {variable}=<distribution> (e.g. "
                  f"{variable}={claims[0].distribution.split(' ')[0]}) or uninstall "
                  f"the other")


def spec_row(spec, probe=True):
    """A dict describing ``spec`` for ``mscore backends``: version, devices, dtypes (and why it
    leaves some out, ``undeclared_dtypes``), capabilities, each device's own entry
    (``per_device``), status. ``probe=False`` runs only the spec's cheap
    ``check`` (no array library imported); ``probe=True`` its ``probe``."""
    status, devices = "available", list(spec.devices)
    if probe and spec.probe is not None:
        try:
            available, reason, probed = spec.probe()
        except Exception as exc:
            available, reason, probed = False, f"probe failed: {exc}", []
        devices = list(probed) or devices
        if not available:
            status = f"unavailable: {reason}"
    elif not probe and spec.check is not None:
        try:
            reason = spec.check()
        except Exception as exc:
            reason = f"check failed: {type(exc).__name__}: {exc}"
        if reason:
            status = f"unavailable: {reason}"
    per_device = {target: {"dtypes": list(spec.dtypes_on(target)),
                           "capabilities": sorted(spec.capabilities_on(target))}
                  for target in sorted(set(spec.device_dtypes) | set(spec.device_capabilities))}
    return {"name": spec.name, "version": spec.version, "plugin": spec.plugin,
            "distribution": spec.distribution, "devices": devices,
            "dtypes": list(spec.dtypes), "undeclared_dtypes": dict(spec.undeclared_dtypes),
            "capabilities": sorted(spec.capabilities),
            "per_device": per_device, "status": status}


def entry_points():
    """The entry points of the group, each once (metadata only: nothing is imported)."""
    eps = metadata.entry_points().select(group=ENTRY_POINT_GROUP)
    seen, unique = set(), []
    for ep in eps:  # an editable install can list one entry point twice: that is one plugin
        key = (ep.name, ep.value, normalize_distribution(_distribution(ep)))
        if key in seen:
            continue
        seen.add(key)
        unique.append(ep)
    return unique


def _distribution(ep):
    """"name version" of the distribution that declares entry point ``ep``."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return f"unknown distribution of {ep.value}"
    return f"{dist.name} {dist.version}"


def _module_source(plugin):
    module = getattr(plugin, "__name__", None) or type(plugin).__module__
    return f"module {module}"


def _adopt_capabilities(backend, spec):
    """The spec is the one source of truth: the built backend carries its capabilities; a
    backend class that declares different ones is a plugin bug, reported as such."""
    own = backend.__dict__.get("capabilities", type(backend).capabilities)
    if own and frozenset(own) != spec.capabilities:
        raise TypeError(f"backend {spec.name!r}: Backend.capabilities {sorted(own)} differs "
                        f"from BackendSpec.capabilities {sorted(spec.capabilities)}; declare "
                        f"capabilities in the BackendSpec only")
    backend.capabilities = spec.capabilities


REGISTRY = Registry()


# The built-in numpy backend's entry point, as pyproject.toml declares it: the registry loads
# it like any plugin, by name (the backends sit above the registry).
BUILTIN_ENTRY_POINT = metadata.EntryPoint(
    name=DEFAULT_BACKEND, value="mscore.backends.numpy.plugin", group=ENTRY_POINT_GROUP)


def register_builtin(registry):
    """Register the built-in numpy backend in ``registry`` (for when the package's metadata,
    which names it as an entry point, is missing)."""
    registry.register_plugin(BUILTIN_ENTRY_POINT.load(), DEFAULT_BACKEND,
                             distribution=CORE_DISTRIBUTION)


def get_registry() -> Registry:
    """The process-wide registry, loaded on first use."""
    if not REGISTRY._loaded:
        REGISTRY.load()
        REGISTRY.load_named(DEFAULT_BACKEND)
        if DEFAULT_BACKEND not in REGISTRY.specs:
            register_builtin(REGISTRY)
    return REGISTRY
