"""Layers: dense, convolution, normalisation, pooling, activations, embedding, RNN cells."""
from mscore.nn.layer.activation import (  # noqa: F401
    GELU, Identity, LeakyReLU, LogSoftmax, PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Tanh,
    get_activation)
from mscore.nn.layer.basic import Dense, Dropout, Flatten  # noqa: F401
from mscore.nn.layer.conv import (  # noqa: F401
    Conv1d, Conv1dTranspose, Conv2d, Conv2dTranspose, Conv3d, Conv3dTranspose)
from mscore.nn.layer.combined import Conv2dBnAct, DenseBnAct  # noqa: F401
from mscore.nn.layer.normalization import (  # noqa: F401
    BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm)
from mscore.nn.layer.embedding import Embedding  # noqa: F401
from mscore.nn.layer.pooling import AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d  # noqa: F401
from mscore.nn.layer.rnn_cells import GRUCell, LSTMCell, RNNCell  # noqa: F401

__all__ = [
    "GELU", "Identity", "LeakyReLU", "LogSoftmax", "PReLU", "ReLU", "ReLU6", "Sigmoid", "SiLU",
    "Softmax", "Tanh", "get_activation",
    "Dense", "Dropout", "Flatten",
    "Conv1d", "Conv1dTranspose", "Conv2d", "Conv2dTranspose", "Conv3d", "Conv3dTranspose",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm",
    "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d",
    "Embedding", "GRUCell", "LSTMCell", "RNNCell",
    "Conv2dBnAct", "DenseBnAct",
]
