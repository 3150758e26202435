"""Automatic mixed precision: levels O0-O3 and auto, cast lists, loss scaling."""
from mscore.amp.autocast import FP32_OPS, LOW_PRECISION_OPS, autocast
from mscore.amp.build import build_train_network
from mscore.amp.convert import auto_mixed_precision, custom_mixed_precision
from mscore.amp.lists import CastList, get_black_list, get_white_list
from mscore.amp.loss_scale import (
    DynamicLossScaleManager, DynamicLossScaler, FixedLossScaleManager, LossScaleManager,
    LossScaler, StaticLossScaler, init_status)
from mscore.nn.wrap.loss_scale import all_finite
from mscore.amp.loss_scale import _grad_scale_map, _grad_unscale_map
#   LossScaler example imports these two private helpers)

__all__ = ["auto_mixed_precision", "custom_mixed_precision", "build_train_network",
           "get_white_list", "get_black_list", "CastList", "autocast", "LOW_PRECISION_OPS",
           "FP32_OPS", "LossScaler", "StaticLossScaler", "DynamicLossScaler", "all_finite",
           "init_status", "LossScaleManager", "FixedLossScaleManager",
           "DynamicLossScaleManager"]
