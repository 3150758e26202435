"""``mint.optim.FusedAdamW``: :class:`AdamW` (MindSpore's fused kernel computes the same
update)."""
from __future__ import annotations

from mscore.mint.optim.adamw import AdamW

__all__ = ["FusedAdamW"]


class FusedAdamW(AdamW):
    """:class:`AdamW` (MindSpore's fused kernel computes the same update)."""
