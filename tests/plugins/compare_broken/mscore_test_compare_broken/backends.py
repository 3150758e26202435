"""The broken backends: subclasses of the torch backend with one bug each."""
import torch

from mscore_torch.backend import TorchBackend

CONV_GRAD_FACTOR = 1.01


class _GradTimes(torch.autograd.Function):
    """The identity, whose gradient is multiplied by ``CONV_GRAD_FACTOR``."""

    @staticmethod
    def forward(ctx, y):
        return y.view_as(y)

    @staticmethod
    def backward(ctx, g):
        return g * CONV_GRAD_FACTOR


class ConvGradOffBackend(TorchBackend):
    """torch, except that the gradients of ``conv`` (input and weight) are 1 % too large."""

    def __init__(self):
        super().__init__()
        self.name = "torch_convgrad"
        self.compile = None

    def conv(self, x, w, stride, padding, dilation, groups):
        return _GradTimes.apply(super().conv(x, w, stride, padding, dilation, groups))


class Softmax16Backend(TorchBackend):
    """torch, except that softmax and log_softmax round their input to float16 first."""

    def __init__(self):
        super().__init__()
        self.name = "torch_softmax16"
        self.compile = None
        self.softmax = self._softmax16
        self.log_softmax = self._log_softmax16
        self.cross_entropy = None   # the core's composite: log_softmax, then nll

    @staticmethod
    def _softmax16(x, axis):
        return torch.softmax(x.to(torch.float16), axis).to(x.dtype)

    @staticmethod
    def _log_softmax16(x, axis):
        return torch.log_softmax(x.to(torch.float16), axis).to(x.dtype)
