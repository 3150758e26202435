"""The summary operators: ``ops.ScalarSummary()(name, value)`` and friends inside ``construct``,
and the slots holding what they recorded.

Each operator stores its value in a *slot*, a hidden non-trainable Parameter keyed by tag
and plugin. Storing is an assignment, so the machinery that already carries Parameter
updates out of ``value_and_grad`` (all backends) and out of a compiled ``GRAPH_MODE`` step
(the ``_side_output`` marker) delivers concrete values, never tracers, and the operator
itself never waits for the device. :meth:`SummaryRecord.record` (train mode) collects the
slots written since the previous record, as MindSpore consumes its summary cache.
"""
from __future__ import annotations

import threading

import numpy as np

from mscore import _state, context, dispatch
from mscore._state import GRAPH_MODE
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.ops.primitive_base import Primitive

_lock = threading.Lock()
_slots = _state.process.summary_slots   # (plugin, tag) -> _SummarySlot, in first-write order


class _SummarySlot(Parameter):
    """Output-only state holding the latest value of one summary operator."""

    # A compiled program returns the new values of side-output Parameters as extra
    # outputs instead of refusing a Parameter the cell does not own (compile/graph.py).
    _side_output = True

    @classmethod
    def create(cls, plugin, tag):
        slot = object.__new__(cls)
        slot._data = None            # nothing recorded yet
        slot.name = f"{tag}[:{plugin.title()}]"
        slot.requires_grad = False
        slot.layerwise_parallel = False
        slot.parallel_optimizer = False
        slot._user_named = True
        slot.plugin, slot.tag = plugin, tag
        slot.version = 0             # bumped by every assignment
        slot.consumed = 0            # version last handed to a SummaryRecord
        return slot

    def _assign(self, data):
        super()._assign(data)
        self.version += 1

    def __repr__(self):
        return f"SummarySlot({self.name})"


def _slot(plugin, tag):
    key = (plugin, tag)
    slot = _slots.get(key)
    if slot is None:
        with _lock:
            slot = _slots.setdefault(key, _SummarySlot.create(plugin, tag))
    return slot


def store_pending(plugin, tag, value):
    """Hold ``value`` (a Tensor) as the pending ``plugin`` summary of ``tag``, as the summary
    operator of that plugin does; the next train-mode ``SummaryRecord.record`` writes it."""
    _slot(plugin, tag)._assign(dispatch.call("stop_gradient", value._data))


def consume_pending():
    """``[(plugin, tag, native array)]`` for every slot written since the last call."""
    out = []
    with _lock:
        slots = list(_slots.values())
    for slot in slots:
        if slot.version != slot.consumed and slot._data is not None:
            slot.consumed = slot.version
            out.append((slot.plugin, slot.tag, slot._data))
    return out


def discard_pending():
    """Forget every pending value (used when a record skips the summary operators)."""
    consume_pending()


class _SummaryOp(Primitive):
    """Base of the summary operators: ``op(name, value)`` records ``value`` under ``name``."""

    plugin = None

    def check_value(self, shape):
        """Raise ValueError when a value of ``shape`` does not suit this operator."""

    def __call__(self, name, value):
        cls = type(self).__name__
        if isinstance(name, str) and not name and context.get_context("mode") == GRAPH_MODE:
            # MindSpore's graph compiler refuses an empty name when it infers the operator
            # (ValueError); its PyNative mode refuses it at the next record (TypeError)
            raise ValueError(f"For primitive[{cls}], the input argument[name] cannot be an "
                             f"empty string.")
        if not isinstance(name, str) or not name:
            raise TypeError(f"For '{cls}', the name must be a non-empty str, got {name!r}")
        if not isinstance(value, Tensor):
            raise TypeError(f"For '{cls}', value: expected a Tensor, got "
                            f"{type(value).__name__}")
        self.check_value(tuple(value.shape))
        store_pending(self.plugin, name, value)

    def compute(self, *args):
        return self(*args)


class ScalarSummary(_SummaryOp):
    """``ScalarSummary()(name, value)``: record a one-element Tensor (any shape)."""

    plugin = "scalar"

    def check_value(self, shape):
        if int(np.prod(shape)) != 1:
            raise ValueError(f"For 'ScalarSummary', value: expected one element, got shape "
                             f"{shape}")


class HistogramSummary(_SummaryOp):
    """``HistogramSummary()(name, value)``: record the distribution of a Tensor (rank > 0)."""

    plugin = "histogram"

    def check_value(self, shape):
        if not shape:
            raise ValueError("For 'HistogramSummary', value: expected a Tensor of rank > 0, "
                             "got shape ()")


class ImageSummary(_SummaryOp):
    """``ImageSummary()(name, value)``: record an NCHW batch of images (C in 1..4)."""

    plugin = "image"

    def check_value(self, shape):
        if len(shape) != 4:
            raise ValueError(f"For 'ImageSummary', value: expected a 4-d NCHW Tensor, got "
                             f"{len(shape)}-d shape {shape}")
        if shape[1] not in (1, 2, 3, 4):
            raise ValueError(f"For 'ImageSummary', value: expected 1 to 4 channels (axis 1), "
                             f"got shape {shape}")


class TensorSummary(_SummaryOp):
    """``TensorSummary()(name, value)``: record a whole Tensor (rank > 0)."""

    plugin = "tensor"

    def check_value(self, shape):
        if not shape:
            raise ValueError("For 'TensorSummary', value: expected a Tensor of rank > 0, got "
                             "shape ()")
