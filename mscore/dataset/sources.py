"""Former home of the sources (kept so that old imports work); see
:mod:`mscore.dataset.engine`."""
from mscore.dataset.engine.binary_files import read_idx, write_idx
from mscore.dataset.engine.datasets_user_defined import GeneratorDataset, NumpySlicesDataset
from mscore.dataset.engine.datasets_vision import MnistDataset

__all__ = ["NumpySlicesDataset", "GeneratorDataset", "MnistDataset", "read_idx", "write_idx"]
