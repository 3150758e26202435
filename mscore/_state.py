"""Every piece of mscore's mutable state, in one place, with :func:`reset`.

Two kinds of state live here:

* :data:`process`: what MindSpore keeps process-wide: the context (``set_context`` keys), the
  active backend, the seeds (:class:`_Seeds`), the global random stream's Parameter, the
  determinism flag, the cells holding compiled programs, the joined communication job.
* :data:`thread`: what differs per thread, so two threads can train two models at once
  (see :class:`_PerThread`).

Modules higher up keep their settings in *sections* made here (:func:`section`): a dict
created from the module's defaults, which :func:`reset` restores. ``mscore.parallel``'s auto
parallel context and ``mscore.dataset.config``'s settings are sections; so is a backend
plugin's process state, under a name that starts with the plugin's package name (the JAX
plugin's collectives: ``mscore_jax.collectives``), so that this module names no backend.

Settings that follow the execution context (each thread and asyncio task sees its own:
:data:`boost_active`) are ``ContextVar`` objects defined here as well.

Work the process still owes when it ends (asynchronous checkpoint saves to wait for, summary
writers to close, checkpoint prefix claims to give up) is finished by one ``atexit`` handler
registered here, :func:`finish_pending_work`, in the order of :data:`FINISH_ORDER`; the
modules that know how register their step with :func:`finisher`.

:func:`reset` returns the process, and the calling thread, to the state mscore has right
after import; tests call it between cases instead of patching module dicts.
"""
from __future__ import annotations

import atexit
import contextvars
import copy
import threading
import warnings
import weakref

GRAPH_MODE = 0
PYNATIVE_MODE = 1


class _PerThread(threading.local):
    """Training state of the calling thread (``threading.local`` runs ``__init__`` in each).

    * ``autocast_policy``: the op-level mixed-precision policy of the innermost open
      :func:`mscore.amp.autocast` region, or None;
    * ``mutation_scopes``: the open :class:`~mscore.common.parameter.MutationScope` objects,
      outermost first (a tuple, replaced on every enter/exit);
    * ``tracing_depth``: how many reference ``value_and_grad`` traces are open;
    * ``compiled_depth``: how many compiled (GRAPH_MODE) programs are being traced or run;
    * ``traced_random_stream``: while a compiled program is traced, a private Parameter
      standing in for the global random stream, so that the trace's symbolic values never
      pass through the process-wide stream another thread reads; None otherwise;
    * ``cast_copies``: inside :func:`mscore.common.cast_cache.scoped_copies`, the dict of the
      low-precision weight copies made in that scope; None otherwise;
    * ``exporting``: True while an exporter traces a network (the program as written is
      recorded: no execution shortcuts);
    * ``hook_sessions``: the open :class:`mscore.autodiff.boundary.hook_session` objects,
      innermost last;
    * ``deferred_checks``: checks of device values (class labels on a GPU) waiting for the
      next host read, so that they cost no synchronisation of their own
      (:func:`mscore.dispatch.defer_check`).

    Why ``threading.local`` and not ``contextvars``: the torch backend compiles a whole train
    step with ``torch.compile``, whose tracer (dynamo) reads this state on every op. Dynamo
    cannot trace ``ContextVar.get`` (it stops the graph there: one graph break per op), while
    it traces attribute reads and writes of a ``threading.local`` whose attributes are set in
    ``__init__`` (it guards on them, so a program retraces when they differ). The two give the
    same isolation between threads; unlike a ContextVar, this state is shared by asyncio tasks
    of one thread.
    """

    def __init__(self):
        self.autocast_policy = None
        self.mutation_scopes = ()
        self.tracing_depth = 0
        self.compiled_depth = 0
        self.traced_random_stream = None
        self.cast_copies = None
        self.exporting = False
        self.hook_sessions = []
        self.deferred_checks = []


class _Seeds:
    """Every seed of the process.

    * ``global_seed``: :func:`mscore.set_seed`'s seed, or None;
    * ``dataset_seed``: :func:`mscore.dataset.config.set_seed`'s seed, or None (pipelines
      fall back to ``global_seed``, then to the job's seed, then to ``dataset_fallback``);
    * ``dataset_fallback``: a random per-process seed drawn on first need.

    The seed rank 0 of a communication job broadcasts at ``init`` belongs to the job:
    ``process.communication["seed"]``.

    The global random stream itself is :attr:`_Process.random_stream`; it starts from
    ``global_seed``.
    """

    def __init__(self):
        self.global_seed = None
        self.dataset_seed = None
        self.dataset_fallback = None


class _Process:
    """Process-wide state, as MindSpore's context is.

    * ``context``: the ``set_context`` keys (``backend`` is the selected name, None until one
      is selected);
    * ``backend``: the active :class:`~mscore.plugin.backend.Backend`, or None before first use;
    * ``seeds``: :class:`_Seeds`;
    * ``random_stream``: ``{"param": Parameter, "backend": Backend}``: the global random
      stream's state and the backend it was made for (None, None before the first draw);
    * ``deterministic``: :func:`mscore.set_deterministic`'s flag (``get_context
      ("deterministic")`` reads it as ``"ON"``/``"OFF"``);
    * ``deterministic_backends``: the backends whose library was switched to its
      deterministic mode and not back (:func:`tell_backend_deterministic`), which
      :func:`reset` switches back;
    * ``compiled_cells``: the cells holding compiled programs, for ``clear_cache()``;
    * ``cast_copies``: the eager low-precision copies of Parameters' values, by the
      Parameter's id (:mod:`mscore.common.cast_cache`);
    * ``class_jit_disabled``: Cell class -> its class-level ``jit_disabled`` flag (a cache);
    * ``communication``: the communication job this process joined (``collectives``, its
      ``env``, the ``backend`` it was joined on, the created ``groups``, the job's ``seed``,
      the communication ``library``: "nccl" or "mccl"), all None (``groups`` empty) outside
      a job;
    * ``summary_slots``: ``(plugin, tag) -> slot``, the latest value of each summary operator
      (:mod:`mscore.ops.summary`), in first-write order;
    * ``summary_writers``: the open summary event writers (closed at exit);
    * ``async_saves``: the threads of ``save_checkpoint(..., async_save=True)`` still to be
      waited for, and ``async_save_errors``, what failed in them, not yet reported;
    * ``prefix_claims``: the checkpoint prefix claim files this process holds (given up at
      exit);
    * ``trace_count``: how many GRAPH_MODE programs were traced (:func:`count_trace`; the
      benches report it as ``mscore.compile.graph.trace_count``).
    """

    def __init__(self):
        self.context = {"backend": None, "device_target": "CPU", "device_id": 0,
                        "mode": PYNATIVE_MODE, "print_file_path": ""}
        self.backend = None
        self.seeds = _Seeds()
        self.random_stream = {"param": None, "backend": None}
        self.deterministic = False
        self.deterministic_backends = []
        self.compiled_cells = weakref.WeakSet()
        self.cast_copies = {}
        self.class_jit_disabled = {}
        self.communication = {"collectives": None, "env": None, "backend": None, "groups": {},
                              "seed": None, "library": None}
        self.summary_slots = {}
        self.summary_writers = weakref.WeakSet()
        self.async_saves = []
        self.async_save_errors = []
        self.prefix_claims = []
        self.trace_count = 0


process = _Process()
thread = _PerThread()

boost_active = contextvars.ContextVar("mscore_boost_active", default=None)
"""The :class:`~mscore.boost.AutoBoost` made last in this context, or None."""

_sections = {}     # name -> (the live dict, a copy of its defaults)


def section(name, defaults):
    """The process-wide settings dict ``name``, created from ``defaults`` on first call (a
    deep copy: ``defaults`` is never changed); :func:`reset` restores it in place, so a module
    may keep the dict as a module-level name."""
    found = _sections.get(name)
    if found is None:
        found = _sections[name] = (copy.deepcopy(defaults), copy.deepcopy(defaults))
    return found[0]


def count_trace():
    """Count one GRAPH_MODE trace: the traced function calls this once each time its body is
    traced. A backend whose tracer records Python side effects and replays them on every run
    of the program (torch's dynamo) must run this call at trace time instead (dynamo:
    ``torch._dynamo.assume_constant_result``), so it is neither replayed nor guarded on."""
    process.trace_count += 1


FINISH_ORDER = ("async_saves", "summary_writers", "prefix_claims", "failfast_hook")
"""The order in which :func:`finish_pending_work` finishes the process's pending work:
checkpoint files still being written are completed first, summary event files are then
flushed and closed, the prefix claims are given up once the files that hold the prefixes
are in place, and the job's fail-fast exception hook is put back last (nothing after it
can raise into it)."""

_finishers = {}    # FINISH_ORDER name -> the function that finishes that work


def finisher(name):
    """Decorator: register ``fn()`` as the way to finish the pending work ``name`` (one of
    :data:`FINISH_ORDER`), run by :func:`finish_pending_work` at exit and by :func:`reset`.
    ``fn`` finishes what the process lists in its :data:`process` slot; a failure it
    raises is reported as a RuntimeWarning."""
    if name not in FINISH_ORDER:
        raise ValueError(f"finisher: name must be one of {FINISH_ORDER}, got {name!r}")

    def register(fn):
        _finishers[name] = fn
        return fn
    return register


def finish_pending_work():
    """Finish the process's pending work in :data:`FINISH_ORDER` (each registered
    :func:`finisher`): wait for asynchronous checkpoint saves, close the open summary
    writers, give up the checkpoint prefix claims. A step that fails is reported as a
    RuntimeWarning and the next steps still run. Registered with ``atexit`` once, here."""
    for name in FINISH_ORDER:
        fn = _finishers.get(name)
        if fn is None:
            continue
        try:
            fn()
        except Exception as exc:   # at exit nothing else can report it
            warnings.warn(f"{name}: {type(exc).__name__}: {exc}", RuntimeWarning,
                          stacklevel=2)


atexit.register(finish_pending_work)


def drop_compiled_programs():
    """Forget every compiled GRAPH_MODE program, so each cell traces again on its next call
    (``mscore.compile.graph.clear_cache()``; joining or leaving a communication job)."""
    for cell in list(process.compiled_cells):
        cell.__dict__.pop("_graph_cache", None)
    process.compiled_cells.clear()


def tell_backend_deterministic(backend, flag):
    """Switch ``backend``'s library to its deterministic mode (``flag`` True) or back,
    through the backend's optional ``set_deterministic`` method (nothing where it has none),
    and remember which backends are switched on, for :func:`reset`."""
    hook = getattr(backend, "set_deterministic", None)
    if hook is None:
        return
    hook(flag)
    told = process.deterministic_backends
    if flag and backend not in told:
        told.append(backend)
    elif not flag and backend in told:
        told.remove(backend)


def _reset_process():
    finish_pending_work()
    for backend in list(process.deterministic_backends):
        tell_backend_deterministic(backend, False)
    drop_compiled_programs()
    fresh = _Process()
    for key, value in vars(fresh).items():
        current = getattr(process, key, None)
        if isinstance(current, (dict, weakref.WeakSet)):  # in place: modules keep them
            current.clear()
            current.update(value)
        elif isinstance(current, list):
            current[:] = value
        else:
            setattr(process, key, value)


def reset():
    """Return mscore to its import-time state: context defaults (PYNATIVE_MODE, CPU, no
    backend selected: the next op selects ``MSCORE_BACKEND`` or numpy again), no seeds, no
    random stream, determinism off (every backend switched to its deterministic mode is
    switched back, e.g. torch's global deterministic algorithms), no compiled programs and a
    trace count of 0, no communication job, no summary values; the pending work is finished
    first (:func:`finish_pending_work`: asynchronous checkpoint saves waited for, open summary
    writers closed, prefix claims given up); every :func:`section` (a plugin's included) at
    its defaults, and the calling thread's :class:`_PerThread` state and :data:`boost_active`
    cleared. Other threads' per-thread state is theirs to clear.
    A communication job that is running is forgotten, not released."""
    _reset_process()
    thread.__init__()
    boost_active.set(None)
    for live, defaults in _sections.values():
        live.clear()
        live.update(copy.deepcopy(defaults))


def in_compiled():
    """True while code runs inside a compiled program (traced once, so no host syncs: use
    device-side selects instead of Python ``if`` on tensor values)."""
    return thread.compiled_depth > 0
