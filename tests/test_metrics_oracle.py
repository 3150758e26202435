"""Every metric of ``mscore.train`` against MindSpore 2.10's recorded behaviour.

``tests/data/metrics_oracle.json`` was made by ``tests/data/make_metrics_fixtures.py`` with the
real MindSpore (``/tmp/ms/bin/python tests/data/make_metrics_fixtures.py``): each case is a
snippet with the value or the exception type it gave. Here the same snippet runs with mscore's
names bound. Cases marked ``differs`` (MindSpore bugs, deliberate extensions) are checked one by
one below against independently computed values.
"""
import math

import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test, use_backend
from _oracle import assert_matches, check_case, load, run

import mscore as ms
import mscore.train as M
from mscore import nn

ORACLE = load("metrics_oracle.json")
CASES = ORACLE["cases"]
NAMES = {"M": M, "nn": nn, "T": ms.Tensor, "np": np, "ms": ms}


_numpy_context = numpy_context_each_test()


def _run(code):
    return run(ORACLE, code, NAMES)


def _check_case(name):
    check_case(ORACLE, name, NAMES)


SAME = sorted(name for name, spec in CASES.items() if not spec["differs"])
DIFFERS = sorted(name for name, spec in CASES.items() if spec["differs"])


@pytest.mark.parametrize("name", SAME)
def test_same_as_mindspore(name):
    _check_case(name)


# The backend only matters where a metric reads Tensors (one conversion, shared by all) or runs
# a network (OcclusionSensitivity): these cases, which give it Tensors, run on every backend.
TENSOR_CASES = ["accuracy_batches", "precision_multilabel_per_sample", "top5_onehot_labels",
                "mae_batches", "loss_values", "perplexity", "cosine_similarity_cosine_none",
                "roc_binary_default_pos_label_and_ties", "occlusion_default"]


@pytest.mark.parametrize("backend", available_backends(exclude=("numpy",)))
def test_tensor_inputs_on_every_backend(backend):
    use_backend(backend)
    for name in TENSOR_CASES:
        assert "T(" in CASES[name]["code"] and not CASES[name]["differs"], name
        _check_case(name)


# -- where mscore deliberately differs ---------------------------------------------------------
def _differs_confusion_mean_batch():
    m = M.ConfusionMatrixMetric(calculation_method=True, decrease="mean_batch")
    with pytest.raises(ValueError, match="decrease"):
        _run_with(m)


def _run_with(metric):
    ns = _run("")
    metric.update(ns["bin_pred"], ns["bin_true"])


def _differs_eval_before_update(cls):
    def check():
        with pytest.raises(RuntimeError, match="update"):
            getattr(M, cls)().eval()
    return check


def _differs_perplexity_3d():
    probs = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1], [0.3, 0.4, 0.3]])
    labels = np.array([1, 2, 0, 1])
    want = math.exp(-np.mean(np.log(probs[np.arange(4), labels])))
    got = M.Perplexity()(probs.reshape(2, 2, 3), labels.reshape(2, 2))
    assert got == pytest.approx(want, rel=1e-12)
    # and it equals the 2-d form, which MindSpore also computes (the oracle's 'perplexity')
    assert got == pytest.approx(M.Perplexity()(probs, labels), rel=1e-12)


def _occlusion_reference(label, margin):
    ns = _run(CASES["occlusion_default"]["code"].split("m = M.")[0])
    w, b, img = ns["w"], ns["b"], ns["img"]

    def score(x):
        return float((x.reshape(-1) @ w.T.astype(np.float64) + b)[label])

    base = score(img.astype(np.float64))
    out = np.empty((1, 4, 4))
    for c, i, j in np.ndindex(1, 4, 4):
        covered = img.astype(np.float64).copy()
        covered[0, max(0, c - margin[0]):min(1, c + margin[0]),
                max(0, i - margin[1]):min(4, i + margin[1]),
                max(0, j - margin[2]):min(4, j + margin[2])] = 0.0
        out[c, i, j] = base - score(covered)
    return ns, out.squeeze()


def _differs_occlusion_label_int():
    ns, want = _occlusion_reference(1, (2, 2, 2))
    m = M.OcclusionSensitivity()
    m.update(ns["net"], ns["img"], 1)
    np.testing.assert_allclose(m.eval(), want, rtol=1e-5, atol=1e-5)
    # the oracle's value for the 0-d label (MindSpore's working form) is the same map
    assert_matches(CASES["occlusion_default"]["result"], m.eval())


def _differs_occlusion_label_shape_1():
    ns, want = _occlusion_reference(1, (2, 2, 2))
    m = M.OcclusionSensitivity()
    m.update(ns["net"], ns["img"], np.array([1]))
    np.testing.assert_allclose(m.eval(), want, rtol=1e-5, atol=1e-5)


def _differs_occlusion_per_dim_margin():
    ns, want = _occlusion_reference(1, (0, 1, 2))
    m = M.OcclusionSensitivity(margin=[0, 1, 2])
    m.update(ns["net"], ns["img"], np.array(1))
    np.testing.assert_allclose(m.eval(), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="margin"):
        M.OcclusionSensitivity(margin=[1, 2]).update(ns["net"], ns["img"], np.array(1))


def _differs_hausdorff_failed_update():
    ns = _run("")
    m = M.HausdorffDistance()
    with pytest.raises(ValueError):
        m.update(ns["seg_a"], ns["seg_b"], 5)
    with pytest.raises(RuntimeError, match="update"):
        m.eval()


def _differs_roc_multiclass():
    sk = pytest.importorskip("sklearn.metrics")
    ns = _run("")
    scores, labels = ns["scores"], ns["labels"]
    m = M.ROC(class_num=3)
    m.update(ms.Tensor(scores), ms.Tensor(labels))
    fprs, tprs, thresholds = m.eval()
    for c in range(3):
        fpr, tpr, th = sk.roc_curve(labels == c, scores[:, c], drop_intermediate=False)
        np.testing.assert_allclose(fprs[c], fpr, rtol=1e-12)
        np.testing.assert_allclose(tprs[c], tpr, rtol=1e-12)
        np.testing.assert_allclose(thresholds[c][1:], th[1:], rtol=1e-6)
        assert thresholds[c][0] == pytest.approx(th[1] + 1, rel=1e-6)


def _differs_get_metrics_dict_of_names():
    got = M.metrics.get_metrics({"a": "loss"})
    assert list(got) == ["a"] and isinstance(got["a"], M.Loss)


DIFFERS_CHECKS = {
    "confusion_matrix_metric_mean_batch_per_sample": _differs_confusion_mean_batch,
    "meansurfacedistance_eval_empty": _differs_eval_before_update("MeanSurfaceDistance"),
    "rootmeansquaredistance_eval_empty": _differs_eval_before_update("RootMeanSquareDistance"),
    "perplexity_3d": _differs_perplexity_3d,
    "occlusion_label_int": _differs_occlusion_label_int,
    "occlusion_label_shape_1": _differs_occlusion_label_shape_1,
    "occlusion_per_dim_margin": _differs_occlusion_per_dim_margin,
    "hausdorff_update_error_still_marks_updated": _differs_hausdorff_failed_update,
    "roc_multiclass": _differs_roc_multiclass,
    "get_metrics_dict_of_names": _differs_get_metrics_dict_of_names,
}


@pytest.mark.parametrize("name", DIFFERS)
def test_deliberate_differences(name):
    assert name in DIFFERS_CHECKS, f"{name}: a 'differs' case without its own check"
    DIFFERS_CHECKS[name]()


def test_signatures_as_mindspore():
    import inspect
    for name, want in ORACLE["signatures"].items():
        owner, _, method = name.partition(".")
        obj = getattr(M.metrics, owner)
        assert str(inspect.signature(getattr(obj, method) if method else obj)) == want, name


def test_every_metric_name_is_exported_like_mindspore():
    want = [entry["str"] for entry in CASES["names"]["result"]["list"]]
    assert M.names() == want
    import mscore.nn.metrics as nn_metrics
    for name in M.metrics.__all__:
        assert getattr(M, name) is getattr(M.metrics, name) is getattr(nn_metrics, name)
    assert ms.nn.metrics is nn_metrics
