"""Quantization-aware training (MindSpore 1.x's ``mindspore.train.quant``).

* :func:`convert_quant_network` -- rewrite a float network with fake-quantized layers
  (min/max observers, straight-through gradients, BatchNorm folding);
* :func:`export` -- the trained network as an int8 ONNX model or a MINDIR;
* :func:`load_nonquant_param_into_quant_net` -- start from a trained float network.

The cells the rewrite produces (``FakeQuantWithMinMaxObserver``, ``DenseQuant``,
``Conv2dQuant``, ``Conv2dBnFoldQuant``, ``Conv2dBnWithoutFoldQuant``, ``ActQuant``) are here
too; MindSpore 1.x had them in ``mindspore.nn``. Everything runs on every backend: the fake
quantization is a composite of primitive ops.
"""
from mscore.train.quant.quant import convert_quant_network, export
from mscore.train.quant.quant_utils import load_nonquant_param_into_quant_net
from mscore.train.quant._observer import (
    FakeQuantWithMinMax, FakeQuantWithMinMaxObserver)
from mscore.train.quant._layers import (
    ActQuant, Conv2dBnFoldQuant, Conv2dBnWithoutFoldQuant, Conv2dQuant, DenseQuant)

__all__ = ["convert_quant_network", "export", "load_nonquant_param_into_quant_net",
           "FakeQuantWithMinMaxObserver", "FakeQuantWithMinMax", "DenseQuant", "Conv2dQuant",
           "Conv2dBnFoldQuant", "Conv2dBnWithoutFoldQuant", "ActQuant"]
