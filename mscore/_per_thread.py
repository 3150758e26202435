"""Training state that differs per thread, so two threads can train two models at once.

:data:`state` holds, for the calling thread only:

* ``autocast_policy``: the op-level mixed-precision policy of the innermost open
  :func:`mscore.amp.autocast` region, or None;
* ``mutation_scopes``: the open :class:`~mscore.common.parameter.MutationScope` objects,
  outermost first (a tuple, replaced on every enter/exit);
* ``tracing_depth``: how many reference ``value_and_grad`` traces are open;
* ``compiled_depth``: how many compiled (GRAPH_MODE) programs are being traced or run;
* ``traced_random_stream``: while a compiled program is traced, a private Parameter standing
  in for the global random stream, so that the trace's symbolic values never pass through
  the process-wide stream another thread reads; None otherwise;
* ``cast_copies``: inside :func:`mscore.common.cast_cache.scoped_copies`, the dict of the
  low-precision weight copies made in that scope; None otherwise;
* ``exporting``: True while an exporter traces a network (the program as written is
  recorded: no execution shortcuts).

The selected backend, the device and the global random stream stay process-wide, as
MindSpore's context is.

Why ``threading.local`` and not ``contextvars``: the torch backend compiles a whole train
step with ``torch.compile``, whose tracer (dynamo) reads this state on every op. Dynamo cannot
trace ``ContextVar.get`` (it stops the graph there: one graph break per op), while it traces
attribute reads and writes of a ``threading.local`` whose attributes are set in ``__init__``
(it guards on them, so a program retraces when they differ). The two give the same isolation
between threads; unlike a ContextVar, this state is shared by asyncio tasks of one thread.
"""
from __future__ import annotations

import threading


class _PerThread(threading.local):
    """One instance per thread (``threading.local`` runs ``__init__`` in each thread)."""

    def __init__(self):
        self.autocast_policy = None
        self.mutation_scopes = ()
        self.tracing_depth = 0
        self.compiled_depth = 0
        self.traced_random_stream = None
        self.cast_copies = None
        self.exporting = False


state = _PerThread()
