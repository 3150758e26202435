"""``DimReduce``: MindSpore's second-order training in a PCA subspace of the weights.

Not implemented in mscore. MindSpore's algorithm needs a PCA matrix computed from a
directory of checkpoints saved by an earlier run (``weight_load_dir``/``pca_mat_path``),
split across the ranks of a job and exchanged by per-rank broadcasts, and a line search
that reruns the network inside the step; MindSpore documents it for Ascend only. The class
and the ``dim_reduce`` switch of :class:`~mscore.boost.AutoBoost` keep MindSpore's names and
its checks of the PCA source, then raise ``NotImplementedError`` naming this module.
"""
from __future__ import annotations

import os

from mscore.nn.cell import Cell

__all__ = ["DimReduce"]

_WHY = ("dim_reduce (MindSpore's DimReduce: quasi-Newton steps in a PCA subspace of saved "
        "checkpoints, Ascend only) is not implemented in mscore; see mscore/boost/dim_reduce.py")


def prepare_dim_reduce(auto_boost, network, optimizer):
    """AutoBoost's ``dim_reduce`` path: MindSpore's checks of the PCA source, then
    ``NotImplementedError``."""
    path = auto_boost.pca_mat_path
    if not (path is not None and os.path.isfile(path) and path.endswith(".npy")):
        folder = auto_boost.weight_load_dir
        if folder is None or not os.path.isdir(folder):
            raise ValueError(f"The weight_load_dir: {folder} is None / not exists / not "
                             f"directory.")
    raise NotImplementedError(_WHY)


class DimReduce(Cell):
    r"""MindSpore's dimension-reduction training cell (``DimReduce(network, optimizer,
    weight, pca_mat_local, n_components, rho, gamma, alpha, sigma, rank, rank_size)``): not
    implemented in mscore, constructing it raises ``NotImplementedError``."""

    def __init__(self, network, optimizer, weight, pca_mat_local, n_components, rho, gamma,
                 alpha, sigma, rank, rank_size):
        super().__init__()
        raise NotImplementedError(_WHY)
