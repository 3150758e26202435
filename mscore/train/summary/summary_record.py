"""``mindspore.train.summary.summary_record`` (the 1.x path of ``SummaryRecord``)."""
from mscore.train.summary.record import SummaryRecord  # noqa: F401

__all__ = ["SummaryRecord"]
