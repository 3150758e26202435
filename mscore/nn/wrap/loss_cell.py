"""``WithLossCell``: a network with its loss (the wrapper cells and the gradient cells build
on it; :mod:`mscore.nn.wrap.cell_wrapper` is its MindSpore path)."""
from __future__ import annotations

from mscore.nn.cell import Cell


def _check_cell(value, name, cls):
    if not isinstance(value, Cell):
        raise TypeError(f"For '{cls}', '{name}' must be a Cell, got {type(value).__name__}")
    return value


class WithLossCell(Cell):
    """``loss_fn(backbone(data), label)``: a network with its loss, for training.

    ``WithLossCell(backbone, loss_fn)``; parameter names are the backbone's (no prefix).
    """

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = _check_cell(backbone, "backbone", "WithLossCell")
        if not callable(loss_fn):
            raise TypeError(f"For 'WithLossCell', 'loss_fn' must be a Cell or a callable, got "
                            f"{type(loss_fn).__name__}")
        self._loss_fn = loss_fn

    def construct(self, data, label):
        out = self._backbone(data)
        return self._loss_fn(out, label)

    @property
    def backbone_network(self):
        """The wrapped backbone."""
        return self._backbone
