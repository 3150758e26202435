"""``mint.nn`` convolutions, batch norms and 3-d/unpooling layers and their
``mint.nn.functional`` functions against MindSpore 2.10's recorded results
(``tests/data/mint_nn_oracle.json``, made by ``tests/data/make_mint_nn_oracle.py`` with the
real MindSpore; where its CPU build has no kernel for a mint function, the same computation
through its CPU ops), on every installed backend."""
import os
import sys

import numpy as np
import pytest
from _helpers import each_backend
from _oracle import compare, load

import mscore as ms
from mscore import mint

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "data"))
from mint_nn_cases import CASES, inputs  # noqa: E402

ORACLE = load("mint_nn_oracle.json")["cases"]


backend = each_backend()


def test_every_case_was_recorded():
    assert sorted(ORACLE) == sorted(c[0] for c in CASES)
    assert not [k for k, v in ORACLE.items() if v["kind"] == "error"]


@pytest.mark.parametrize("name,expr", [c[:2] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_mindspore(backend, name, expr):
    scope = dict(inputs(ms), ms=ms, mint=mint, F=mint.nn.functional, np=np)
    compare(eval(expr, scope), ORACLE[name], name, rtol=1e-5, atol=1e-5)


def test_conv_transpose2d_output_padding_keeps_the_end_of_the_full_output():
    # mint's (PyTorch's) rule: ``padding`` crops the full output at both ends and
    # ``output_padding`` gives back that much at the end (the full output is checked
    # against MindSpore in F.conv_transpose2d_full)
    scope = inputs(ms)
    x, w, b = scope["x4"], scope["wt"], scope["b3"]
    full = mint.nn.functional.conv_transpose2d(x, w, b, stride=2).asnumpy()
    out = mint.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1,
                                              output_padding=1).asnumpy()
    np.testing.assert_allclose(out, full[:, :, 1:, 1:], rtol=1e-6, atol=1e-6)


def test_batch_norm_counts_batches_and_uses_running_statistics_in_eval():
    bn = mint.nn.BatchNorm2d(2, momentum=0.5)
    bn.set_train(True)
    x = np.random.RandomState(0).standard_normal((4, 2, 3, 3)).astype(np.float32)
    bn(ms.Tensor(x))
    assert int(bn.num_batches_tracked.asnumpy()) == 1
    mean = 0.5 * x.mean(axis=(0, 2, 3))
    np.testing.assert_allclose(bn.running_mean.asnumpy(), mean, rtol=1e-5, atol=1e-6)
    bn.set_train(False)
    var = bn.running_var.asnumpy()
    want = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(bn(ms.Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)
    assert int(bn.num_batches_tracked.asnumpy()) == 1


def test_conv1d_gradient_matches_finite_differences():
    rng = np.random.RandomState(3)
    x = ms.Tensor(rng.standard_normal((1, 2, 6)))
    w = rng.standard_normal((3, 2, 3))

    def loss(weight):
        return (mint.nn.functional.conv1d(x, weight, padding=1) ** 2).sum()

    grad = ms.grad(loss)(ms.Tensor(w)).asnumpy()
    eps, numeric = 1e-6, np.zeros_like(w)
    for i in np.ndindex(w.shape):
        hi, lo = w.copy(), w.copy()
        hi[i] += eps
        lo[i] -= eps
        numeric[i] = (float(loss(ms.Tensor(hi)).asnumpy()) -
                      float(loss(ms.Tensor(lo)).asnumpy())) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make,rank", [(lambda: mint.nn.BatchNorm3d(2), 4),
                                       (lambda: mint.nn.BatchNorm2d(2), 3)])
def test_batch_norm_rejects_the_wrong_rank(make, rank):
    with pytest.raises(ValueError, match="-d input"):
        make()(ms.Tensor(np.zeros((2,) * rank, np.float32)))


def test_conv_rejects_unsupported_padding_mode_and_groups():
    with pytest.raises(NotImplementedError, match="padding_mode"):
        mint.nn.Conv1d(2, 2, 3, padding_mode="circular")
    with pytest.raises(ValueError, match="groups"):
        mint.nn.Conv3d(3, 2, 2, groups=2)


def test_batch_norm_without_running_statistics_normalises_by_the_batch_in_eval():
    bn = mint.nn.BatchNorm1d(3, track_running_stats=False)
    bn.set_train(False)
    x = np.random.RandomState(1).standard_normal((5, 3)).astype(np.float32)
    want = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(bn(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert [p.name for p in bn.get_parameters()] == ["weight", "bias"]
