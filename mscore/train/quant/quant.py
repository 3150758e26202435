"""``convert_quant_network`` and ``export`` (MindSpore 1.x's ``mindspore.train.quant.quant``).

Quantization-aware training models the quantization error of the deployed integer network in
float: weights and activations pass through fake-quantization cells (observed min/max, a
straight-through gradient) while training goes on as usual. At the end, :func:`export` writes
the network for deployment: an int8 ONNX model, or a MINDIR of the fake-quantized float graph.
"""
from __future__ import annotations

import numbers
import os

from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.train.quant import _fake_quant as fq
from mscore.train.quant._convert import QuantConfig, convert
from mscore.train.quant._observer import reset_export_target, set_export_target
from mscore.train.quant._onnx_export import build_quant_onnx_model
from mscore.train.serialization._atomic import atomic_write
from mscore.train.serialization._checkpoint import _check_path
from mscore.train.serialization._mindir_export import build_mindir_model

FILE_FORMATS = ("AIR", "MINDIR", "ONNX")


def convert_quant_network(network, bn_fold=True, freeze_bn=10000000, quant_delay=(0, 0),
                          num_bits=(8, 8), per_channel=(False, False),
                          symmetric=(False, False), narrow_range=(False, False)):
    """Make ``network`` quantization aware (in place) and return it.

    Args follow MindSpore 1.x; each of ``quant_delay``, ``num_bits``, ``per_channel``,
    ``symmetric``, ``narrow_range`` is one value for weights and activations alike or a
    ``(weights, activations)`` pair:

    * ``bn_fold`` (bool): fold a convolution's BatchNorm into its weight (default True),
      else keep the BatchNorm after the fake-quantized convolution.
    * ``freeze_bn`` (int >= 0): training steps after which a folded BatchNorm normalises with
      its moving statistics and stops updating them (default 10000000).
    * ``quant_delay`` (int >= 0): training steps before fake quantization starts (the
      observers watch from the first step). Inference always quantizes.
    * ``num_bits`` (4, 7 or 8): the signed integer width.
    * ``per_channel`` (bool): weights per output channel; activations must stay per layer.
    * ``symmetric``, ``narrow_range`` (bool): the grid's shape (see
      :mod:`mscore.train.quant._fake_quant`).

    Weights are observed with their current min/max at every training step, activations with
    an exponential moving average (decay 0.999) of the batch min/max, both from the initial
    range [-6, 6]. Which layers are converted: :mod:`mscore.train.quant._convert`. Raises
    ``TypeError`` for an argument of the wrong type, ``ValueError`` for a wrong value.
    """
    config = QuantConfig(bn_fold, freeze_bn, quant_delay, num_bits, per_channel, symmetric,
                         narrow_range)
    return convert(network, config)


class _PlainInference:
    """The MINDIR export target: observers fake-quantize without the straight-through
    estimator's extra ops, layers compute as usual."""

    @staticmethod
    def fake_quant(observer, x):
        return Tensor._wrap(fq.fake_quant(x._data, observer._grid_for(x.shape, x.dtype)))


def _check_number(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected an int or float, got {type(value).__name__}")
    return float(value)


def export(network, *inputs, file_name, mean=127.5, std_dev=127.5, file_format="AIR"):
    """Export the quantization-aware ``network`` (from :func:`convert_quant_network`) run on
    the example ``inputs`` for deployment.

    * ``"ONNX"``: an int8 model in the QDQ layout (``QuantizeLinear``/``DequantizeLinear``
      around float ops, int8 weights, int32 biases) that onnxruntime runs; the network's
      inputs are quantized with ``scale = 1 / std_dev`` and ``zero_point = round(mean)``
      (raw 0..255 pixels for the defaults). Layout: :mod:`mscore.train.quant._onnx_export`.
    * ``"MINDIR"``: the fake-quantized float graph (weights folded and fake-quantized,
      activations fake-quantized, the observers' ranges as Parameters), which MindSpore's
      ``load`` and ``nn.GraphCell`` and :func:`mscore.load` run; ``mean``/``std_dev`` are
      not used.
    * ``"AIR"`` (the default, Ascend's format): ``NotImplementedError``.

    The format's suffix is appended to ``file_name`` when missing; the file is written
    atomically.
    """
    if not isinstance(network, Cell):
        raise TypeError(f"network: expected a Cell, got {type(network).__name__}")
    mean = _check_number(mean, "mean")
    std_dev = _check_number(std_dev, "std_dev")
    if not std_dev > 0:
        raise ValueError(f"std_dev: expected a positive number, got {std_dev}")
    if not isinstance(file_format, str):
        raise TypeError(f"file_format: expected a str, got {type(file_format).__name__}")
    if file_format not in FILE_FORMATS:
        raise ValueError(f"file_format: expected one of {FILE_FORMATS}, got {file_format!r}")
    if file_format == "AIR":
        raise NotImplementedError("export: file_format 'AIR' (Ascend's graph format) is not "
                                  "implemented in mscore; use 'ONNX' (int8) or 'MINDIR'")
    path = _check_path(file_name, "file_name")
    if file_format == "ONNX":
        data = _onnx_bytes(network, inputs, mean, std_dev)
        suffix = ".onnx"
    else:
        data = _mindir_bytes(network, inputs)
        suffix = ".mindir"
    if not path.endswith(suffix):
        path += suffix
    if os.path.isdir(path):
        raise ValueError(f"file_name: {path!r} is a directory")
    atomic_write(path, lambda f: f.write(data))


def _onnx_bytes(network, inputs, mean, std_dev):
    try:
        import onnx  # noqa: F401
    except ImportError as exc:
        raise ImportError("export: ONNX export needs the 'onnx' package (pip install "
                          "'mscore[onnx]')") from exc
    return build_quant_onnx_model(network, inputs, mean, std_dev).SerializeToString()


def _mindir_bytes(network, inputs):
    token = set_export_target(_PlainInference())
    try:
        model = build_mindir_model(network, *inputs)
    finally:
        reset_export_target(token)
    return model.SerializeToString(deterministic=True)
