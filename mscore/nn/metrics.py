"""``mindspore.nn.metrics`` (the 1.x path of the metrics): every name of
:mod:`mscore.train.metrics`, looked up there on use so new metrics appear here too."""
import importlib


def __getattr__(name):
    metrics = importlib.import_module("mscore.train.metrics")
    if name == "__all__":
        return list(metrics.__all__)
    try:
        return getattr(metrics, name)
    except AttributeError:
        raise AttributeError(f"module 'mscore.nn.metrics' has no attribute {name!r}") from None


def __dir__():
    return sorted(importlib.import_module("mscore.train.metrics").__all__)
