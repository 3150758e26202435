"""Primitive classes for neural networks: activations, pooling, normalisation, losses, the
momentum update, random streams, state updates and the functional helpers (``P.Elu``,
``P.AvgPool``, ``P.LayerNorm``, ``P.BatchNorm``, ``P.SoftmaxCrossEntropyWithLogits``,
``P.ApplyMomentum``, ``P.UniformReal``, ``P.Partial``, ``P.Print``, ...), with MindSpore's
constructor arguments and checks."""
from __future__ import annotations

import functools
import numbers

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops import array_func, nn_func
from mscore.ops import functional as F
from mscore.ops.primitives import (
    MaxPool, Primitive, _elementwise, check_axes, check_bool, check_float,
    check_int, check_reduction)


def _gelu_tanh(x):
    return F.gelu(x, "tanh")


ReLU6 = _elementwise("ReLU6", F.relu6, "``min(max(x, 0), 6)``.")
SeLU = _elementwise("SeLU", nn_func.selu, "Scaled exponential linear unit.")
HSwish = _elementwise("HSwish", nn_func.hardswish, "``x * relu6(x + 3) / 6``.")
HSigmoid = _elementwise("HSigmoid", nn_func.hardsigmoid, "``relu6(x + 3) / 6``.")
Softplus = _elementwise("Softplus", F.softplus, "``log(1 + exp(x))``.")
Softsign = _elementwise("Softsign", nn_func.softsign, "``x / (1 + |x|)``.")
Mish = _elementwise("Mish", nn_func.mish, "``x * tanh(softplus(x))``.")
GeLU = _elementwise("GeLU", _gelu_tanh, "GeLU with the tanh approximation (as MindSpore's "
                                        "primitive computes it).")
FastGeLU = _elementwise("FastGeLU", nn_func.fast_gelu,
                        "``x / (1 + exp(-1.702|x|)) * exp(0.851 (x - |x|))``.")
L2Loss = _elementwise("L2Loss", lambda x: F.div(F.sum(F.square(x)), 2.0),
                      "``sum(x^2) / 2``.")


class Elu(Primitive):
    """``Elu(alpha=1.0)(x)``: exponential linear unit."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = check_float(alpha, "alpha", "Elu")

    def compute(self, input_x):
        return nn_func._elu_core(F._float_input(input_x, "input_x"), self.alpha)


class CeLU(Primitive):
    """``CeLU(alpha=1.0)(x)``: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = check_float(alpha, "alpha", "CeLU")

    def compute(self, x):
        return nn_func.celu(x, self.alpha)


class Dense(Primitive):
    """``Dense()(input, weight, bias=None)``: ``input @ weight.T + bias``."""

    def compute(self, input, weight, bias=None):  # noqa: A002
        return F.dense(input, weight, bias)


class BiasAdd(Primitive):
    """``BiasAdd(data_format='NCHW')(x, bias)``: ``bias`` along the channel axis."""

    def __init__(self, data_format="NCHW"):
        super().__init__()
        if data_format not in ("NCHW", "NHWC", "NCDHW"):
            raise ValueError(f"BiasAdd: data_format must be 'NCHW', 'NHWC' or 'NCDHW', got "
                             f"{data_format!r}")
        self.data_format = data_format

    def compute(self, input_x, bias):
        if self.data_format == "NHWC":
            return F.add(input_x, bias)
        return array_func.bias_add(input_x, bias)


class AvgPool(MaxPool):
    """``AvgPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x)``;
    with 'same' padding the padded elements do not count in the average."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", data_format="NCHW"):
        if isinstance(strides, (int, tuple, list)) and any(
                isinstance(s, int) and s <= 0 for s in
                (strides if isinstance(strides, (tuple, list)) else (strides,))):
            # MindSpore's kernel check raises RuntimeError for non-positive strides.
            raise RuntimeError(f"AvgPool: strides must be positive, got {strides!r}")
        super().__init__(kernel_size, strides, pad_mode, data_format)

    def compute(self, x):
        pads = 0
        if self.pad_mode == "same":
            pairs = F.conv_padding_pairs("same", 0, 2, x.shape[2:], self.kernel_size,
                                         self.strides, (1, 1))
            pads = tuple(v for pair in pairs for v in pair)
        return F.avg_pool(x, self.kernel_size, self.strides, pads, False, 2)


class LayerNorm(Primitive):
    """``LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(x, gamma, beta)``
    returns ``(y, mean, variance)``, the statistics with the normalised axes kept."""

    def __init__(self, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7):
        super().__init__()
        self.begin_norm_axis = check_int(begin_norm_axis, "begin_norm_axis", "LayerNorm")
        self.begin_params_axis = check_int(begin_params_axis, "begin_params_axis",
                                           "LayerNorm")
        self.epsilon = check_float(epsilon, "epsilon", "LayerNorm")

    def compute(self, input_x, gamma, beta):
        x = F._float_input(input_x, "input_x")
        start = self.begin_norm_axis % x.ndim
        axes = tuple(range(start, x.ndim))
        mean = F.mean(x, axes, True)
        d = F.sub(x, mean)
        var = F.mean(F.mul(d, d), axes, True)
        y = F.mul(d, F.rsqrt(F.add(var, self.epsilon)))
        pstart = self.begin_params_axis % x.ndim
        pshape = (1,) * pstart + tuple(x.shape[pstart:])
        y = F.add(F.mul(y, F.reshape(gamma, pshape)), F.reshape(beta, pshape))
        return y, mean, var


class BatchNorm(Primitive):
    """``BatchNorm(is_training=False, epsilon=1e-5, momentum=0.1, data_format='NCHW')(x,
    scale, bias, mean, variance)`` returns ``(y, batch_mean, batch_variance, reserve_1,
    reserve_2)``. In training the batch statistics normalise and the ``mean``/``variance``
    Parameters are updated in place: ``(1 - momentum) * running + momentum * batch``
    (unbiased variance)."""

    def __init__(self, is_training=False, epsilon=1e-5, momentum=0.1, data_format="NCHW"):
        super().__init__()
        self.is_training = check_bool(is_training, "is_training", "BatchNorm")
        self.epsilon = check_float(epsilon, "epsilon", "BatchNorm")
        self.momentum = check_float(momentum, "momentum", "BatchNorm")
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"BatchNorm: momentum must be in [0, 1], got {momentum}")
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"BatchNorm: epsilon must be in (0, 1], got {epsilon}")
        if data_format != "NCHW":
            raise NotImplementedError(f"BatchNorm: data_format={data_format!r} is not "
                                      f"supported; use 'NCHW'")
        self.data_format = data_format

    def compute(self, input_x, scale, bias, mean, variance):
        x = F._float_input(input_x, "input_x")
        c = x.shape[1]
        axes = (0,) + tuple(range(2, x.ndim))
        if self.is_training:
            bmean = F.mean(x, axes)
            bvar = F.var(x, axes)
            out = F.batch_norm(x, mean, variance, scale, bias, True, self.momentum,
                               self.epsilon)
            return out, bmean, bvar, bmean, bvar
        out = F.batch_norm(x, mean, variance, scale, bias, False, self.momentum, self.epsilon)
        zeros = F.zeros((c,), x.dtype)
        return out, zeros, zeros, zeros, zeros


class L2Normalize(Primitive):
    """``L2Normalize(axis=0, epsilon=1e-4)(x)``: ``x / sqrt(max(sum(x^2, axis),
    epsilon))``."""

    def __init__(self, axis=0, epsilon=1e-4):
        super().__init__()
        self.axis = check_axes(axis, "axis", "L2Normalize")
        if not isinstance(epsilon, float):  # MindSpore's kernel check: RuntimeError
            raise RuntimeError(f"L2Normalize: epsilon must be a float, got "
                               f"{type(epsilon).__name__}")
        self.epsilon = epsilon

    def compute(self, x):
        x = F._float_input(x, "x")
        sq = F.sum(F.square(x), self.axis, True)
        return F.div(x, F.sqrt(F.maximum(sq, self.epsilon)))


class SoftmaxCrossEntropyWithLogits(Primitive):
    """``SoftmaxCrossEntropyWithLogits()(logits, labels)`` with one-hot (or probability)
    ``labels`` of shape (N, C) returns ``(loss of shape (N,), dlogits)``, where
    ``dlogits = softmax(logits) - labels``."""

    def compute(self, logits, labels):
        x = F._float_input(logits, "logits")
        y = F.cast(F._check_tensor(labels, "labels"), x.dtype)
        logp = F.log_softmax(x, -1)
        loss = F.neg(F.sum(F.mul(y, logp), -1))
        return loss, F.sub(F.exp(logp), y)


class SparseSoftmaxCrossEntropyWithLogits(Primitive):
    """``SparseSoftmaxCrossEntropyWithLogits(is_grad=False)(logits, labels)``: the mean
    cross entropy of class indices ``labels``; with ``is_grad`` its gradient with respect
    to ``logits``."""

    def __init__(self, is_grad=False):
        super().__init__()
        self.is_grad = check_bool(is_grad, "is_grad", type(self).__name__)

    def compute(self, logits, labels):
        x = F._float_input(logits, "logits")
        t = F._check_tensor(labels, "labels")
        if self.is_grad:
            hot = F.one_hot(t, x.shape[-1], 1.0, 0.0)
            return F.div(F.sub(F.softmax(x, -1), F.cast(hot, x.dtype)), float(x.shape[0]))
        return F.cross_entropy(x, t)


class SigmoidCrossEntropyWithLogits(Primitive):
    """``SigmoidCrossEntropyWithLogits()(logits, labels)``: elementwise."""

    def compute(self, logits, label):
        return F.binary_cross_entropy_with_logits(logits, label, reduction="none")


class BCEWithLogitsLoss(Primitive):
    """``BCEWithLogitsLoss(reduction='mean')(logits, label, weight, pos_weight)``."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = check_reduction(reduction, "BCEWithLogitsLoss")

    def compute(self, input, target, weight=None, posWeight=None):  # noqa: A002,N803
        return F.binary_cross_entropy_with_logits(input, target, weight, posWeight,
                                                  self.reduction)


class BinaryCrossEntropy(Primitive):
    """``BinaryCrossEntropy(reduction='mean')(logits, labels, weight=None)`` of
    probabilities."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = check_reduction(reduction, "BinaryCrossEntropy")

    def compute(self, input, target, weight=None):  # noqa: A002
        return nn_func.binary_cross_entropy(input, target, weight, self.reduction)


class NLLLoss(Primitive):
    """``NLLLoss(reduction='mean', ignore_index=-100)(logits, labels, weight)`` of
    log-probabilities (N, C) returns ``(loss, total_weight)``."""

    def __init__(self, reduction="mean", ignore_index=-100):
        super().__init__()
        self.reduction = check_reduction(reduction, "NLLLoss")
        self.ignore_index = check_int(ignore_index, "ignore_index", "NLLLoss")

    def compute(self, logits, labels, weight):
        x = F._float_input(logits, "logits")
        t = F._check_tensor(labels, "labels")
        valid = F.cast(F.not_equal(t, self.ignore_index), x.dtype)
        safe = F.where(F.not_equal(t, self.ignore_index), t, 0)
        w = F.mul(F.gather(F.cast(weight, x.dtype), safe, 0), valid)
        picked = F.sum(F.mul(F.cast(F.one_hot(safe, x.shape[1], 1.0, 0.0), x.dtype), x), -1)
        loss = F.neg(F.mul(picked, w))
        total = F.sum(w)
        if self.reduction == "sum":
            return F.sum(loss), total
        if self.reduction == "mean":
            return F.div(F.sum(loss), total), total
        return loss, total


class KLDivLoss(Primitive):
    """``KLDivLoss(reduction='mean')(logits, labels)`` of log-probabilities ``logits``."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = check_reduction(reduction, "KLDivLoss",
                                         ("none", "mean", "sum", "batchmean"))

    def compute(self, logits, labels):
        return nn_func.kl_div(logits, labels, self.reduction)


class SmoothL1Loss(Primitive):
    """``SmoothL1Loss(beta=1.0, reduction='none')(prediction, target)``."""

    def __init__(self, beta=1.0, reduction="none"):
        super().__init__()
        self.beta = check_float(beta, "beta", "SmoothL1Loss")
        self.reduction = check_reduction(reduction, "SmoothL1Loss")

    def compute(self, prediction, target):
        return nn_func.smooth_l1_loss(prediction, target, self.beta, self.reduction)


class ApplyMomentum(Primitive):
    """``ApplyMomentum(use_nesterov=False, use_locking=False, gradient_scale=1.0)(variable,
    accumulation, learning_rate, gradient, momentum)``: ``accumulation = accumulation *
    momentum + gradient * gradient_scale``, then ``variable -= learning_rate *
    accumulation`` (Nesterov: ``learning_rate * (gradient * gradient_scale + accumulation
    * momentum)``); both Parameters change in place and ``variable`` is returned."""

    def __init__(self, use_nesterov=False, use_locking=False, gradient_scale=1.0):
        super().__init__()
        self.use_nesterov = check_bool(use_nesterov, "use_nesterov", "ApplyMomentum")
        self.use_locking = check_bool(use_locking, "use_locking", "ApplyMomentum")
        self.gradient_scale = check_float(gradient_scale, "gradient_scale", "ApplyMomentum")

    def compute(self, variable, accumulation, learning_rate, gradient, momentum):
        from mscore.common.parameter import Parameter
        for name, p in (("variable", variable), ("accumulation", accumulation)):
            if not isinstance(p, Parameter):
                raise TypeError(f"ApplyMomentum: {name} must be a Parameter, got "
                                f"{type(p).__name__}")
        g = gradient if self.gradient_scale == 1.0 else F.mul(gradient, self.gradient_scale)
        acc = F.add(F.mul(accumulation, momentum), g)
        accumulation.assign_value(acc)
        step = F.add(g, F.mul(acc, momentum)) if self.use_nesterov else acc
        variable.assign_value(F.sub(variable, F.mul(step, learning_rate)))
        return variable


class AssignAdd(Primitive):
    """``AssignAdd()(variable, value)``: ``variable += value``; returns the variable."""

    def compute(self, variable, value):
        return F.assign(variable, F.add(variable, value))


class AssignSub(Primitive):
    """``AssignSub()(variable, value)``: ``variable -= value``; returns the variable."""

    def compute(self, variable, value):
        return F.assign(variable, F.sub(variable, value))


class _RandomPrimitive(Primitive):
    def __init__(self, seed=0, seed2=0):
        super().__init__()
        prim = type(self).__name__
        for name, v in (("seed", seed), ("seed2", seed2)):
            check_int(v, name, prim)
            if v < 0:
                raise ValueError(f"{prim}: {name} must be non-negative, got {v}")
        self.seed, self.seed2 = seed, seed2
        # A non-zero seed pair makes the stream of this primitive reproducible.
        self._seed = None if seed == 0 and seed2 == 0 else seed * 1000003 + seed2


class UniformReal(_RandomPrimitive):
    """``UniformReal(seed=0, seed2=0)(shape)``: float32 values in [0, 1)."""

    def compute(self, shape):
        return F.uniform(shape, 0.0, 1.0, self._seed, mdt.float32)


class StandardNormal(_RandomPrimitive):
    """``StandardNormal(seed=0, seed2=0)(shape)``: float32 standard normal values."""

    def compute(self, shape):
        return F.standard_normal(shape, self._seed, mdt.float32)


class Partial(Primitive):
    """``Partial()(fn, *args)``: ``fn`` with its first arguments bound."""

    def __call__(self, *args):
        if not args or not callable(args[0]):
            raise TypeError("Partial: the first input must be a callable")
        return functools.partial(args[0], *args[1:])


class Print(Primitive):
    """``Print()(*inputs)``: print strings and Tensors to stdout (as MindSpore's PyNative
    mode does); returns None. With ``set_context(print_file_path=...)`` they go to that file
    instead, in MindSpore's print-file format (``parse_print`` reads it)."""

    def __call__(self, *args):
        for a in args:
            if not isinstance(a, (str, Tensor, numbers.Number, bool, tuple, list)):
                raise TypeError(f"Print: inputs must be strings, numbers or Tensors, got "
                                f"{type(a).__name__}")
        from mscore.context import get_context
        path = get_context("print_file_path")
        if path:
            from mscore.train.serialization._print import append_print_record
            append_print_record(path, args)
            return
        print(*args, sep="\n", flush=True)


__all__ = ["ReLU6", "SeLU", "HSwish", "HSigmoid", "Softplus", "Softsign", "Mish", "GeLU",
           "FastGeLU", "L2Loss", "Elu", "CeLU", "Dense", "BiasAdd", "AvgPool", "LayerNorm", "BatchNorm",
           "L2Normalize", "SoftmaxCrossEntropyWithLogits",
           "SparseSoftmaxCrossEntropyWithLogits", "SigmoidCrossEntropyWithLogits",
           "BCEWithLogitsLoss", "BinaryCrossEntropy", "NLLLoss", "KLDivLoss", "SmoothL1Loss",
           "ApplyMomentum", "AssignAdd", "AssignSub", "UniformReal", "StandardNormal",
           "Partial", "Print"]
