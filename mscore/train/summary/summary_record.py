"""``mindspore.train.summary.summary_record``: the 1.x path of ``SummaryRecord``, and the
private names MindSpore's own tests import from it."""
import logging
import re

from mscore.common.tensor import Tensor
from mscore.train.summary.record import _EXPORT_FORMATS, SummaryRecord
from mscore.train.summary.summary_ops import store_pending

__all__ = ["SummaryRecord"]

logger = logging.getLogger("mscore.summary")

# the values ``export_options`` accepts, per key: the very sets the messages list
_DEFAULT_EXPORT_OPTIONS = _EXPORT_FORMATS

_TAGGED_NAME = re.compile(r"(.+)\[:(.+)\]")


def _cache_summary_tensor_data(summary):
    """Hold summary values as the summary operators would, for the next train-mode
    ``SummaryRecord.record``.

    Args:
        summary (list): ``[{"name": "TAG[:TYPE]", "data": Tensor}, ...]``, TYPE one of
            ``Scalar``, ``Tensor``, ``Image``, ``Histogram``.

    Returns True. A name not of the form ``TAG[:TYPE]`` is skipped with a warning (as
    MindSpore skips it when recording); an unknown TYPE fails in ``record`` with ValueError.
    """
    for item in summary:
        name, data = item["name"], item["data"]
        match = _TAGGED_NAME.fullmatch(name) if isinstance(name, str) else None
        if match is None:
            logger.warning("The name(%r) is invalid, expected 'TAG[:TYPE]'.", name)
            continue
        tag, plugin = match.groups()
        store_pending(plugin.lower(), tag, data if isinstance(data, Tensor) else Tensor(data))
    return True
