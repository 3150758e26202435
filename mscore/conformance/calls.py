"""Which backend methods the kit's tests reach.

The kit wraps every primitive op, fused op and optional hook a backend provides (once per
backend object, on the instance) so that a run can say which of them no test called, and a
test can ask which ones a block of code called (the determinism check proves its programs
reach every op that way). Calls made while the backend serves as the numpy reference of
another test do not count.
"""
from __future__ import annotations

import contextlib
import functools

from mscore.plugin.backend import FUSED_OPS, OPTIONAL_METHODS, PRIMITIVE_OPS

# Optional attributes the core looks up by name beyond FUSED_OPS and OPTIONAL_METHODS (see
# the comments of mscore.plugin.backend.Backend): the in-place training batch norm, the
# model-parallel layout, and the reference autodiff's kernels.
LOOKED_UP_BY_NAME = ("batch_norm_inplace", "shard", "relu_backward", "sparse_nll_rows",
                     "sparse_xent_grad", "class_label_check")
# Every optional method a backend may provide: the kit must reach each one it provides.
OPTIONAL = FUSED_OPS + LOOKED_UP_BY_NAME + OPTIONAL_METHODS
TRACKED = PRIMITIVE_OPS + OPTIONAL
_LOG_ATTR = "_mscore_conformance_calls"


class CallLog:
    """The names of the tracked methods called on one backend object."""

    def __init__(self, provided):
        self.provided = tuple(provided)     # tracked names the backend implements
        self.called = set()
        self._blocks = []                   # sets collecting the calls of open blocks
        self._paused = 0

    def note(self, name):
        """Record one call of ``name`` (nothing while paused)."""
        if self._paused:
            return
        self.called.add(name)
        for block in self._blocks:
            block.add(name)

    @contextlib.contextmanager
    def recording(self):
        """Collect the names called inside the block into the set it yields."""
        block = set()
        self._blocks.append(block)
        try:
            yield block
        finally:
            self._blocks.remove(block)

    @contextlib.contextmanager
    def paused(self):
        """Calls inside the block are not recorded (the backend serves as the reference)."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    def never_called(self):
        """The provided methods no recorded call reached, in contract order."""
        return [n for n in self.provided if n not in self.called]

    def optional_provided(self):
        """The optional methods (:data:`OPTIONAL`) the backend provides, in contract order."""
        return [n for n in OPTIONAL if n in self.provided]


def _counting(log, name, method):
    @functools.wraps(method)
    def counted(*args, **kwargs):
        log.note(name)
        return method(*args, **kwargs)
    counted.mscore_counted_by = log
    return counted


def instrument(backend):
    """The :class:`CallLog` of ``backend``, wrapping its tracked methods. Call it again
    after anything that may rebind them (``set_device`` can): a method that is not wrapped
    any more is wrapped again."""
    log = backend.__dict__.get(_LOG_ATTR)
    if log is None:
        log = CallLog(n for n in TRACKED if callable(getattr(backend, n, None)))
        backend.__dict__[_LOG_ATTR] = log
    for name in log.provided:
        method = getattr(backend, name, None)
        if callable(method) and getattr(method, "mscore_counted_by", None) is not log:
            setattr(backend, name, _counting(log, name, method))
    return log


def log_of(backend):
    """The :class:`CallLog` of an instrumented backend, or None."""
    return getattr(backend, "__dict__", {}).get(_LOG_ATTR)
