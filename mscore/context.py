"""Global context: backend selection, device placement, execution mode, seeds.

Selection order: ``set_context(backend=...)``, then the ``MSCORE_BACKEND`` environment
variable, then the built-in ``numpy`` backend. Tensors hold arrays of the backend that was
active when they were made, so select the backend before building a network.
"""
from __future__ import annotations

import os

import numpy as np

GRAPH_MODE = 0
PYNATIVE_MODE = 1
_DEVICE_TARGETS = ("CPU", "GPU", "Ascend")
ENV_SOURCE = "MSCORE_BACKEND environment variable"

_context = {"backend": None, "device_target": "CPU", "device_id": 0, "mode": PYNATIVE_MODE}
_active = None          # the Backend instance ops dispatch to
_seed = None
_host_rng = np.random.default_rng()


def current_backend():
    """The active :class:`~mscore.plugin.backend.Backend` (selected on first use)."""
    if _active is None:
        if _context["backend"] is None and os.environ.get("MSCORE_BACKEND"):
            _activate_from_environment(os.environ["MSCORE_BACKEND"])
        else:
            _activate(_context["backend"] or "numpy")
    return _active


def _activate_from_environment(name):
    """Activate the backend ``MSCORE_BACKEND`` names; its errors name the variable."""
    from mscore.plugin.registry import BackendUnavailableError, UnknownBackendError
    try:
        _activate(name)
    except UnknownBackendError as exc:
        raise exc.with_source(ENV_SOURCE) from None
    except BackendUnavailableError as exc:
        raise BackendUnavailableError(f"{ENV_SOURCE}: {exc}") from None


def _activate(name):
    global _active
    from mscore.plugin.registry import get_registry
    backend = get_registry().get(name)
    backend.set_device(_context["device_target"], _context["device_id"])
    _context["backend"] = name
    _active = backend
    if _seed is not None:
        _reset_device_rng(_seed)


def set_context(**kwargs):
    """Set context keys: ``backend``, ``device_target``, ``device_id``, ``mode``.

    Unknown keys are ``ValueError``; bad values name the key and what was expected.
    """
    allowed = {"backend", "device_target", "device_id", "mode"}
    unknown = set(kwargs) - allowed
    if unknown:
        raise ValueError(f"set_context: unknown key(s) {sorted(unknown)}; supported: "
                         f"{sorted(allowed)}")
    if "mode" in kwargs:
        mode = kwargs["mode"]
        if mode not in (GRAPH_MODE, PYNATIVE_MODE) or isinstance(mode, bool):
            raise ValueError(f"mode: expected ms.GRAPH_MODE (0) or ms.PYNATIVE_MODE (1), "
                             f"got {mode!r}")
        _context["mode"] = mode
    if "device_target" in kwargs:
        target = kwargs["device_target"]
        if not isinstance(target, str):
            raise TypeError(f"device_target: expected a str, got {type(target).__name__}")
        if target not in _DEVICE_TARGETS:
            raise ValueError(f"device_target: expected one of {_DEVICE_TARGETS}, "
                             f"got {target!r}")
    if "device_id" in kwargs:
        device_id = kwargs["device_id"]
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise ValueError(f"device_id: expected a non-negative int, got {device_id!r}")
    if "backend" in kwargs:
        name = kwargs["backend"]
        from mscore.plugin.registry import get_registry
        get_registry().spec(name)  # validates the name before anything changes
    device_changed = "device_target" in kwargs or "device_id" in kwargs
    old = dict(_context)
    _context.update({k: v for k, v in kwargs.items() if k in ("device_target", "device_id")})
    try:
        if "backend" in kwargs:
            _activate(kwargs["backend"])
        elif device_changed and _active is not None:
            _active.set_device(_context["device_target"], _context["device_id"])
    except Exception:
        _context.update(old)
        raise


def get_context(key):
    """The value of context key ``key`` (``backend`` resolves the active backend's name)."""
    if key == "backend":
        return current_backend().name
    if key not in _context:
        raise ValueError(f"get_context: unknown key {key!r}; supported: {sorted(_context)}")
    return _context[key]


def set_seed(seed):
    """Seed parameter initialisers (host numpy) and the active backend's random stream."""
    global _seed, _host_rng
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed: expected a non-negative int, got {seed!r}")
    _seed = seed
    _host_rng = np.random.default_rng(seed)
    if _active is not None:
        _reset_device_rng(seed)


def get_seed():
    """The seed last given to :func:`set_seed`, or None."""
    return _seed


def host_rng() -> np.random.Generator:
    """The numpy generator initialisers draw from (identical on every backend)."""
    return _host_rng


def _reset_device_rng(seed):
    from mscore.ops.random import reset_global_state
    reset_global_state(seed)
