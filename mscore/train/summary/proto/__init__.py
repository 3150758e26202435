"""Generated protobuf modules of the summary event schema (``summary.proto``)."""
