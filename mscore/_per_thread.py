"""The per-thread training state, :data:`mscore._state.thread` (its class documents each
field and why it is a ``threading.local``); kept under this name for the modules that read it
as ``state``."""
from __future__ import annotations

from mscore._state import thread as state

__all__ = ["state"]
