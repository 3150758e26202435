"""Summaries: ``SummaryRecord``, ``SummaryCollector``, the summary operators, event files
TensorBoard reads, and ``mscore plot``.

Point TensorBoard at the directory given to ``SummaryRecord``/``SummaryCollector``:
``tensorboard --logdir ./summary_dir``.
"""
from mscore.train.summary.reader import (
    CorruptRecordError, event_files, iter_records, load_summaries, read_events)
from mscore.train.summary.record import SummaryRecord
from mscore.train.summary.summary_ops import (
    HistogramSummary, ImageSummary, ScalarSummary, TensorSummary)
from mscore.train.summary.writer import SummaryWriteError

__all__ = ["SummaryRecord", "SummaryCollector", "ScalarSummary", "HistogramSummary",
           "ImageSummary", "TensorSummary", "CorruptRecordError", "SummaryWriteError",
           "read_events", "iter_records", "load_summaries", "event_files",
           "plot_summary"]


def __getattr__(name):
    # The collector needs the callback package and plot needs matplotlib: load on use.
    if name == "SummaryCollector":
        from mscore.train.summary.collector import SummaryCollector
        return SummaryCollector
    if name == "plot_summary":
        from mscore.train.summary.plot import plot_summary
        return plot_summary
    raise AttributeError(f"module 'mscore.train.summary' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})
