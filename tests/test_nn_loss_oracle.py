"""Every loss of ``mscore.nn`` against MindSpore 2.10's recorded values, gradients and
argument errors, on every backend; gradients also against finite differences.

``tests/data/loss_oracle.json`` was made by ``tests/data/make_loss_oracle.py`` with the real
MindSpore (``/tmp/ms/bin/python tests/data/make_loss_oracle.py``): each case is a snippet and
the value (or exception type) it gave; here the same snippet runs with mscore's names bound.
Cases marked ``differs`` (no CPU kernel in MindSpore, or a deliberate difference) are checked
one by one against numpy below. numpy runs every case; torch a fixed subset and jax a smaller
one by default (jax dispatches each eager op through XLA); every case with
MSCORE_SLOW_TESTS=1.
"""
import os

import numpy as np
import pytest
from _helpers import available_backends, central_differences, numpy_context_each_test, use_backend
from _oracle import check_case, load, run

import mscore as ms
from mscore import nn, ops

ORACLE = load("loss_oracle.json")
CASES = ORACLE["cases"]
NAMES = {"ms": ms, "nn": nn, "ops": ops, "T": ms.Tensor, "np": np}
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"
SAME = sorted(name for name, spec in CASES.items() if not spec["differs"])


_numpy_context = numpy_context_each_test()


@pytest.mark.parametrize("name", SAME)
def test_same_as_mindspore(name):
    check_case(ORACLE, name, NAMES)


# jax compiles every eager op on first use: a few cheap cases by default
JAX_SUBSET = ["kldiv_mean_grad", "huber_none"]


def _subset(backend):
    if SLOW:
        return SAME
    if backend == "jax":
        return JAX_SUBSET
    return SAME[::4] + [n for n in JAX_SUBSET if n not in SAME[::4]]


@pytest.mark.parametrize("backend", available_backends(exclude=("numpy",)))
def test_same_as_mindspore_on_other_backends(backend):
    use_backend(backend)
    for name in _subset(backend):
        check_case(ORACLE, name, NAMES)


# -- the cases MindSpore's CPU build cannot run, or where mscore differs on purpose ----------
def _case_namespace(name):
    """The case's snippet run with mscore (its ``result``), and the prelude's helpers."""
    return run(ORACLE, CASES[name]["code"], NAMES)


def _arr(shape, seed, scale=1.0, shift=0.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.7 + seed) * scale + shift).reshape(shape).astype(np.float32)


def _signs(shape, seed):
    return np.where(np.cos(np.arange(int(np.prod(shape))) * 2.3 + seed) > 0, 1.0, -1.0
                    ).reshape(shape).astype(np.float32)


X34, Y34 = _arr((3, 4), 1).astype(np.float64), _arr((3, 4), 2).astype(np.float64)


def test_soft_margin_loss_matches_numpy():
    value, grad = _case_namespace("soft_margin_grad")["result"]
    y = _signs((3, 4), 1)
    z = -y * X34
    np.testing.assert_allclose(value, np.mean(np.log1p(np.exp(z))), rtol=1e-5)
    np.testing.assert_allclose(grad, -y / (1 + np.exp(-z)) / 12, rtol=1e-5, atol=1e-7)


def _multilabel_margin(x, target):
    loss = np.zeros(len(x))
    for n, (row, tgt) in enumerate(zip(x, target)):
        listed = []
        for t in tgt:
            if t < 0:
                break
            listed.append(t)
        others = [i for i in range(len(row)) if i not in listed]
        loss[n] = sum(max(0.0, 1 - (row[j] - row[i])) for j in listed for i in others)
    return loss / x.shape[1]


def test_multilabel_margin_loss_matches_numpy():
    target = np.array([[1, 2, -1, 0], [0, -1, 1, 1], [3, 2, 1, 0]])
    value, grad = _case_namespace("multilabel_margin_grad")["result"]
    np.testing.assert_allclose(value, _multilabel_margin(X34, target).mean(), rtol=1e-5)
    np.testing.assert_allclose(grad, central_differences(
        lambda x: _multilabel_margin(x, target).mean(), X34), rtol=1e-4, atol=1e-5)


def _triplet(a, p, n, margin=1.0, eps=1e-6, swap=False):
    d = lambda u, v: np.sqrt(np.sum((u - v + eps) ** 2, -1))  # noqa: E731
    dn = d(a, n) if not swap else np.minimum(d(a, n), d(p, n))
    return np.maximum(d(a, p) - dn + margin, 0.0)


def test_triplet_margin_loss_matches_numpy():
    neg = _arr((3, 4), 3).astype(np.float64)
    value, grad = _case_namespace("triplet_margin_grad")["result"]
    np.testing.assert_allclose(value, _triplet(X34, Y34, neg).mean(), rtol=1e-5)
    np.testing.assert_allclose(
        grad, central_differences(lambda a: _triplet(a, Y34, neg).mean(), X34),
        rtol=1e-4, atol=1e-5)
    swapped = nn.TripletMarginLoss(swap=True, reduction="none", margin=0.5)(
        ms.Tensor(X34), ms.Tensor(Y34), ms.Tensor(neg))
    np.testing.assert_allclose(swapped.asnumpy(), _triplet(X34, Y34, neg, 0.5, swap=True),
                               rtol=1e-10)


def test_int64_and_int32_class_indices_are_both_accepted():
    logp = X34 - np.log(np.exp(X34).sum(1, keepdims=True))
    labels = np.array([1, 3, 0])
    ce = _case_namespace("ce_int64_labels")["result"]
    np.testing.assert_allclose(ce, -logp[np.arange(3), labels].mean(), rtol=1e-5)
    hinge = np.maximum(0, 1 - X34[np.arange(3), labels][:, None] + X34)
    hinge[np.arange(3), labels] = 0
    mm = _case_namespace("multi_margin_int32_target")["result"]
    np.testing.assert_allclose(mm, (hinge.sum(1) / 4).mean(), rtol=1e-5)


def test_ctc_zero_infinity_zeroes_impossible_alignments():
    loss = _case_namespace("ctc_zero_infinity")["result"]
    # the same inputs without zero_infinity, as MindSpore recorded them
    without = CASES["ctc_impossible"]["result"]["array"]
    assert without[0] == "inf"
    assert loss[0] == 0.0
    np.testing.assert_allclose(loss[1], without[1], rtol=1e-5)


# -- gradients against central finite differences (float64, numpy backend) --------------------
def _ms_fn(loss, *rest):
    return lambda x: float(loss(ms.Tensor(x), *rest).sum().asnumpy())


def _t(a, dtype=np.float64):
    return ms.Tensor(np.asarray(a, dtype))


P = np.exp(X34 * 2) / np.exp(X34 * 2).sum(1, keepdims=True)
HOT = np.eye(4)[[1, 3, 0]]
FD_CASES = {
    "huber": lambda: (nn.HuberLoss(delta=0.5), X34, (_t(Y34),)),
    "smooth_l1": lambda: (nn.SmoothL1Loss(beta=0.5), X34, (_t(Y34),)),
    "rmse": lambda: (nn.RMSELoss(), X34, (_t(Y34),)),
    "mae": lambda: (nn.MAELoss(), X34, (_t(Y34),)),
    "gaussian_nll": lambda: (nn.GaussianNLLLoss(full=True), X34,
                             (_t(Y34), _t(_arr((3, 4), 3, 0.5, 1.0)))),
    "poisson_nll": lambda: (nn.PoissonNLLLoss(log_input=False, full=True), P + 0.1,
                            (_t(_arr((3, 4), 2, 2.0, 2.0)),)),
    "hinge_embedding": lambda: (nn.HingeEmbeddingLoss(0.5), X34, (_t(_signs((3, 4), 1)),)),
    "margin_ranking": lambda: (nn.MarginRankingLoss(0.1), X34,
                               (_t(Y34), _t(_signs((3, 4), 1)))),
    "cosine_embedding": lambda: (nn.CosineEmbeddingLoss(0.2), X34,
                                 (_t(Y34), _t([1, -1, -1], np.int32))),
    "soft_margin": lambda: (nn.SoftMarginLoss(), X34, (_t(_signs((3, 4), 2)),)),
    "multilabel_soft_margin": lambda: (nn.MultiLabelSoftMarginLoss(
        weight=_t([1.0, 0.5, 2.0, 1.0])), X34, (_t(_signs((3, 4), 1) > 0),)),
    "multi_margin": lambda: (nn.MultiMarginLoss(p=2, margin=0.5, weight=_t([1.0, 2, .5, 1.5])),
                             X34, (_t([1, 3, 0], np.int64),)),
    "triplet_distance": lambda: (nn.TripletMarginWithDistanceLoss(swap=True), X34,
                                 (_t(Y34), _t(_arr((3, 4), 3)))),
    "bce": lambda: (nn.BCELoss(weight=_t(_arr((3, 4), 5, 0.5, 1.0))), P,
                    (_t(_signs((3, 4), 1) > 0),)),
    "kl_div": lambda: (nn.KLDivLoss("batchmean"), np.log(P), (_t(np.roll(P, 1, 1)),)),
    "nll": lambda: (nn.NLLLoss(weight=_t([1.0, 0.5, 2.0, 1.5], np.float32), ignore_index=3),
                    np.log(P),
                    (_t([1, 3, 0], np.int32),)),
    "focal": lambda: (nn.FocalLoss(gamma=1.5), X34, (_t([[1], [3], [0]], np.int32),)),
    "dice": lambda: (nn.DiceLoss(), P, (_t(HOT),)),
    "multiclass_dice": lambda: (nn.MultiClassDiceLoss(), X34, (_t(HOT),)),
    "ctc": lambda: (_LogSoftmaxCTC(), _arr((6, 2, 5), 1, 2.0).astype(np.float64),
                    (_t([[1, 2, 2], [3, 4, 0]], np.int32), _t([6, 5], np.int32),
                     _t([3, 2], np.int32))),
    "sampled_softmax": lambda: (_SampledOnLogits(), X34[:, :4], ()),
}


class _LogSoftmaxCTC(nn.Cell):
    def construct(self, logits, targets, il, tl):
        return nn.CTCLoss()(ops.log_softmax(logits, 2), targets, il, tl)


class _SampledOnLogits(nn.Cell):
    def __init__(self):
        super().__init__()
        sampled = (_t([0, 4, 6], np.int32), _t(np.full((3, 1), 0.4)), _t([0.4, 0.5, 0.3]))
        self.loss = nn.SampledSoftmaxLoss(3, 7, sampled_values=sampled)

    def construct(self, logits):
        return self.loss(_t(_arr((7, 4), 1)), _t(_arr((7,), 2)), _t([[1], [3], [5]], np.int32),
                         logits)


@pytest.mark.parametrize("name", sorted(FD_CASES))
def test_gradient_matches_finite_differences(name):
    loss, x, rest = FD_CASES[name]()
    grad = ms.grad(lambda a: loss(a, *rest).sum())(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(grad, central_differences(_ms_fn(loss, *rest), x), rtol=1e-5,
                               atol=1e-7)


def test_loss_modules_and_functional_forms_are_where_mindspore_has_them():
    from mscore.nn.loss.loss import CTCLoss, MultilabelMarginLoss
    assert CTCLoss is nn.CTCLoss and MultilabelMarginLoss is nn.loss.MultilabelMarginLoss
    for fn in ("huber_loss", "margin_ranking_loss", "cosine_embedding_loss", "ctc_loss",
               "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
               "multi_margin_loss", "multilabel_margin_loss", "gaussian_nll_loss",
               "triplet_margin_loss"):
        assert callable(getattr(ops, fn)), fn


def test_sampled_softmax_sampler_draws_distinct_classes_outside_the_labels():
    ms.set_seed(3)
    loss = nn.SampledSoftmaxLoss(4, 9, seed=5)
    labels = _t([[1], [3], [5]], np.int32)
    sampled, true_count, sampled_count = loss._sample(ms.ops.reshape(labels, (-1,)))
    ids = sampled.asnumpy().tolist()
    assert len(set(ids)) == 4 and not set(ids) & {1, 3, 5} and all(0 <= i < 9 for i in ids)
    # the expected count 1 - (1 - 1/9)^tries is at least what 4 draws give
    assert float(sampled_count.asnumpy()[0]) >= 1 - (8 / 9) ** 4 - 1e-7
    assert true_count.shape == (3, 1)
    out = loss(_t(_arr((9, 4), 1)), _t(_arr((9,), 2)), labels, _t(_arr((3, 4), 3)))
    assert out.shape == (3,) and np.all(np.isfinite(out.asnumpy()))
