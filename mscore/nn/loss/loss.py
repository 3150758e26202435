"""``mindspore.nn.loss.loss``: every loss cell (defined by concern in the sibling modules)."""
from mscore.nn.loss.base import L1Loss, LossBase, MAELoss, MSELoss, RMSELoss
from mscore.nn.loss.classification import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    FocalLoss,
    KLDivLoss,
    NLLLoss,
    SoftmaxCrossEntropyWithLogits,
)
from mscore.nn.loss.margin import (
    CosineEmbeddingLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultilabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from mscore.nn.loss.regression import (
    DiceLoss,
    GaussianNLLLoss,
    HuberLoss,
    MultiClassDiceLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
)
from mscore.nn.loss.sequence import CTCLoss, SampledSoftmaxLoss

__all__ = ["LossBase", "L1Loss", "MSELoss", "MAELoss", "RMSELoss", "SmoothL1Loss",
           "SoftMarginLoss", "SoftmaxCrossEntropyWithLogits", "CrossEntropyLoss", "NLLLoss",
           "BCEWithLogitsLoss", "BCELoss", "KLDivLoss", "FocalLoss", "DiceLoss",
           "MultiClassDiceLoss", "SampledSoftmaxLoss", "CosineEmbeddingLoss",
           "MarginRankingLoss", "HingeEmbeddingLoss", "HuberLoss", "MultiMarginLoss",
           "MultilabelMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss"]
