"""MindSpore's path ``mindspore.common.api``: a facade re-exporting :mod:`mscore.compile.api`
(``jit``, ``jit_class``, ...). It imports the compile layer, above ``common``: nothing inside
mscore imports this module (use :mod:`mscore.compile`)."""
from __future__ import annotations

from mscore.compile.api import (  # noqa: F401
    __all__,
    constexpr,
    jit,
    jit_class,
    lazy_inline,
    mutable,
    no_inline,
    reachable_state,
    recompute,
)
