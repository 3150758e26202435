"""Level 3: every ``mscore.nn`` layer and loss. The same layer (``ms.set_seed(0)`` before it
is built, so its initial weights are identical) runs forward and backward on the backend under
test and on the reference: outputs, the gradients of inputs and parameters, and the buffers
(BatchNorm statistics) after the step are compared."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

import mscore as ms
from mscore import nn, ops
from mscore.conformance.harness import flatten, quantize, stable_seed

DTYPES = ("float32",)


@dataclass
class LayerCase:
    """``layer``: the ``mscore.nn`` class name; ``make(kit)`` gives numpy inputs; inputs
    given as a tuple form a tuple argument (LSTMCell's ``(h, c)``)."""

    name: str
    layer: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    make: object = None
    train: bool = False
    factor: float = 4.0

    def __repr__(self):
        return self.name


def _n(*shapes, scale=1.0):
    return lambda kit: [kit.normal(s, scale) for s in shapes]


def _labels(shape, classes):
    return lambda kit: [kit.normal(shape[:1] + (classes,) + shape[1:], 2.0),
                        kit.rng.integers(0, classes, size=shape).astype(np.int64)]


CASES = [
    LayerCase("Dense", "Dense", (6, 4), make=_n((3, 6))),
    LayerCase("Dense_relu_3d", "Dense", (6, 4), {"activation": "relu"}, _n((2, 3, 6))),
    LayerCase("Conv2d_same", "Conv2d", (3, 4, 3), {"has_bias": True}, _n((2, 3, 6, 6))),
    LayerCase("Conv2d_pad_stride_groups", "Conv2d", (4, 6, (3, 2)),
              {"stride": 2, "pad_mode": "pad", "padding": 1, "group": 2}, _n((2, 4, 7, 6))),
    LayerCase("Conv1d", "Conv1d", (3, 4, 3), {"pad_mode": "valid", "has_bias": True},
              _n((2, 3, 9))),
    LayerCase("Conv3d", "Conv3d", (2, 2, 2), {}, _n((1, 2, 4, 4, 4))),
    LayerCase("Conv2dTranspose_same_stride2", "Conv2dTranspose", (4, 3, 3),
              {"stride": 2, "pad_mode": "same"}, _n((2, 4, 3, 3))),
    LayerCase("Conv1dTranspose_valid", "Conv1dTranspose", (3, 2, 4),
              {"stride": 2, "pad_mode": "valid"}, _n((2, 3, 5))),
    LayerCase("BatchNorm2d_train", "BatchNorm2d", (3,), {}, _n((4, 3, 3, 3), scale=2.0),
              train=True),
    LayerCase("BatchNorm2d_eval", "BatchNorm2d", (3,), {}, _n((4, 3, 3, 3)), train=False),
    LayerCase("BatchNorm1d_train", "BatchNorm1d", (5,), {}, _n((6, 5), scale=2.0),
              train=True),
    LayerCase("LayerNorm", "LayerNorm", ((6,),), {}, _n((3, 4, 6), scale=2.0)),
    LayerCase("ReLU", "ReLU", make=_n((3, 5))),
    LayerCase("ReLU6", "ReLU6", make=_n((3, 5), scale=5.0)),
    LayerCase("LeakyReLU", "LeakyReLU", (0.1,), make=_n((3, 5))),
    LayerCase("Sigmoid", "Sigmoid", make=_n((3, 5), scale=2.0)),
    LayerCase("Tanh", "Tanh", make=_n((3, 5))),
    LayerCase("SiLU", "SiLU", make=_n((3, 5))),
    LayerCase("GELU_tanh", "GELU", make=_n((3, 5))),
    LayerCase("GELU_erf", "GELU", (), {"approximate": False}, _n((3, 5))),
    LayerCase("Softmax", "Softmax", (), {"axis": 1}, _n((3, 5, 2), scale=2.0)),
    LayerCase("LogSoftmax", "LogSoftmax", make=_n((3, 5), scale=2.0)),
    LayerCase("PReLU", "PReLU", (3,), {}, _n((2, 3, 4))),
    LayerCase("Flatten", "Flatten", make=_n((2, 3, 4, 2))),
    LayerCase("MaxPool2d", "MaxPool2d", (), {"kernel_size": 2, "stride": 2}, _n((2, 3, 6, 6))),
    LayerCase("MaxPool2d_same", "MaxPool2d", (), {"kernel_size": 3, "stride": 2,
                                                   "pad_mode": "same"}, _n((2, 3, 7, 6))),
    LayerCase("AvgPool2d", "AvgPool2d", (), {"kernel_size": 2, "stride": 2}, _n((2, 3, 6, 6))),
    LayerCase("MaxPool1d", "MaxPool1d", (), {"kernel_size": 2, "stride": 2}, _n((2, 3, 8))),
    LayerCase("AvgPool1d", "AvgPool1d", (), {"kernel_size": 3, "stride": 1}, _n((2, 3, 8))),
    LayerCase("Embedding", "Embedding", (10, 4), {},
              lambda kit: [kit.rng.integers(0, 10, size=(3, 5)).astype(np.int64)]),
    LayerCase("Dropout_eval", "Dropout", (), {"p": 0.5}, _n((3, 5))),
    LayerCase("RNNCell", "RNNCell", (4, 5), {}, _n((3, 4), (3, 5))),
    LayerCase("GRUCell", "GRUCell", (4, 5), {}, _n((3, 4), (3, 5))),
    LayerCase("LSTMCell", "LSTMCell", (4, 5), {},
              lambda kit: [kit.normal((3, 4)), (kit.normal((3, 5)), kit.normal((3, 5)))]),
    LayerCase("CrossEntropyLoss", "CrossEntropyLoss", (), {"label_smoothing": 0.1},
              _labels((6,), 5)),
    LayerCase("SoftmaxCrossEntropyWithLogits_sparse", "SoftmaxCrossEntropyWithLogits", (),
              {"sparse": True, "reduction": "mean"}, _labels((6,), 5)),
    LayerCase("SoftmaxCrossEntropyWithLogits_dense", "SoftmaxCrossEntropyWithLogits", (),
              {}, lambda kit: [kit.normal((4, 5), 2.0),
                               np.eye(5)[kit.rng.integers(0, 5, size=4)]]),
    LayerCase("MSELoss", "MSELoss", make=_n((3, 4), (3, 4))),
    LayerCase("L1Loss", "L1Loss", make=_n((3, 4), (3, 4))),
    LayerCase("BCEWithLogitsLoss", "BCEWithLogitsLoss",
              make=lambda kit: [kit.normal((3, 4), 2.0),
                                (kit.rng.random((3, 4)) > 0.5).astype(np.float64)]),
]


def _flat_inputs(inputs):
    flat, spec = [], []
    for x in inputs:
        if isinstance(x, tuple):
            spec.append(len(x))
            flat.extend(x)
        else:
            spec.append(None)
            flat.append(x)
    return flat, spec


def _regroup(flat, spec):
    it = iter(flat)
    return [tuple(next(it) for _ in range(n)) if n is not None else next(it) for n in spec]


def _layer_fn(case, spec, case_key, dtype):
    def run(*flat):
        ms.set_seed(0)
        net = getattr(nn, case.layer)(*case.args, **case.kwargs)
        net.set_train(case.train)
        weights = list(net.trainable_params())
        positions = tuple(i for i, x in enumerate(flat) if x.dtype.is_floating)

        def loss(*xs):
            out = net(*_regroup(list(xs), spec))
            total = None
            for k, o in enumerate(flatten(out)):
                rng = np.random.default_rng(stable_seed(case_key, "cotangent", k))
                cot = quantize(rng.uniform(0.5, 1.5, size=o.shape) *
                               rng.choice([-1.0, 1.0], size=o.shape), dtype)
                term = ops.sum(o * ms.Tensor(cot, dtype=o.dtype))
                total = term if total is None else total + term
            return total, out

        if not positions and not weights:
            value, out = loss(*flat)
            grads_in, grads_w = (), ()
        else:
            vag = ms.value_and_grad(loss, grad_position=positions or None,
                                    weights=weights or None, has_aux=True)
            (value, out), grads = vag(*flat)
            if positions and weights:
                grads_in, grads_w = grads
            elif positions:
                grads_in, grads_w = grads, ()
            else:
                grads_in, grads_w = (), grads
        result = {"output": list(flatten(out)), "value": value,
                  "grad_inputs": list(grads_in),
                  "grad_params": {w.name: g for w, g in zip(weights, grads_w)},
                  "buffers": {p.name: p for p in net.get_parameters()
                              if not p.requires_grad}}
        return result
    return run


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("dtype", DTYPES)
def test_layer(kit, case, dtype):
    """Forward, input and parameter gradients, and buffers match the reference."""
    flat, spec = _flat_inputs(case.make(kit))
    fn = _layer_fn(case, spec, kit.case_key, dtype)
    kit.check(fn, *flat, dtype=dtype, what=case.name, factor=case.factor)
