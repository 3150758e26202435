"""Factories for ``mscore compare``: the network of MindSpore's *Automatic Mix Precision*
tutorial (the one ``mscore demo`` trains) and a conv net with BatchNorm.

Each returns ``(network, loss_fn, optimizer, dataset)`` built on the active backend::

    mscore compare mscore.examples.compare_nets:amp_tutorial_mlp --backends numpy,torch,jax \
        --amp O2
    mscore compare mscore.examples.compare_nets:conv_bn --backends numpy,torch --steps 50

The data are scikit-learn's handwritten digits (shipped with it, no download): 8 x 8 images scaled
to [0, 1] and normalised with MNIST's mean and deviation; ``amp_tutorial_mlp`` enlarges them to
MNIST's 28 x 28 (each pixel 3 x 3, then a 2-pixel border) so the tutorial's network runs unchanged.
"""
from __future__ import annotations

import numpy as np

from mscore import nn
from mscore.dataset import NumpySlicesDataset
from mscore.examples.amp_digits import build_network

BATCH = 64


def digits(size=8):
    """``(images (N, 1, size, size) float32, labels (N,) int32)``: sklearn's digits, in a
    fixed shuffled order; ``size`` 8 or 28."""
    from sklearn.datasets import load_digits
    d = load_digits()
    images = (d.images / 16.0).astype(np.float32)
    if size == 28:
        images = np.pad(np.kron(images, np.ones((3, 3), np.float32)), ((0, 0), (2, 2), (2, 2)))
    elif size != 8:
        raise ValueError(f"size: expected 8 or 28, got {size!r}")
    images = (images - 0.1307) / 0.3081
    order = np.random.default_rng(0).permutation(len(images))
    return images[order, None].astype(np.float32), d.target[order].astype(np.int32)


def _dataset(size):
    images, labels = digits(size)
    ds = NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)
    return ds.batch(BATCH, drop_remainder=True)


def amp_tutorial_mlp():
    """The amp tutorial's network (Flatten, Dense 784-512-512-10 with ReLU), CrossEntropyLoss,
    Momentum(0.01, 0.9), digits at 28 x 28 in batches of 64."""
    net = build_network()
    return (net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9),
            _dataset(28))


def conv_bn():
    """Conv(1->16, 3x3) BN ReLU, Conv(16->32, 3x3, stride 2) BN ReLU, Flatten, Dense(512, 10):
    CrossEntropyLoss, Momentum(0.01, 0.9), digits at 8 x 8 in batches of 64."""
    net = nn.SequentialCell(
        nn.Conv2d(1, 16, 3, pad_mode="same"), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, pad_mode="same"), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Flatten(), nn.Dense(32 * 4 * 4, 10))
    return (net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9),
            _dataset(8))
