"""The summary operators and their pending values, under the import path the train layer
and its tests use (they live in the ops layer, :mod:`mscore.ops.summary`)."""
from mscore.ops.summary import (  # noqa: F401
    HistogramSummary,
    ImageSummary,
    ScalarSummary,
    TensorSummary,
    consume_pending,
    discard_pending,
    store_pending,
)
