"""Dataset failures name where they happen: a map returning None or a dict fails at once
naming the map and the column; under ``batch_sampler`` a source's (or the sampler's)
exception is a RuntimeError naming it, as everywhere else in the pipeline. (Worker processes,
``python_multiprocessing=True``: tests/test_dataset_workers.py.)"""
import numpy as np
import pytest
from _dataset_worker_ops import Broken

import mscore.dataset as ds


def _rows(dataset):
    return list(dataset.create_tuple_iterator(output_numpy=True))


def _source():
    return ds.NumpySlicesDataset({"col": np.arange(4, dtype=np.float32)}, shuffle=False)


def to_none(x):
    return None


def to_dict(x):
    return {"a": x}


def to_pair_with_none(x):
    return x, None


@pytest.mark.parametrize("fn, what", [(to_none, "returned None"),
                                      (to_dict, "returned a dict"),
                                      (to_pair_with_none, "holding None")])
def test_map_returning_none_or_a_dict_names_map_and_column(fn, what):
    with pytest.raises(RuntimeError, match=what) as info:
        _rows(_source().map(fn, input_columns=["col"], output_columns=["col"]))
    assert fn.__name__ in str(info.value) and "['col']" in str(info.value)


def test_batch_sampler_source_failure_is_wrapped():
    data = ds.GeneratorDataset(Broken(), ["x"], batch_sampler=[[0, 1], [2, 3]])
    with pytest.raises(RuntimeError, match="GeneratorDataset source raised KeyError") as info:
        _rows(data)
    assert isinstance(info.value.__cause__, KeyError)


def test_batch_sampler_that_raises_is_named():
    def sampler():
        yield [0, 1]
        raise OSError("sampler broke")
    data = ds.GeneratorDataset(Broken(), ["x"], batch_sampler=sampler())
    with pytest.raises(RuntimeError, match="batch_sampler raised OSError: sampler broke"):
        _rows(data)
