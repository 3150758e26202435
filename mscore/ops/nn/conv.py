"""Convolutions: ``conv1d``/``conv2d``/``conv3d``, ``conv_transpose``, MindSpore's pad modes,
and the Conv Primitives.
"""
from __future__ import annotations

import builtins

from mscore import dispatch, fused_reference
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _check_tensor, _check_window, _operands, _tuple
from mscore.ops.array.manipulation import reshape
from mscore.ops.math.elementwise import add
from mscore.ops.primitive_base import Primitive

_wrap = Tensor._wrap


def conv_padding_pairs(pad_mode, padding, nd, in_spatial, kernel, stride, dilation):
    """``(before, after)`` pairs from MindSpore's pad_mode/padding arguments."""
    if pad_mode not in ("same", "valid", "pad"):
        raise ValueError(f"pad_mode: expected 'same', 'valid' or 'pad', got {pad_mode!r}")
    if pad_mode == "valid":
        if padding not in (0, (0,) * nd, (0,) * (2 * nd)):
            raise ValueError("padding: must be 0 unless pad_mode is 'pad'")
        return ((0, 0),) * nd
    if pad_mode == "same":
        pairs = []
        for s, k, st, d in zip(in_spatial, kernel, stride, dilation):
            out = -(-s // st)
            total = builtins.max((out - 1) * st + d * (k - 1) + 1 - s, 0)
            pairs.append((total // 2, total - total // 2))
        return tuple(pairs)
    if isinstance(padding, int):
        return ((padding, padding),) * nd
    padding = tuple(padding)
    if len(padding) == nd:
        return tuple((int(p), int(p)) for p in padding)
    if len(padding) == 2 * nd:
        return tuple((int(padding[2 * i]), int(padding[2 * i + 1])) for i in range(nd))
    raise ValueError(f"padding: expected an int, {nd} ints or {2 * nd} ints, got {padding}")


def conv_transpose_same_padding(kernel, stride, dilation):
    """``(before, after)`` pairs that make a transposed convolution give ``in * stride``
    outputs per spatial axis (pad_mode 'same')."""
    pairs = []
    for k, st, d in zip(kernel, stride, dilation):
        total = builtins.max(d * (k - 1) + 1 - st, 0)
        pairs.append((total // 2, total - total // 2))
    return tuple(pairs)


def conv(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
         groups=1):
    """N-d convolution (cross-correlation), channels first; the spatial rank comes from
    ``weight``. ``pad_mode`` is 'valid', 'same' or 'pad' (then ``padding`` applies)."""
    x = _check_tensor(input, "input")
    w = _check_tensor(weight, "weight")
    nd = w.ndim - 2
    if x.ndim != nd + 2:
        raise ValueError(f"conv: input must be {nd + 2}-d for a {w.ndim}-d weight, got "
                         f"shape {x.shape}")
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    if not isinstance(groups, int) or groups < 1 or x.shape[1] % groups or w.shape[0] % groups:
        raise ValueError(f"groups: {groups!r} must be a positive int dividing in_channels "
                         f"{x.shape[1]} and out_channels {w.shape[0]}")
    if w.shape[1] * groups != x.shape[1]:
        raise ValueError(f"conv: weight expects {w.shape[1] * groups} input channels, "
                         f"input has {x.shape[1]}")
    pads = conv_padding_pairs(pad_mode, padding, nd, x.shape[2:], w.shape[2:], stride, dilation)
    _check_window("conv", x.shape[2:], w.shape[2:], pads, dilation)
    _check_floating("conv", x, w)
    rx, rw = _operands(x, w)
    if isinstance(bias, Tensor) and bias.dtype is dispatch.dtype(rx) and \
            bias.shape == w.shape[:1]:
        fused = dispatch.fused("conv_bias") or fused_reference.conv_bias
        return _wrap(fused(rx, rw, bias._data, stride, pads, dilation, groups))
    out = _wrap(call("conv", rx, rw, stride=stride, padding=pads, dilation=dilation,
                     groups=groups))
    if bias is not None:
        out = add(out, reshape(bias, (1, -1) + (1,) * nd))
    return out


def _check_floating(op, x, w):
    """TypeError unless input and weight compute in a floating dtype (the contract's domain
    of convolution)."""
    if not mdt.promote(x.dtype, w.dtype).is_floating:
        raise TypeError(f"{op}: expected floating-point input and weight, got {x.dtype} and "
                        f"{w.dtype}")


def conv1d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """1-d convolution."""
    return conv(input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """2-d convolution."""
    return conv(input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """3-d convolution."""
    return conv(input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv_transpose(input, weight, bias=None, stride=1, pad_mode="valid", padding=0,
                   output_padding=0, dilation=1, groups=1):
    """N-d transposed convolution; ``weight`` is (in, out // groups, *kernel).

    'same' gives ``in * stride`` outputs, 'valid' ``(in - 1) * stride + dilation*(k-1) + 1``.
    """
    x = _check_tensor(input, "input")
    w = _check_tensor(weight, "weight")
    nd = w.ndim - 2
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    output_padding = _tuple(output_padding, nd, "output_padding")
    if x.shape[1] != w.shape[0]:
        raise ValueError(f"conv_transpose: weight expects {w.shape[0]} input channels, input "
                         f"has {x.shape[1]}")
    _check_floating("conv_transpose", x, w)
    if pad_mode == "same":
        pads = conv_transpose_same_padding(w.shape[2:], stride, dilation)
    else:
        pads = conv_padding_pairs(pad_mode, padding, nd, x.shape[2:], w.shape[2:], stride,
                                  dilation)
    rx, rw = _operands(x, w)
    out = _wrap(call("conv_transpose", rx, rw, stride=stride, padding=pads,
                     output_padding=output_padding, dilation=dilation, groups=groups))
    if bias is not None:
        out = add(out, reshape(bias, (1, -1) + (1,) * nd))
    return out


class _ConvBase(Primitive):
    _nd = 2

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCHW"):
        super().__init__()
        prim = type(self).__name__
        if isinstance(out_channel, bool) or not isinstance(out_channel, int) or \
                out_channel <= 0:
            raise ValueError(f"{prim}: out_channel must be a positive int, got "
                             f"{out_channel!r}")
        _check_format(data_format, ("NCHW", "NCDHW"), prim)
        if mode != 1:
            raise NotImplementedError(f"{prim}: mode={mode!r} selects an Ascend "
                                      f"convolution algorithm; only 1 is supported")
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("valid", "same", "pad"):
            raise ValueError(f"{prim}: pad_mode must be 'valid', 'same' or 'pad', got "
                             f"{pad_mode!r}")
        pad_mode = pad_mode.lower()
        if pad_mode != "pad" and pad not in (0, (0,) * (2 * self._nd), (0,) * 4):
            raise ValueError(f"{prim}: pad must be 0 unless pad_mode is 'pad', got {pad!r}")
        self.out_channel = out_channel
        self.kernel_size = _positive(_strip(kernel_size), self._nd, "kernel_size", prim)
        self.pad_mode, self.pad = pad_mode, pad
        self.stride = _positive(_strip_n(stride, self._nd), self._nd, "stride", prim)
        self.dilation = _positive(_strip_n(dilation, self._nd), self._nd, "dilation", prim)
        if isinstance(group, bool) or not isinstance(group, int) or group <= 0:
            raise ValueError(f"{prim}: group must be a positive int, got {group!r}")
        self.group = group
        self.mode, self.data_format = mode, data_format


def _check_format(data_format, supported, prim):
    """Channels-first layouts compute; channels-last ones (GPU/Ascend kernels in MindSpore)
    are ``NotImplementedError``; anything else ``ValueError``."""
    if data_format in supported:
        return
    if data_format in ("NHWC", "NDHWC"):
        raise NotImplementedError(f"{prim}: data_format={data_format!r} (channels last) is "
                                  f"not supported; use {supported[0]!r}")
    raise ValueError(f"{prim}: data_format must be {supported[0]!r}, got {data_format!r}")


def _strip_n(value, nd):
    """MindSpore accepts (1, 1, s, s) 4-tuples for stride/dilation; keep the spatial
    part."""
    if isinstance(value, (tuple, list)) and len(value) == nd + 2:
        return tuple(value[2:])
    return value


def _positive(value, nd, name, prim):
    """An int or ``nd`` ints, each positive: else ``ValueError`` naming ``name``."""
    out = _tuple(value, nd, name)
    if any(v <= 0 for v in out):
        raise ValueError(f"{prim}: {name} must be positive, got {value!r}")
    return out


class Conv2D(_ConvBase):
    """``Conv2D(out_channel, kernel_size, ...)(x, weight)``."""

    def compute(self, x, w):
        return conv(x, w, None, self.stride, self.pad_mode, self.pad, self.dilation,
                    self.group)


class Conv3D(Conv2D):
    """``Conv3D(out_channel, kernel_size, ...)(x, weight)``."""

    _nd = 3

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCDHW"):
        super().__init__(out_channel, kernel_size, mode, pad_mode, pad, stride, dilation,
                         group, data_format)


class Conv2DTranspose(_ConvBase):
    """``Conv2DTranspose(out_channel, kernel_size, ...)(dout, weight, input_size)``: the
    input-gradient of Conv2D, weight (in, out, kh, kw) as Conv2D's (out, in, kh, kw).
    ``pad_list`` (explicit (top, bottom, left, right) padding) must be None or the
    padding ``pad`` gives."""

    def __init__(self, out_channel, kernel_size, pad_mode="valid", pad=0, pad_list=None,
                 mode=1, stride=1, dilation=1, group=1, data_format="NCHW"):
        super().__init__(out_channel, kernel_size, mode, pad_mode, pad, stride, dilation,
                         group, data_format)
        if pad_list is not None and tuple(pad_list) not in ((0, 0, 0, 0),) and \
                tuple(pad_list) != _pad4(pad):
            raise NotImplementedError(f"{type(self).__name__}: pad_list={pad_list!r} "
                                      f"differing from pad is not supported")

    def compute(self, x, w, input_size=None):
        out = conv_transpose(x, w, None, self.stride, self.pad_mode, self.pad, 0,
                             self.dilation, self.group)
        if input_size is not None:
            target = tuple(input_size)[2:]
            extra = tuple(t - s for t, s in zip(target, out.shape[2:]))
            if any(e < 0 for e in extra):
                raise ValueError(f"input_size: {tuple(input_size)} is smaller than the "
                                 f"computed output {out.shape}")
            if any(extra):
                out = conv_transpose(x, w, None, self.stride, self.pad_mode, self.pad,
                                     extra, self.dilation, self.group)
        return out


Conv2DBackpropInput = Conv2DTranspose


def _pad4(pad):
    return (pad,) * 4 if isinstance(pad, int) else tuple(pad)


class Conv3DTranspose(Conv2DTranspose):
    """``Conv3DTranspose(in_channel, out_channel, kernel_size, ...)(x, weight)``."""

    _nd = 3

    def __init__(self, in_channel, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0,
                 stride=1, dilation=1, group=1, output_padding=0, data_format="NCDHW"):
        if isinstance(in_channel, bool) or not isinstance(in_channel, int) or in_channel <= 0:
            raise ValueError(f"Conv3DTranspose: in_channel must be a positive int, got "
                             f"{in_channel!r}")
        _ConvBase.__init__(self, out_channel, kernel_size, mode, pad_mode, pad, stride,
                           dilation, group, data_format)
        self.in_channel = in_channel
        self.output_padding = _tuple(output_padding, 3, "output_padding")

    def compute(self, x, w):
        return conv_transpose(x, w, None, self.stride, self.pad_mode, self.pad,
                              self.output_padding, self.dilation, self.group)


def _strip(v):
    return tuple(v[2:]) if isinstance(v, (tuple, list)) and len(v) == 4 else v
