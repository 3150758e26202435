"""``ops.multinomial`` and ``mint.multinomial`` (one implementation: mint delegates to ops):
the argument error recorded from MindSpore (``tests/data/multinomial_oracle.json``, made by
``tests/data/make_multinomial_oracle.py``) and the draws' distribution."""
import numpy as np
import pytest
from _oracle import load

import mscore as ms
from mscore import mint, ops

ORACLE = load("multinomial_oracle.json")["too_many_samples"]


@pytest.mark.parametrize("draw", [ops.multinomial, mint.multinomial], ids=["ops", "mint"])
def test_more_samples_than_categories_without_replacement_is_mindspores_error(draw):
    probs = ms.Tensor(np.array(ORACLE["probs"], np.float32))
    with pytest.raises(ValueError) as info:
        draw(probs, ORACLE["num_samples"], ORACLE["replacement"])
    assert type(info.value).__name__ == ORACLE["error"]["type"]
    assert str(info.value) == ORACLE["error"]["message"]


def test_mint_draws_what_ops_draws_without_replacement():
    probs = ms.Tensor(np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]], np.float32))
    ms.set_seed(3)
    from_ops = ops.multinomial(probs, 3, False).asnumpy()
    ms.set_seed(3)
    from_mint = mint.multinomial(probs, 3).asnumpy()
    np.testing.assert_array_equal(from_mint, from_ops)
    assert from_mint.dtype == np.int64
    for row in from_mint:
        assert len(set(row.tolist())) == 3


def test_draws_with_replacement_follow_the_probabilities():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    ms.set_seed(7)
    draws = mint.multinomial(ms.Tensor(p[None].astype(np.float32)), 20000, True).asnumpy()
    freq = np.bincount(draws.ravel(), minlength=4) / draws.size
    # 4 standard errors of a binomial proportion with n = 20000
    np.testing.assert_allclose(freq, p, atol=4 * np.sqrt(0.25 / 20000))
