"""``mindspore.train.summary._summary_adapter``: building the events of a summary file
(mscore writes TensorBoard's event format; see :mod:`.events`)."""
import logging
import platform
import time

import numpy as np

from mscore.train.summary import events
from mscore.train.summary.record import _check_affixes
from mscore.train.summary.writer import event_file_name

__all__ = ["get_event_file_name", "package_init_event", "package_summary_event"]

logger = logging.getLogger("mscore.summary")

_MAX_HISTOGRAM_BINS = 90
_HISTOGRAM_VALUES_PER_BIN = 10


def get_event_file_name(prefix, suffix, time_second):
    """The name of the event file a summary writer opened at ``time_second`` creates
    (``prefix`` and ``suffix`` checked as ``SummaryRecord`` checks them)."""
    _check_affixes(prefix, suffix)
    return event_file_name(prefix, suffix, time_second, platform.node() or "localhost")


def package_init_event():
    """The event that opens every summary file (its file version, the current time)."""
    return events.version_event(time.time())


def package_summary_event(data_list, step, wall_time):
    """One event holding ``data_list``: ``[{"_type": "Scalar"|"Tensor"|"Image"|"Histogram",
    "name": tag, "data": numpy array}, ...]``; an entry of another type is logged and
    skipped."""
    items = []
    for value in data_list:
        plugin = str(value["_type"]).lower()
        if plugin not in events.PLUGINS:
            logger.error("Summary type(%s) is error, tag = %s", value["_type"], value["name"])
            continue
        items.append((plugin, value["name"], np.asarray(value["data"])))
    return events.summary_event(int(step), wall_time, items)


def _calc_histogram_bins(count):
    """MindSpore's number of histogram buckets for ``count`` values: 1 for none, 2 up to 5,
    3 up to 10, about ten values a bucket up to 880, then 90."""
    if not count:
        return 1
    if count <= 5:
        return 2
    if count <= 10:
        return 3
    if count <= (_MAX_HISTOGRAM_BINS - 2) * _HISTOGRAM_VALUES_PER_BIN:
        return count // _HISTOGRAM_VALUES_PER_BIN + 1
    return _MAX_HISTOGRAM_BINS
