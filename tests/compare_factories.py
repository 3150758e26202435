"""Factories for the ``mscore compare`` tests (importable as ``compare_factories``: pytest
puts tests/ on the path; subprocesses name this file)."""
import itertools

import numpy as np

BATCHES = 3
BATCH = 8
LR = 0.1

_calls = itertools.count()


def data():
    """``(x (24, 4) float32, y (24,) int32)``, fixed."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((BATCHES * BATCH, 4)).astype(np.float32)
    y = rng.integers(0, 3, BATCHES * BATCH).astype(np.int32)
    return x, y


def _dataset():
    from mscore.dataset import NumpySlicesDataset
    x, y = data()
    return NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(BATCH)


def tiny():
    """Dense(4, 3), CrossEntropyLoss, SGD(0.1): a model small enough to check by hand."""
    from mscore import nn
    net = nn.Dense(4, 3)
    return net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), LR), _dataset()


def tiny_random_init():
    """:func:`tiny` whose weights come from a generator that differs at every call (so only
    the reference's copied initial weights can make the backends agree)."""
    import mscore as ms
    from mscore import nn
    rng = np.random.default_rng(1000 + next(_calls))
    net = nn.Dense(4, 3, weight_init=ms.Tensor(rng.standard_normal((3, 4)).astype(np.float32)),
                   bias_init=ms.Tensor(rng.standard_normal(3).astype(np.float32)))
    return net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), LR), _dataset()


def tiny_model():
    """A Model at amp O2 with a fixed loss scale of 128 that drops overflowing steps."""
    from mscore import amp, nn
    from mscore.train import Model
    net = nn.Dense(4, 3)
    model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), LR),
                  amp_level="O2", loss_scale_manager=amp.FixedLossScaleManager(128.0))
    return model, _dataset()


def not_a_tuple():
    """A factory that returns the wrong thing."""
    from mscore import nn
    return nn.Dense(4, 3)
