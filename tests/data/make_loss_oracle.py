"""Record MindSpore 2.10's loss values, gradients and argument errors into
``loss_oracle.json``.

Run with the real MindSpore (never imported by mscore or its tests)::

    /tmp/ms/bin/python tests/data/make_loss_oracle.py

Each case is a snippet that sets ``result``; it runs with ``ms`` (mindspore), ``nn``, ``ops``,
``T`` (Tensor), ``np`` and the helpers of ``PRELUDE`` bound. The JSON holds the snippet and
what it produced (values, or the exception type and message); ``tests/test_nn_loss_oracle.py``
runs the same snippet with mscore bound to those names and compares. Inputs come from closed
formulas (no random stream). ``differs`` marks cases where MindSpore's CPU build has no
kernel (its result is an error) or where mscore deliberately differs (docs/differences.md);
the test checks those against independent numpy references instead.
"""
import json
import math
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "loss_oracle.json")

PRELUDE = '''
def arr(shape, seed, scale=1.0, shift=0.0, dtype=np.float32):
    n = int(np.prod(shape)) if shape else 1
    return (np.sin(np.arange(n) * 1.7 + seed) * scale + shift).reshape(shape).astype(dtype)

def signs(shape, seed):
    return np.where(np.cos(np.arange(int(np.prod(shape))) * 2.3 + seed) > 0, 1.0, -1.0
                    ).reshape(shape).astype(np.float32)

def probs(shape, seed):
    e = np.exp(arr(shape, seed, 2.0))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

def vg(cell, *inputs, pos=0):
    """[cell(*inputs), d sum(cell(*inputs)) / d inputs[pos]] as arrays."""
    value = cell(*inputs)
    fn = lambda *a: cell(*a).sum()
    grads = ms.value_and_grad(fn, grad_position=pos)(*inputs)[1]
    if isinstance(grads, tuple):
        return [value.asnumpy()] + [g.asnumpy() for g in grads]
    return [value.asnumpy(), grads.asnumpy()]

x34, y34 = T(arr((3, 4), 1)), T(arr((3, 4), 2))
cls3 = T(np.array([1, 3, 0], np.int32))
'''

CASES = {}
CPU_MISSING = "MindSpore 2.10's CPU build has no kernel for this op: checked against numpy"
INT_LABELS = ("MindSpore accepts one integer dtype for class indices here; mscore takes int32 and "
              "int64 (numpy's default): checked against numpy")
ZERO_INF = ("MindSpore 2.10 on CPU returns inf with zero_infinity=True; mscore zeroes it, as the "
            "documentation says: checked against numpy")


def case(name, code, differs=None):
    """``differs``: why the mscore result is checked against numpy instead."""
    CASES[name] = {"code": code.strip("\n"), "differs": differs}


# -- LossBase and the elementwise losses ----------------------------------------------------
case("lossbase_bad_reduction", "nn.LossBase('avg')")
case("lossbase_reduction_not_str", "nn.LossBase(1)")
case("lossbase_get_loss_weights", """
class Scaled(nn.LossBase):
    def construct(self, logits, labels):
        return self.get_loss(ops.abs(logits - labels), T(np.array([1.0, 2.0, 0.5, 1.0], np.float32)))
result = [Scaled()(x34, y34).asnumpy(), Scaled('sum')(x34, y34).asnumpy(), Scaled('none')(x34, y34).asnumpy()]
""")
case("lossbase_get_loss_float16", """
class Half(nn.LossBase):
    def construct(self, logits, labels):
        return self.get_loss(logits - labels)
out = Half()(T(arr((3, 4), 1), ms.float16), T(arr((3, 4), 2), ms.float16))
result = [str(out.dtype).lower(), out.asnumpy().astype(np.float32)]
""")
case("lossbase_subclass_sets_primitives", """
class MyMAE(nn.LossBase):
    def __init__(self, reduction="mean"):
        super().__init__(reduction)
        self.abs = ops.Abs()
        self.mul = ops.Mul()
        self.reduce_mean = ops.ReduceMean()
    def construct(self, base, target):
        x = self.abs(base - target)
        return self.get_loss(self.mul(x, 2.0))
result = [MyMAE()(x34, y34).asnumpy(), MyMAE('none')(x34, y34).asnumpy(),
          nn.LossBase().reduce_mean(x34, (0, 1)).asnumpy()]""")
case("mse_mean_grad", "result = vg(nn.MSELoss(), x34, y34)")
case("mse_broadcast", "result = nn.MSELoss('none')(T(arr((3, 1), 1)), T(arr((4,), 2))).asnumpy()")
case("l1_none_grad", "result = vg(nn.L1Loss('none'), x34, y34)")
case("l1_broadcast", "result = nn.L1Loss('sum')(T(arr((3, 1), 1)), T(arr((4,), 2))).asnumpy()")
case("mae_mean_grad", "result = vg(nn.MAELoss(), x34, y34)")
case("mae_sum", "result = nn.MAELoss('sum')(x34, y34).asnumpy()")
case("mae_not_tensor", "nn.MAELoss()(1.0, y34)")
case("rmse_grad", "result = vg(nn.RMSELoss(), x34, y34)")
case("rmse_no_args", "nn.RMSELoss('sum')")

# -- Huber, SmoothL1, Gaussian and Poisson NLL -----------------------------------------------
case("huber_mean_grad", "result = vg(nn.HuberLoss(delta=0.5), x34, y34)")
case("huber_sum_delta_int", "result = vg(nn.HuberLoss('sum', 2), T(arr((3, 4), 1, 3.0)), y34)")
case("huber_none", "result = nn.HuberLoss('none', 0.7)(x34, y34).asnumpy()")
case("huber_delta_zero", "nn.HuberLoss(delta=0.0)(x34, y34)")
case("huber_delta_str", "nn.HuberLoss(delta='1')(x34, y34)")
case("huber_bad_reduction", "nn.HuberLoss('avg')")
case("smoothl1_default_grad", "result = vg(nn.SmoothL1Loss(beta=0.5), x34, y34)")
case("smoothl1_mean", "result = nn.SmoothL1Loss(0.7, 'mean')(x34, y34).asnumpy()")
case("smoothl1_sum", "result = nn.SmoothL1Loss(reduction='sum')(x34, y34).asnumpy()")
case("smoothl1_beta_int", "result = nn.SmoothL1Loss(beta=1)(x34, y34).asnumpy()")
case("smoothl1_beta_zero", "result = nn.SmoothL1Loss(beta=0.0)(x34, y34).asnumpy()")
case("smoothl1_shape_mismatch", "result = nn.SmoothL1Loss()(x34, T(arr((4,), 2))).asnumpy()")
case("gaussian_mean_grad", "result = vg(nn.GaussianNLLLoss(), x34, y34, T(arr((3, 4), 3, 0.5, 1.0)))")
case("gaussian_var_grad", """
result = vg(nn.GaussianNLLLoss(full=True, reduction='sum'), x34, y34,
            T(arr((3, 4), 3, 0.5, 1.0)), pos=2)""")
case("gaussian_var_last_axis", """
result = nn.GaussianNLLLoss(reduction='none')(x34, y34, T(arr((3,), 4, 0.3, 0.8))).asnumpy()""")
case("gaussian_var_clamped", """
result = nn.GaussianNLLLoss(eps=0.1)(x34, y34, T(arr((3, 4), 4, 0.2, 0.1))).asnumpy()""")
case("gaussian_eps_zero", "nn.GaussianNLLLoss(eps=0.0)")
case("gaussian_full_int", "nn.GaussianNLLLoss(full=1)")
case("gaussian_positional", "nn.GaussianNLLLoss(False)")
case("gaussian_bad_reduction", "nn.GaussianNLLLoss(reduction='avg')")
case("poisson_log_input_grad", "result = vg(nn.PoissonNLLLoss(), x34, T(arr((3, 4), 2, 2.0, 2.0)))")
case("poisson_full_grad", """
result = vg(nn.PoissonNLLLoss(log_input=False, full=True, reduction='sum'),
            T(arr((3, 4), 1, 0.4, 1.0)), T(arr((3, 4), 2, 2.0, 2.0)))""")
case("poisson_none", "result = nn.PoissonNLLLoss(reduction='none')(x34, y34).asnumpy()")

# -- margin and embedding losses ----------------------------------------------------------
case("hinge_embedding_grad", "result = vg(nn.HingeEmbeddingLoss(0.5), x34, T(signs((3, 4), 1)))")
case("hinge_embedding_sum_int_margin", """
result = nn.HingeEmbeddingLoss(2, 'sum')(x34, T(signs((3, 4), 2))).asnumpy()""")
case("hinge_embedding_none", "result = nn.HingeEmbeddingLoss(reduction='none')(x34, T(signs((3, 4), 3))).asnumpy()")
case("hinge_embedding_bad_margin", "nn.HingeEmbeddingLoss('1')")
case("hinge_embedding_bad_reduction", "nn.HingeEmbeddingLoss(reduction='avg')")
case("hinge_embedding_int_inputs", "nn.HingeEmbeddingLoss()(T(np.ones((2, 2), np.int32)), T(np.ones((2, 2), np.float32)))")
case("margin_ranking_grad", """
result = vg(nn.MarginRankingLoss(0.1), x34, y34, T(signs((3, 4), 1)))""")
case("margin_ranking_grad_second", """
result = vg(nn.MarginRankingLoss(reduction='sum'), x34, y34, T(signs((3, 4), 1)), pos=1)""")
case("margin_ranking_int_margin", "nn.MarginRankingLoss(1)(x34, y34, T(signs((3, 4), 1)))")
case("margin_ranking_dtype_mismatch", "nn.MarginRankingLoss()(x34, T(arr((3, 4), 2), ms.float16), T(signs((3, 4), 1)))")
case("cosine_embedding_grad", """
result = vg(nn.CosineEmbeddingLoss(0.2), x34, y34, T(np.array([1, -1, -1], np.int32)))""")
case("cosine_embedding_none", """
result = nn.CosineEmbeddingLoss(reduction='none')(x34, y34, T(np.array([1, -1, 1], np.int32))).asnumpy()""")
case("cosine_embedding_margin_range", "nn.CosineEmbeddingLoss(1.5)")
case("cosine_embedding_margin_int", "nn.CosineEmbeddingLoss(0)")
case("soft_margin_grad", "result = vg(nn.SoftMarginLoss(), x34, T(signs((3, 4), 1)))", CPU_MISSING)
case("multilabel_soft_margin_grad", """
result = vg(nn.MultiLabelSoftMarginLoss(weight=T(np.array([1.0, 0.5, 2.0, 1.0], np.float32))),
            x34, T((signs((3, 4), 1) > 0).astype(np.float32)))""")
case("multilabel_soft_margin_none", """
result = nn.MultiLabelSoftMarginLoss(reduction='none')(x34, T((signs((3, 4), 2) > 0).astype(np.float32))).asnumpy()""")
case("multi_margin_grad", "result = vg(nn.MultiMarginLoss(), x34, T(np.array([1, 3, 0], np.int64)))")
case("multi_margin_p2_weight", """
result = vg(nn.MultiMarginLoss(p=2, margin=0.5, reduction='sum',
                               weight=T(np.array([1.0, 2.0, 0.5, 1.5], np.float32))),
            x34, T(np.array([1, 3, 0], np.int64)))""")
case("multi_margin_call_weight", """
result = nn.MultiMarginLoss(reduction='none')(x34, T(np.array([2, 0, 1], np.int64)),
                                              T(np.array([1.0, 2.0, 0.5, 1.5], np.float32))).asnumpy()""")
case("multi_margin_int32_target", "result = nn.MultiMarginLoss()(x34, cls3).asnumpy()", INT_LABELS)
case("multi_margin_p3", "nn.MultiMarginLoss(p=3)")
case("multi_margin_margin_int", "nn.MultiMarginLoss(margin=1)")
case("multilabel_margin_grad", """
result = vg(nn.MultilabelMarginLoss(), x34, T(np.array([[1, 2, -1, 0], [0, -1, 1, 1], [3, 2, 1, 0]], np.int32)))""",
     CPU_MISSING)
case("triplet_margin_grad", """
result = vg(nn.TripletMarginLoss(), x34, y34, T(arr((3, 4), 3)))""", CPU_MISSING)
case("triplet_distance_default_grad", """
result = vg(nn.TripletMarginWithDistanceLoss(), x34, y34, T(arr((3, 4), 3)))""")
case("triplet_distance_swap_sum", """
result = nn.TripletMarginWithDistanceLoss(swap=True, reduction='sum', margin=0.5)(x34, y34, T(arr((3, 4), 3))).asnumpy()""")
case("triplet_distance_custom", """
dist = lambda a, b: ops.abs(a - b).sum(axis=1)
result = vg(nn.TripletMarginWithDistanceLoss(distance_function=dist, reduction='none'), x34, y34, T(arr((3, 4), 3)))""")
case("triplet_distance_int_margin", "nn.TripletMarginWithDistanceLoss(margin=1)")

# -- classification ---------------------------------------------------------------------------
case("bce_weight_grad", """
result = vg(nn.BCELoss(weight=T(arr((3, 4), 5, 0.5, 1.0))), T(arr((3, 4), 1, 0.45, 0.5)),
            T((signs((3, 4), 1) > 0).astype(np.float32)))""")
case("bce_none_soft_labels", """
result = nn.BCELoss(reduction='none')(T(arr((3, 4), 1, 0.45, 0.5)), T(arr((3, 4), 2, 0.5, 0.5))).asnumpy()""")
case("bce_extremes", """
result = nn.BCELoss(reduction='none')(T(np.array([0.0, 1.0, 0.0, 1.0], np.float32)),
                                      T(np.array([1.0, 0.0, 0.0, 1.0], np.float32))).asnumpy()""")
case("bce_bad_reduction", "nn.BCELoss(reduction='avg')")
case("kldiv_mean_grad", "result = vg(nn.KLDivLoss(), T(np.log(probs((3, 4), 1))), T(probs((3, 4), 2)))")
case("kldiv_batchmean", "result = nn.KLDivLoss('batchmean')(T(np.log(probs((3, 4), 1))), T(probs((3, 4), 2))).asnumpy()")
case("kldiv_sum_zero_labels", """
lab = probs((3, 4), 2); lab[0, 1] = 0.0
result = vg(nn.KLDivLoss('sum'), T(np.log(probs((3, 4), 1))), T(lab))""")
case("kldiv_none", "result = nn.KLDivLoss('none')(T(np.log(probs((3, 4), 1))), T(probs((3, 4), 2))).asnumpy()")
case("kldiv_bad_reduction", "nn.KLDivLoss('avg')(T(np.log(probs((3, 4), 1))), T(probs((3, 4), 2)))")
case("nll_weight_ignore_grad", """
w = T(np.array([1.0, 0.5, 2.0, 1.5], np.float32))
result = vg(nn.NLLLoss(weight=w, ignore_index=3), T(np.log(probs((3, 4), 1))), cls3)""")
case("nll_sum", "result = nn.NLLLoss(reduction='sum')(T(np.log(probs((3, 4), 1))), cls3).asnumpy()")
case("nll_none_4d", """
lp = np.log(probs((2, 3, 2, 2), 1))
result = nn.NLLLoss(reduction='none')(T(lp), T(np.array([[[0, 1], [2, 0]], [[1, 1], [2, 2]]], np.int32))).asnumpy()""")
case("nll_mean_3d_grad", """
lp = np.log(probs((2, 3, 4), 1))
result = vg(nn.NLLLoss(), T(lp), T(np.array([[0, 1, 2, 0], [1, 1, 2, 2]], np.int32)))""")
case("nll_weight_float64", "nn.NLLLoss(weight=T(np.ones(4)))")
case("nll_ignore_index_float", "nn.NLLLoss(ignore_index=1.0)")
case("ce_indices_weight_smoothing_grad", """
w = T(np.array([1.0, 0.5, 2.0, 1.5], np.float32))
result = vg(nn.CrossEntropyLoss(weight=w, label_smoothing=0.1), x34, cls3)""")
case("ce_probabilities_grad", "result = vg(nn.CrossEntropyLoss(), x34, T(probs((3, 4), 2)))")
case("ce_ignore_none", "result = nn.CrossEntropyLoss(ignore_index=1, reduction='none')(x34, cls3).asnumpy()")
case("ce_int64_labels", "result = nn.CrossEntropyLoss()(x34, T(np.array([1, 3, 0], np.int64))).asnumpy()",
     INT_LABELS)
case("ce_smoothing_int", "nn.CrossEntropyLoss(label_smoothing=0)")
case("ce_rank_mismatch", "nn.CrossEntropyLoss()(x34, T(np.zeros((3, 4, 1), np.int32)))")
case("sce_sparse_mean_grad", "result = vg(nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean'), x34, cls3)")
case("sce_dense_none_grad", "result = vg(nn.SoftmaxCrossEntropyWithLogits(), x34, T(probs((3, 4), 2)))")
case("sce_sparse_sum", "result = nn.SoftmaxCrossEntropyWithLogits(True, 'sum')(x34, cls3).asnumpy()")
case("bce_logits_weights_grad", """
result = vg(nn.BCEWithLogitsLoss(weight=T(arr((4,), 5, 0.5, 1.0)), pos_weight=T(arr((4,), 6, 0.5, 1.5))),
            x34, T((signs((3, 4), 1) > 0).astype(np.float32)))""")
case("bce_logits_parameter_weight", "nn.BCEWithLogitsLoss(weight=ms.Parameter(T(np.ones(4, np.float32)), name='w'))")
case("focal_index_labels_grad", """
result = vg(nn.FocalLoss(gamma=1.5), x34, T(np.array([[1], [3], [0]], np.int32)))""")
case("focal_onehot_weight_grad", """
result = vg(nn.FocalLoss(weight=T(np.array([1.0, 2.0, 0.5, 1.0], np.float32)), reduction='sum'),
            x34, T(np.eye(4, dtype=np.float32)[[1, 3, 0]]))""")
case("focal_4d", """
result = nn.FocalLoss(reduction='none')(T(arr((2, 3, 2, 2), 1)),
                                        T(np.array([[[[0, 1], [2, 0]]], [[[1, 1], [2, 2]]]], np.int32))).asnumpy()""")
case("focal_gamma_int", "nn.FocalLoss(gamma=2)")
case("focal_weight_2d", "nn.FocalLoss(weight=T(np.ones((2, 2), np.float32)))")
case("focal_channel_one", "nn.FocalLoss()(T(arr((3, 1), 1)), T(np.zeros((3, 1), np.int32)))")
case("dice_grad", "result = vg(nn.DiceLoss(), T(arr((3, 4), 1, 0.4, 0.5)), T((signs((3, 4), 1) > 0).astype(np.float32)))")
case("dice_smooth_int", "nn.DiceLoss(smooth=1)")
case("dice_shape_mismatch", "nn.DiceLoss()(x34, T(arr((4, 3), 1)))")
case("multiclass_dice_grad", """
result = vg(nn.MultiClassDiceLoss(), x34, T(np.eye(4, dtype=np.float32)[[1, 3, 0]]))""")
case("multiclass_dice_sigmoid_ignore", """
result = nn.MultiClassDiceLoss(ignore_indiex=1, activation='sigmoid')(x34, T(np.eye(4, dtype=np.float32)[[1, 3, 0]])).asnumpy()""")
case("multiclass_dice_no_activation", """
result = nn.MultiClassDiceLoss(activation=None)(T(probs((3, 4), 1)), T(np.eye(4, dtype=np.float32)[[1, 3, 0]])).asnumpy()""")
case("multiclass_dice_bad_activation", "nn.MultiClassDiceLoss(activation='gelu')")

# -- CTC and sampled softmax -------------------------------------------------------------------
case("ctc_mean_grad_through_log_softmax", """
logits = T(arr((6, 2, 5), 1, 2.0))
targets = T(np.array([[1, 2, 2], [3, 4, 0]], np.int32))
il, tl = T(np.array([6, 5], np.int32)), T(np.array([3, 2], np.int32))
loss = nn.CTCLoss()
fn = lambda z: loss(ops.log_softmax(z, 2), targets, il, tl)
result = [fn(logits).asnumpy(), ms.value_and_grad(fn)(logits)[1].asnumpy()]""")
case("ctc_none_sum", """
lp = ops.log_softmax(T(arr((6, 2, 5), 1, 2.0)), 2)
targets = T(np.array([[1, 2, 2], [3, 4, 0]], np.int32))
il, tl = T(np.array([6, 5], np.int32)), T(np.array([3, 2], np.int32))
result = [nn.CTCLoss(reduction='none')(lp, targets, il, tl).asnumpy(),
          nn.CTCLoss(reduction='sum')(lp, targets, il, tl).asnumpy()]""")
case("ctc_blank_last_and_empty_target", """
lp = ops.log_softmax(T(arr((5, 2, 4), 2, 2.0)), 2)
targets = T(np.array([[0, 1, 2], [2, 2, 2]], np.int32))
result = nn.CTCLoss(blank=3, reduction='none')(lp, targets, T(np.array([5, 4], np.int32)), T(np.array([3, 0], np.int32))).asnumpy()""")
case("ctc_impossible", """
lp = ops.log_softmax(T(arr((3, 2, 4), 3, 2.0)), 2)
targets = T(np.array([[1, 1, 1], [1, 2, 0]], np.int32))
args = (lp, targets, T(np.array([3, 3], np.int32)), T(np.array([3, 2], np.int32)))
result = nn.CTCLoss(reduction='none')(*args).asnumpy()""")
case("ctc_zero_infinity", """
lp = ops.log_softmax(T(arr((3, 2, 4), 3, 2.0)), 2)
targets = T(np.array([[1, 1, 1], [1, 2, 0]], np.int32))
args = (lp, targets, T(np.array([3, 3], np.int32)), T(np.array([3, 2], np.int32)))
result = nn.CTCLoss(reduction='none', zero_infinity=True)(*args).asnumpy()""", ZERO_INF)
case("ctc_unbatched", """
lp = ops.log_softmax(T(arr((5, 4), 4, 2.0)), 1)
result = nn.CTCLoss()(lp, T(np.array([1, 2], np.int32)), T(np.array([5], np.int32)), T(np.array([2], np.int32))).asnumpy()""")
case("ctc_ops_log_alpha", """
lp = ops.log_softmax(T(arr((4, 1, 3), 5, 2.0)), 2)
loss, alpha = ops.ctc_loss(lp, T(np.array([[1, 2]], np.int32)), T(np.array([4], np.int32)), T(np.array([2], np.int32)), reduction='none')
result = [loss.asnumpy(), alpha.asnumpy()]""")
case("ctc_bad_reduction", """
lp = ops.log_softmax(T(arr((4, 1, 3), 5, 2.0)), 2)
nn.CTCLoss(reduction='avg')(lp, T(np.array([[1, 2]], np.int32)), T(np.array([4], np.int32)), T(np.array([2], np.int32)))""")
case("sampled_softmax_given_values_grad", """
sampled = (T(np.array([0, 4, 6], np.int32)), T(np.full((3, 1), 0.4, np.float32)), T(np.array([0.4, 0.5, 0.3], np.float32)))
loss = nn.SampledSoftmaxLoss(3, 7, sampled_values=sampled)
w, b = T(arr((7, 4), 1)), T(arr((7,), 2))
labels, logits = T(np.array([[1], [3], [5]], np.int32)), T(arr((3, 4), 3))
result = vg(loss, w, b, labels, logits, pos=3) + [vg(loss, w, b, labels, logits, pos=0)[1]]""")
case("sampled_softmax_num_true_2", """
sampled = (T(np.array([0, 4], np.int32)), T(np.full((2, 2), 0.3, np.float32)), T(np.array([0.25, 0.5], np.float32)))
loss = nn.SampledSoftmaxLoss(2, 7, num_true=2, sampled_values=sampled)
result = loss(T(arr((7, 3), 1)), T(arr((7,), 2)), T(np.array([[1, 2], [3, 5]], np.int64)), T(arr((2, 3), 3))).asnumpy()""")
case("sampled_softmax_too_many", "nn.SampledSoftmaxLoss(8, 7)")
case("sampled_softmax_num_true_zero", "nn.SampledSoftmaxLoss(2, 7, num_true=0)")
case("sampled_softmax_values_len", "nn.SampledSoftmaxLoss(2, 7, sampled_values=(1, 2))")
case("sampled_softmax_float_labels", """
nn.SampledSoftmaxLoss(2, 7)(T(arr((7, 3), 1)), T(arr((7,), 2)), T(np.ones((2, 1), np.float32)), T(arr((2, 3), 3)))""")

# -- the functional forms ----------------------------------------------------------------------
case("ops_huber_loss", "result = ops.huber_loss(x34, y34, 'sum', 0.3).asnumpy()")
case("ops_margin_ranking", "result = ops.margin_ranking_loss(x34, y34, T(signs((3, 4), 1)), 0.2, 'none').asnumpy()")
case("ops_cosine_embedding_int_margin", "result = ops.cosine_embedding_loss(x34, y34, T(np.array([1, -1, 1], np.int32)), 0).asnumpy()")
case("ops_cosine_embedding_target_shape", "ops.cosine_embedding_loss(x34, y34, T(np.array([1, -1], np.int32)))")
case("ops_hinge_embedding", "result = ops.hinge_embedding_loss(x34, T(signs((3, 4), 1)), 0.5, 'sum').asnumpy()")
case("ops_multilabel_soft_margin", "result = ops.multilabel_soft_margin_loss(x34, T((signs((3, 4), 1) > 0).astype(np.float32))).asnumpy()")
case("ops_multi_margin_int_margin", "result = ops.multi_margin_loss(x34, T(np.array([1, 3, 0], np.int64)), p=2, margin=2).asnumpy()")
case("ops_multi_margin_float_margin", "ops.multi_margin_loss(x34, T(np.array([1, 3, 0], np.int64)), margin=1.0)")
case("ops_gaussian_nll", "result = ops.gaussian_nll_loss(x34, y34, T(arr((3, 4), 3, 0.5, 1.0)), True, 1e-3, 'none').asnumpy()")
case("ops_gaussian_nll_eps_int", "ops.gaussian_nll_loss(x34, y34, T(arr((3, 4), 3, 0.5, 1.0)), eps=1)")


def encode(value):
    """JSON-able form of a result, keeping arrays apart from scalars."""
    if isinstance(value, np.ndarray):
        return {"array": _floats(value.astype(np.float64).tolist()), "shape": list(value.shape),
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


def _module_namespace(name, names):
    """A fresh module registered in ``sys.modules``: MindSpore's grad and jit look functions
    up by ``__module__`` and read their source."""
    import types
    module = types.ModuleType(name)
    module.__dict__.update(names)
    sys.modules[name] = module
    return module.__dict__


def _exec(code, ns, filename):
    """Run ``code`` so that ``inspect.getsource`` finds the functions it defines."""
    import linecache
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), ns)


def run_cases(cases, prelude, names):
    """Every case run with ``names`` bound: its result or its exception. The cases run in a
    scratch directory: MindSpore writes graph dumps (``rank_0/``) where it runs."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            return _run_cases(cases, prelude, names)
        finally:
            os.chdir(here)


def _run_cases(cases, prelude, names):
    out = {}
    for i, (name, spec) in enumerate(cases.items()):
        ns = _module_namespace(f"oracle_case_{i}", names)
        _exec(prelude, ns, f"<oracle prelude {i}>")
        entry = dict(spec)
        try:
            _exec(spec["code"], ns, f"<oracle case {name}>")
            entry["result"] = encode(ns.get("result"))
        except Exception as exc:
            entry["error"] = {"type": type(exc).__name__, "message": str(exc)[:300]}
        out[name] = entry
    return out


def main():
    import mindspore as ms
    from mindspore import nn, ops
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    names = {"ms": ms, "nn": nn, "ops": ops, "T": ms.Tensor, "np": np}
    out = {"generator": "tests/data/make_loss_oracle.py", "mindspore": ms.__version__,
           "numpy": np.__version__, "prelude": PRELUDE.strip("\n"),
           "cases": run_cases(CASES, PRELUDE, names)}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
