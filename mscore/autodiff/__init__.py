"""Reference reverse-mode autodiff for backends without native autodiff (numpy, CuPy).

:mod:`.tracer` holds its data types (below :mod:`mscore.dispatch`, which records traced ops
through it); :mod:`.reference` the backward pass and ``reference_value_and_grad``,
:mod:`.rules` and :mod:`.fused` the VJP rules, and :mod:`.boundary` cells' backward hooks
(all above dispatch: import them by their module path).
"""

from .tracer import Tracer, unwrap

__all__ = ["Tracer", "unwrap"]
