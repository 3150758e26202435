"""Record MindSpore 2.10's metric behaviour for fixed inputs into ``metrics_oracle.json``.

Run with the real MindSpore (never imported by mscore or its tests):

    /tmp/ms/bin/python tests/data/make_metrics_fixtures.py

Each case is a snippet of Python that sets ``result``; it runs with these names bound:
``M`` (``mindspore.train``), ``nn`` (``mindspore.nn``), ``T`` (``mindspore.Tensor``), ``np``,
``ms`` (``mindspore``). The JSON holds the snippet with what it produced (the value, or the
exception type and message), and ``tests/test_metrics_oracle.py`` runs the same snippet with
``mscore`` bound to those names and compares. ``differs`` says why mscore deliberately does
something else for that case (mostly a MindSpore bug; see docs/differences.md); the test file
checks those cases one by one.
Inputs are written out or made from closed formulas, so no random stream is involved.
"""
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "metrics_oracle.json")

# Shared inputs, defined in every case's namespace.
PRELUDE = """
scores = np.array([[0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.3, 0.4, 0.3],
                   [0.25, 0.25, 0.5], [0.9, 0.05, 0.05], [0.2, 0.2, 0.6], [0.4, 0.35, 0.25]],
                  np.float32)
labels = np.array([1, 2, 0, 0, 2, 1, 2, 0], np.int32)
ml_pred = np.array([[1, 0, 1, 0], [0, 1, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1], [1, 0, 0, 1]],
                   np.float32)
ml_true = np.array([[1, 0, 0, 0], [0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 0, 1], [0, 1, 1, 1]],
                   np.float32)
wide = np.cos(np.arange(60, dtype=np.float64) * 0.7).reshape(6, 10).astype(np.float32)
wide_labels = np.array([3, 0, 9, 5, 1, 7], np.int32)
seg_a = np.array([[0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 1, 0], [0, 1, 1, 1, 1, 0],
                  [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0]])
seg_b = np.array([[0, 0, 0, 1, 1, 0], [0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 0],
                  [0, 0, 0, 1, 0, 0], [0, 0, 0, 1, 0, 0]])
lab_a = np.array([[3, 0, 1, 2], [1, 3, 0, 0], [1, 0, 2, 2], [2, 2, 1, 0]])
lab_b = np.array([[0, 2, 1, 2], [1, 2, 1, 0], [0, 0, 1, 2], [2, 1, 1, 0]])
bin_pred = (np.sin(np.arange(2 * 3 * 4 * 4) * 1.3).reshape(2, 3, 4, 4) > 0).astype(np.float32)
bin_true = (np.cos(np.arange(2 * 3 * 4 * 4) * 0.9).reshape(2, 3, 4, 4) > 0.2).astype(np.float32)
"""

CASES = {}


def case(name, code, differs=None):
    """``differs``: why mscore deliberately does something else here (its own test checks it)."""
    CASES[name] = {"code": code.strip("\n"), "differs": differs}


# -- Metric base, rearrange_inputs, names, get_metric_fn -------------------------------------
case("names", "result = M.names()")
case("metric_is_abstract", "result = M.Metric()")
case("metric_subclass_without_methods", """
class Half(M.Metric):
    def clear(self): pass
result = Half()
""")
case("set_indexes_reorders", """
m = M.Accuracy().set_indexes([2, 0])
m.update(T(labels), 'ignored', T(scores))
result = [m.eval(), m.indexes]
""")
case("set_indexes_tuple", "result = M.Accuracy().set_indexes((0, 1))")
case("set_indexes_str_elements", "result = M.Accuracy().set_indexes(['0'])")
case("set_indexes_out_of_range", """
m = M.MAE().set_indexes([0, 3])
m.update(np.ones(2), np.ones(2))
""")
case("set_indexes_empty_list_keeps_inputs", """
m = M.MAE().set_indexes([])
m.update(np.array([1.0, 2.0]), np.array([2.0, 4.0]))
result = m.eval()
""")
case("rearrange_inputs_custom_metric", """
class Pick(M.Metric):
    def __init__(self):
        super().__init__()
        self.clear()
    def clear(self):
        self.seen = None
    @M.rearrange_inputs
    def update(self, *inputs):
        self.seen = inputs
    def eval(self):
        return list(self.seen)
m = Pick().set_indexes([1, 0, 1])
m.update(5, 9)
result = [m.eval(), Pick()(5, 9)]
""")
case("metric_call_clears", """
m = M.MAE()
m.update(np.array([10.0]), np.array([0.0]))
result = m(np.array([1.0, 2.0]), np.array([2.0, 4.0]))
""")
case("get_metric_fn_kwargs", """
m = M.get_metric_fn('precision', eval_type='multilabel')
result = [type(m).__name__, m(ml_pred, ml_true).tolist()]
""")
case("get_metric_fn_all_names", """
made = {}
for n in M.names():
    if n == 'auc':
        continue
    args = {'topk': (3,), 'confusion_matrix': (3,)}.get(n, ())
    made[n] = type(M.get_metric_fn(n, *args)).__name__
result = made
""")
case("get_metric_fn_unknown", "result = M.get_metric_fn('f1')")
case("get_metric_fn_auc_needs_arguments", "result = M.get_metric_fn('auc')")
case("get_metric_fn_bad_kwarg", "result = M.get_metric_fn('accuracy', foo=1)")
case("convert_tuple_rejected", "result = M.MAE()((1.0, 2.0), (1.0, 2.0))")
case("convert_float_rejected", "result = M.Loss()(1.5)")
case("convert_numpy_scalar_rejected", "result = M.Loss()(np.float32(1.5))")
case("convert_lists", "result = M.MAE()([1.0, 2.0, 4.0], [1.5, 2.0, 3.0])")
case("get_metrics_set", """
got = M.metrics.get_metrics({'acc', 'loss'})
result = sorted((k, type(v).__name__) for k, v in got.items())
""")
case("get_metrics_dict", "result = sorted(M.metrics.get_metrics({'a': M.MAE()}))")
case("get_metrics_none", "result = M.metrics.get_metrics(None)")
case("get_metrics_str", "M.metrics.get_metrics('acc')")
case("get_metrics_list", "result = sorted(M.metrics.get_metrics(['acc', 'loss']))")
case("get_metrics_dict_of_names", "result = sorted(M.metrics.get_metrics({'a': 'loss'}))",
     differs="mscore also takes metric names as dict values")
case("get_metrics_dict_bad_value", "M.metrics.get_metrics({'a': 3})")

# -- Accuracy -------------------------------------------------------------------------------
case("accuracy_batches", """
m = M.Accuracy()
m.update(T(scores[:5]), T(labels[:5]))
m.update(scores[5:], labels[5:])
result = m.eval()
""")
case("accuracy_onehot", "result = M.Accuracy()(scores, np.eye(3, dtype=np.float32)[labels])")
case("accuracy_3d_scores", """
s = np.stack([scores[:4], scores[4:]], axis=2)   # (4, 3, 2)
y = np.stack([labels[:4], labels[4:]], axis=1)   # (4, 2)
result = M.Accuracy()(s, y)
""")
case("accuracy_labels_n_by_1", "result = M.Accuracy()(scores, labels.reshape(-1, 1))")
case("accuracy_multilabel", "result = M.Accuracy('multilabel')(ml_pred, ml_true)")
case("accuracy_multilabel_3d", """
p = np.stack([ml_pred, ml_true], axis=2)
t = np.stack([ml_true, ml_true], axis=2)
result = M.Accuracy('multilabel')(p, t)
""")
case("accuracy_multilabel_not_binary", "result = M.Accuracy('multilabel')(ml_pred * 0.9, ml_true)")
case("accuracy_multilabel_shape", "result = M.Accuracy('multilabel')(ml_pred, ml_true[:, :3])")
case("accuracy_bad_eval_type", "result = M.Accuracy('regression')")
case("accuracy_one_input", "M.Accuracy().update(scores)")
case("accuracy_class_number_changes", """
m = M.Accuracy()
m.update(scores, labels)
m.update(wide, wide_labels)
""")
case("accuracy_eval_empty", "result = M.Accuracy().eval()")
case("accuracy_clear", """
m = M.Accuracy()
m.update(scores, labels)
m.clear()
m.update(scores[:2], labels[:2])
result = m.eval()
""")

# -- Precision / Recall -----------------------------------------------------------------------
for cls in ("Precision", "Recall"):
    low = cls.lower()
    case(f"{low}_classification", f"""
m = M.{cls}()
m.update(T(scores[:3]), T(labels[:3]))
m.update(T(scores[3:]), T(labels[3:]))
result = [m.eval(), m.eval(average=True)]
""")
    case(f"{low}_onehot", f"result = M.{cls}()(scores, np.eye(3)[labels]).tolist()")
    case(f"{low}_multilabel_per_sample", f"""
m = M.{cls}('multilabel')
m.update(ml_pred[:2], ml_true[:2])
m.update(T(ml_pred[2:]), T(ml_true[2:]))
result = [m.eval(), m.eval(True)]
""")
    case(f"{low}_multilabel_3d", f"""
p = np.stack([ml_pred, ml_true], axis=2)
t = np.stack([ml_true, ml_pred], axis=2)
m = M.{cls}('multilabel')
m.update(p, t)
result = [m.eval(), m.eval(True)]
""")
    case(f"{low}_label_out_of_range", f"M.{cls}()(scores, labels + 1)")
    case(f"{low}_average_not_bool", f"""
m = M.{cls}()
m.update(scores, labels)
m.eval(average=1)
""")
    case(f"{low}_eval_empty", f"M.{cls}().eval()")
    case(f"{low}_bad_eval_type", f"M.{cls}(eval_type='binary')")
    case(f"{low}_multilabel_not_binary", f"M.{cls}('multilabel')(ml_pred + 0.5, ml_true)")

# -- Fbeta / F1 -----------------------------------------------------------------------------
case("fbeta_half", """
m = M.Fbeta(0.5)
m.update(scores[:4], labels[:4])
m.update(scores[4:], labels[4:])
result = [m.eval(), m.eval(True)]
""")
case("fbeta_two_onehot", "result = M.Fbeta(2)(scores, np.eye(3)[labels])")
case("f1", "m = M.F1(); m.update(T(scores), T(labels)); result = [m.eval(), m.eval(True)]")
case("fbeta_zero", "M.Fbeta(0)")
case("fbeta_negative", "M.Fbeta(-1.0)")
case("fbeta_str", "M.Fbeta('1')")
case("fbeta_label_out_of_range", "M.F1()(scores, labels + 1)")
case("fbeta_eval_average_first", "M.F1().eval(average='yes')")
case("fbeta_eval_empty", "M.F1().eval()")
case("fbeta_class_number_changes", """
m = M.F1()
m.update(scores, labels)
m.update(wide, wide_labels)
""")

# -- TopK -----------------------------------------------------------------------------------
case("topk_batches", """
m = M.TopKCategoricalAccuracy(3)
m.update(T(wide[:3]), T(wide_labels[:3]))
m.update(wide[3:], wide_labels[3:])
result = m.eval()
""")
case("top1", "result = M.Top1CategoricalAccuracy()(scores, labels)")
case("top5_onehot_labels", """
m = M.Top5CategoricalAccuracy()
m.update(T(wide), T(np.eye(10, dtype=np.float32)[wide_labels]))
result = [m.eval(), m.k]
""")
case("top5_index_labels", "result = M.Top5CategoricalAccuracy()(wide, wide_labels)")
case("topk_k_float", "M.TopKCategoricalAccuracy(1.5)")
case("topk_k_zero", "M.TopKCategoricalAccuracy(0)")
case("topk_eval_empty", "M.TopKCategoricalAccuracy(2).eval()")
case("topk_one_input", "M.Top1CategoricalAccuracy().update(scores)")

# -- MAE / MSE / Loss -------------------------------------------------------------------------
reg = "p = np.sin(np.arange(12) * 0.5).reshape(4, 3); t = np.cos(np.arange(12) * 0.3).reshape(4, 3)"
case("mae_batches", reg + """
m = M.MAE()
m.update(T(p[:2].astype(np.float32)), T(t[:2].astype(np.float32)))
m.update(p[2:], t[2:])
result = m.eval()
""")
case("mse_batches", reg + """
m = M.MSE()
m.update(p[:3], t[:3])
m.update(p[3:], t[3:])
result = m.eval()
""")
case("mae_flat_target_counts_its_rows", reg + "\nresult = M.MAE()(p, t.reshape(-1))")
case("mse_size_mismatch", "M.MSE()(np.ones((2, 3)), np.ones(4))")
case("mae_eval_empty", "M.MAE().eval()")
case("mse_eval_empty", "M.MSE().eval()")
case("mae_three_inputs", "M.MAE().update(np.ones(2), np.ones(2), np.ones(2))")
case("loss_values", """
m = M.Loss()
m.update(T(np.float32(1.0)))
m.update(T(np.array([2.0, 4.0], np.float32)))
m.update(np.array(6.0))
result = m.eval()
""")
case("loss_2d", "M.Loss().update(np.ones((2, 2)))")
case("loss_two_inputs", "M.Loss().update(np.ones(2), np.ones(2))")
case("loss_eval_empty", "M.Loss().eval()")

# -- Perplexity -----------------------------------------------------------------------------
probs = ("probs = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1], "
         "[0.3, 0.4, 0.3]]); plab = np.array([1, 2, 0, 1])")
case("perplexity", probs + """
m = M.Perplexity()
m.update(T(probs[:2].astype(np.float32)), T(plab[:2]))
m.update(probs[2:], plab[2:])
result = m.eval()
""")
case("perplexity_ignore_label", probs + "\nresult = M.Perplexity(ignore_label=1)(probs, plab)")
case("perplexity_3d", probs + "\nresult = M.Perplexity()(probs.reshape(2, 2, 3), plab.reshape(2, 2))",
     differs="MindSpore indexes the first axis of a 3-d prediction with the flattened labels "
             "(IndexError); mscore flattens the leading axes to (N, C)")
case("perplexity_doc_example", """
m = M.Perplexity(ignore_label=None)
m.clear()
m.update(T(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])), T(np.array([1, 0, 1])))
result = m.eval()
""")
case("perplexity_zero_probability_clipped", "result = M.Perplexity()(np.array([[0.0, 1.0]]), np.array([0]))")
case("perplexity_shape_mismatch", probs + "\nM.Perplexity()(probs, plab[:3])")
case("perplexity_ignore_label_float", "M.Perplexity(ignore_label=1.0)")
case("perplexity_ignore_label_bool", "M.Perplexity(ignore_label=True)")
case("perplexity_eval_empty", "M.Perplexity().eval()")
case("perplexity_one_input", probs + "\nM.Perplexity().update(probs)")

# -- ConfusionMatrix ------------------------------------------------------------------------
for norm in ("no_norm", "target", "prediction", "all"):
    case(f"confusion_matrix_{norm}", f"""
m = M.ConfusionMatrix(4, normalize='{norm}')
m.update(T(scores[:4]), T(labels[:4]))
m.update(scores[4:], labels[4:])
result = m.eval()
""")
case("confusion_matrix_binary_threshold", """
m = M.ConfusionMatrix(2, threshold=0.3)
m.update(np.array([0.1, 0.35, 0.8, 0.25, 0.9]), np.array([0, 0, 1, 1, 1]))
result = m.eval()
""")
case("confusion_matrix_int_predictions", """
result = M.ConfusionMatrix(3)(np.array([0, 2, 1, 1, 2]), np.array([0, 1, 1, 2, 2]))
""")
case("confusion_matrix_bad_normalize", "M.ConfusionMatrix(2, normalize='label')")
case("confusion_matrix_num_classes_float", "M.ConfusionMatrix(2.0)")
case("confusion_matrix_threshold_int", "M.ConfusionMatrix(2, threshold=1)")
case("confusion_matrix_ndim", "M.ConfusionMatrix(2)(np.ones((2, 2, 2)), np.ones(2))")
case("confusion_matrix_eval_empty", "M.ConfusionMatrix(2).eval()")
case("confusion_matrix_clear", """
m = M.ConfusionMatrix(3)
m.update(scores, labels)
m.clear()
m.update(scores[:2], labels[:2])
result = m.eval()
""")

CM_NAMES = ["sensitivity", "recall", "hit_rate", "true_positive_rate", "tpr", "specificity",
            "selectivity", "true_negative_rate", "tnr", "precision",
            "positive_predictive_value", "ppv", "negative_predictive_value", "npv",
            "miss_rate", "false_negative_rate", "fnr", "fall_out", "false_positive_rate",
            "fpr", "false_discovery_rate", "fdr", "false_omission_rate", "for",
            "prevalence_threshold", "pt", "threat_score", "critical_success_index", "ts",
            "csi", "accuracy", "acc", "balanced_accuracy", "ba", "f1_score", "f1",
            "matthews_correlation_coefficient", "mcc", "fowlkes_mallows_index", "fm",
            "informedness", "bookmaker_informedness", "bm", "markedness", "deltap", "mk",
            "True Positive Rate", "F1 Score"]
case("confusion_matrix_metric_all_names", f"""
out = {{}}
for name in {CM_NAMES!r}:
    m = M.ConfusionMatrixMetric(metric_name=name)
    m.update(T(bin_pred[:1]), T(bin_true[:1]))
    m.update(bin_pred[1:], bin_true[1:])
    out[name] = float(m.eval()[0])
result = out
""")
for name in ("tpr", "ppv", "f1", "mcc", "pt", "ba", "fm", "bm", "mk", "acc"):
    for dec in ("mean", "sum"):
        case(f"confusion_matrix_metric_per_sample_{name}_{dec}", f"""
m = M.ConfusionMatrixMetric(metric_name='{name}', calculation_method=True, decrease='{dec}')
m.update(bin_pred[:1], bin_true[:1])
m.update(bin_pred[1:], bin_true[1:])
result = m.eval()
""")
case("confusion_matrix_metric_keep_channel_0", """
m = M.ConfusionMatrixMetric(skip_channel=False, metric_name='ppv')
m.update(bin_pred, bin_true)
r1 = m.eval()
m2 = M.ConfusionMatrixMetric(skip_channel=False, metric_name='tnr', calculation_method=True)
m2.update(bin_pred, bin_true)
result = [r1, m2.eval()]
""")
case("confusion_matrix_metric_doc_example", """
m = M.ConfusionMatrixMetric(skip_channel=True, metric_name='tpr', calculation_method=False,
                            decrease='mean')
m.clear()
x = T(np.array([[[0], [1]], [[1], [0]]]))
y = T(np.array([[[0], [1]], [[0], [1]]]))
m.update(x, y)
m.update(x, y)
result = m.eval()
""")
case("confusion_matrix_metric_2d_inputs", """
m = M.ConfusionMatrixMetric(metric_name='tpr')
m.update(np.array([[1, 0, 1], [0, 1, 1]]), np.array([[1, 1, 0], [0, 1, 1]]))
result = m.eval()
""")
case("confusion_matrix_metric_unknown_name", "M.ConfusionMatrixMetric(metric_name='foo')(bin_pred, bin_true)")
case("confusion_matrix_metric_name_not_str", "M.ConfusionMatrixMetric(metric_name=['tpr'])")
case("confusion_matrix_metric_bad_decrease", "M.ConfusionMatrixMetric(decrease='median')")
case("confusion_matrix_metric_skip_channel_int", "M.ConfusionMatrixMetric(skip_channel=1)")
case("confusion_matrix_metric_calc_method_int", "M.ConfusionMatrixMetric(calculation_method=0)")
case("confusion_matrix_metric_not_binary", "M.ConfusionMatrixMetric()(bin_pred, bin_true * 0.5)")
case("confusion_matrix_metric_1d", "M.ConfusionMatrixMetric()(np.ones(3), np.ones(3))")
case("confusion_matrix_metric_shape", "M.ConfusionMatrixMetric()(bin_pred, bin_true[:, :2])")
case("confusion_matrix_metric_eval_empty_per_sample",
     "M.ConfusionMatrixMetric(calculation_method=True).eval()")
case("confusion_matrix_metric_eval_empty", "result = M.ConfusionMatrixMetric().eval()")
case("confusion_matrix_metric_mean_batch_per_sample", """
m = M.ConfusionMatrixMetric(calculation_method=True, decrease='mean_batch')
m.update(bin_pred, bin_true)
""", differs="MindSpore fails unpacking a function object (a typo in its decrease table)")

# -- ROC / auc ------------------------------------------------------------------------------
roc_bin = ("rp = np.array([0.1, 0.4, 0.35, 0.8, 0.65, 0.2, 0.9, 0.5]); "
           "ry = np.array([0, 0, 1, 1, 0, 1, 1, 0])")
case("roc_binary", roc_bin + """
m = M.ROC(pos_label=1)
m.update(rp, ry)
fpr, tpr, th = m.eval()
result = [fpr, tpr, th]
""")
case("roc_binary_default_pos_label_and_ties", """
m = M.ROC()
m.update(T(np.array([0.2, 0.2, 0.7, 0.7, 0.5], np.float32)), T(np.array([0, 1, 1, 0, 1])))
result = list(m.eval())
""")
case("roc_binary_pos_label_0", roc_bin + "\nm = M.ROC(pos_label=0); m.update(rp, ry); result = list(m.eval())")
case("roc_update_replaces", roc_bin + """
m = M.ROC()
m.update(np.array([0.9, 0.1]), np.array([1, 0]))
m.update(rp, ry)
result = list(m.eval())
""")
case("roc_multiclass", """
m = M.ROC(class_num=3)
m.update(T(scores), T(labels))
fpr, tpr, th = m.eval()
result = [fpr, tpr, th]
""", differs="MindSpore reshapes the N x C scores to C x N (a torch-style transpose(0, 1) that "
             "is a no-op in numpy), so each class's curve mixes samples and classes; mscore "
             "computes one class against the rest")
case("roc_multiclass_wrong_class_num", "M.ROC(class_num=4)(scores, labels)")
case("roc_multiclass_pos_label", "M.ROC(class_num=3, pos_label=1)(scores, labels)")
case("roc_same_shape_class_num", "M.ROC(class_num=2)(np.array([0.1, 0.9]), np.array([0, 1]))")
case("roc_ndim", "M.ROC()(np.ones((2, 2, 2)), np.ones(2))")
case("roc_class_num_float", "M.ROC(class_num=2.0)")
case("roc_pos_label_bool", "M.ROC(pos_label=True)")
case("roc_no_negatives", "M.ROC()(np.array([0.1, 0.9]), np.array([1, 1]))")
case("roc_no_positives", "M.ROC()(np.array([0.1, 0.9]), np.array([0, 0]))")
case("roc_eval_empty", "M.ROC().eval()")
case("roc_one_input", "M.ROC().update(np.ones(2))")
case("auc_of_roc", roc_bin + """
m = M.ROC(pos_label=1)
m.update(rp, ry)
fpr, tpr, _ = m.eval()
result = M.auc(fpr, tpr)
""")
case("auc_decreasing", "result = M.auc(np.array([3.0, 2.0, 0.5]), np.array([1.0, 4.0, 2.0]))")
case("auc_column", "result = M.auc(np.array([[0.0], [1.0], [3.0]]), np.array([1.0, 2.0, 0.0]))")
case("auc_reorder", "result = M.auc(np.array([1.0, 0.0, 3.0]), np.array([2.0, 1.0, 0.0]), reorder=True)")
case("auc_not_monotonic", "M.auc(np.array([1.0, 0.0, 3.0]), np.array([2.0, 1.0, 0.0]))")
case("auc_list", "M.auc([0.0, 1.0], [1.0, 1.0])")
case("auc_lengths", "M.auc(np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0]))")
case("auc_one_point", "M.auc(np.array([0.0]), np.array([1.0]))")
case("auc_2d", "M.auc(np.ones((3, 2)), np.ones((3, 2)))")

# -- BleuScore ------------------------------------------------------------------------------
bleu = ("cand = [['i', 'have', 'a', 'pen', 'on', 'my', 'desk']]; "
        "refs = [[['i', 'have', 'a', 'pen', 'in', 'my', 'desk'], "
        "['there', 'is', 'a', 'pen', 'on', 'the', 'desk']]]")
case("bleu_doc_example", bleu + "\nm = M.BleuScore(); m.clear(); m.update(cand, refs); result = m.eval()")
case("bleu_accumulates", bleu + """
m = M.BleuScore(n_gram=2, smooth=True)
m.update(cand, refs)
m.update([['the', 'cat', 'sat']], [[['the', 'cat', 'sat', 'down'], ['a', 'cat', 'sat']]])
result = m.eval()
""")
case("bleu_brevity_penalty", """
m = M.BleuScore(n_gram=2)
m.update([['the', 'cat']], [[['the', 'cat', 'sat', 'on', 'mat']]])
result = m.eval()
""")
case("bleu_no_match_is_zero_array", "result = M.BleuScore()([['a', 'b']], [[['c', 'd']]])")
case("bleu_smooth_no_4gram", """
m = M.BleuScore(smooth=True)
m.update([['a', 'b', 'c']], [[['a', 'b', 'c', 'd']]])
result = m.eval()
""")
case("bleu_n_gram_5", "M.BleuScore(n_gram=5)")
case("bleu_n_gram_str", "M.BleuScore(n_gram='4')")
case("bleu_smooth_int", "M.BleuScore(smooth=1)")
case("bleu_lengths", bleu + "\nM.BleuScore().update(cand, refs * 2)")
case("bleu_eval_empty", "M.BleuScore().eval()")
case("bleu_one_input", bleu + "\nM.BleuScore().update(cand)")

# -- CosineSimilarity -----------------------------------------------------------------------
vec = "v = np.array([[1.0, 3.0, 4.0, 7.0], [2.0, 4.0, 2.0, 5.0], [3.0, 1.0, 5.0, 8.0]])"
for sim in ("cosine", "dot"):
    for red in ("none", "sum", "mean"):
        case(f"cosine_similarity_{sim}_{red}", vec + f"""
m = M.CosineSimilarity(similarity='{sim}', reduction='{red}')
m.update(T(v.astype(np.float32)))
result = m.eval()
""")
case("cosine_similarity_keep_diagonal", vec + """
m = M.CosineSimilarity(zero_diagonal=False)
m.update(v)
m.update(v[:2])
result = m.eval()
""")
case("cosine_similarity_bad_similarity", "M.CosineSimilarity(similarity='l2')")
case("cosine_similarity_reduction_not_str", "M.CosineSimilarity(reduction=1)")
case("cosine_similarity_zero_diagonal_int", "M.CosineSimilarity(zero_diagonal=1)")
case("cosine_similarity_eval_empty", "M.CosineSimilarity().eval()")
case("cosine_similarity_two_inputs", vec + "\nM.CosineSimilarity().update(v, v)")

# -- Dice -----------------------------------------------------------------------------------
case("dice_doc_example", """
m = M.Dice(smooth=1e-5)
m.clear()
x = T(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]))
y = T(np.array([[0, 1], [1, 0], [0, 1]]))
m.update(x, y)
result = m.eval()
""")
case("dice_batches", """
m = M.Dice()
m.update(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]), np.array([[0, 1], [1, 0], [0, 1]]))
m.update(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]))
result = m.eval()
""")
case("dice_smooth_int", "M.Dice(smooth=1)")
case("dice_smooth_zero", "M.Dice(smooth=0.0)")
case("dice_shape", "M.Dice()(np.ones((2, 2)), np.ones((2, 3)))")
case("dice_eval_empty", "M.Dice().eval()")
case("dice_one_input", "M.Dice().update(np.ones(2))")

# -- Surface distances ----------------------------------------------------------------------
for dist in ("euclidean", "chessboard", "taxicab"):
    case(f"hausdorff_{dist}", f"""
m = M.HausdorffDistance(distance_metric='{dist}')
m.update(T(seg_a), T(seg_b), 1)
result = m.eval()
""")
    case(f"mean_surface_distance_{dist}", f"""
m = M.MeanSurfaceDistance(distance_metric='{dist}', symmetric=False)
m.update(seg_a, seg_b, 1)
r1 = m.eval()
m = M.MeanSurfaceDistance(distance_metric='{dist}', symmetric=True)
m.update(seg_a, seg_b, 1)
result = [r1, m.eval()]
""")
    case(f"root_mean_square_distance_{dist}", f"""
m = M.RootMeanSquareDistance(distance_metric='{dist}')
m.update(seg_a, seg_b, 1)
r1 = m.eval()
m = M.RootMeanSquareDistance(distance_metric='{dist}', symmetric=True)
m.update(seg_a, seg_b, 1)
result = [r1, m.eval()]
""")
case("hausdorff_doc_example", """
m = M.HausdorffDistance()
m.update(np.array([[3, 0, 1], [1, 3, 0], [1, 0, 2]]), np.array([[0, 2, 1], [1, 2, 1], [0, 0, 1]]), 0)
result = m.eval()
""")
case("hausdorff_labels_percentile_directed", """
out = []
for pct, directed, crop in [(50.0, False, True), (90.0, True, True), (None, True, False),
                            (0.0, False, False), (100.0, False, True)]:
    m = M.HausdorffDistance(percentile=pct, directed=directed, crop=crop)
    m.update(lab_a, lab_b, 2)
    out.append(m.eval())
result = out
""")
case("hausdorff_bool_inputs", """
m = M.HausdorffDistance()
m.update(seg_a.astype(bool), seg_b.astype(bool), 1)
result = m.eval()
""")
case("hausdorff_3d", """
a = np.zeros((5, 5, 5)); a[1:4, 1:4, 1:3] = 1
b = np.zeros((5, 5, 5)); b[2:5, 1:4, 1:4] = 1
m = M.HausdorffDistance(); m.update(a, b, 1); r = [m.eval()]
m = M.MeanSurfaceDistance(symmetric=True); m.update(a, b, 1); r.append(m.eval())
m = M.RootMeanSquareDistance(symmetric=True); m.update(a, b, 1); r.append(m.eval())
result = r
""")
case("surface_distance_label_only_in_truth", """
r = []
for cls in (M.HausdorffDistance, M.MeanSurfaceDistance, M.RootMeanSquareDistance):
    m = cls()
    m.update(np.zeros((4, 4)), seg_a[:4, :4], 1)
    r.append(m.eval())
    m = cls()
    m.update(seg_a[:4, :4], np.zeros((4, 4)), 1)
    r.append(m.eval())
result = r
""")
case("hausdorff_label_missing", "M.HausdorffDistance().update(seg_a, seg_b, 5)")
case("hausdorff_label_str", "M.HausdorffDistance().update(seg_a, seg_b, '1')")
case("hausdorff_shape", "M.HausdorffDistance().update(seg_a, seg_b[:4], 1)")
case("hausdorff_two_inputs", "M.HausdorffDistance().update(seg_a, seg_b)")
case("hausdorff_percentile_int", "M.HausdorffDistance(percentile=50)")
case("hausdorff_percentile_range", """
m = M.HausdorffDistance(percentile=150.0)
m.update(seg_a, seg_b, 1)
m.eval()
""")
case("hausdorff_bad_metric", "M.HausdorffDistance(distance_metric='manhattan')")
case("hausdorff_directed_int", "M.HausdorffDistance(directed=1)")
case("hausdorff_crop_int", "M.HausdorffDistance(crop=0)")
case("hausdorff_eval_empty", "M.HausdorffDistance().eval()")
case("hausdorff_update_error_still_marks_updated", """
m = M.HausdorffDistance()
try:
    m.update(seg_a, seg_b, 5)
except ValueError:
    pass
result = m.eval()
""", differs="MindSpore sets _is_update before checking the inputs, so after a failed update "
             "eval() returns inf; mscore raises RuntimeError as before any update")
for cls in ("MeanSurfaceDistance", "RootMeanSquareDistance"):
    low = cls.lower()
    case(f"{low}_label_missing", f"M.{cls}().update(seg_a, seg_b, 5)")
    case(f"{low}_label_str", f"M.{cls}().update(seg_a, seg_b, '1')")
    case(f"{low}_shape", f"M.{cls}().update(seg_a, seg_b[:4], 1)")
    case(f"{low}_two_inputs", f"M.{cls}().update(seg_a, seg_b)")
    case(f"{low}_symmetric_int", f"M.{cls}(symmetric=1)")
    case(f"{low}_bad_metric", f"M.{cls}(distance_metric='l1')")
    case(f"{low}_metric_not_str", f"M.{cls}(distance_metric=1)")
    case(f"{low}_eval_empty", f"result = M.{cls}().eval()",
         differs="MindSpore's __init__ sets _is_update to None after clear(), so eval() before "
                 "update() returns inf instead of raising RuntimeError")

# -- OcclusionSensitivity -------------------------------------------------------------------
occ_model = """
w = (np.sin(np.arange(48) * 0.37).reshape(3, 16)).astype(np.float32)
b = np.array([0.1, -0.2, 0.05], np.float32)
net = nn.SequentialCell([nn.Flatten(), nn.Dense(16, 3, weight_init=T(w), bias_init=T(b))])
img = (np.cos(np.arange(16) * 0.61).reshape(1, 1, 4, 4)).astype(np.float32)
"""
case("occlusion_default", occ_model + """
m = M.OcclusionSensitivity()
m.update(net, T(img), T(np.array(1)))
result = m.eval()
""")
case("occlusion_margin_batches_bbox", occ_model + """
m = M.OcclusionSensitivity(pad_val=0.5, margin=1, n_batch=3, b_box=[-1, -1, 1, 2, 0, 3])
m.update(net, img, np.array(2))
result = m.eval()
""")
case("occlusion_margin_0", occ_model + """
m = M.OcclusionSensitivity(margin=0)
m.update(net, img, np.array(0, np.int32))
result = m.eval()
""")
case("occlusion_two_images", occ_model + "\nM.OcclusionSensitivity().update(net, np.concatenate([img, img]), np.array([0, 1]))")
case("occlusion_label_count", occ_model + "\nM.OcclusionSensitivity().update(net, img, np.array([0, 1]))")
case("occlusion_label_int", occ_model + "\nm = M.OcclusionSensitivity(); m.update(net, img, 1); result = m.eval()",
     differs="MindSpore's _convert_data rejects the int before its own int branch runs; "
             "mscore takes an int label as documented")
case("occlusion_label_shape_1", occ_model + "\nm = M.OcclusionSensitivity(); m.update(net, img, np.array([1])); result = m.eval()",
     differs="MindSpore broadcasts a (1,) label against the batch of occluded images and fails "
             "reshaping; mscore takes any one-element label")
case("occlusion_doc_example", """
class DenseNet(nn.Cell):
    def __init__(self):
        super(DenseNet, self).__init__()
        w = np.array([[0.1, 0.8, 0.1, 0.1], [1, 1, 1, 1]]).astype(np.float32)
        b = np.array([0.3, 0.6]).astype(np.float32)
        self.dense = nn.Dense(4, 2, weight_init=T(w), bias_init=T(b))

    def construct(self, x):
        return self.dense(x)

m = M.OcclusionSensitivity()
m.clear()
m.update(DenseNet(), np.array([[0.1, 0.2, 0.3, 0.4]]).astype(np.float32), np.array(1).astype(np.int32))
result = m.eval()
""")
case("occlusion_not_a_cell", occ_model + "\nM.OcclusionSensitivity().update(lambda x: x, img, np.array([0]))")
case("occlusion_two_inputs", occ_model + "\nM.OcclusionSensitivity().update(net, img)")
case("occlusion_pad_val_int", "M.OcclusionSensitivity(pad_val=0)")
case("occlusion_margin_float", "M.OcclusionSensitivity(margin=2.0)")
case("occlusion_n_batch_float", "M.OcclusionSensitivity(n_batch=2.0)")
case("occlusion_b_box_tuple", "M.OcclusionSensitivity(b_box=(0, 1))")
case("occlusion_b_box_length", occ_model + "\nM.OcclusionSensitivity(b_box=[0, 1]).update(net, img, np.array([0]))")
case("occlusion_b_box_too_large", occ_model + "\nM.OcclusionSensitivity(b_box=[0, 0, 0, 4, 0, 3]).update(net, img, np.array([0]))")
case("occlusion_b_box_min_gt_max", occ_model + "\nM.OcclusionSensitivity(b_box=[0, 0, 3, 2, 0, 3]).update(net, img, np.array([0]))")
case("occlusion_eval_empty", "M.OcclusionSensitivity().eval()")
case("occlusion_per_dim_margin", occ_model + "\nm = M.OcclusionSensitivity(margin=[0, 1, 2]); m.update(net, img, np.array(1)); result = m.eval()",
     differs="MindSpore documents a Sequence margin but subtracts it from an int (TypeError); "
             "mscore uses one margin per dimension")


# -- encoding --------------------------------------------------------------------------------
def encode(value):
    """JSON-able form of a metric's output, keeping whether it was an array or a scalar."""
    if isinstance(value, np.ndarray):
        return {"array": _floats(value.tolist()), "shape": list(value.shape),
                "dtype": str(value.dtype)}
    if isinstance(value, (bool, np.bool_)):
        return {"bool": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"int": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"float": _floats(float(value))}
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, (list, tuple)):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": {str(k): encode(v) for k, v in value.items()}}
    if value is None:
        return {"none": True}
    return {"object": type(value).__name__}


def _floats(value):
    """nan / inf as strings, so the file stays standard JSON."""
    if isinstance(value, list):
        return [_floats(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def signatures(module):
    """``inspect.signature`` of every public name (and of a class's clear/update/eval)."""
    import inspect
    out = {}
    for name in sorted(module.__all__):
        obj = getattr(module, name)
        out[name] = str(inspect.signature(obj))
        if inspect.isclass(obj):
            for method in ("clear", "update", "eval"):
                out[f"{name}.{method}"] = str(inspect.signature(getattr(obj, method)))
    return out


def main():
    import mindspore as ms
    import mindspore.train as M
    from mindspore import nn
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    out = {"generator": "tests/data/make_metrics_fixtures.py", "mindspore": ms.__version__,
           "numpy": np.__version__, "prelude": PRELUDE.strip("\n"),
           "signatures": signatures(M.metrics), "cases": {}}
    for name, spec in CASES.items():
        ns = {"M": M, "nn": nn, "T": ms.Tensor, "np": np, "ms": ms}
        exec(PRELUDE, ns)
        entry = dict(spec)
        try:
            exec(spec["code"], ns)
            entry["result"] = encode(ns.get("result"))
        except Exception as exc:
            entry["error"] = {"type": type(exc).__name__, "message": str(exc)[:300]}
        out["cases"][name] = entry
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
