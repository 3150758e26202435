"""``GroupLossScaleManager``: MindSpore's per-layer-group loss scales ("enhanced" mixed
precision).

The manager keeps MindSpore's state and methods (``loss_scale_groups``,
``set_loss_scale_status``, ``update_loss_scale_status``, ``get_loss_scale``,
``get_update_cell``). Using it in a network or a train step is not implemented: MindSpore's
version rescales each group's gradients in the backward pass with the Ascend primitive
``_DynamicLossScale`` and reads Ascend's per-layer overflow status, so calling the cell (or
turning on the ``loss_scale_group`` boost switch) raises ``NotImplementedError``.
"""
from __future__ import annotations

import numbers

import numpy as np

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell

__all__ = ["GroupLossScaleManager"]


class GroupLossScaleManager(Cell):
    r"""Loss scales per group of layers: ``GroupLossScaleManager(init_loss_scale,
    loss_scale_groups)``; ``loss_scale_groups`` lists the parameter groups.
    ``get_update_cell()`` returns the manager itself, as in MindSpore."""

    def __init__(self, init_loss_scale, loss_scale_groups):
        super().__init__()
        self._loss_scale = init_loss_scale
        self.loss_scale_groups = loss_scale_groups
        self.loss_scale_number = 0
        self.layer_loss_scale = None
        self.dynamic_loss_scale = None

    def set_loss_scale_status(self, loss_scale_number, init_loss_scale):
        """One scale Parameter per group (and one at each end), set to ``init_loss_scale``
        (a number, or a list with one value per group)."""
        if isinstance(loss_scale_number, bool) or not isinstance(loss_scale_number,
                                                                 numbers.Integral):
            raise TypeError(f"loss_scale_number: expected an int, got "
                            f"{type(loss_scale_number).__name__}")
        self.loss_scale_number = int(loss_scale_number)
        scales = [Parameter(Tensor(np.float32(1.0)), name=f"layer_loss_scale_{i}",
                            requires_grad=False) for i in range(self.loss_scale_number + 2)]
        values = list(init_loss_scale) if isinstance(init_loss_scale, list) else \
            [init_loss_scale] * self.loss_scale_number
        for i, value in enumerate(values):
            scales[i + 1].set_data(Tensor(np.float32(value)))
        self.dynamic_loss_scale = tuple(scales)

    def update_loss_scale_status(self, layer, update_ratio):
        """Multiply group ``layer``'s scale by ``update_ratio``; returns the new scale."""
        scale = self.dynamic_loss_scale[layer + 1]
        new = scale * update_ratio
        scale.set_data(new)
        return new

    def get_loss_scale(self):
        """The initial loss scale."""
        return self._loss_scale

    def get_update_cell(self):
        """The manager itself."""
        return self

    def construct(self, x, layer1, layer2):
        raise NotImplementedError(
            "GroupLossScaleManager: per-layer-group loss scaling rescales gradients in the "
            "backward pass with Ascend's _DynamicLossScale primitive; it is not implemented "
            "in mscore (use amp.DynamicLossScaleManager)")
