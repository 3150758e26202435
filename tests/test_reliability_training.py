"""Training faults every backend reports alike.

10. Class labels outside ``[0, C)`` (other than ``ignore_index``) are a ``ValueError`` in
    PYNATIVE mode on every backend, for ``CrossEntropyLoss`` and the sparse
    ``SoftmaxCrossEntropyWithLogits``. (MindSpore itself is inconsistent here -- see
    ``tests/data/mindspore_reliability.json``: a kernel ``RuntimeError`` for some labels, an
    ``inf`` or a number for others; mscore refuses all of them the same way.)
11. A network built under one backend and run after ``set_context(backend=...)`` switched to
    another is a ``RuntimeError`` (MindSpore's type for a tensor on the wrong device) naming
    the backend its arrays belong to and how to move them -- or, where the new backend takes
    the old arrays, the same numbers as a network built under the new backend.
"""
import json
import os

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore import nn, ops

BACKENDS = available_backends()
ORACLE = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                     "mindspore_reliability.json")))


@pytest.fixture(autouse=True)
def _pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)


def _logits(n=3, c=4):
    return ms.Tensor(np.random.default_rng(0).standard_normal((n, c)).astype(np.float32))


LOSSES = {
    "CrossEntropyLoss": lambda: nn.CrossEntropyLoss(),
    "CrossEntropyLoss_sum": lambda: nn.CrossEntropyLoss(reduction="sum"),
    "SoftmaxCrossEntropyWithLogits_sparse": lambda: nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean"),
}


# -- 10. out-of-range labels ------------------------------------------------------------------
def test_mindspore_disagrees_with_itself_on_out_of_range_labels():
    # the recorded oracle: no single behaviour to copy, so mscore raises ValueError everywhere
    outcomes = {ORACLE[k]["exception"] for k in ORACLE if "_label_" in k}
    assert outcomes == {"RuntimeError", "none"}


@pytest.mark.parametrize("label", [4, 100, -1, -7])
@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_out_of_range_labels_are_a_value_error(backend, loss, label):
    use_backend(backend)
    for dtype in (np.int32, np.int64):
        labels = ms.Tensor(np.array([0, 1, label], dtype))
        with pytest.raises(ValueError, match=rf"labels.*\[0, 4\).*{label}"):
            LOSSES[loss]()(_logits(), labels)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ignore_index_is_not_out_of_range(backend):
    use_backend(backend)
    logits = _logits()
    x = logits.asnumpy().astype(np.float64)
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    got = nn.CrossEntropyLoss()(logits, ms.Tensor(np.array([0, -100, 3], np.int32)))
    np.testing.assert_allclose(float(got.asnumpy()), -(logp[0, 0] + logp[2, 3]) / 2, rtol=1e-5)
    got = nn.CrossEntropyLoss(ignore_index=-1)(logits, ms.Tensor(np.array([2, -1, 1], np.int32)))
    np.testing.assert_allclose(float(got.asnumpy()), -(logp[0, 2] + logp[2, 1]) / 2, rtol=1e-5)
    with pytest.raises(ValueError, match="-100"):  # ignore_index is a CrossEntropyLoss notion
        nn.SoftmaxCrossEntropyWithLogits(sparse=True)(
            logits, ms.Tensor(np.array([0, -100, 3], np.int32)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_of_range_labels_of_spatial_targets_and_in_a_train_step(backend):
    use_backend(backend)
    logits = ms.Tensor(np.zeros((2, 3, 2, 2), np.float32))
    labels = np.zeros((2, 2, 2), np.int32)
    labels[1, 1, 0] = 3
    with pytest.raises(ValueError, match="3"):
        ops.cross_entropy(logits, ms.Tensor(labels))
    ms.set_seed(0)
    net = nn.Dense(4, 3)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                               nn.SGD(net.trainable_params(), 0.1))
    before = net.weight.asnumpy().copy()
    with pytest.raises(ValueError, match="labels"):
        step(ms.Tensor(np.ones((2, 4), np.float32)), ms.Tensor(np.array([1, 5], np.int32)))
    np.testing.assert_array_equal(net.weight.asnumpy(), before)  # no update on bad labels


# -- 11. a network used after switching backends ---------------------------------------------
def _train_losses(step, steps=2):
    x = ms.Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    y = ms.Tensor(np.array([0, 2, 1], np.int32))
    return [float(step(x, y).asnumpy()) for _ in range(steps)]


def _step():
    ms.set_seed(3)
    net = nn.SequentialCell(nn.Dense(4, 5), nn.ReLU(), nn.Dense(5, 3))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9))
    step.set_train()
    return step


@pytest.mark.skipif(len(BACKENDS) < 2, reason="needs two usable backends")
@pytest.mark.parametrize("built, used", [(a, b) for a in BACKENDS for b in BACKENDS if a != b])
def test_network_of_another_backend_is_a_clear_error_or_the_same_numbers(built, used):
    assert ORACLE["tensor_move_to_other_device"]["exception"] == "RuntimeError"
    use_backend(used)
    want = _train_losses(_step())
    use_backend(built)
    step = _step()
    use_backend(used)
    try:
        got = _train_losses(step)
    except RuntimeError as exc:
        message = str(exc)
        assert f"backend {built!r}" in message and f"active backend is {used!r}" in message
        assert "load_checkpoint" in message and "save_checkpoint" in message
        return
    np.testing.assert_allclose(got, want, rtol=1e-5)  # the new backend took the old arrays


def test_mismatch_error_names_the_failing_op_and_keeps_the_cause():
    if not {"numpy", "torch"} <= set(BACKENDS):
        pytest.skip("needs the numpy and torch backends")
    use_backend("numpy")
    a = ms.Tensor(np.ones((2, 2), np.float32))
    use_backend("torch")
    with pytest.raises(RuntimeError, match=r"^op '\w+': got an array of backend 'numpy'") as info:
        ops.matmul(a, a)
    assert info.value.__cause__ is not None
