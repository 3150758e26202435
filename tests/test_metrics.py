"""mscore.train.metrics against numpy and scikit-learn."""
import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore.train import metrics as M
from mscore.train.metrics import (
    F1,
    MAE,
    MSE,
    Accuracy,
    Fbeta,
    Loss,
    Precision,
    Recall,
    TopKCategoricalAccuracy,
    get_metric_fn,
    get_metrics,
)

sk = pytest.importorskip("sklearn.metrics")


_numpy_context = numpy_context_each_test()


def _data(n=60, c=4, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((n, c)).astype(np.float32)
    y = rng.integers(0, c, n)
    return scores, y


def _batches(scores, y, size=16):
    for i in range(0, len(y), size):
        yield ms.Tensor(scores[i:i + size]), ms.Tensor(y[i:i + size].astype(np.int32))


def test_accuracy_over_batches_matches_sklearn_and_accepts_onehot():
    scores, y = _data()
    m = Accuracy()
    for p, t in _batches(scores, y):
        m.update(p, t)
    assert m.eval() == pytest.approx(sk.accuracy_score(y, scores.argmax(1)), abs=1e-12)
    onehot = np.eye(4)[y]
    assert Accuracy()(scores, onehot) == pytest.approx(sk.accuracy_score(y, scores.argmax(1)))
    m.clear()
    with pytest.raises(RuntimeError, match="number of samples is 0"):
        m.eval()


def test_accuracy_multilabel_is_subset_accuracy():
    rng = np.random.default_rng(1)
    y_pred = rng.integers(0, 2, (40, 3))
    y = np.where(rng.random((40, 3)) < 0.8, y_pred, 1 - y_pred)
    assert Accuracy("multilabel")(y_pred, y) == pytest.approx(sk.accuracy_score(y, y_pred))
    with pytest.raises(ValueError, match="0 or 1"):
        Accuracy("multilabel")(y_pred * 0.9, y)
    with pytest.raises(TypeError, match="eval_type"):
        Accuracy("regression")


@pytest.mark.parametrize("cls, fn", [(Precision, sk.precision_score), (Recall, sk.recall_score)])
def test_multilabel_precision_recall_average_per_sample(cls, fn):
    """MindSpore averages multilabel precision/recall per sample (sklearn's 'samples')."""
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, (50, 6))
    y_pred = np.where(rng.random((50, 6)) < 0.7, y, 1 - y)
    m = cls("multilabel")
    for i in range(0, 50, 16):
        m.update(ms.Tensor(y_pred[i:i + 16].astype(np.float32)), y[i:i + 16])
    per_sample = m.eval()
    assert per_sample.shape == (50,)
    tp = (y * y_pred).sum(1)
    den = (y_pred if cls is Precision else y).sum(1)
    np.testing.assert_allclose(per_sample, np.where(den > 0, tp / np.maximum(den, 1), 0.0),
                               rtol=1e-12)
    assert m.eval(average=True) == pytest.approx(
        fn(y, y_pred, average="samples", zero_division=0), rel=1e-12)


def test_accuracy_rejects_wrong_inputs():
    m = Accuracy()
    with pytest.raises(ValueError, match="2 inputs"):
        m.update(np.zeros((2, 3)))
    m.update(np.zeros((2, 3)), np.array([0, 1]))
    with pytest.raises(ValueError, match="class number"):
        m.update(np.zeros((2, 4)), np.array([0, 1]))
    with pytest.raises(TypeError, match="Tensor, list or numpy"):
        Accuracy().update("a", "b")


@pytest.mark.parametrize("cls, fn", [(Precision, sk.precision_score),
                                     (Recall, sk.recall_score),
                                     (F1, sk.f1_score)])
def test_precision_recall_f1_per_class_and_average_match_sklearn(cls, fn):
    scores, y = _data(80, 5, seed=3)
    m = cls()
    for p, t in _batches(scores, y):
        m.update(p, t)
    ref = fn(y, scores.argmax(1), average=None, labels=range(5), zero_division=0)
    np.testing.assert_allclose(m.eval(), ref, rtol=1e-12, atol=1e-12)
    assert m.eval(average=True) == pytest.approx(ref.mean(), abs=1e-12)
    with pytest.raises(TypeError, match="average"):
        m.eval(average="yes")


def test_fbeta_matches_sklearn():
    scores, y = _data(50, 3, seed=5)
    ref = sk.fbeta_score(y, scores.argmax(1), beta=0.5, average=None)
    np.testing.assert_allclose(Fbeta(0.5)(scores, y), ref, rtol=1e-12)
    with pytest.raises(ValueError, match="beta"):
        Fbeta(0)


def test_topk_matches_sklearn():
    scores, y = _data(70, 8, seed=7)
    for k in (1, 3, 5):
        m = TopKCategoricalAccuracy(k)
        for p, t in _batches(scores, y):
            m.update(p, t)
        ref = sk.top_k_accuracy_score(y, scores, k=k, labels=range(8))
        assert m.eval() == pytest.approx(ref, abs=1e-12)
    assert M.Top1CategoricalAccuracy()(scores, y) == pytest.approx(
        sk.accuracy_score(y, scores.argmax(1)))
    # one-hot labels give the same as class indices
    onehot = ms.Tensor(np.eye(8, dtype=np.float32)[y])
    assert M.Top5CategoricalAccuracy()(ms.Tensor(scores), onehot) == pytest.approx(
        sk.top_k_accuracy_score(y, scores, k=5, labels=range(8)), abs=1e-12)
    with pytest.raises(ValueError, match="k"):
        TopKCategoricalAccuracy(0)
    with pytest.raises(TypeError, match="k"):
        TopKCategoricalAccuracy(1.5)


def test_confusion_matrix_roc_auc_cosine_match_sklearn():
    scores, y = _data(90, 4, seed=11)
    cm = M.ConfusionMatrix(4)
    for p, t in _batches(scores, y, 25):
        cm.update(p, t)
    np.testing.assert_array_equal(cm.eval(), sk.confusion_matrix(y, scores.argmax(1),
                                                                 labels=range(4)))
    ref = sk.confusion_matrix(y, scores.argmax(1), labels=range(4), normalize="true")
    np.testing.assert_allclose(M.ConfusionMatrix(4, "target")(scores, y), ref, rtol=1e-12)
    binary = (y == 2).astype(np.int32)
    roc = M.ROC(pos_label=1)
    roc.update(ms.Tensor(scores[:, 2]), ms.Tensor(binary))
    fpr, tpr, thresholds = roc.eval()
    ref_fpr, ref_tpr, ref_th = sk.roc_curve(binary, scores[:, 2], drop_intermediate=False)
    np.testing.assert_allclose(fpr, ref_fpr, rtol=1e-12)
    np.testing.assert_allclose(tpr, ref_tpr, rtol=1e-12)
    np.testing.assert_allclose(thresholds[1:], ref_th[1:], rtol=1e-7)
    assert M.auc(fpr, tpr) == pytest.approx(sk.roc_auc_score(binary, scores[:, 2]), rel=1e-12)
    cos = M.CosineSimilarity(zero_diagonal=False)
    cos.update(scores[:10].astype(np.float64))
    pw = pytest.importorskip("sklearn.metrics.pairwise")
    np.testing.assert_allclose(cos.eval(), pw.cosine_similarity(scores[:10].astype(np.float64)),
                               rtol=1e-12)


def test_mae_mse_divide_by_samples_like_mindspore():
    rng = np.random.default_rng(2)
    pred = rng.standard_normal((12, 3))
    true = rng.standard_normal((12, 3))
    mae, mse = MAE(), MSE()
    for i in range(0, 12, 5):
        mae.update(ms.Tensor(pred[i:i + 5].astype(np.float32)), true[i:i + 5])
        mse.update(pred[i:i + 5], true[i:i + 5])
    p32 = pred.astype(np.float32).astype(np.float64)
    assert mae.eval() == pytest.approx(np.abs(true - p32).sum() / 12, rel=1e-6)
    assert mse.eval() == pytest.approx(((true - pred) ** 2).sum() / 12, rel=1e-12)
    with pytest.raises(ValueError, match="elements"):
        MAE().update(np.zeros(3), np.zeros(4))


def test_loss_metric_averages_batch_losses():
    m = Loss()
    for v in (1.0, 2.0, np.array([3.0, 5.0])):
        m.update(ms.Tensor(np.asarray(v, np.float32)))
    assert m.eval() == pytest.approx((1 + 2 + 4) / 3)
    with pytest.raises(ValueError, match="dimension"):
        m.update(np.zeros((2, 2)))
    with pytest.raises(RuntimeError):
        Loss().eval()


def test_names_and_get_metrics():
    assert isinstance(get_metric_fn("acc"), Accuracy)
    assert isinstance(get_metric_fn("accuracy"), Accuracy)
    assert isinstance(get_metric_fn("loss"), Loss)
    assert get_metric_fn("top_1_accuracy").k == 1
    assert get_metric_fn("top_5_accuracy").k == 5
    assert {"acc", "accuracy", "loss", "top_1_accuracy", "top_5_accuracy"} <= set(M.names())
    with pytest.raises(KeyError, match="unsupported"):
        get_metric_fn("auc-roc")
    got = get_metrics({"acc", "loss"})
    assert set(got) == {"acc", "loss"} and isinstance(got["loss"], Loss)
    custom = get_metrics({"my_acc": Accuracy(), "l": "loss"})
    assert isinstance(custom["my_acc"], Accuracy) and isinstance(custom["l"], Loss)
    with pytest.raises(TypeError, match="metrics"):
        get_metrics("accuracy")
    with pytest.raises(TypeError, match="Metric"):
        get_metrics({"a": 3})


def test_set_indexes_rearranges_inputs():
    scores, y = _data(20, 3)
    m = Accuracy().set_indexes([2, 0])
    m.update(ms.Tensor(y.astype(np.int32)), "ignored", ms.Tensor(scores))
    assert m.eval() == pytest.approx(sk.accuracy_score(y, scores.argmax(1)))
    with pytest.raises(ValueError, match="indexes"):
        Accuracy().set_indexes((0, 1))


@pytest.mark.parametrize("make, good, bad", [
    (Precision, (np.eye(3), [0, 1, 2]), (np.eye(3), [0, 1, 3])),
    (F1, (np.eye(3), [0, 1, 2]), (np.eye(3), [0, 1, -1])),
    (M.Dice, (np.ones((2, 2)), np.ones((2, 2))), (np.ones((2, 2)), np.ones((2, 3)))),
    (lambda: M.ConfusionMatrix(3),
     (np.eye(3), np.array([0, 1, 2])), (np.eye(3), np.array([0, 1, 5]))),
])
def test_rejected_update_leaves_the_metric_unchanged(make, good, bad):
    m = make()
    with pytest.raises(ValueError):
        m.update(np.asarray(bad[0]), np.asarray(bad[1]))
    with pytest.raises(RuntimeError):
        m.eval()
    m.update(np.asarray(good[0]), np.asarray(good[1]))
    before = np.array(m.eval(), dtype=np.float64)
    with pytest.raises(ValueError):
        m.update(np.asarray(bad[0]), np.asarray(bad[1]))
    np.testing.assert_array_equal(np.array(m.eval(), dtype=np.float64), before)


def test_one_number_metrics_are_python_floats_and_print_plainly():
    """As MindSpore's (numpy float64 there, a float subclass): ``print(model.eval(ds))`` shows
    ``{'accuracy': 0.5}``, not ``np.float64(0.5)``."""
    from mscore.train import metrics
    y_pred = ms.Tensor(np.array([[0.2, 0.8], [0.9, 0.1]], np.float32))
    y = ms.Tensor(np.array([1, 1], np.int32))
    values = {}
    for name in ("accuracy", "precision", "recall", "F1", "top_1_accuracy"):
        metric = metrics.get_metric_fn(name)
        metric.clear()
        metric.update(y_pred, y)
        values[name] = metric.eval(average=True) if name in ("precision", "recall") else \
            metric.eval()
    assert type(values["accuracy"]) is float and repr({"a": values["accuracy"]}) == "{'a': 0.5}"
    assert type(values["top_1_accuracy"]) is float and values["top_1_accuracy"] == 0.5
    assert type(values["precision"]) is float and type(values["recall"]) is float
    assert isinstance(values["F1"], np.ndarray)   # per class, as MindSpore's
    for cls, args in ((metrics.MAE, (y_pred, y_pred + 1)), (metrics.MSE, (y_pred, y_pred + 1))):
        metric = cls()
        metric.update(*args)
        # MindSpore's MAE and MSE sum over a sample's features (the oracle gives 2.0 for
        # two features that are each off by 1)
        assert type(metric.eval()) is float and metric.eval() == pytest.approx(2.0)
