"""``build_train_network``: the mixed-precision train cell for a level.

Level defaults (MindSpore 2.x):

=====  ===============  ===================  ==========================
level  cast_model_type  keep_batchnorm_fp32  loss_scale_manager
=====  ===============  ===================  ==========================
O0     float32          False                None
O1     float32          False                None (white-list cells fp16)
O2     float16          True                 DynamicLossScaleManager()
O3     float16          False                None
auto   GPU -> O2, Ascend -> O3, CPU -> ValueError
=====  ===============  ===================  ==========================

``cast_model_type``, ``keep_batchnorm_fp32`` and ``loss_scale_manager`` in ``kwargs`` override
the level; any other keyword is ``ValueError``. MindSpore refuses loss scaling with overflow
handling on CPU; mscore's overflow check works on every backend, so it allows it.
"""
from __future__ import annotations

from mscore import context
from mscore.amp.convert import check_amp_level, convert_checked
from mscore.amp.loss_scale import DynamicLossScaleManager, LossScaleManager
from mscore.boost.boost import boost_for_training, check_boost_level
from mscore.boost.boost_cell_wrapper import (
    BoostTrainOneStepCell,
    BoostTrainOneStepWithLossScaleCell,
)
from mscore.common import dtype as mdt
from mscore.nn.cell import Cell
from mscore.nn.wrap.cell_wrapper import TrainOneStepCell, WithLossCell
from mscore.nn.wrap.loss_scale import TrainOneStepWithLossScaleCell
from mscore.ops import functional as F

_KWARGS = ("cast_model_type", "keep_batchnorm_fp32", "loss_scale_manager")


def _level_config(level):
    if level in ("O0", "O1"):
        return {"cast_model_type": mdt.float32, "keep_batchnorm_fp32": False,
                "loss_scale_manager": None}
    if level == "O2":
        return {"cast_model_type": mdt.float16, "keep_batchnorm_fp32": True,
                "loss_scale_manager": DynamicLossScaleManager()}
    return {"cast_model_type": mdt.float16, "keep_batchnorm_fp32": False,
            "loss_scale_manager": None}


def resolve_auto_level(level):
    """'auto' becomes O2 on GPU and O3 on Ascend; on CPU it is ValueError."""
    if level != "auto":
        return level
    target = context.get_context("device_target")
    if target == "GPU":
        return "O2"
    if target == "Ascend":
        return "O3"
    raise ValueError(f"level: 'auto' picks O2 on GPU and O3 on Ascend; device_target is "
                     f"{target!r}, choose a level explicitly")


class _WithFloat32Loss(Cell):
    """``loss_fn(float32(network(data)), float32(label))``: the loss in float32 for a
    low-precision model (MindSpore's loss cell of an fp16 network)."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    @property
    def backbone_network(self):
        """The network without the loss."""
        return self._backbone

    def construct(self, data, label):
        out = self._backbone(data)
        if out.dtype.is_floating and out.dtype is not mdt.float32:
            out = F.cast(out, mdt.float32)
        if label.dtype.is_floating and label.dtype is not mdt.float32:
            label = F.cast(label, mdt.float32)
        return self._loss_fn(out, label)


def validate_build_kwargs(kwargs):
    """ValueError for any keyword other than the three documented ones."""
    unknown = sorted(set(kwargs) - set(_KWARGS))
    if unknown:
        raise ValueError(f"build_train_network: unsupported keyword argument(s) {unknown}; "
                         f"supported: {list(_KWARGS)}")


def build_train_network(network, optimizer, loss_fn=None, level="O0", boost_level="O0",
                        **kwargs):
    """Network + optimizer (+ loss) as a mixed-precision train cell for ``level``.

    Returns ``TrainOneStepCell`` (no loss scaling, or a fixed scale that never drops steps)
    or ``TrainOneStepWithLossScaleCell`` (``(loss, overflow, scale)`` per call); their
    ``mscore.boost`` counterparts for ``boost_level`` 'O1'/'O2', after
    ``AutoBoost(boost_level)`` rewrote the network and optimizer (unless they already are).
    """
    if not isinstance(network, Cell):
        raise TypeError(f"network: expected a Cell, got {type(network).__name__}")
    if not isinstance(optimizer, Cell) or not hasattr(optimizer, "parameters"):
        raise TypeError(f"optimizer: expected an mscore.nn.Optimizer, got "
                        f"{type(optimizer).__name__}")
    if loss_fn is not None and not isinstance(loss_fn, Cell):
        raise TypeError(f"loss_fn: expected a Cell or None, got {type(loss_fn).__name__}")
    check_amp_level(level)
    check_boost_level(boost_level)
    validate_build_kwargs(kwargs)
    return build_checked(network, optimizer, loss_fn, level, boost_level, **kwargs)


def build_checked(network, optimizer, loss_fn, level, boost_level, **kwargs):
    """:func:`build_train_network` of a network, optimizer, loss, levels and keywords already
    checked (``Model`` checks them when it is made and builds on first use)."""
    if boost_level != "O0":   # less BN, gradient freezing, AdaSum: see mscore.boost
        network, optimizer = boost_for_training(network, optimizer, boost_level)
    level = resolve_auto_level(level)
    config = _level_config(level)
    config.update(kwargs)
    cast_type = mdt.as_dtype(config["cast_model_type"], "cast_model_type")
    if cast_type not in (mdt.float16, mdt.bfloat16, mdt.float32):
        raise ValueError(f"cast_model_type: expected float16, bfloat16 or float32, got "
                         f"{cast_type}")
    if not isinstance(config["keep_batchnorm_fp32"], bool):
        raise TypeError("keep_batchnorm_fp32: expected a bool")
    manager = config["loss_scale_manager"]
    if manager is not None and not isinstance(manager, LossScaleManager):
        raise TypeError(f"loss_scale_manager: expected a LossScaleManager or None, got "
                        f"{type(manager).__name__}")

    if cast_type is not mdt.float32:
        amp_level = "O2" if config["keep_batchnorm_fp32"] else "O3"
        network = convert_checked(network, amp_level, cast_type)
    elif level == "O1":
        network = convert_checked(network, "O1", mdt.float16)

    if loss_fn is not None:
        if cast_type is not mdt.float32:
            network = _WithFloat32Loss(network, loss_fn)
        else:
            network = WithLossCell(network, loss_fn)

    step_cell, scaled_cell = TrainOneStepCell, TrainOneStepWithLossScaleCell
    if boost_level != "O0":
        step_cell, scaled_cell = BoostTrainOneStepCell, BoostTrainOneStepWithLossScaleCell
    if manager is None:
        return step_cell(network, optimizer)
    update_cell = manager.get_update_cell()
    if update_cell is None:  # a fixed scale that never drops a step
        return step_cell(network, optimizer, sens=manager.get_loss_scale())
    return scaled_cell(network, optimizer, scale_sense=update_cell)
