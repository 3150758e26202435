"""torch's deterministic mode, switched by ``mscore.set_deterministic`` (the backend's
optional ``set_deterministic`` method)."""
from __future__ import annotations

import os
import warnings

import torch

# The cuBLAS workspace setting torch's deterministic mode asks for on CUDA (one of the two
# values the CUDA documentation gives for reproducible cuBLAS results).
CUBLAS_WORKSPACE = ":4096:8"


def set_deterministic(flag):
    """Switch torch's deterministic algorithms on (``flag`` True) or off.

    On: ``torch.use_deterministic_algorithms(True)`` (an op without a deterministic kernel
    then raises ``RuntimeError`` rather than varying), cuDNN's deterministic kernels and no
    cuDNN benchmarking (which picks kernels by timing). On CUDA, cuBLAS also needs the
    ``CUBLAS_WORKSPACE_CONFIG`` environment variable before it starts: when it is unset it is
    set here to ``:4096:8``. cuBLAS reads it when it starts, so if CUDA has already run in
    this process with the variable unset, setting it now comes too late for the handles
    already made (a ``RuntimeWarning`` says so): set the variable before the process starts
    to be sure. Off: both torch switches back off (the environment variable stays)."""
    if flag and "CUBLAS_WORKSPACE_CONFIG" not in os.environ:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = CUBLAS_WORKSPACE
        if torch.cuda.is_initialized():
            warnings.warn("set_deterministic(True): CUDA had started before "
                          "CUBLAS_WORKSPACE_CONFIG was set; set it before the process starts "
                          "for deterministic cuBLAS results", RuntimeWarning, stacklevel=3)
    torch.use_deterministic_algorithms(flag)
    torch.backends.cudnn.deterministic = flag
    if flag:
        torch.backends.cudnn.benchmark = False
