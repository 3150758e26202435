"""Global context: backend selection, device placement, execution mode, seeds.

Selection order: ``set_context(backend=...)``, then the ``MSCORE_BACKEND`` environment
variable, then the built-in ``numpy`` backend. Tensors hold arrays of the backend that was
active when they were made, so select the backend before building a network.
"""
from __future__ import annotations

import os
import time

import numpy as np

from mscore import _state
from mscore._state import GRAPH_MODE, PYNATIVE_MODE
from mscore.parallel._context import (  # noqa: F401  (mindspore.context has them)
    ParallelMode,
    get_auto_parallel_context,
    reset_auto_parallel_context,
    set_auto_parallel_context,
)
from mscore.plugin.registry import BackendUnavailableError, UnknownBackendError, get_registry

# MindSpore's JIT syntax support levels (``set_context(jit_syntax_level=...)``).
STRICT = 0
COMPATIBLE = 1
LAX = 2
_DEVICE_TARGETS = ("CPU", "GPU", "Ascend")
ENV_SOURCE = "MSCORE_BACKEND environment variable"

_context = _state.process.context     # the set_context keys (the same dict, reset in place)


def current_backend():
    """The active :class:`~mscore.plugin.backend.Backend` (selected on first use)."""
    active = _state.process.backend
    if active is None:
        if _context["backend"] is None and os.environ.get("MSCORE_BACKEND"):
            _activate_from_environment(os.environ["MSCORE_BACKEND"])
        else:
            _activate(_context["backend"] or "numpy")
        active = _state.process.backend
    return active


def _activate_from_environment(name):
    """Activate the backend ``MSCORE_BACKEND`` names; its errors name the variable."""
    try:
        _activate(name)
    except UnknownBackendError as exc:
        raise exc.with_source(ENV_SOURCE) from None
    except BackendUnavailableError as exc:
        raise BackendUnavailableError(f"{ENV_SOURCE}: {exc}") from None


def _activate(name):
    backend = get_registry().get(name)
    backend.set_device(_context["device_target"], _context["device_id"])
    if _state.process.deterministic:
        _require_deterministic(backend)
    _context["backend"] = name
    _state.process.backend = backend
    if _state.process.deterministic:
        _state.tell_backend_deterministic(backend, True)
    if _state.process.seeds.global_seed is not None:
        _restart_random_stream()


def set_context(**kwargs):
    """Set context keys: ``backend``, ``device_target``, ``device_id``, ``mode``,
    ``print_file_path``.

    ``print_file_path`` sends what the ``Print`` primitive prints to that file, in
    MindSpore's print-file format (read it back with ``mscore.parse_print``), instead of the
    screen; an existing file is not overwritten: the name gets ``.<seconds since epoch>``
    appended, as MindSpore does. ``None`` or ``""`` prints to the screen again.

    Unknown keys are ``ValueError``; bad values name the key and what was expected. While
    ``set_deterministic(True)`` holds, a ``device_target``/``device_id``/``backend`` where the
    backend does not declare the ``deterministic`` capability is ``NotImplementedError``, as
    ``set_deterministic(True)`` there would be, and nothing changes.
    """
    allowed = {"backend", "device_target", "device_id", "mode", "print_file_path"}
    unknown = set(kwargs) - allowed
    if unknown:
        raise ValueError(f"set_context: unknown key(s) {sorted(unknown)}; supported: "
                         f"{sorted(allowed)}")
    if "print_file_path" in kwargs:
        _context["print_file_path"] = _print_file_path(kwargs["print_file_path"])
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
        get_registry().spec(name)  # validates the name before anything changes
    device_changed = "device_target" in kwargs or "device_id" in kwargs
    old = dict(_context)
    _context.update({k: v for k, v in kwargs.items() if k in ("device_target", "device_id")})
    backend = _state.process.backend
    try:
        if "backend" in kwargs:
            _activate(kwargs["backend"])
        elif device_changed and backend is not None:
            backend.set_device(_context["device_target"], _context["device_id"])
            if _state.process.deterministic:
                _require_deterministic(backend)
    except Exception:
        _context.update(old)
        if device_changed and backend is not None:   # back where it was
            backend.set_device(old["device_target"], old["device_id"])
        raise


def _print_file_path(path):
    """The file ``Print`` will write to, as MindSpore resolves ``print_file_path``."""
    if path is None or path == "":
        return ""
    if not isinstance(path, str):
        raise TypeError(f"print_file_path: expected a str, got {type(path).__name__}")
    full = os.path.realpath(path)
    if os.path.isdir(full):
        raise OSError(f"print_file_path: expected a file path, but {path!r} is a directory")
    if os.path.exists(full):
        stamped = f"{full}.{int(time.time())}"
        if os.path.exists(stamped):
            raise ValueError(f"print_file_path: {path!r} exists and so does {stamped!r}")
        full = stamped
    return full


def get_context(attr_key):
    """The value of context key ``attr_key`` (``backend`` resolves the active backend's
    name)."""
    key = attr_key
    if not isinstance(key, str):
        raise TypeError(f"attr_key: expected a str, got {type(key).__name__}")
    if key == "backend":
        return current_backend().name
    if key == "deterministic":
        return "ON" if _state.process.deterministic else "OFF"
    if key not in _context:
        raise ValueError(f"get_context: unknown key {key!r}; supported: "
                         f"{sorted([*_context, 'deterministic'])}")
    return _context[key]


def set_seed(seed):
    """Seed numpy's global random state (which parameter initialisers draw from, as in
    MindSpore) and the active backend's random stream."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed: expected a non-negative int, got {seed!r}")
    _state.process.seeds.global_seed = seed
    np.random.seed(seed)
    _restart_random_stream()


def get_seed():
    """The seed last given to :func:`set_seed`, or None."""
    return _state.process.seeds.global_seed


def host_rng() -> np.random.Generator:
    """A numpy generator for one initialiser draw, seeded from numpy's global random state
    as MindSpore's initialisers are: ``np.random.seed`` (or :func:`set_seed`) makes the
    draws repeat, and the values are the same on every backend."""
    return np.random.default_rng(np.random.randint(1, 1 << 63, dtype=np.int64))


def _restart_random_stream():
    """Drop the global random stream: the next draw starts it afresh from the global seed
    (:mod:`mscore.ops.random.draws` makes it, reading the seed from :mod:`mscore._state`)."""
    stream = _state.process.random_stream
    stream["param"] = None
    stream["backend"] = None


# -- MindSpore 2.x device helpers --------------------------------------------------------------
def set_device(device_target, device_id=None):
    """``set_context(device_target=..., device_id=...)`` in MindSpore 2.x's spelling."""
    if not isinstance(device_target, str):
        raise TypeError(f"device_target: expected a str, got {type(device_target).__name__}")
    if device_target not in _DEVICE_TARGETS:
        raise ValueError(f"device_target: expected one of {list(_DEVICE_TARGETS)}, got "
                         f"{device_target!r}")
    kwargs = {"device_target": device_target}
    if device_id is not None:
        if not isinstance(device_id, int) or isinstance(device_id, bool):
            raise TypeError(f"device_id: expected an int, got {type(device_id).__name__}")
        if device_id < 0:
            raise ValueError(f"device_id: expected a non-negative int, got {device_id}")
        kwargs["device_id"] = device_id
    set_context(**kwargs)


def synchronize():
    """Wait until the active backend has finished the work queued on its device."""
    current_backend().synchronize()


def set_deterministic(deterministic):
    """Ask for bit-identical results run to run (``True``) or allow faster, varying
    kernels again (``False``). ``True`` needs a backend that declares the ``deterministic``
    capability on its current device (``BackendSpec.capabilities_on``; the built-in numpy
    backend does, torch and jax on the CPU); otherwise it is ``NotImplementedError`` naming
    the backend and device, since mscore cannot make it so. A backend with the optional
    ``set_deterministic(flag)`` method is told of each switch (torch switches its
    deterministic algorithms on and off there); a backend selected later while the flag is on
    is told when it is selected. While the flag is on, ``set_context`` refuses a device or
    backend that does not declare the capability with the same ``NotImplementedError`` (the
    context stays as it was). ``get_context("deterministic")`` reads the flag back as
    ``"ON"`` or ``"OFF"``.

    A non-bool is ``TypeError``, worded as MindSpore words it. Unlike MindSpore, which allows
    one call per process (a second is ``RuntimeError``), the flag may be switched again."""
    if not isinstance(deterministic, bool):
        raise TypeError(f"The parameter 'deterministic' must be {bool}, but got "
                        f"{type(deterministic)}")
    backend = current_backend()
    if deterministic:
        _require_deterministic(backend)
    _state.tell_backend_deterministic(backend, deterministic)
    _state.process.deterministic = deterministic


def _require_deterministic(backend):
    """``NotImplementedError`` naming the backend and device unless ``backend`` declares the
    ``deterministic`` capability on its current device: ``set_deterministic(True)`` asks it,
    and so does moving to another device or backend while the flag is on."""
    if "deterministic" not in get_registry().spec(backend.name).capabilities_on(backend.device):
        raise NotImplementedError(f"set_deterministic(True): backend {backend.name!r} does "
                                  f"not declare the 'deterministic' capability on "
                                  f"{backend.device}")


# -- MindSpore 2.x generator functions (one global stream here) -------------------------------
def generator_seed(seed):
    """``seed`` as a generator seeds with it: any int, negative ones wrapped to 32 bits (as
    any int seeds MindSpore's generators); ``TypeError`` for anything else."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed: must be an integer, got {type(seed).__name__}")
    return seed % 2 ** 32 if seed < 0 else seed


def manual_seed(seed):
    """Seed the global random stream (MindSpore's default generator): :func:`set_seed` of
    :func:`generator_seed`."""
    set_seed(generator_seed(seed))


def initial_seed():
    """The seed the global stream was last seeded with (0 before any seeding)."""
    seed_value = _state.process.seeds.global_seed
    return 0 if seed_value is None else seed_value


def seed():
    """Seed the global stream with a fresh random 32-bit seed and return it."""
    fresh = int(np.random.SeedSequence().generate_state(1)[0])
    set_seed(fresh)
    return fresh
