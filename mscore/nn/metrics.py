"""``mscore.nn.metrics``: MindSpore 1.x's path of the metrics, the same objects as
:mod:`mscore.train.metrics`."""
from mscore.train.metrics import *  # noqa: F401,F403
from mscore.train.metrics import __all__, get_metrics  # noqa: F401
