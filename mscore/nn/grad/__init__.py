"""``mindspore.nn.grad``: the ``Vjp`` and ``Jvp`` cells."""
from mscore.nn.grad.cell_grad import Jvp, Vjp

__all__ = ["Jvp", "Vjp"]
