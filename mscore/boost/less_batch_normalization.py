"""Less BatchNorm: ``LessBN`` and the feature-normalised head ``CommonHeadLastFN``.

``LessBN(network, fn_flag=False)`` does what MindSpore 2.10's less-BN mode does:

* with ``fn_flag``, in every cell the last direct ``nn.Dense`` child becomes a
  :class:`CommonHeadLastFN` (cosine of the L2-normalised input and weight rows, times a
  trainable ``multiplier``) that takes over the Dense's weight and drops its bias;
* at the first call, the BatchNorm layers that MindSpore's graph pass removes are replaced by
  a pass-through (:mod:`mscore.boost._less_bn_graph` traces the network and matches the
  ResNet, MobileNetV2 and DenseNet block shapes that pass looks for).

MindSpore removes those BatchNorms in GRAPH_MODE only (the pass is a graph pass); mscore
removes them in both modes, so PYNATIVE and GRAPH_MODE train the same network. A removed
layer keeps its parameters (names and checkpoints unchanged) but no longer uses or updates
them.
"""
from __future__ import annotations

import warnings

import numpy as np

from mscore.boost import _less_bn_graph
from mscore.common import dtype as mdt
from mscore.common.initializer import initializer
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer.basic import Dense
from mscore.ops import functional as F

__all__ = ["CommonHeadLastFN", "LessBN"]

_L2_EPSILON = 1e-4   # MindSpore's L2Normalize default


def _l2_normalize(x):
    """``x / sqrt(max(sum(x**2, axis=1), 1e-4))`` (MindSpore's ``L2Normalize(axis=1)``)."""
    total = F.sum(F.mul(x, x), 1, True)
    return F.div(x, F.sqrt(F.maximum(total, _L2_EPSILON)))


def _initial(init, shape, name):
    """The initial value of a CommonHeadLastFN parameter: a Tensor (or Parameter, whose
    value is copied), an initializer name or an Initializer."""
    if isinstance(init, Tensor):
        if tuple(init.shape) != tuple(shape):
            raise ValueError(f"For 'CommonHeadLastFN', '{name}' must have shape {list(shape)}, "
                             f"got {list(init.shape)}")
        return Tensor(np.array(init.asnumpy(), dtype=np.float32))
    return initializer(init, list(shape), mdt.float32)


class CommonHeadLastFN(Cell):
    r"""The last fully connected layer as feature normalisation (FN).

    ``outputs = multiplier * (norm(inputs) @ norm(weight).T + bias)`` where ``norm`` divides
    each row by its L2 norm (at least ``sqrt(1e-4)``) and ``multiplier`` is a trainable
    Parameter of shape (1,) starting at 1.

    ``CommonHeadLastFN(in_channels, out_channels, weight_init='normal', bias_init='zeros',
    has_bias=True)``; ``weight`` is (out_channels, in_channels).
    """

    def __init__(self, in_channels, out_channels, weight_init="normal", bias_init="zeros",
                 has_bias=True):
        super().__init__()
        for name, value in (("in_channels", in_channels), ("out_channels", out_channels)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"For 'CommonHeadLastFN', '{name}' must be a positive int, "
                                 f"got {value!r}")
        if not isinstance(has_bias, bool):
            raise TypeError(f"For 'CommonHeadLastFN', 'has_bias' must be a bool, got "
                            f"{type(has_bias).__name__}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.weight = Parameter(_initial(weight_init, (out_channels, in_channels),
                                         "weight_init"), name="weight")
        self.multiplier = Parameter(Tensor(np.ones([1], np.float32)), name="multiplier")
        self.has_bias = has_bias
        if has_bias:
            self.bias = Parameter(_initial(bias_init, (out_channels,), "bias_init"),
                                  name="bias")

    def construct(self, x):
        x = _l2_normalize(x)
        w = _l2_normalize(self.cast_param(self.weight))
        out = F.matmul(x, F.transpose(w, (1, 0)))
        if self.has_bias:
            out = F.add(out, self.cast_param(self.bias))
        return F.mul(self.cast_param(self.multiplier), out)

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"has_bias={self.has_bias}")


class _RemovedBatchNorm(Cell):
    """Where LessBN removed a BatchNorm: returns its input and keeps the layer's parameters
    (same attribute names, so names, paths and checkpoints do not change)."""

    def __init__(self, bn):
        super().__init__(auto_prefix=False)
        for name, param in bn._params.items():
            self._params[name] = param
        object.__setattr__(self, "removed", bn)

    def construct(self, x):
        return x

    def extend_repr(self):
        return f"removed {type(self.removed).__name__} (LessBN)"


def _fn_from_dense(dense):
    """A CommonHeadLastFN holding ``dense``'s weight (and no bias), its parameters named
    where the Dense's were."""
    fn = CommonHeadLastFN(dense.in_channels, dense.out_channels, dense.weight, "zeros", False)
    old = dense.weight.name
    prefix = old[:-len("weight")] if old.endswith("weight") else ""
    return fn, prefix


def _name_params(cell, prefix):
    for path, param in cell.parameters_and_names():
        param.name = prefix + path


def _convert_dense(net):
    """In ``net`` and every sub-cell, the last direct Dense child becomes FN."""
    last = None
    for name, sub in net.name_cells().items():
        if sub is net:
            continue
        if isinstance(sub, Dense):
            last = (name, sub)
        else:
            _convert_dense(sub)
    if last is not None:
        name, dense = last
        fn, prefix = _fn_from_dense(dense)
        fn.training = dense.training
        net._cells[name] = fn          # registered as is: the names are set just below
        _name_params(fn, prefix)


class LessBN(Cell):
    """Fewer BatchNorm layers, for speed at the same accuracy (MindSpore's boost 'less_bn').

    ``LessBN(network, fn_flag=False)``; calling it calls ``network``. With ``fn_flag`` the
    last Dense layer of each cell becomes :class:`CommonHeadLastFN` now; the BatchNorm
    layers MindSpore's less-BN graph pass would remove become pass-throughs at the first
    call (see the module docstring). Wrapping a network twice changes nothing more.
    """

    def __init__(self, network, fn_flag=False):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"For 'LessBN', 'network' must be a Cell, got "
                            f"{type(network).__name__}")
        if not isinstance(fn_flag, bool):
            raise TypeError(f"For 'LessBN', 'fn_flag' must be a bool, got "
                            f"{type(fn_flag).__name__}")
        self.network = network
        object.__setattr__(self, "_pending", False)
        if not network.__dict__.get("_less_bn", False):
            object.__setattr__(network, "_less_bn", True)
            add_flags = getattr(network, "add_flags_recursive", None)
            if callable(add_flags):
                add_flags(less_bn=True)
            if fn_flag:
                _convert_dense(network)
            object.__setattr__(self, "_pending", True)

    @property
    def removed_batch_norms(self):
        """The paths (in ``network``) of the BatchNorm layers removed so far."""
        return [name for name, cell in self.network.cells_and_names()
                if isinstance(cell, _RemovedBatchNorm)]

    def __call__(self, *args, **kwargs):
        if self._pending:
            object.__setattr__(self, "_pending", False)
            self._remove_batch_norms(args)
        return super().__call__(*args, **kwargs)

    def _remove_batch_norms(self, args):
        for _, cell in self.network.cells_and_names():
            if isinstance(cell, LessBN):   # one analysis covers the whole network
                object.__setattr__(cell, "_pending", False)
        try:
            removable = _less_bn_graph.removable_batch_norms(self.network, args)
        except Exception as exc:
            warnings.warn(f"LessBN: the network could not be traced to find removable "
                          f"BatchNorm layers ({type(exc).__name__}: {exc}); it keeps all of "
                          f"them", RuntimeWarning, stacklevel=3)
            return
        # No compiled program holds the old layers: this is the first call, and when it runs
        # inside a GRAPH_MODE trace, that trace goes on with the new ones.
        for parent, name, bn in removable:
            parent._cells[name] = _RemovedBatchNorm(bn)

    def construct(self, *inputs):
        return self.network(*inputs)
