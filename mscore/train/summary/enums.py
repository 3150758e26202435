"""The summary enumerations under MindSpore's path ``mindspore.train.summary.enums``."""
from enum import Enum

__all__ = ["BaseEnum", "PluginEnum", "WriterPluginEnum", "ModeEnum"]


class BaseEnum(Enum):
    """An enumeration whose values can be listed."""

    @classmethod
    def to_list(cls):
        """The values of the members, in definition order."""
        return [member.value for member in cls.__members__.values()]


class PluginEnum(BaseEnum):
    """The kinds of data a summary file holds."""
    GRAPH = "graph"
    SCALAR = "scalar"
    IMAGE = "image"
    TENSOR = "tensor"
    HISTOGRAM = "histogram"
    TRAIN_LINEAGE = "train_lineage"
    EVAL_LINEAGE = "eval_lineage"
    CUSTOM_LINEAGE_DATA = "custom_lineage_data"
    DATASET_GRAPH = "dataset_graph"
    EXPLAINER = "explainer"
    LANDSCAPE = "landscape"


class WriterPluginEnum(Enum):
    """The writers of a summary directory."""
    EXPORTER = "exporter"
    EXPLAINER = "explainer"
    SUMMARY = "summary"
    LINEAGE = "lineage"


class ModeEnum(BaseEnum):
    """The modes a summary is recorded in."""
    TRAIN = "train"
    EVAL = "eval"
