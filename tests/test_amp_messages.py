"""The one check of each mixed-precision rule (amp level, boost level, loss scale) raises
MindSpore's error, whichever public API it is reached from: the exception type and message
recorded from MindSpore (``tests/data/amp_messages_oracle.json``, made by
``tests/data/make_amp_messages_oracle.py``)."""
import pytest
from _oracle import load

import mscore as ms
from mscore import amp, nn
from mscore.train import Model

ORACLE = load("amp_messages_oracle.json")


def _scope():
    net = nn.Dense(2, 2)
    return {"ms": ms, "nn": nn, "amp": amp, "Model": Model, "net": net,
            "opt": nn.Momentum(net.trainable_params(), 0.1, 0.9)}


@pytest.mark.parametrize("case", sorted(ORACLE))
def test_error_is_mindspores(case):
    spec = ORACLE[case]
    with pytest.raises(Exception) as info:
        eval(spec["code"], _scope())
    assert type(info.value).__name__ == spec["error"]["type"]
    assert str(info.value) == spec["error"]["message"]


@pytest.mark.parametrize("make", [lambda: nn.FixedLossScaleUpdateCell(0.5),
                                  lambda: nn.DynamicLossScaleUpdateCell(0.5, 2, 100),
                                  lambda: amp.DynamicLossScaleManager(0.5)])
def test_every_loss_scale_check_words_the_error_alike(make):
    with pytest.raises(ValueError, match=r"^The argument '\w+' must be >= 1, but got 0.5$"):
        make()
