"""The rewrite of a float network into a quantization-aware one (``convert_quant_network``).

What becomes fake-quantized:

* MindSpore's combined cells ``nn.Conv2dBnAct`` / ``nn.DenseBnAct``, as MindSpore 1.x converts
  them: the convolution (with its BatchNorm folded when ``bn_fold``, kept beside it
  otherwise) or the dense layer gets a weight observer, the activation (ReLU, ReLU6, Sigmoid,
  LeakyReLU; another raises ``ValueError``) an output observer, and a cell without activation
  an output observer when ``after_fake``.
* Inside a ``SequentialCell``, each ``nn.Conv2d`` [``nn.BatchNorm2d``] [activation] and
  ``nn.Dense`` [``nn.BatchNorm1d``] [activation] run of children, fused into one such block
  (under the first child's key; the others leave the sequence).
* Any other ``nn.Conv2d`` / ``nn.Dense`` (a custom cell's attribute, whose data flow the
  rewrite cannot see): the layer alone, with an output observer.

The quantized cells share the float network's Parameters, which keep their names; the new
Parameters (``minq``, ``maxq``, ``step``) are named by their attribute path.
"""
from __future__ import annotations

from collections import OrderedDict

from mscore.compile import graph
from mscore.nn.cell import Cell
from mscore.nn.layer.activation import LeakyReLU, ReLU, ReLU6, Sigmoid
from mscore.nn.layer.basic import Dense
from mscore.nn.layer.combined import Conv2dBnAct, DenseBnAct
from mscore.nn.layer.container import SequentialCell
from mscore.nn.layer.conv import Conv2d
from mscore.nn.layer.normalization import BatchNorm1d, BatchNorm2d
from mscore.train.quant._layers import (
    ActQuant,
    Conv2dBnFoldQuant,
    Conv2dBnWithoutFoldQuant,
    Conv2dQuant,
    DenseQuant,
    _QuantWeightLayer,
)
from mscore.train.quant._observer import FakeQuantWithMinMaxObserver, check_num_bits

_CLS = "convert_quant_network"
# The activations MindSpore 1.x quantizes (its HSigmoid/HSwish have no mscore layer yet).
SUPPORTED_ACTIVATIONS = (ReLU, ReLU6, Sigmoid, LeakyReLU)
ACT_EMA_DECAY = 0.999
RANGE_INIT = (-6, 6)


def _pair(value, name):
    """MindSpore's ``convert2list``: a scalar applies to weights and activations alike, a
    list/tuple holds (weights, activations); longer is ``ValueError``."""
    if not isinstance(value, (list, tuple)):
        return value, value
    if len(value) > 2:
        raise ValueError(f"For '{_CLS}', '{name}' must be a value or a list/tuple of at most "
                         f"2 (weights, activations), got {value!r}")
    if not value:
        raise ValueError(f"For '{_CLS}', '{name}' must not be empty")
    return value[0], value[-1]


def _int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{_CLS}', '{name}' must be an int, got "
                        f"{type(value).__name__} ({value!r})")
    if value < 0:
        raise ValueError(f"For '{_CLS}', '{name}' must be >= 0, got {value}")
    return value


def _bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"For '{_CLS}', '{name}' must be a bool, got "
                        f"{type(value).__name__} ({value!r})")
    return value


class QuantConfig:
    """The checked arguments of ``convert_quant_network`` and the observers they make."""

    def __init__(self, bn_fold, freeze_bn, quant_delay, num_bits, per_channel, symmetric,
                 narrow_range):
        self.bn_fold = _bool(bn_fold, "bn_fold")
        self.freeze_bn = _int(freeze_bn, "freeze_bn")
        delays = _pair(quant_delay, "quant_delay")
        bits = _pair(num_bits, "num_bits")
        channel = _pair(per_channel, "per_channel")
        sym = _pair(symmetric, "symmetric")
        narrow = _pair(narrow_range, "narrow_range")
        self.weight_delay, self.act_delay = (_int(d, "quant_delay") for d in delays)
        self.weight_bits, self.act_bits = (check_num_bits(_int(b, "num_bits"), "num_bits",
                                                          _CLS) for b in bits)
        self.weight_channel, self.act_channel = (_bool(c, "per_channel") for c in channel)
        self.weight_symmetric, self.act_symmetric = (_bool(s, "symmetric") for s in sym)
        self.weight_narrow, self.act_narrow = (_bool(r, "narrow_range") for r in narrow)
        if self.act_channel:
            raise ValueError(f"For '{_CLS}', the second element of 'per_channel' "
                             f"(activations) must be False: activations are quantized per "
                             f"layer")

    def weight_observer(self, out_channels):
        """The observer of a weight with ``out_channels`` output channels (axis 0)."""
        return FakeQuantWithMinMaxObserver(
            *RANGE_INIT, ema=False, per_channel=self.weight_channel, channel_axis=0,
            num_channels=out_channels, num_bits=self.weight_bits,
            symmetric=self.weight_symmetric, narrow_range=self.weight_narrow,
            quant_delay=self.weight_delay)

    def act_observer(self):
        """The observer of an activation (per layer, moving average of the batch range)."""
        return FakeQuantWithMinMaxObserver(
            *RANGE_INIT, ema=True, ema_decay=ACT_EMA_DECAY, num_bits=self.act_bits,
            symmetric=self.act_symmetric, narrow_range=self.act_narrow,
            quant_delay=self.act_delay)


# -- placing cells without renaming (names are fixed once at the end) ---------------------------
def _set_child(parent, name, child):
    if child is None:
        parent._cells.pop(name, None)
        object.__setattr__(parent, name, None)
    else:
        parent.__dict__.pop(name, None)
        parent._cells[name] = child


def _block(cls, core, batchnorm, activation):
    """A converted ``Conv2dBnAct``/``DenseBnAct`` around ``core`` (built without making the
    float layers again)."""
    block = cls.__new__(cls)
    Cell.__init__(block)
    _set_child(block, cls._core_name, core)
    _set_child(block, "batchnorm", batchnorm)
    _set_child(block, "activation", activation)
    for name, value in (("has_bn", batchnorm is not None), ("has_act", activation is not None),
                        ("after_fake", True)):
        object.__setattr__(block, name, value)
    return block


class _Converter:
    def __init__(self, config):
        self.cfg = config

    # -- cores -----------------------------------------------------------------------------
    def conv_core(self, conv, batchnorm):
        """The quantized convolution and the BatchNorm that stays beside it (None)."""
        observer = self.cfg.weight_observer(conv.out_channels)
        if batchnorm is None:
            return Conv2dQuant(conv, observer)
        if self.cfg.bn_fold:
            return Conv2dBnFoldQuant(conv, batchnorm, observer, self.cfg.freeze_bn)
        return Conv2dBnWithoutFoldQuant(conv, batchnorm, observer)

    def act(self, activation, strict):
        """``ActQuant`` of ``activation`` (None: the identity); an unsupported one is
        ``ValueError`` when ``strict``, else kept (float) in front of the observer."""
        if strict and activation is not None and not isinstance(activation,
                                                                SUPPORTED_ACTIVATIONS):
            raise ValueError(f"For '{_CLS}', unsupported activation in auto quant: "
                             f"{type(activation).__name__} (supported: "
                             f"{[c.__name__ for c in SUPPORTED_ACTIVATIONS]})")
        return ActQuant(activation, self.cfg.act_observer())

    # -- MindSpore's combined cells ----------------------------------------------------------
    def combined(self, cell):
        """Convert a ``Conv2dBnAct``/``DenseBnAct`` in place (MindSpore's conversion)."""
        if isinstance(cell, Conv2dBnAct):
            if isinstance(cell.conv, _QuantWeightLayer):
                return cell
            _set_child(cell, "conv", self.conv_core(cell.conv, cell.batchnorm
                                                    if cell.has_bn else None))
            _set_child(cell, "batchnorm", None)
            object.__setattr__(cell, "has_bn", False)
        else:
            if isinstance(cell.dense, _QuantWeightLayer):
                return cell
            _set_child(cell, "dense", DenseQuant(cell.dense,
                                                 self.cfg.weight_observer(
                                                     cell.dense.out_channels)))
        if cell.has_act and cell.activation is not None:
            _set_child(cell, "activation", self.act(cell.activation, strict=True))
        elif cell.after_fake:
            _set_child(cell, "activation", self.act(None, strict=True))
            object.__setattr__(cell, "has_act", True)
        return cell

    # -- plain layers ------------------------------------------------------------------------
    def conv_block(self, conv, batchnorm=None, activation=None):
        return _block(Conv2dBnAct, self.conv_core(conv, batchnorm), None,
                      self.act(activation, strict=False))

    def dense_block(self, dense, batchnorm=None, activation=None):
        if dense.activation is not None:   # applied inside the Dense, before any BatchNorm
            activation, batchnorm = dense.activation, None
        core = DenseQuant(dense, self.cfg.weight_observer(dense.out_channels))
        return _block(DenseBnAct, core, batchnorm, self.act(activation, strict=False))

    def sequence(self, seq):
        """Fuse the Conv/Dense runs of a SequentialCell; convert the other children."""
        items = list(seq._cells.items())
        fused = OrderedDict()
        i = 0
        while i < len(items):
            key, cell = items[i]
            i += 1
            if isinstance(cell, (Conv2d, Dense)):
                bn_class = BatchNorm2d if isinstance(cell, Conv2d) else BatchNorm1d
                bn = act = None
                own_act = isinstance(cell, Dense) and cell.activation is not None
                if not own_act and i < len(items) and type(items[i][1]) is bn_class \
                        and items[i][1].num_features == cell.out_channels:
                    bn = items[i][1]
                    i += 1
                if not own_act and i < len(items) and isinstance(items[i][1],
                                                                 SUPPORTED_ACTIVATIONS):
                    act = items[i][1]
                    i += 1
                fused[key] = self.conv_block(cell, bn, act) if isinstance(cell, Conv2d) \
                    else self.dense_block(cell, bn, act)
            else:
                fused[key] = self.child(cell)
        seq._cells.clear()
        seq._cells.update(fused)

    def child(self, cell):
        """The converted form of one cell (itself, converted in place, or a new block)."""
        if isinstance(cell, (Conv2dBnAct, DenseBnAct)):
            return self.combined(cell)
        if isinstance(cell, Conv2d):
            return self.conv_block(cell)
        if isinstance(cell, Dense):
            return self.dense_block(cell)
        if isinstance(cell, (_QuantWeightLayer, ActQuant, FakeQuantWithMinMaxObserver)):
            return cell
        self.children(cell)
        return cell

    def children(self, cell):
        if isinstance(cell, SequentialCell):
            self.sequence(cell)
            return
        for name, sub in list(cell._cells.items()):
            if sub is not None:
                new = self.child(sub)
                if new is not sub:
                    _set_child(cell, name, new)


def convert(network, config):
    """Rewrite ``network`` (in place where possible); returns the quantization-aware
    network (a new block only when ``network`` itself is a bare ``Conv2d``/``Dense``)."""
    if not isinstance(network, Cell):
        raise TypeError(f"For '{_CLS}', 'network' must be a Cell, got "
                        f"{type(network).__name__}")
    names = {id(p): p.name for _, p in network.parameters_and_names()}
    training = network.training
    result = _Converter(config).child(network)
    for path, param in result.parameters_and_names():
        param.name = names.get(id(param), path)
    result.set_train(training)
    graph.clear_cache()   # wrappers compiled around the network hold its old structure
    return result
