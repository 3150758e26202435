"""What mint's optimizers share: the argument checks of PyTorch's spellings."""
from __future__ import annotations


def betas_pair(betas):
    """``(beta1, beta2)`` as floats from a pair."""
    if len(betas) != 2:
        raise ValueError(f"betas: expected two values, got {betas!r}")
    return float(betas[0]), float(betas[1])


def check_unsupported(amsgrad, maximize, name):
    """``NotImplementedError`` for the PyTorch options mscore's optimizers lack."""
    if amsgrad or maximize:
        raise NotImplementedError(f"{name}: amsgrad and maximize are not supported")
