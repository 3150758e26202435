"""``mindspore.train.amp`` (the 1.x path of the mixed-precision API): the same objects as
:mod:`mscore.amp`."""
from mscore.amp import (
    auto_mixed_precision,
    build_train_network,
    custom_mixed_precision,
    get_black_list,
    get_white_list,
)

__all__ = ["auto_mixed_precision", "build_train_network", "custom_mixed_precision",
           "get_black_list", "get_white_list"]
