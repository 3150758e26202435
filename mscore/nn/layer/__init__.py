"""Layers: dense, convolution, normalisation, pooling, activations, embedding, RNN cells."""
from mscore.nn.layer.activation import (
    GELU, Identity, LeakyReLU, LogSoftmax, PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Tanh,
    get_activation)
from mscore.nn.layer.basic import Dense, Dropout, Flatten
from mscore.nn.layer.conv import (
    Conv1d, Conv1dTranspose, Conv2d, Conv2dTranspose, Conv3d, Conv3dTranspose)
from mscore.nn.layer.combined import Conv2dBnAct, DenseBnAct
from mscore.nn.layer.normalization import (
    BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm)
from mscore.nn.layer.embedding import Embedding
from mscore.nn.layer.pooling import AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from mscore.nn.layer.rnn_cells import GRUCell, LSTMCell, RNNCell

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

# -- MindSpore 2.10's other layers -----------------------------------------------------------
from mscore.nn.layer.activation import (
    CELU, ELU, GLU, HShrink, HSigmoid, HSwish, Hardtanh, LRN, FastGelu, LogSigmoid, Mish,
    RReLU, SeLU, SoftShrink, Softmax2d, Softmin, Softsign, Tanhshrink, Threshold)
from mscore.nn.layer.basic import (
    BiDense, ClipByNorm, Dropout1d, Dropout2d, Dropout3d, L1Regularizer, Linear, MatrixDiag,
    MatrixDiagPart, MatrixSetDiag, Norm, OneHot, Roll, Tril, Triu, Unflatten, Unfold)
from mscore.nn.layer.embedding_lookup import (
    EmbeddingLookup, MultiFieldEmbeddingLookup)
from mscore.nn.layer.image import (
    MSSSIM, PSNR, SSIM, CentralCrop, ChannelShuffle, ImageGradients, PixelShuffle,
    PixelUnshuffle, Upsample)
from mscore.nn.layer.math_layers import (
    DiGamma, IGamma, LBeta, LGamma, MatMul, Moments, Range, ReduceLogSumExp)
from mscore.nn.layer.normalization import (
    GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)
from mscore.nn.layer.padding import (
    ConstantPad1d, ConstantPad2d, ConstantPad3d, Pad, ReflectionPad1d, ReflectionPad2d,
    ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad2d)
from mscore.nn.layer.pooling import AvgPool3d, MaxPool3d
from mscore.nn.layer.pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
    AdaptiveMaxPool2d, AdaptiveMaxPool3d, FractionalMaxPool2d, FractionalMaxPool3d, LPPool1d,
    LPPool2d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from mscore.nn.layer.rnns import GRU, LSTM, RNN
from mscore.nn.layer.transformer import (
    MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer,
    TransformerEncoder, TransformerEncoderLayer)

__all__ += [
    "CELU", "ELU", "GLU", "HShrink", "HSigmoid", "HSwish", "Hardtanh", "LRN", "FastGelu",
    "LogSigmoid", "Mish", "RReLU", "SeLU", "SoftShrink", "Softmax2d", "Softmin", "Softsign",
    "Tanhshrink", "Threshold",
    "BiDense", "ClipByNorm", "Dropout1d", "Dropout2d", "Dropout3d", "L1Regularizer", "Linear",
    "MatrixDiag", "MatrixDiagPart", "MatrixSetDiag", "Norm", "OneHot", "Roll", "Tril", "Triu",
    "Unflatten", "Unfold",
    "EmbeddingLookup", "MultiFieldEmbeddingLookup",
    "MSSSIM", "PSNR", "SSIM", "CentralCrop", "ChannelShuffle", "ImageGradients",
    "PixelShuffle", "PixelUnshuffle", "Upsample",
    "DiGamma", "IGamma", "LBeta", "LGamma", "MatMul", "Moments", "Range", "ReduceLogSumExp",
    "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "Pad", "ReflectionPad1d",
    "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad2d",
    "AvgPool3d", "MaxPool3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
    "LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    "GRU", "LSTM", "RNN",
    "MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerEncoderLayer",
]
