"""State updates that happen only when a device-side condition holds, in both execution
modes: a Python ``if`` on the value eagerly, and inside a compiled GRAPH_MODE program (which
has no branches on values) the update runs and every Parameter it changed takes the new value
only where the condition holds."""
from __future__ import annotations

from mscore._state import in_compiled
from mscore.common.parameter import MutationScope
from mscore.common.tensor import Tensor
from mscore.ops import functional as F


def apply_if(cond, update):
    """Run ``update()`` (which changes Parameters) when bool Tensor ``cond`` is True."""
    if not in_compiled():
        if bool(cond):
            update()
        return
    with MutationScope() as scope:
        update()
        changed = scope.restore()
    for param, new in changed:
        param._assign(F.where(cond, Tensor._wrap(new), Tensor._wrap(param._data))._data)
