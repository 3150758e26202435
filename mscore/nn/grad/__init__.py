"""``mindspore.nn.grad``: the ``Vjp`` cell (``Jvp``, forward mode, is not provided: the
reference autodiff is reverse-mode)."""
from mscore.nn.grad.cell_grad import Vjp  # noqa: F401

__all__ = ["Vjp"]
