"""``Model`` against MindSpore 2.10's recorded answers: argument checks, the networks it
builds, training numbers, callbacks' step counts, multiple inputs, ``eval_indexes`` and a
user's own dataset object over several epochs.

The cases live in ``tests/data/model_api_cases.py`` and run unchanged on both frameworks;
MindSpore's answers were recorded with ``cd tests/data && /tmp/ms/bin/python
make_model_api.py`` into ``tests/data/mindspore_model_api.json``. The training cases run on
every installed backend. Deliberate differences (docs/differences.md, "Model and datasets")
override the recorded answer below, each with its reason.
"""
import json
import os
import sys

import pytest
from _helpers import use_backend
from test_cell_api import _same, computing_params

import mscore as ms

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
import cell_api_cases  # noqa: E402
from model_api_cases import CASES, attempt  # noqa: E402

cell_api_cases.ALL_BUILTIN_BASES = True

with open(os.path.join(DATA, "mindspore_model_api.json")) as _f:
    EXPECTED = json.load(_f)

COMPUTING = ("train_numbers", "train_initial_epoch", "fit_numbers", "user_dataset",
             "multiple_inputs", "eval_indexes")

OVERRIDES = {
    # MindSpore accepts them at construction and fails later (eval_network=3 when eval calls
    # it); mscore refuses them when the Model is built.
    ("init_checks", "eval_network_int"): "raises:TypeError",
    # mscore's loss scaling works on every device; MindSpore refuses O2's dynamic loss
    # scale manager on CPU (docs/differences.md, Mixed precision).
    ("init_checks", "keep_bn_ok"): "ok",
    ("networks", "amp_o2"): ["TrainOneStepWithLossScaleCell", None, True],
    # Model.build and the parallel layouts: MindSpore builds ahead on Ascend only
    # (RuntimeError elsewhere); mscore has nothing to build ahead, so build checks its
    # arguments and returns.
    ("build_and_layouts", "build"): "ok",
    ("build_and_layouts", "build_no_sink"): "ok",
}


def _shift_steps(log, by_epochs, batch_num=3):
    """MindSpore's step log with ``cur_step_num`` continued across ``initial_epoch``
    (documented difference: a resumed run counts steps from ``initial_epoch * batch_num``)."""
    out = []
    for line in log:
        if line.startswith("step "):
            _, epoch, step, batches = line.split()
            line = f"step {epoch} {int(step) + by_epochs * batch_num} {batches}"
        out.append(line)
    return out


def _sgd_reference(batch_order, lr=0.05, batch=4):
    """Dense(3, 1) + MSELoss trained by SGD in numpy, over the given batches in order."""
    import numpy as np
    from model_api_cases import W0, X, Y
    w, b = W0.astype(np.float64).copy(), np.zeros(1)
    for i in batch_order:
        x, y = X[i * batch:(i + 1) * batch], Y[i * batch:(i + 1) * batch]
        d = 2 * (x @ w.T + b - y) / y.size
        w -= lr * d.T @ x
        b -= lr * d.sum(axis=0)
    return w.round(5).tolist()


def _expected_mscore_differences(name, want):
    if name == "train_initial_epoch":
        want["log"] = _shift_steps(want["log"], 1)
    if name == "fit_numbers":
        want["log_list_frequency"] = _shift_steps(want["log_list_frequency"], 1)
    if name == "train_sink_size":
        # sink_size=2 makes each epoch 2 steps going on through the dataset (MindSpore on a
        # GPU/Ascend; on CPU it ignores sink_size): steps on batches 0, 1 | 2, 0.
        want["log_len"] = 2 * (2 + 1)
        want["weight"] = _sgd_reference([0, 1, 2, 0])
    return want


def _expected(name):
    want = EXPECTED[name]
    if isinstance(want, dict):
        want = dict(want)
        for (case, key), value in OVERRIDES.items():
            if case == name:
                want[key] = value
        want = _expected_mscore_differences(name, want)
    return want


def _run(name):
    got = json.loads(json.dumps(attempt(lambda: CASES[name](ms))))
    _same(got, _expected(name), name)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in COMPUTING))
def test_model_checks_match_mindspore(name):
    _run(name)


# jax by default on the user dataset case only (see test_cell_api)
@pytest.mark.parametrize("name,backend",
                         computing_params(COMPUTING, ("user_dataset",)))
def test_model_training_matches_mindspore(name, backend):
    use_backend(backend)
    try:
        _run(name)
    finally:
        ms.set_context(backend="numpy")


def test_every_case_was_recorded():
    assert sorted(CASES) == sorted(EXPECTED)


@pytest.mark.parametrize("keep", [True, False])
def test_keep_batchnorm_fp32_reaches_the_o2_network(keep):
    """O2 keeps BatchNorm in float32 unless ``keep_batchnorm_fp32=False`` (MindSpore's
    build_train_network rule; MindSpore itself refuses O2 on CPU, so no recording)."""
    nn = ms.nn
    net = nn.SequentialCell(nn.Dense(3, 4), nn.BatchNorm1d(4), nn.Dense(4, 1))
    model = ms.train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1),
                           amp_level="O2", keep_batchnorm_fp32=keep)
    dtypes = {type(c).__name__: c.compute_dtype for _, c in model.train_network.cells_and_names()
              if type(c).__name__ in ("Dense", "BatchNorm1d")}
    assert dtypes == {"Dense": ms.float16,
                      "BatchNorm1d": ms.float32 if keep else ms.float16}
