"""Quantized ONNX export: a quantization-aware network as an int8 QDQ model.

The network is traced through the op layer like the float ONNX export (``_trace``), with this
module's graph installed as the quantization export target, so that in inference mode

* each activation observer becomes ``QuantizeLinear`` -> ``DequantizeLinear`` on its nudged
  grid, stored as uint8 (zero point + 128: the same grid; uint8 activations with int8 weights
  are what onnxruntime's x86 integer kernels take); a ``Clip`` to the nudged range comes
  first when the integer range is narrower than 8 bits (``narrow_range``, 4 or 7 bits);
* each quantized Dense/Conv2d becomes ``Conv`` / ``Gemm`` (``MatMul`` + ``Add`` for inputs of
  more than 2 dims) on a ``DequantizeLinear`` of its **int8 weight** (the folded weight
  quantized on the weight observer's grid, per tensor or per output channel), with an **int32
  bias** (scale ``input_scale * weight_scale``) when its input is on a known grid, and a
  ``QuantizeLinear``/``DequantizeLinear`` pair in front of it when that input is not a
  ``DequantizeLinear`` output yet;
* an activation observer after a ReLU puts the ReLU on the integers: ``QuantizeLinear`` ->
  ``Max(q, zero_point)`` -> ``DequantizeLinear`` (exact, and it leaves each Conv/Gemm
  followed directly by ``QuantizeLinear``, which onnxruntime fuses into ``QLinearConv`` /
  ``QGemm``);
* the network's floating inputs are on the grid ``scale = 1 / std_dev``, ``zero_point =
  round(mean)`` (uint8 when the zero point fits 0..255, else int8), MindSpore's convention:
  the first quantized layer reached through shape-only ops (reshape, transpose, slicing, max
  pooling) quantizes its input there.

Everything else (ReLU, pooling, reshapes, an unfolded BatchNorm) stays a float op between
``DequantizeLinear`` and ``QuantizeLinear``: the standard QDQ layout, which onnxruntime runs
and fuses into integer kernels where it can. Each hook computes the layer's inference output
with the real backend (not recorded), so the trace goes on with the same values the
fake-quantized network produces.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

import numpy as np

from mscore import context as _context
from mscore._state import process as _process
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.compile.trace import check_net_and_inputs, trace
from mscore.nn.layer.activation import ReLU
from mscore.train.quant import _fake_quant as fq
from mscore.train.quant._observer import reset_export_target, set_export_target
from mscore.train.serialization._export import _IR_VERSION, OPSET, _onnx_type, _OnnxGraph

_wrap = Tensor._wrap
_INT32_MAX = 2 ** 31 - 1
# Ops whose output lies on their input's quantization grid (shape moves, monotone selections).
_GRID_OPS = {"reshape": "a", "transpose": "a", "getitem": "a", "stop_gradient": "a",
             "max_pool": "x"}


@dataclass(frozen=True)
class Grid:
    """A quantization grid of the exported graph (numpy values)."""

    scale: np.ndarray        # float32, 0-d (per tensor) or 1-d (per channel on ``axis``)
    zero_point: np.ndarray   # int8 or uint8, the shape of ``scale``
    axis: int | None = None
    clip: tuple | None = None   # (lo, hi) float bounds when the integer range is narrower
    direct: bool = False        # the value is the output of this grid's DequantizeLinear


def input_grid(mean, std_dev):
    """The grid of the network's inputs: ``scale = 1 / std_dev``, ``zero_point =
    round(mean)`` (MindSpore's rounding), uint8 when it fits 0..255, else int8."""
    zp = round(mean)
    if 0 <= zp <= 255:
        zero = np.asarray(zp, np.uint8)
    elif -128 <= zp <= 127:
        zero = np.asarray(zp, np.int8)
    else:
        raise ValueError(f"mean: round(mean) = {zp} is the input's zero point and must lie in "
                         f"0..255 (uint8) or -128..127 (int8)")
    return Grid(np.asarray(1.0 / std_dev, np.float32), zero)


class QuantOnnxGraph(_OnnxGraph):
    """The ONNX graph of a quantized network; also the export target the observers and
    quantized layers hand themselves to (:meth:`fake_quant`, :meth:`weight_layer`)."""

    format_name = "quantized ONNX"

    def __init__(self, real, params, grid_of_inputs):
        super().__init__(real, params)
        self.grids = {}          # ONNX value name -> Grid
        self.grid_of_inputs = grid_of_inputs

    @contextlib.contextmanager
    def unrecorded(self):
        """Run ops on the real backend, outside the trace."""
        recorder = _process.backend
        _process.backend = self.real
        try:
            yield
        finally:
            _process.backend = recorder

    def numpy(self, native):
        return np.asarray(self.real.to_numpy(native))

    # -- recorded ops ---------------------------------------------------------------------
    def convert(self, name, ba, out):
        if name == "relu":
            return self.node("Relu", [self.v(ba["x"])])
        handle = super().convert(name, ba, out)
        source = _GRID_OPS.get(name)
        if source is not None:
            grid = self.grids.get(self.names.get(id(ba[source])))
            if grid is not None:
                self.grids[handle] = replace(grid, direct=False)
        return handle

    # -- grids ------------------------------------------------------------------------------
    def observer_grid(self, observer, axis=None, unsigned=False):
        """The :class:`Grid` of ``observer``'s stored range (per channel on ``axis``): int8,
        or uint8 (the same grid, zero point + 128) when ``unsigned``."""
        with self.unrecorded():
            qp = observer.grid()
            scale, zp, lo, hi = (self.numpy(a).astype(np.float32)
                                 for a in (qp.scale, qp.zero_point, qp.nudged_min,
                                           qp.nudged_max))
        scale = np.where(scale > 0, scale, np.float32(1.0))   # an empty range: all zeros
        if axis is None:
            scale, zp, lo, hi = scale[0], zp[0], lo[0], hi[0]
        clip = None
        if (observer.quant_min, observer.quant_max) != (-128, 127):
            clip = (np.asarray(lo, np.float32), np.asarray(hi, np.float32))
        zp = (np.asarray(zp) + 128).astype(np.uint8) if unsigned else np.asarray(zp).astype(np.int8)
        return Grid(np.asarray(scale, np.float32), zp, axis, clip)

    def qdq(self, handle, grid, relu=False):
        """``DequantizeLinear(QuantizeLinear(handle))`` on ``grid``; returns the output.
        ``relu``: apply ReLU to the integers in between, ``Max(q, zero_point)``."""
        scale = self.const(grid.scale, "scale")
        zero = self.const(grid.zero_point, "zero_point")
        attrs = {} if grid.axis is None else {"axis": int(grid.axis)}
        if grid.clip is not None:
            lo, hi = grid.clip
            if np.ndim(lo) == 0:
                handle = self.node("Clip", [handle, self.const(lo), self.const(hi)])
            else:
                shape = [1] * (grid.axis + 1)
                shape[grid.axis] = -1
                lo_c = self.const(np.asarray(lo).reshape(shape), "lo")
                hi_c = self.const(np.asarray(hi).reshape(shape), "hi")
                handle = self.node("Min", [self.node("Max", [handle, lo_c]), hi_c])
        quantized = self.node("QuantizeLinear", [handle, scale, zero], **attrs)
        if relu:
            quantized = self.node("Max", [quantized, zero])
        out = self.node("DequantizeLinear", [quantized, scale, zero], **attrs)
        self.grids[out] = replace(grid, direct=True)
        return out

    def _register(self, native, handle):
        self.keep.append(native)
        self.names[id(native)] = handle
        return _wrap(native)

    # -- export-target hooks --------------------------------------------------------------
    def fake_quant(self, observer, x):
        """An activation observer in inference: QuantizeLinear/DequantizeLinear."""
        _check_float32(x)
        axis = observer._axis_for(x.shape)
        with self.unrecorded():
            out = fq.fake_quant(x._data, observer._grid_for(x.shape, x.dtype))
        if not self.is_dynamic(x._data):
            return _wrap(out)
        grid = self.observer_grid(observer, axis, unsigned=True)
        return self._register(out, self.qdq(self.v(x._data), grid))

    def act_quant(self, cell, x):
        """An ``ActQuant`` of ReLU in inference: the ReLU runs on the integers between
        QuantizeLinear and DequantizeLinear (``Max(q, zero_point)``, exact: 0 is on every
        grid), which leaves the layer before it followed directly by QuantizeLinear, the
        pattern onnxruntime fuses into integer kernels. None for other activations (traced
        as float ops, then the observer)."""
        observer = cell.fake_quant_act
        if not isinstance(cell.act, ReLU) or observer.per_channel:
            return None
        _check_float32(x)
        with self.unrecorded():
            relu = self.real.maximum(x._data, self.real.full((), 0.0, x.dtype))
            out = fq.fake_quant(relu, observer._grid_for(x.shape, x.dtype))
        if not self.is_dynamic(x._data):
            return _wrap(out)
        grid = self.observer_grid(observer, unsigned=True)
        return self._register(out, self.qdq(self.v(x._data), grid, relu=True))

    def weight_layer(self, layer, x):
        """A quantized Dense/Conv2d in inference: Conv/Gemm on its int8 weight."""
        _check_float32(x)
        xd = x._data
        observer = layer.fake_quant_weight
        with self.unrecorded():
            w, b = layer.folded()
            ndim = len(self.real.shape(w))
            qp = fq.QuantParams(*fq.broadcast_params(observer.grid(), ndim,
                                                     0 if observer.per_channel else None))
            lv = fq.levels(w, qp)
            out = layer.apply_weight(xd, fq.fake_quant(w, qp))
            if b is not None:
                out = self.real.add(out, layer.bias_shaped(b))
            levels = self.numpy(lv)
            bias = None if b is None else self.numpy(b).astype(np.float32)
        if not self.is_dynamic(xd):
            return _wrap(out)
        grid_w = self.observer_grid(observer, 0 if observer.per_channel else None)
        w_int = (levels + observer.quant_min).astype(np.int8)
        attrs = {} if grid_w.axis is None else {"axis": 0}
        weight = self.node("DequantizeLinear", [self.const(w_int, "weight_q"),
                                                self.const(grid_w.scale, "weight_scale"),
                                                self.const(grid_w.zero_point, "weight_zp")],
                           **attrs)
        handle, grid_in = self._quantized_input(xd)
        bias_handle = None if bias is None else self._bias(bias, grid_in, grid_w)
        return self._register(out, self._emit_core(layer, x, handle, weight, bias_handle))

    def _quantized_input(self, xd):
        """The layer input's handle, quantized on its grid when one is known."""
        handle = self.v(xd)
        grid = self.grids.get(handle)
        if grid is None or grid.axis is not None:
            return handle, None
        if not grid.direct:
            handle = self.qdq(handle, grid)
        return handle, grid

    def _bias(self, bias, grid_in, grid_w):
        """An int32 DequantizeLinear bias (scale input_scale * weight_scale) when the input
        grid is known and the values fit, else a float32 initializer."""
        if grid_in is None:
            return self.const(bias, "bias")
        scale = (np.float32(grid_in.scale) * np.broadcast_to(grid_w.scale, bias.shape)) \
            .astype(np.float32)
        quantized = np.round(bias / scale)
        if not np.all(np.abs(quantized) <= _INT32_MAX):
            return self.const(bias, "bias")
        return self.node("DequantizeLinear", [self.const(quantized.astype(np.int32), "bias_q"),
                                              self.const(scale, "bias_scale")], axis=0)

    def _emit_core(self, layer, x, handle, weight, bias):
        inputs = [handle, weight] + ([bias] if bias is not None else [])
        if layer.kind == "conv":
            pads = layer.padding_pairs(tuple(x.shape[2:]))
            return self.node("Conv", inputs, kernel_shape=list(layer.kernel_size),
                             strides=list(layer.stride),
                             pads=[p for p, _ in pads] + [p for _, p in pads],
                             dilations=list(layer.dilation), group=int(layer.group))
        if len(x.shape) == 2:
            return self.node("Gemm", inputs, transB=1)
        out = self.node("MatMul", [handle, self.node("Transpose", [weight], perm=[1, 0])])
        return out if bias is None else self.node("Add", [out, bias])


def _check_float32(x):
    if x.dtype is not mdt.float32:
        raise NotImplementedError(f"export: quantized ONNX export supports float32 "
                                  f"activations, got {x.dtype}")


def build_quant_onnx_model(net, inputs, mean, std_dev):
    """Trace the quantization-aware ``net`` on ``inputs``; return the int8 QDQ
    ``onnx.ModelProto``."""
    import onnx
    from onnx import helper
    check_net_and_inputs(net, inputs)
    real = _context.current_backend()
    params = [p for _, p in net.parameters_and_names()]
    graph = QuantOnnxGraph(real, params, input_grid(mean, std_dev))
    graph_inputs = []
    for i, x in enumerate(inputs):
        name = f"input_{i}"
        graph.used_names.add(name)
        graph.add_input(x, name)
        if x.dtype.is_floating:
            graph.grids[name] = graph.grid_of_inputs
        graph_inputs.append(helper.make_tensor_value_info(name, _onnx_type(x.dtype),
                                                          list(x.shape)))
    token = set_export_target(graph)
    try:
        _, leaves = trace(net, inputs, graph, fused=("softmax", "log_softmax", "relu"))
    finally:
        reset_export_target(token)
    graph_outputs = []
    for i, t in enumerate(leaves):
        name = f"output_{i}"
        graph.used_names.add(name)
        graph.node("Identity", [graph.v(t._data)], out=name)
        graph_outputs.append(helper.make_tensor_value_info(
            name, _onnx_type(real.dtype(t._data)), [int(s) for s in real.shape(t._data)]))
    onnx_graph = helper.make_graph(graph.nodes, type(net).__name__, graph_inputs,
                                   graph_outputs, initializer=graph.initializers)
    model = helper.make_model(onnx_graph, producer_name="mscore",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = _IR_VERSION
    onnx.checker.check_model(model)
    return model
